"""One supervisor for every pool of workers: dispatch, retries, lost workers, typed replies.

Generic over the job and its reply, so each pool is only a ``Backend`` of it: the tournament's
local processes and Ray actors (jobs are ``MatchSpec``s, replies ``arena.records.replies``; the
match rules are ``arena.tournament.supervisor.MatchSupervisor``), and the luck helpers
(``arena.luck.pool``: chunks of luck jobs). A backend only knows how to start a worker, send it a
job and say what happened since: ``Ready`` (a worker that sets itself up first, a Ray actor, now
takes jobs), ``Replied`` (a typed reply), ``Lost`` (with the number of the job it was playing when
it died). Everything else is here, written once:

* dispatch: each worker holds at most ``backend.prefetch`` jobs; with ``backend.spread_tail`` the
  ones beyond the first only while the queue has more jobs than there are workers (at the tail, a
  job queued behind a long one would wait for it while another worker idles);
* a lost worker: replies it sent before dying count; the job it was playing goes back to the queue
  first and counts a try (``again``: the subclass's rule, e.g. given up after three tries), the others
  it held go back uncounted, a job already done counts as done (``done``); a new worker takes its
  place while there is work; workers that keep dying between jobs stop the run (``WorkersLost``,
  in the backend's words), as does a backend that waited too long for any worker to come back
  (``backend.lost_all``);
* a reply saying the job failed for the harness (``failed``) plays it again, counting a try.

Jobs come in through ``submit`` (thread-safe: a long-running service feeds it while ``stream``
runs) or ``top_up(queue)``, a hook called before each dispatch that may add to the queue or clear it
(an adaptive schedule's next round, a duel's next deals, a ladder's matchmaker). ``stream`` yields
each job with its reply as it comes; ``stream(forever=True)`` waits for more work until ``close``.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Generator, Hashable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from arena.errors import WorkersLost

J = TypeVar("J")  # a job
R = TypeVar("R")  # a worker's reply to a job
J_contra = TypeVar("J_contra", contravariant=True)


@dataclass(frozen=True)
class Replied(Generic[R]):
    wid: int
    reply: R


@dataclass(frozen=True)
class Lost:
    """Worker ``wid`` is gone. ``playing``: the number (1 = the first job sent to it) of the job it
    was playing, None if it was between jobs. ``why``: what happened, as the retry names it in
    run.log (``worker-3 died (killed by signal 9)``). ``on_purpose``: the backend ended it (its
    harness raised: its state is unknown); nothing it held counts a try, nor does its death."""

    wid: int
    why: str
    playing: int | None
    on_purpose: bool = False


@dataclass(frozen=True)
class Ready:
    """Worker ``wid`` is set up and takes jobs (for a backend whose workers are not ready at start)."""

    wid: int


Event = Replied[R] | Lost | Ready


class Backend(Protocol[J_contra, R]):
    """Where jobs are done (local processes, Ray actors, luck helpers)."""

    prefetch: int  # jobs a worker holds at most
    spread_tail: bool  # the jobs beyond a worker's first only while the queue is longer than the workers
    ready_at_start: bool  # False: a worker takes jobs after its ``Ready`` event

    def start(self) -> int:
        """Start one worker; returns its id."""

    def send(self, wid: int, job: J_contra) -> None:
        """Hand ``job`` to worker ``wid`` (an OSError: it died; ``wait`` reports it)."""

    def wait(self, timeout_s: float) -> list[Event[R]]:
        """What happened since the last call (a worker's replies before its loss), waiting up to ``timeout_s``."""

    def stop(self, *, kill: bool) -> None:
        """End every worker: ``kill`` at once (Ctrl-C, an error), else let them finish and exit."""

    def keep_dying(self, deaths: int) -> str:
        """The one line of ``WorkersLost`` when workers keep dying between jobs."""

    def lost_all(self, left: int) -> str | None:
        """Asked while no worker is ready after a loss: the one line of ``WorkersLost`` once the
        backend gives up waiting for one (``left``: jobs not done), else None."""


@dataclass
class _Worker(Generic[J]):
    wid: int
    live: bool = True  # takes jobs
    sent: int = 0  # jobs sent, numbered as the worker counts
    inflight: deque[tuple[int, J]] = field(default_factory=deque)  # sent, not answered; oldest first


class Supervisor(Generic[J, R]):
    """Subclasses say what a job and a reply are: ``key``, ``answers``, ``failed``, ``again``, ``done``."""

    POLL_S = 0.25
    IDLE_DEATHS_PER_WORKER = 3  # deaths between jobs, per worker, before the run stops

    def __init__(self, backend: Backend[J, R], *, workers: int) -> None:
        self.backend = backend
        self.n_workers = max(1, workers)
        self.queue: deque[J] = deque()
        self.workers: dict[int, _Worker[J]] = {}
        self.idle_deaths = 0
        self.lost = 0
        self._lock = threading.Lock()  # guards the queue against submit() from other threads
        self._closed = threading.Event()
        self._out: list[tuple[J, R]] = []  # replies to yield, including ones made here
        self._stopped = False  # the backend's workers are stopped (``stop``)

    # ---- what a job is (the subclass's) ------------------------------------------------------

    def key(self, job: J) -> Hashable:
        raise NotImplementedError

    def answers(self, reply: R) -> Hashable:
        """The key of the job ``reply`` answers."""
        raise NotImplementedError

    def failed(self, reply: R) -> str | None:
        """Why ``reply`` says the job failed for the harness (it is played again, counting a try), or None."""
        return None

    def again(self, job: J, why: str) -> bool:
        """Count one failed try of ``job``; True: play it again (False: given up, or raise)."""
        raise NotImplementedError

    def done(self, job: J) -> R | None:
        """The reply for a job going back to the queue that was done all the same (stored just before
        its worker died), else None."""
        return None

    # ---- feeding ---------------------------------------------------------------------------

    def submit(self, *jobs: J) -> None:
        with self._lock:
            self.queue.extend(jobs)

    def close(self) -> None:
        """``stream(forever=True)`` returns once what is queued and in flight is done."""
        self._closed.set()

    def busy(self) -> bool:
        return any(w.inflight for w in self.workers.values())

    def stop(self, *, kill: bool = True) -> None:
        """Stop the backend's workers, once: ``stream`` does it as it ends, and a consumer calls it
        again on its way out, which only acts if that stop never finished (a second Ctrl-C can cut
        it short before it begins, and a worker left running is waited for at exit)."""
        if not self._stopped:
            self.backend.stop(kill=kill)
            self._stopped = True

    # ---- the loop ------------------------------------------------------------------------

    def stream(
        self, top_up: Callable[[deque[J]], None] | None = None, *, forever: bool = False
    ) -> Generator[tuple[J, R], None, None]:
        """Do every job submitted (and topped up), yielding (job, reply) as replies come; a job
        retried yields once, when it is finally done or given up. Ends when nothing is queued or in
        flight (``forever``: and ``close`` was called). A consumer that stops early closes the stream
        (``contextlib.closing``): that kills the workers."""
        try:
            for _ in range(self.n_workers):
                self._start()
            while True:
                with self._lock:
                    if top_up is not None:
                        top_up(self.queue)
                    idle = not (self.queue or self.busy())
                if idle and (not forever or self._closed.is_set()):
                    break
                if not self.workers and not idle:  # all died idle before more work came: start one again
                    self._start()
                self._dispatch()
                for event in self.backend.wait(self.POLL_S):
                    if isinstance(event, Replied):
                        self._on_reply(event.wid, event.reply)
                    elif isinstance(event, Lost):
                        self._on_lost(event)
                    elif event.wid in self.workers:
                        self.workers[event.wid].live = True
                if self.lost and not any(w.live for w in self.workers.values()):
                    why = self.backend.lost_all(self._left())
                    if why is not None:
                        raise WorkersLost(why)
                out, self._out = self._out, []
                yield from out
        except BaseException:
            self.stop(kill=True)
            raise
        self.stop(kill=False)

    def _left(self) -> int:
        return len(self.queue) + sum(len(w.inflight) for w in self.workers.values())

    def _start(self) -> None:
        wid = self.backend.start()
        self.workers[wid] = _Worker(wid, live=self.backend.ready_at_start)

    def _dispatch(self) -> None:
        with self._lock:
            live = [w for w in self.workers.values() if w.live]
            for depth in range(1, self.backend.prefetch + 1):
                for w in live:
                    if len(w.inflight) >= depth or not self.queue:
                        continue
                    if depth > 1 and self.backend.spread_tail and len(self.queue) <= len(live):
                        continue
                    job = self.queue.popleft()
                    w.sent += 1
                    w.inflight.append((w.sent, job))
                    try:
                        self.backend.send(w.wid, job)
                    except OSError:
                        pass  # it died: the backend reports it

    def _on_reply(self, wid: int, reply: R) -> None:
        w = self.workers.get(wid)
        key = self.answers(reply)
        entry = None if w is None else next((e for e in w.inflight if self.key(e[1]) == key), None)
        if w is None or entry is None:
            return  # not this worker's (cannot happen): nothing to account
        w.inflight.remove(entry)
        why = self.failed(reply)
        if why is not None:
            self._retry(entry[1], why, reply)
        else:
            self._out.append((entry[1], reply))

    def _on_lost(self, lost: Lost) -> None:
        w = self.workers.pop(lost.wid, None)
        if w is None:
            return
        self.lost += 1
        culprit = None if lost.on_purpose else next((j for n, j in w.inflight if n == lost.playing), None)
        # the others it held were waiting, or finished and being stored: played again, not counted as tries
        for _, job in reversed([e for e in w.inflight if e[1] is not culprit]):
            self._retry(job, "", None, count=False)
        if culprit is not None:
            self._retry(culprit, lost.why, None)
        elif not lost.on_purpose:
            self.idle_deaths += 1
            if self.idle_deaths > self.IDLE_DEATHS_PER_WORKER * self.n_workers:
                raise WorkersLost(self.backend.keep_dying(self.idle_deaths))
        if self.queue or self.busy():
            self._start()

    def _retry(self, job: J, why: str, reply: R | None, *, count: bool = True) -> None:
        finished = self.done(job)
        if finished is not None:
            self._out.append((job, finished))  # done just before its worker died
            return
        with self._lock:
            if not count or self.again(job, why):
                self.queue.appendleft(job)
            elif reply is not None:
                self._out.append((job, reply))  # given up: the caller hears the last reply
