"""The one supervisor (arena/supervisor.py), on an in-memory backend: what every backend (local
processes, Ray actors, luck helpers) gets from it alike. No processes, no sleeps."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import pytest

from arena.errors import WorkersLost
from arena.supervisor import Lost, Ready, Replied, Supervisor


@dataclass(frozen=True)
class Done:
    job: int
    failed: str = ""


class Jobs(Supervisor[int, Done]):
    """Jobs are numbers; a job failed for the harness is tried three times, then given up."""

    def __init__(self, backend: FakeBackend, workers: int) -> None:
        super().__init__(backend, workers=workers)
        self.tries: dict[int, int] = {}
        self.given_up: list[int] = []

    def key(self, job: int) -> int:
        return job

    def answers(self, reply: Done) -> int:
        return reply.job

    def failed(self, reply: Done) -> str | None:
        return reply.failed or None

    def again(self, job: int, why: str) -> bool:
        self.tries[job] = self.tries.get(job, 0) + 1
        if self.tries[job] >= 3:
            self.given_up.append(job)
            return False
        return True


class FakeBackend:
    """Workers that are only ids. ``script(backend)`` says what happens in each ``wait``."""

    def __init__(self, *, prefetch: int = 2, spread_tail: bool = True, ready_at_start: bool = True) -> None:
        self.prefetch, self.spread_tail, self.ready_at_start = prefetch, spread_tail, ready_at_start
        self.sent: dict[int, list[int]] = {}
        self.stops: list[bool] = []
        self.script = lambda backend: []
        self.asked_left: list[int] = []

    def start(self) -> int:
        wid = len(self.sent)
        self.sent[wid] = []
        return wid

    def send(self, wid: int, job: int) -> None:
        self.sent[wid].append(job)

    def wait(self, timeout_s: float) -> list:
        return self.script(self)

    def stop(self, *, kill: bool) -> None:
        self.stops.append(kill)

    def keep_dying(self, deaths: int) -> str:
        return f"workers keep dying ({deaths} so far)"

    def lost_all(self, left: int) -> str | None:
        return None


def answer_oldest(sup: Jobs):
    """A script: each worker answers the oldest job it holds."""
    return lambda backend: [Replied(w.wid, Done(w.inflight[0][1])) for w in sup.workers.values() if w.inflight]


def test_a_worker_that_sets_itself_up_first_gets_jobs_only_once_ready_and_without_the_tail_rule():
    backend = FakeBackend(prefetch=3, spread_tail=False, ready_at_start=False)
    sup = Jobs(backend, workers=2)
    sup.submit(1, 2, 3, 4)
    rounds = iter([[], [Ready(1)], [Ready(0)]])

    def script(b):
        events = next(rounds, None)
        if events is None:  # then every job is answered
            return [Replied(w.wid, Done(j)) for w in sup.workers.values() for _, j in w.inflight]
        return events

    backend.script = script
    got = [job for job, _ in sup.stream()]
    # nothing sent before Ready; the first worker ready takes three at once though two workers exist
    assert backend.sent == {0: [4], 1: [1, 2, 3]}
    assert sorted(got) == [1, 2, 3, 4] and backend.stops == [False]


def test_replies_sent_before_a_loss_count_and_only_the_job_being_played_counts_a_try():
    backend = FakeBackend()
    sup = Jobs(backend, workers=1)
    sup.submit(1, 2, 3, 4)
    lost = []

    def script(b):
        if not lost:  # worker 0 holds 1 and 2: it answers 1, then dies playing 2
            lost.append(True)
            return [Replied(0, Done(1)), Lost(0, "worker-0 died (killed)", playing=2)]
        return answer_oldest(sup)(b)

    backend.script = script
    got = [job for job, _ in sup.stream()]
    assert got == [1, 2, 3, 4] and sup.tries == {2: 1}
    assert backend.sent == {0: [1, 2], 1: [2, 3, 4]}  # the new worker plays it again first
    assert sup.idle_deaths == 0 and sup.lost == 1


def test_a_worker_ended_on_purpose_charges_nothing_and_its_jobs_go_back_in_order():
    backend = FakeBackend(prefetch=3, spread_tail=False)
    sup = Jobs(backend, workers=1)
    sup._start()
    sup.submit(1, 2, 3, 4)
    sup._dispatch()
    sup._on_reply(0, Done(1, failed="the harness raised X"))  # its harness raised: 1 is tried again
    sup._on_lost(Lost(0, "Ray worker 0 died: its harness raised", playing=2, on_purpose=True))
    assert list(sup.queue) == [2, 3, 1, 4] and sup.tries == {1: 1}
    assert sup.idle_deaths == 0 and list(sup.workers) == [1]


def test_workers_that_keep_dying_between_jobs_stop_the_stream_in_the_backends_words():
    backend = FakeBackend()
    sup = Jobs(backend, workers=2)
    sup.submit(1, 2, 3, 4, 5, 6)
    backend.script = lambda b: [Lost(w, f"worker-{w} died", playing=None) for w in list(sup.workers)]
    with pytest.raises(WorkersLost, match=r"^workers keep dying \(7 so far\)$"):
        list(sup.stream())
    assert backend.stops == [True] and sup.idle_deaths == 7 == 3 * 2 + 1
    assert not sup.tries  # no job was charged for deaths between jobs


def test_a_backend_that_waits_for_no_worker_any_more_stops_the_stream_with_what_is_left():
    backend = FakeBackend(ready_at_start=False)
    sup = Jobs(backend, workers=1)
    sup.submit(1, 2, 3)
    rounds = iter([[Ready(0)], [Lost(0, "worker-0 died", playing=1)]])
    backend.script = lambda b: next(rounds, [])  # the replacement never says Ready

    def lost_all(left: int) -> str | None:
        backend.asked_left.append(left)
        return "none came back" if len(backend.asked_left) == 2 else None  # the backend's patience ends

    backend.lost_all = lost_all
    with pytest.raises(WorkersLost, match="^none came back$"):
        list(sup.stream())
    assert backend.asked_left[0] == 3  # queued and in flight: every job is left
    assert backend.stops == [True] and sup.tries == {1: 1}


def test_a_job_given_up_yields_its_last_reply_and_the_rest_is_done():
    backend = FakeBackend()
    sup = Jobs(backend, workers=1)
    sup.submit(1, 2)
    backend.script = lambda b: [
        Replied(w.wid, Done(w.inflight[0][1], failed="raised" if w.inflight[0][1] == 1 else ""))
        for w in sup.workers.values()
        if w.inflight
    ]
    got = list(sup.stream())
    assert got == [(1, Done(1, failed="raised")), (2, Done(2))] and sup.given_up == [1]
    assert backend.sent[0] == [1, 1, 1, 2]  # played again first


def test_a_rule_that_refuses_to_try_again_ends_the_stream_and_kills_the_workers():
    """As the luck helpers' (a deterministic job that stopped its helper would stop the next)."""

    class Once(Jobs):
        def again(self, job: int, why: str) -> bool:
            raise RuntimeError(why)

    backend = FakeBackend()
    sup = Once(backend, workers=2)
    sup.submit(1, 2, 3)
    backend.script = lambda b: [Lost(0, "a helper stopped (exit 1): boom", playing=1)]
    with pytest.raises(RuntimeError, match=r"^a helper stopped \(exit 1\): boom$"):
        with contextlib.closing(sup.stream()) as replies:
            list(replies)
    assert backend.stops == [True]
