"""The fair clock's arithmetic (arena/match/timecontrol.py) and how the referee uses it.

Real bots kept waiting for a CPU, and hostile ones under the fair clock, are in
tests/hostile/test_fair_clock_hostile.py.
"""

from __future__ import annotations

import os
import threading

import pytest

from arena.match import fairclock
from arena.match.agents import RandomAgent
from arena.match.referee import play_match
from arena.match.timecontrol import (WAIT_CAP_MAX_S, WAIT_CAP_MIN_S, WAIT_STEP_S, Clock, TimeControl,
                                     extended_deadline, wait_cap, wait_credit)
from tests.arena.test_referee import match


def credit(**kw):
    args = dict(late_s=0.0, window_s=1.0, bot_wait_s=0.0, bot_cpu_s=0.0, cpus=2, referee_wait_s=0.0)
    args.update(kw)
    return wait_credit(**args)


def test_a_bot_that_waited_for_a_cpu_is_credited_its_wait():
    assert credit(bot_wait_s=0.3, bot_cpu_s=0.015) == pytest.approx(0.3)


def test_the_referee_being_late_is_credited_too():
    assert credit(late_s=0.2) == pytest.approx(0.2)                  # before its first look
    assert credit(referee_wait_s=0.05, bot_wait_s=0.1) == pytest.approx(0.15)  # noticing late


def test_credit_never_exceeds_the_time_that_passed():
    assert credit(window_s=0.5, bot_wait_s=0.4, referee_wait_s=0.4) == pytest.approx(0.5)
    assert credit(late_s=0.1, window_s=0.5, bot_wait_s=9.0) == pytest.approx(0.6)


def test_waiting_on_its_own_threads_earns_nothing():
    # a bot whose threads kept both CPUs busy all along waited only for itself
    assert credit(window_s=1.0, bot_wait_s=0.6, bot_cpu_s=2.0, cpus=2) == 0.0
    # half the machine's room left to others: at most that half counts
    assert credit(window_s=1.0, bot_wait_s=0.9, bot_cpu_s=1.0, cpus=2) == pytest.approx(0.5)


def test_negative_inputs_are_clamped():
    assert credit(late_s=-1.0, window_s=-1.0, bot_wait_s=-1.0, referee_wait_s=-1.0) == 0.0


def test_no_credit_means_the_deadline_has_passed():
    assert extended_deadline(wall_deadline=10.0, credit_s=0.0, cap_s=2.0, now=10.0,
                             waiting_now=False) is None


def test_credit_moves_the_deadline_up_to_the_cap():
    assert extended_deadline(wall_deadline=10.0, credit_s=0.3, cap_s=2.0, now=10.1,
                             waiting_now=False) == pytest.approx(10.3)
    assert extended_deadline(wall_deadline=10.0, credit_s=50.0, cap_s=2.0, now=10.1,
                             waiting_now=False) == pytest.approx(12.0)
    assert extended_deadline(wall_deadline=10.0, credit_s=50.0, cap_s=2.0, now=12.0,
                             waiting_now=True) is None                    # the cap is final


def test_a_bot_waiting_right_now_gets_another_look():
    assert extended_deadline(wall_deadline=10.0, credit_s=0.0, cap_s=2.0, now=10.0,
                             waiting_now=True) == pytest.approx(10.0 + WAIT_STEP_S)
    assert extended_deadline(wall_deadline=10.0, credit_s=0.0, cap_s=2.0, now=11.99,
                             waiting_now=True) == pytest.approx(12.0)


def test_the_cap_scales_with_move_s_within_bounds():
    assert wait_cap(0.1) == WAIT_CAP_MIN_S
    assert wait_cap(1.0) == 10.0
    assert wait_cap(600.0) == WAIT_CAP_MAX_S
    assert Clock(TimeControl(move_s=0.5)).wait_cap() == 5.0
    assert Clock(TimeControl(), unlimited=True).wait_cap() == 0.0


def test_this_thread_is_measured_where_schedstat_exists():
    if not fairclock.AVAILABLE:
        pytest.skip("no /proc schedstat here: the clock is pure wall time")
    threads = fairclock.tree_threads(os.getpid())
    me = threads[threading.get_native_id()]
    assert me[0] > 0 and me[3]                     # it has run, and is running now


class _KeptWaiting(RandomAgent):
    """Answers ``late`` s after the ask and says ``credit`` s of it were spent waiting for
    a CPU, as a ProcessAgent under the fair clock would; remembers its ``time_left_s``."""

    def __init__(self, seed: int, credit: float, late: float) -> None:
        super().__init__(name=f"waiting{seed}", seed=seed)
        self.credit, self.late, self.time_left = credit, late, []

    def ask(self, act_msg, deadline):
        self.time_left.append(act_msg["time_left_s"])
        super().ask(act_msg, deadline)

    def answer(self, deadline):
        line, t = super().answer(deadline)
        return line, t + self.late

    def wait_credit(self) -> float:
        return self.credit


def test_the_referee_records_the_wait_and_spares_the_bank():
    tc = TimeControl(move_s=0.1, bank_s=1.0)
    waited = _KeptWaiting(0, credit=0.25, late=0.3)      # 0.05 s of its own: inside move_s
    charged = _KeptWaiting(1, credit=0.0, late=0.3)      # 0.2 s over move_s each time
    rec = play_match(match(), [waited, charged, RandomAgent(seed=2)], time_control=tc)
    assert rec["faults"] == [None, None, None]
    mine = [d for d in rec["decisions"] if d["seat"] == 0]
    assert len(mine) >= 2 and all(d["cpu_wait_ms"] == 250.0 for d in mine)
    assert all("cpu_wait_ms" not in d for d in rec["decisions"] if d["seat"] != 0)
    assert set(waited.time_left) == {1.1}                  # its bank was never touched
    assert charged.time_left[:3] == [1.1, 0.9, 0.7]        # the other's shrank as it should


def test_without_schedstat_the_run_says_the_clock_is_wall_time(monkeypatch):
    from arena.match.sandbox import SandboxInfo
    from arena.match.sandbox.detect import level_lines

    info = SandboxInfo("full", {"safe": True})
    assert "clock" not in level_lines(info) or not fairclock.AVAILABLE
    monkeypatch.setattr(fairclock, "AVAILABLE", False)
    last = level_lines(info).splitlines()[-1]
    assert last.startswith("arena: clock: wall time only") and "docs/protocol.md" in last


class _Snapshots:
    """Feeds WaitMeter the thread counters a test scripts, instead of /proc."""

    def __init__(self, monkeypatch, *snaps):
        self.snaps = list(snaps)
        monkeypatch.setattr(fairclock, "tree_threads", lambda root, limit=4096: self.snaps.pop(0))
        monkeypatch.setattr(fairclock, "referee_wait_ns", lambda: 0)


MS = 1_000_000


def test_meter_credits_a_completed_run_queue_wait(monkeypatch):
    _Snapshots(monkeypatch, {7: (0, 0, 1, False)}, {7: (3 * MS, 120 * MS, 2, False)})
    m = fairclock.WaitMeter(7, due=0.0, wall_deadline=0.15, cap_s=2.0, now=0.0)
    credit, waiting = m.measure(0.2)
    assert credit == pytest.approx(0.12) and not waiting


def test_meter_sees_a_wait_still_going_on(monkeypatch):
    # runnable at both looks and never scheduled between: waiting all along, not yet counted
    _Snapshots(monkeypatch, {7: (5 * MS, 0, 3, True)}, {7: (5 * MS, 0, 3, True)},
               {7: (5 * MS, 0, 3, True)})
    m = fairclock.WaitMeter(7, due=0.0, wall_deadline=0.15, cap_s=2.0, now=0.0)
    assert m.measure(0.15) == (pytest.approx(0.15), True)
    assert m.extend(0.2) == pytest.approx(0.35)         # credit so far: 0.2 s


def test_meter_gives_a_busy_thread_one_look_then_nothing(monkeypatch):
    _Snapshots(monkeypatch, {7: (0, 0, 1, True)}, {7: (100 * MS, 0, 4, True)},
               {7: (125 * MS, 0, 6, True)})
    m = fairclock.WaitMeter(7, due=0.0, wall_deadline=0.1, cap_s=2.0, now=0.0)
    assert m.extend(0.1) == pytest.approx(0.1 + 0.025)   # one more look: is it waiting?
    assert m.extend(0.125) is None                       # no: its CPU moved, its time is up


def test_meter_ignores_sleeping_and_stopped_threads(monkeypatch):
    _Snapshots(monkeypatch, {7: (1 * MS, 0, 1, False)}, {7: (1 * MS, 0, 1, False)})
    m = fairclock.WaitMeter(7, due=0.0, wall_deadline=0.1, cap_s=2.0, now=0.0)
    assert m.extend(0.1) is None


def test_meter_credits_time_taken_from_a_lone_running_thread(monkeypatch):
    # on a CPU at the first look, never scheduled in again, 10 ms of CPU in 200 ms:
    # the rest was taken from it (the host stalled the CPU), not slept
    _Snapshots(monkeypatch, {7: (0, 0, 1, True), 8: (0, 0, 1, False)},
               {7: (10 * MS, 0, 1, False), 8: (0, 0, 1, False)})
    m = fairclock.WaitMeter(7, due=0.0, wall_deadline=0.1, cap_s=2.0, now=0.0)
    assert m.measure(0.2)[0] == pytest.approx(0.19)


def test_meter_gives_no_stall_credit_when_another_thread_worked(monkeypatch):
    # thread 7 could have slept while thread 8 (scheduled since) wrote the answer
    _Snapshots(monkeypatch, {7: (0, 0, 1, True), 8: (0, 0, 1, False)},
               {7: (10 * MS, 0, 1, False), 8: (1 * MS, 0, 2, False)})
    m = fairclock.WaitMeter(7, due=0.0, wall_deadline=0.1, cap_s=2.0, now=0.0)
    assert m.measure(0.2)[0] == 0.0
