"""One supervisor for every way of playing matches: dispatch, retries, lost workers, typed replies.

A ``Backend`` only knows how to start a worker, send it a match and say what happened since
(``Replied`` with a typed reply of ``arena.records.replies``, or ``Lost``, with the number of the
match the worker was playing when it died). Everything else is here, written once:

* dispatch: each worker holds at most ``prefetch`` matches, the second only while the queue has
  more matches than there are workers (at the tail, a match queued behind a long one would wait
  for it while another worker idles);
* a lost worker: replies it sent before dying count; the match it was playing goes back to the
  queue first and counts a try (``Retries``: given up after ``MAX_TRIES``), the others it held go
  back uncounted, a match already stored counts as played; a new worker takes its place while
  there is work; workers that keep dying between matches stop the run (``WorkersLost``);
* a match whose harness raised is played again, counting a try.

Matches come in through ``submit`` (thread-safe; a long-running service feeds it while ``stream``
runs) or ``top_up(queue)``, a hook called before each dispatch that may add to the queue or clear it
(an adaptive schedule's next round, a duel's next deals). ``stream`` yields each match with its
reply as it comes; ``stream(forever=True)`` waits for more work until ``close``.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from arena.errors import WorkersLost
from arena.records.replies import Played, Raised, Reply
from arena.records.spec import MatchSpec
from arena.tournament.retries import MAX_TRIES, Retries

log = logging.getLogger("arena.runner")


@dataclass(frozen=True)
class Replied:
    wid: int
    reply: Reply


@dataclass(frozen=True)
class Lost:
    """Worker ``wid`` is gone. ``playing``: the number (1 = the first match sent to it) of the match it
    was playing, None if it was between matches. ``why``: one line for run.log."""

    wid: int
    why: str
    playing: int | None


Event = Replied | Lost


class Backend(Protocol):
    """Where matches are played (local processes, Ray actors)."""

    def start(self) -> int:
        """Start one worker; returns its id."""

    def send(self, wid: int, match: MatchSpec) -> None:
        """Hand ``match`` to worker ``wid`` (an OSError: it died; ``wait`` reports it)."""

    def wait(self, timeout_s: float) -> list[Event]:
        """What happened since the last call (a worker's replies before its loss), waiting up to ``timeout_s``."""

    def stop(self, *, kill: bool) -> None:
        """End every worker: ``kill`` at once (Ctrl-C, an error), else let them finish and exit."""


@dataclass
class _Worker:
    wid: int
    sent: int = 0  # matches sent, numbered as the worker counts
    inflight: deque[tuple[int, MatchSpec]] = field(default_factory=deque)  # sent, not answered; oldest first


class Supervisor:
    POLL_S = 0.25

    def __init__(
        self,
        backend: Backend,
        *,
        workers: int,
        retries: Retries,
        stored: Callable[[MatchSpec], bool],
        prefetch: int = 2,
    ) -> None:
        self.backend = backend
        self.n_workers = max(1, workers)
        self.retries = retries
        self.stored = stored  # whether a match is in the store already (it finished as its worker died)
        self.prefetch = prefetch
        self.queue: deque[MatchSpec] = deque()
        self.workers: dict[int, _Worker] = {}
        self.idle_deaths = 0
        self._lock = threading.Lock()  # guards the queue against submit() from other threads
        self._closed = threading.Event()
        self._out: list[tuple[MatchSpec, Reply]] = []  # replies to yield, including ones made here

    # ---- feeding ---------------------------------------------------------------------------

    def submit(self, *matches: MatchSpec) -> None:
        with self._lock:
            self.queue.extend(matches)

    def close(self) -> None:
        """``stream(forever=True)`` returns once what is queued and in flight is played."""
        self._closed.set()

    def busy(self) -> bool:
        return any(w.inflight for w in self.workers.values())

    # ---- the loop ------------------------------------------------------------------------

    def stream(
        self, top_up: Callable[[deque[MatchSpec]], None] | None = None, *, forever: bool = False
    ) -> Iterator[tuple[MatchSpec, Reply]]:
        """Play every match submitted (and topped up), yielding (match, reply) as replies come; a
        match retried yields once, when it is finally played or given up (given-up matches are in
        ``retries``). Ends when nothing is queued or in flight (``forever``: and ``close`` was called).
        A consumer that stops early closes the stream (``contextlib.closing``): that kills the workers."""
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
                    else:
                        self._on_lost(event)
                out, self._out = self._out, []
                yield from out
        except BaseException:
            self.backend.stop(kill=True)
            raise
        self.backend.stop(kill=False)

    def _start(self) -> None:
        wid = self.backend.start()
        self.workers[wid] = _Worker(wid)

    def _dispatch(self) -> None:
        with self._lock:
            for depth in range(1, self.prefetch + 1):
                for w in list(self.workers.values()):
                    if len(w.inflight) < depth and self.queue and (depth == 1 or len(self.queue) > len(self.workers)):
                        match = self.queue.popleft()
                        w.sent += 1
                        w.inflight.append((w.sent, match))
                        try:
                            self.backend.send(w.wid, match)
                        except OSError:
                            pass  # it died: the backend reports it

    def _on_reply(self, wid: int, reply: Reply) -> None:
        w = self.workers.get(wid)
        entry = None if w is None else next((e for e in w.inflight if e[1].match_id == reply.match_id), None)
        if w is None or entry is None:
            return  # not this worker's (cannot happen): nothing to account
        w.inflight.remove(entry)
        if isinstance(reply, Raised):
            self._retry(entry[1], f"the harness raised {reply.why}", reply)
        else:
            self._out.append((entry[1], reply))

    def _on_lost(self, lost: Lost) -> None:
        w = self.workers.pop(lost.wid, None)
        if w is None:
            return
        culprit = next((m for n, m in w.inflight if n == lost.playing), None)
        # the others it held were waiting, or finished and being stored: played again, not counted as tries
        for _, match in reversed([e for e in w.inflight if e[1] is not culprit]):
            self._retry(match, "", None, count=False)
        if culprit is None:
            self.idle_deaths += 1
            log.error("worker-%d died (%s) between matches", lost.wid, lost.why)
            if self.idle_deaths > MAX_TRIES * max(1, len(self.workers) + 1):
                raise WorkersLost("workers keep dying between matches; see run.log in the results folder")
        else:
            self._retry(culprit, f"worker-{lost.wid} died ({lost.why})", None)
        if self.queue or self.busy():
            self._start()

    def _retry(self, match: MatchSpec, why: str, reply: Reply | None, *, count: bool = True) -> None:
        if self.stored(match):
            self._out.append((match, Played(match.match_id)))  # stored just before its worker died
            return
        with self._lock:
            if not count or self.retries.again(match, why):
                self.queue.appendleft(match)
            elif reply is not None:
                self._out.append((match, reply))  # given up: the caller hears the last reply
