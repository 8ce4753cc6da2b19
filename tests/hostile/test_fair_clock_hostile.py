"""The fair clock with real bots: a prompt bot kept waiting for a CPU is not timed out;
sleeping, stopped, busy and thread-spawning bots still are, within the cap.

The bots and the CPU burners are this test's own processes: it pins them to one CPU and
puts the bot behind the burners (lowest scheduling weight), so the bot surely waits on
the run queue. Deadlines are generous wherever the machine's load could matter.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.match import fairclock
from arena.match.faults import BotFault, FaultKind
from arena.match.process import BotProcess, bot_command, read_lines
from arena.match.sandbox import Limits
from tests.hostile.test_process_hostile import BOTS, BOTH, level

pytestmark = pytest.mark.skipif(not fairclock.AVAILABLE, reason="no /proc schedstat: wall-time clock")

PROMPT = Path(__file__).parents[1] / "arena" / "bots" / "cpu_prompt.py"
LIMIT = 0.05        # the bot needs 20 ms of CPU per answer: 40% of its limit
CAP = 5.0
PROMPT_CAP = 30.0   # behind SCHED_IDLE on a machine at load 900, 10 ms of CPU took over 5 s


def start(bot: Path, lvl: str, tmp_path: Path, **env: str) -> BotProcess:
    proc = BotProcess.start(bot_command(bot), bot_file=bot, name=bot.stem, sandbox=level(lvl),
                            limits=Limits(cpu_s=60), log_path=tmp_path / f"{bot.stem}.log", env=env)
    return proc


@contextlib.contextmanager
def kept_waiting(bot: BotProcess, burners: int = 2):
    """Pin ``bot`` and ``burners`` busy processes of our own to one CPU, the bot behind them."""
    cpu = min(os.sched_getaffinity(0))
    with contextlib.suppress(OSError):           # its session's autogroup, if the kernel has one
        Path(f"/proc/{bot.pid}/autogroup").write_text("19")
    for tid in fairclock.tree_threads(bot.pid):
        os.sched_setaffinity(tid, {cpu})
        try:
            os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))
        except OSError:
            os.setpriority(os.PRIO_PROCESS, tid, 19)
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(burners)]
    try:
        for p in procs:
            os.sched_setaffinity(p.pid, {cpu})
        time.sleep(0.2)
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


@pytest.mark.parametrize("lvl", BOTH)
def test_prompt_bot_kept_waiting_for_a_cpu_is_not_timed_out(lvl, tmp_path):
    bot = start(PROMPT, lvl, tmp_path, CLOCK_CPU_MS="20")
    try:
        bot.send_line(b"warm", time.monotonic() + 30)
        assert bot.read_line(time.monotonic() + 30)[0] == b"warm"
        late = 0
        with kept_waiting(bot):
            for i in range(12):
                asked = time.monotonic()
                bot.send_line(b"ask %d" % i, asked + 5)
                try:
                    if i % 2:     # both the single read and the multiplexed one are fair
                        line, arrived = bot.read_line(asked + LIMIT, PROMPT_CAP)
                    else:
                        (got,) = read_lines([(bot, asked + LIMIT, PROMPT_CAP)])
                        if isinstance(got, BotFault):
                            raise got
                        line, arrived = got
                except BotFault as fault:
                    # the documented limit: waiting for a CPU is credited up to the cap, no further
                    # (a machine at load 900 kept this bot off the CPU for longer than 30 s)
                    credited = fault.to_json().get("cpu_wait_credited_ms", 0)
                    assert fault.kind == FaultKind.TIMEOUT and credited >= PROMPT_CAP * 1000, fault.to_json()
                    break
                assert line == b"ask %d" % i
                if arrived > asked + LIMIT:
                    late += 1      # accepted late only because it waited that long for a CPU
                    assert bot.wait_credit_s > 0
        # on an idle machine the scheduler may let every answer through in time (late == 0):
        # then it only shows that no prompt answer was refused
    finally:
        bot.kill()


def fair_timeout(bot: BotProcess, limit: float = 0.3) -> tuple[BotFault, float]:
    """Ask once under the fair clock; the fault and how long after the wall deadline it came."""
    bot.send_line(b"go", time.monotonic() + 5)
    deadline = time.monotonic() + limit
    with pytest.raises(BotFault) as ei:
        bot.read_line(deadline, CAP)
    return ei.value, time.monotonic() - deadline


@pytest.mark.parametrize("lvl", BOTH)
def test_sleeper_still_times_out_at_its_deadline(lvl, tmp_path):
    bot = start(BOTS / "sleeper.py", lvl, tmp_path, HOSTILE_SLEEP="30")
    try:
        fault, late = fair_timeout(bot)
        assert fault.kind == FaultKind.TIMEOUT, fault.to_json()
        assert late < 1.5, late           # asleep is not waiting for a CPU: no credit to speak of
    finally:
        bot.kill()


@pytest.mark.parametrize("lvl", BOTH)
def test_sleeper_kept_off_the_cpu_still_times_out(lvl, tmp_path):
    bot = start(BOTS / "sleeper.py", lvl, tmp_path, HOSTILE_SLEEP="30")
    try:
        with kept_waiting(bot):
            fault, late = fair_timeout(bot)
        assert fault.kind == FaultKind.TIMEOUT, fault.to_json()
        assert late < CAP, late           # at most the little it waited to read the request
    finally:
        bot.kill()


@pytest.mark.parametrize("lvl", BOTH)
def test_stopped_bot_times_out_at_its_deadline(lvl, tmp_path):
    bot = start(BOTS / "sigstop.py", lvl, tmp_path)
    try:
        fault, late = fair_timeout(bot)
        assert fault.kind == FaultKind.TIMEOUT, fault.to_json()
        assert late < 1.5, late           # a stopped task is not runnable: it never waits
    finally:
        bot.kill()


@pytest.mark.parametrize("lvl", BOTH)
def test_busy_loop_times_out_within_the_cap(lvl, tmp_path):
    bot = start(BOTS / "cpu_main.py", lvl, tmp_path)
    try:
        fault, late = fair_timeout(bot)
        assert fault.kind == FaultKind.TIMEOUT, fault.to_json()
        assert late < CAP + 2.0, late     # its CPU counts; waits between its slices at most the cap
    finally:
        bot.kill()


@pytest.mark.parametrize("lvl", BOTH)
def test_many_runnable_threads_cannot_stretch_the_clock_past_the_cap(lvl, tmp_path):
    bot = start(BOTS / "busy_threads.py", lvl, tmp_path)
    try:
        fault, late = fair_timeout(bot)
        assert fault.kind == FaultKind.TIMEOUT, fault.to_json()
        assert late < CAP + 2.0, late
    finally:
        bot.kill()
