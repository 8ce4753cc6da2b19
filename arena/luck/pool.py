"""The helper processes among which ``arena.luck.baselines.fill`` shares its jobs.

Each helper is a fresh interpreter running ``python -m arena.luck.helper`` (not a fork: the
process that runs a tournament may hold threads, Ray's or the log forwarders', whose locks a fork
would copy held). The helpers are a backend (``_Helpers``) of the one supervisor
(arena/supervisor.py), which hands each a chunk of jobs at a time: one JSON line each way. Luck
jobs are deterministic, so a chunk whose helper stopped would stop the next one too: it is not
tried again, and ``computed`` raises ``RuntimeError`` with the last line of the helper's stderr.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import tempfile
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from arena.luck.helper import luck_job
from arena.supervisor import Event, Lost, Replied, Supervisor

HELPER_MODULE = "arena.luck.helper"


def computed(jobs: list[list[Any]], workers: int) -> Iterator[Any]:
    """``luck_job`` of every job, in order: on ``workers`` helper processes when there is
    enough work to share (the jobs are independent), else in this process."""
    if workers < 2 or len(jobs) < 4 * workers:
        yield from map(luck_job, jobs)
        return
    size = max(1, min(32, len(jobs) // (8 * workers)))
    supervisor = _Chunks(_Helpers(), workers=workers)
    supervisor.submit(*(Chunk(i, jobs[start : start + size]) for i, start in enumerate(range(0, len(jobs), size))))
    done: dict[int, list[Any]] = {}
    following = 0  # the chunk whose results come next
    # closed on the way out: an error, or a consumer that stops early, kills the helpers at once
    with contextlib.closing(supervisor.stream()) as replies:
        for _, reply in replies:
            done[reply.index] = reply.results
            while following in done:
                yield from done.pop(following)
                following += 1


@dataclass(frozen=True)
class Chunk:
    index: int
    jobs: list[list[Any]]


@dataclass(frozen=True)
class Computed:
    index: int  # of the chunk
    results: list[Any]


class _Chunks(Supervisor[Chunk, Computed]):
    def key(self, job: Chunk) -> int:
        return job.index

    def answers(self, reply: Computed) -> int:
        return reply.index

    def again(self, job: Chunk, why: str) -> bool:
        raise RuntimeError(why)


class _Helper:
    """One helper process: chunks in on its stdin, results out on its stdout, in order."""

    def __init__(self) -> None:
        root = str(Path(__file__).resolve().parents[2])  # where arena/ and games/ live
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", HELPER_MODULE],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout
        self.received = b""  # part of an answer
        self.sent = 0
        self.pending: deque[tuple[int, int]] = deque()  # (number, chunk index) sent and not answered, oldest first

    def why_stopped(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.err.seek(0)
        tail = self.err.read().decode("utf-8", "replace").strip().splitlines()
        return f"a luck baseline helper stopped (exit {code}): {tail[-1] if tail else 'no message'}"

    def close(self, *, kill: bool) -> None:
        with contextlib.suppress(OSError):
            self.stdin.close()  # the helper ends at the end of its input
        if kill and self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for f in (self.stdout, self.err):
            with contextlib.suppress(OSError):
                f.close()


class _Helpers:
    """The helper processes, as a backend of the supervisor: one chunk at a time each."""

    prefetch = 1  # a chunk is a few seconds of work: no need to send the next ahead
    spread_tail = True
    ready_at_start = True

    def __init__(self) -> None:
        self.helpers: dict[int, _Helper] = {}
        self.next_wid = 0

    def start(self) -> int:
        wid = self.next_wid
        self.next_wid += 1
        self.helpers[wid] = _Helper()
        return wid

    def send(self, wid: int, job: Chunk) -> None:
        h = self.helpers[wid]
        h.sent += 1
        h.pending.append((h.sent, job.index))
        h.stdin.write(json.dumps(job.jobs).encode() + b"\n")
        h.stdin.flush()

    def wait(self, timeout_s: float) -> list[Event[Computed]]:
        by_fd = {h.stdout.fileno(): wid for wid, h in self.helpers.items()}
        poller = select.poll()  # not select(): it fails on descriptors above 1023
        for fd in by_fd:
            poller.register(fd, select.POLLIN)
        readable = [fd for fd, _ in poller.poll(max(0.0, timeout_s) * 1000.0)]
        events: list[Event[Computed]] = []
        for fd in readable:
            wid = by_fd[fd]
            h = self.helpers[wid]
            data = os.read(fd, 1 << 20)
            h.received += data
            while b"\n" in h.received:
                line, h.received = h.received.split(b"\n", 1)
                _, index = h.pending.popleft()
                events.append(Replied(wid, Computed(index, json.loads(line))))
            if not data:  # its end of the pipe closed: it stopped
                del self.helpers[wid]
                why = h.why_stopped()
                h.close(kill=True)
                events.append(Lost(wid, why, h.pending[0][0] if h.pending else None))
        return events

    def stop(self, *, kill: bool) -> None:
        for h in self.helpers.values():
            h.close(kill=kill)
        self.helpers.clear()

    def keep_dying(self, deaths: int) -> str:
        return f"luck baseline helpers keep stopping between chunks ({deaths} so far)"

    def lost_all(self, left: int) -> str | None:
        return None  # a helper started here is there at once
