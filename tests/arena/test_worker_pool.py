"""The local worker pool's bookkeeping: matches sent ahead to each worker, and what a dead
worker's matches count against their tries. Fake workers (no processes), a real store."""

from __future__ import annotations

import io
from collections import deque
from types import SimpleNamespace

from arena.tournament.runner import Progress, RunSummary, _Pool, _Worker
from arena.tournament.schedule import MatchSpec
from arena.tournament.store import ResultStore
from tests.arena.record_factory import make_record


def record(i: int, places: list[int]) -> dict:
    """A record as the referee makes it (its ``seats`` too, which the worker logs)."""
    rec = make_record(i, ["a", "b"], places, match_id=spec(i).match_id)
    rec["seats"] = [{"seat": s, "bot": b, "place": p} for s, (b, p) in enumerate(zip("ab", places))]
    return rec


def spec(i: int) -> MatchSpec:
    return MatchSpec(match_id=f"tightwad/p2/d{i:02d}/r0/i{i}", index=i, game="tightwad", players=2,
                     options={}, bots=("a", "b"))


class FakeConn:
    def __init__(self) -> None:
        self.sent: list = []

    def send(self, obj) -> None:
        self.sent.append(obj)

    def poll(self) -> bool:
        return False

    def close(self) -> None:
        pass


def fake_worker(wid: int, *, exitcode: int | None = None, playing: int = 0) -> _Worker:
    proc = SimpleNamespace(exitcode=exitcode, join=lambda timeout=None: None, is_alive=lambda: exitcode is None)
    return _Worker(wid, proc, FakeConn(), SimpleNamespace(value=playing))


def pool(tmp_path) -> _Pool:
    summary = RunSummary(results=tmp_path, scheduled=0, already_done=0)
    return _Pool({"results": tmp_path}, summary, Progress(100, io.StringIO()))


def test_each_worker_gets_one_match_then_a_second_while_the_queue_has_more_than_workers(tmp_path):
    p = pool(tmp_path)
    p.workers = [fake_worker(0), fake_worker(1)]
    queue = deque(spec(i) for i in range(6))
    p._dispatch(queue)
    assert [m.index for m in p.workers[0].conn.sent] == [0, 2]
    assert [m.index for m in p.workers[1].conn.sent] == [1, 3]
    assert [n for n, _ in p.workers[0].inflight] == [1, 2]  # numbered in sending order, as the worker counts
    p._on_reply(p.workers[1], "done", spec(1).match_id, [], queue)
    p._dispatch(queue)  # two left for two workers: none waits behind another match
    assert [m.index for m in p.workers[1].conn.sent] == [1, 3]
    p._on_reply(p.workers[1], "done", spec(3).match_id, [], queue)
    p._dispatch(queue)
    assert [m.index for m in p.workers[1].conn.sent] == [1, 3, 4]
    assert p.summary.played == 2 and list(queue) == [spec(5)]


def test_a_dead_worker_charges_a_try_only_to_the_match_it_was_playing(tmp_path):
    p = pool(tmp_path)
    w = fake_worker(0, exitcode=-9, playing=2)
    w.inflight.extend([(1, spec(0)), (2, spec(1)), (3, spec(2))])  # 1 was being stored, 3 waited in the pipe
    p.workers = [w]
    queue = deque([spec(3)])
    p._buried(w, queue)
    assert [m.index for m in queue] == [1, 0, 2, 3]  # the culprit first, the others in their order
    assert dict(p.retries.tries) == {spec(1).match_id: 1}
    assert p.idle_deaths == 0 and p.summary.given_up == []


def test_a_worker_dead_between_matches_charges_nothing_and_a_stored_match_counts_as_played(tmp_path):
    p = pool(tmp_path)
    with ResultStore(tmp_path) as store:  # its commit finished just before the worker died
        store.record_match(make_record(0, ["a", "b"], [1, 2], match_id=spec(0).match_id))
    w = fake_worker(0, exitcode=-9, playing=0)
    w.inflight.extend([(1, spec(0)), (2, spec(1))])
    p.workers = [w]
    queue: deque = deque()
    p._buried(w, queue)
    assert [m.index for m in queue] == [1]
    assert not p.retries.tries and p.idle_deaths == 1
    assert p.summary.played == 1


# ---- a worker's committer: stored first, reported after -------------------------------------


class GatedStore:
    """A store whose commits wait for a test's go, then store for real (or raise)."""

    def __init__(self, folder, error: Exception | None = None) -> None:
        import threading

        self.real = ResultStore(folder)
        self.go = threading.Event()
        self.error = error

    def record_match(self, record) -> bool:
        assert self.go.wait(30)
        if self.error is not None:
            raise self.error
        return self.real.record_match(record)


def test_a_match_is_reported_done_only_once_it_is_stored_and_the_next_one_plays_meanwhile(tmp_path):
    import time

    from arena.tournament.runner import _Committer

    store = GatedStore(tmp_path)
    replies: list = []
    committer = _Committer(store, replies.append, tmp_path)
    committer.submit(spec(0), record(0, [1, 2]))
    time.sleep(0.2)  # the worker's main thread is free (it would play the next match); nothing reported yet
    assert replies == [] and spec(0).match_id not in store.real.completed_ids()
    store.go.set()
    committer.settle(30)
    committer.close()
    assert spec(0).match_id in ResultStore(tmp_path).completed_ids()
    assert replies == [("done", spec(0).match_id, [])]


def test_a_failed_commit_is_reported_as_an_error_or_a_full_disk(tmp_path):
    import errno
    import sqlite3

    from arena.tournament.runner import _Committer

    for error, kind in ((sqlite3.OperationalError("database is locked"), "error"),
                        (OSError(errno.ENOSPC, "No space left on device"), "nospace")):
        store = GatedStore(tmp_path, error)
        store.go.set()
        replies: list = []
        committer = _Committer(store, replies.append, tmp_path)
        committer.submit(spec(1), record(1, [2, 1]))
        committer.close()
        assert [r[:2] for r in replies] == [(kind, spec(1).match_id)]
        assert spec(1).match_id not in ResultStore(tmp_path).completed_ids()


def test_a_reply_that_cannot_be_sent_stops_the_worker_instead_of_vanishing(tmp_path):
    """Only a closed pipe (OSError: the parent is gone) is silently dropped. Any other failure
    to report a stored match would leave the parent waiting for a reply that never comes, so
    the worker stops (the parent then plays its unreported matches again; stored ones stay)."""
    from arena.tournament.runner import _Committer

    store = GatedStore(tmp_path)
    store.go.set()
    broken: list = []

    def reply(message):
        raise ValueError("cannot pickle the message")

    committer = _Committer(store, reply, tmp_path, on_broken_reply=broken.append)
    committer.submit(spec(2), record(2, [1, 2]))
    committer.thread.join(30)
    assert not committer.thread.is_alive()
    assert [type(e) for e in broken] == [ValueError]
    assert spec(2).match_id in ResultStore(tmp_path).completed_ids()   # stored before the report failed

    gone: list = []

    def closed(message):
        raise BrokenPipeError("the parent is gone")

    committer = _Committer(GatedStore(tmp_path / "b"), closed, tmp_path, on_broken_reply=gone.append)
    committer.store.go.set()
    committer.submit(spec(3), record(3, [2, 1]))
    committer.close()
    assert gone == []


# ---- a worker's bots at the end ------------------------------------------------------------


def test_a_worker_tells_every_bot_goodbye_before_waiting_for_any(tmp_path):
    import shutil
    from pathlib import Path

    import games
    from arena.match.sandbox import Limits
    from arena.match.detect import open_sandbox
    from arena.match.timecontrol import TimeControl
    from arena.tournament.match_player import MatchPlayer
    from arena.tournament.roster import bot_entry

    bots, marks = tmp_path / "bots", tmp_path / "marks"
    bots.mkdir()
    marks.mkdir()
    (bots / "barrier").write_text(f"{marks}|4")
    src = Path(__file__).parent / "bots" / "waits_for_every_bye.py"
    names = [f"w{i}" for i in range(4)]
    entries = {}
    for name in names:
        shutil.copy(src, bots / f"{name}.py")
        entries[name] = bot_entry(str(bots / f"{name}.py"))
    player = MatchPlayer(entries, sandbox=open_sandbox("rlimits"), limits=Limits(),
                         time_control=TimeControl(startup_s=20, move_s=5), log_dir=None, fresh=False,
                         tournament="bye")
    options = games.get_game("divers-weights").resolve_options(4, {})
    record = player.play(MatchSpec(match_id="dw/0", index=0, game="divers-weights", players=4, options=options,
                                   deal_seed=1, match_seed=2, bots=tuple(names)))
    assert not any(record["faults"]), record["faults"]
    player.close()
    assert sorted(f.name for f in marks.glob("*.clean")) == [f"{n}.py.clean" for n in names]
