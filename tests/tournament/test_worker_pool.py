"""The local worker pool's bookkeeping: matches sent ahead to each worker, and what a dead
worker's matches count against their tries. Fake workers (no processes), a real store."""

from __future__ import annotations

from arena.records.replies import NoSpace, Played, Raised
from arena.tournament.retries import Retries
from arena.tournament.schedule import MatchSpec
from arena.tournament.store import ResultStore
from arena.tournament.supervisor import Lost, MatchSupervisor, Replied
from tests import support
from tests.support.record_factory import make_record


def record(i: int, places: list[int]) -> dict:
    """A record as the referee makes it (its ``seats`` too, which the worker logs)."""
    rec = make_record(i, ["a", "b"], places, match_id=spec(i).match_id)
    rec["seats"] = [{"seat": s, "bot": b, "place": p} for s, (b, p) in enumerate(zip("ab", places))]
    return rec


def spec(i: int) -> MatchSpec:
    return MatchSpec(
        match_id=f"tightwad/p2/d{i:02d}/r0/i{i}", index=i, game="tightwad", players=2, options={}, bots=("a", "b")
    )


class FakeBackend:
    """Workers that are only ids: the test says what they answer and when they die."""

    prefetch, spread_tail, ready_at_start = 2, True, True

    def __init__(self) -> None:
        self.sent: dict[int, list] = {}
        self.events: list = []

    def start(self) -> int:
        wid = len(self.sent)
        self.sent[wid] = []
        return wid

    def send(self, wid: int, match) -> None:
        self.sent[wid].append(match)

    def wait(self, timeout_s: float) -> list:
        events, self.events = self.events, []
        return events

    def stop(self, *, kill: bool) -> None:
        pass

    def keep_dying(self, deaths: int) -> str:
        return f"workers keep dying ({deaths})"

    def lost_all(self, left: int) -> str | None:
        return None


def supervisor(tmp_path, workers: int = 2) -> tuple[MatchSupervisor, FakeBackend, list]:
    backend, given_up = FakeBackend(), []

    def stored(match) -> bool:
        with ResultStore(tmp_path) as store:
            return match.match_id in store.completed_ids()

    sup = MatchSupervisor(backend, workers=workers, retries=Retries(given_up), stored=stored)
    for _ in range(workers):
        sup._start()
    return sup, backend, given_up


def test_each_worker_gets_one_match_then_a_second_while_the_queue_has_more_than_workers(tmp_path):
    sup, backend, _ = supervisor(tmp_path)
    sup.submit(*(spec(i) for i in range(6)))
    sup._dispatch()
    assert [m.index for m in backend.sent[0]] == [0, 2]
    assert [m.index for m in backend.sent[1]] == [1, 3]
    assert [n for n, _ in sup.workers[0].inflight] == [1, 2]  # numbered in sending order, as the worker counts
    sup._on_reply(1, Played(spec(1).match_id))
    sup._dispatch()  # two left for two workers: none waits behind another match
    assert [m.index for m in backend.sent[1]] == [1, 3]
    sup._on_reply(1, Played(spec(3).match_id))
    sup._dispatch()
    assert [m.index for m in backend.sent[1]] == [1, 3, 4]
    assert [m.index for m, _ in sup._out] == [1, 3] and list(sup.queue) == [spec(5)]


def test_a_dead_worker_charges_a_try_only_to_the_match_it_was_playing(tmp_path):
    sup, _, given_up = supervisor(tmp_path, workers=1)
    sup.workers[0].inflight.extend([(1, spec(0)), (2, spec(1)), (3, spec(2))])  # 1 being stored, 3 in the pipe
    sup.submit(spec(3))
    sup._on_lost(Lost(0, "killed by signal 9", playing=2))
    assert [m.index for m in sup.queue] == [1, 0, 2, 3]  # the culprit first, the others in their order
    assert dict(sup.retries.tries) == {spec(1).match_id: 1}
    assert sup.idle_deaths == 0 and given_up == [] and list(sup.workers) == [1]  # a new worker took its place


def test_a_worker_dead_between_matches_charges_nothing_and_a_stored_match_counts_as_played(tmp_path):
    sup, _, _ = supervisor(tmp_path, workers=1)
    with ResultStore(tmp_path) as store:  # its commit finished just before the worker died
        store.record_match(make_record(0, ["a", "b"], [1, 2], match_id=spec(0).match_id))
    sup.workers[0].inflight.extend([(1, spec(0)), (2, spec(1))])
    sup._on_lost(Lost(0, "killed by signal 9", playing=None))
    assert [m.index for m in sup.queue] == [1]
    assert not sup.retries.tries and sup.idle_deaths == 1
    assert sup._out == [(spec(0), Played(spec(0).match_id))]


def test_the_stream_retries_a_raised_match_and_yields_each_match_once(tmp_path):
    sup, backend, given_up = supervisor(tmp_path, workers=1)
    sup.workers.clear()  # stream() starts its own worker
    sup.submit(spec(0), spec(1))
    raised = set()

    def wait(timeout_s: float) -> list:  # the oldest match in flight is answered; match 0 raises once
        wid = next(iter(sup.workers))
        match = sup.workers[wid].inflight[0][1]
        if match.index == 0 and not raised:
            raised.add(0)
            return [Replied(wid, Raised(match.match_id, "OSError: x"))]
        return [Replied(wid, Played(match.match_id))]

    backend.wait = wait
    got = [(m.index, type(r).__name__) for m, r in sup.stream()]
    assert got == [(0, "Played"), (1, "Played")] and given_up == []
    assert [m.index for m in backend.sent[1]] == [0, 0, 1]  # played again first, counting a try
    assert dict(sup.retries.tries) == {spec(0).match_id: 1}


def test_a_long_running_feed_waits_for_submitted_matches_until_closed(tmp_path):
    sup, backend, _ = supervisor(tmp_path, workers=1)
    sup.workers.clear()
    fed = iter([[spec(0)], [], [spec(1)]])

    def wait(timeout_s: float) -> list:
        events = [Replied(wid, Played(m.match_id)) for wid, w in sup.workers.items() for _, m in w.inflight]
        more = next(fed, None)
        if more is None:
            sup.close()
        else:
            sup.submit(*more)  # as another thread of a service would
        return events

    backend.wait = wait
    assert [m.index for m, _ in sup.stream(forever=True)] == [0, 1]


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
    assert replies == [Played(spec(0).match_id)]


def test_a_failed_commit_is_reported_as_an_error_or_a_full_disk(tmp_path):
    import errno
    import sqlite3

    from arena.tournament.runner import _Committer

    for error, kind in (
        (sqlite3.OperationalError("database is locked"), Raised),
        (OSError(errno.ENOSPC, "No space left on device"), NoSpace),
    ):
        store = GatedStore(tmp_path, error)
        store.go.set()
        replies: list = []
        committer = _Committer(store, replies.append, tmp_path)
        committer.submit(spec(1), record(1, [2, 1]))
        committer.close()
        assert [(type(r), r.match_id) for r in replies] == [(kind, spec(1).match_id)]
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
    assert spec(2).match_id in ResultStore(tmp_path).completed_ids()  # stored before the report failed

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

    import games
    from arena.match.detect import open_sandbox
    from arena.match.sandbox import Limits
    from arena.match.timecontrol import TimeControl
    from arena.tournament.match_player import MatchPlayer
    from arena.tournament.roster import bot_entry

    bots, marks = tmp_path / "bots", tmp_path / "marks"
    bots.mkdir()
    marks.mkdir()
    (bots / "barrier").write_text(f"{marks}|4")
    src = support.BOTS / "waits_for_every_bye.py"
    names = [f"w{i}" for i in range(4)]
    entries = {}
    for name in names:
        shutil.copy(src, bots / f"{name}.py")
        entries[name] = bot_entry(str(bots / f"{name}.py"))
    player = MatchPlayer(
        entries,
        sandbox=open_sandbox("rlimits"),
        limits=Limits(),
        time_control=TimeControl(startup_s=20, move_s=5),
        log_dir=None,
        fresh=False,
        tournament="bye",
    )
    options = games.get_game("divers-weights").resolve_options(4, {})
    record = player.play(
        MatchSpec(
            match_id="dw/0",
            index=0,
            game="divers-weights",
            players=4,
            options=options,
            deal_seed=1,
            match_seed=2,
            bots=tuple(names),
        )
    )
    assert not any(record["faults"]), record["faults"]
    player.close()
    assert sorted(f.name for f in marks.glob("*.clean")) == [f"{n}.py.clean" for n in names]


def test_a_consumer_that_stops_early_kills_the_workers_at_once(tmp_path):
    import contextlib

    import pytest

    sup, backend, _ = supervisor(tmp_path, workers=1)
    sup.workers.clear()
    stops: list[bool] = []
    backend.stop = lambda *, kill: stops.append(kill)
    backend.wait = lambda timeout_s: [
        Replied(w, Played(m.match_id)) for w, x in sup.workers.items() for _, m in list(x.inflight)[:1]
    ]
    sup.submit(spec(0), spec(1))
    with pytest.raises(KeyboardInterrupt):
        with contextlib.closing(sup.stream()) as replies:
            for _ in replies:
                assert stops == []
                raise KeyboardInterrupt  # Ctrl-C while the first reply is counted
    assert stops == [True]


def test_a_second_ctrl_c_while_the_stream_unwinds_still_stops_the_workers(tmp_path):
    """Two SIGINTs a moment apart (a double Ctrl-C, or the copy `timeout` forwards): the second
    cut the stream's own stop short, a worker stayed alive waiting for a match, and the command
    waited for it at exit forever. The pool stops the workers again on its way out."""
    import pytest

    from arena.tournament.runner import RunSummary, _Pool

    backend = FakeBackend()
    stops: list[bool] = []

    def stop(*, kill: bool) -> None:
        stops.append(kill)
        if len(stops) == 1:
            raise KeyboardInterrupt  # the second Ctrl-C, inside the first stop

    backend.stop = stop
    backend.wait = lambda timeout_s: [Replied(w, Played(m.match_id)) for w, ms in backend.sent.items() for m in ms[-1:]]

    class Counting:
        def update(self, *_: object) -> None:
            raise KeyboardInterrupt  # the first Ctrl-C, while a reply is counted

    pool = _Pool({"results": tmp_path}, RunSummary(tmp_path, 2, 0), Counting(), backend)
    ResultStore(tmp_path).close()
    with pytest.raises(KeyboardInterrupt):
        pool.run([spec(0), spec(1)], 1)
    assert stops == [True, True]


def test_no_worker_is_left_waiting_at_exit():
    import multiprocessing as mp

    from arena.tournament.runner import _no_worker_left

    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    idle = ctx.Process(target=child.recv, name="worker-99")  # waits for a match that never comes
    idle.start()
    try:
        _no_worker_left()
        idle.join(10)
        assert not idle.is_alive()
    finally:
        if idle.is_alive():
            idle.kill()
            idle.join(5)
        parent.close()
