"""The processes a test started, and only those.

Several test suites run on one machine at once, so a test never judges "any process
that runs slow_random.py": it judges processes that carry a marker only it knows (a
path under its own tmp_path, a uuid), that sit in a session it created, or that it
recorded in its own pid tree (pid + start time, so a reused pid is not mistaken).
"""

from __future__ import annotations

import os
import threading


def stat(pid: int) -> tuple[str, int, int, int, int] | None:
    """(state, ppid, session id, start ticks, process group) of ``pid``, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    rest = raw[raw.rfind(b")") + 2 :].split()
    return rest[0].decode(), int(rest[1]), int(rest[3]), int(rest[19]), int(rest[2])


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _running(pid: int) -> bool:
    st = stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def with_marker(marker: str) -> list[int]:
    """Running processes (not this one, not zombies) whose argv contains ``marker``.

    ``marker`` must be unique to the calling test: a uuid or a path under its tmp_path.
    """
    assert len(marker) >= 16, f"marker {marker!r} is too short to be unique to one test"
    needle, me, found = marker.encode(), os.getpid(), []
    for pid in _pids():
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if needle in cmd and _running(pid):
            found.append(pid)
    return found


def in_session(sid: int) -> list[int]:
    """Running processes of session ``sid`` (a session the test created, e.g. start_new_session)."""
    return [pid for pid in _pids() if (st := stat(pid)) and st[2] == sid and st[0] not in ("Z", "X")]


def descendants(root: int) -> dict[int, int]:
    """Running descendants of ``root`` (pid -> start ticks), ``root`` excluded."""
    children: dict[int, list[tuple[int, int]]] = {}
    for pid in _pids():
        st = stat(pid)
        if st is not None and st[0] not in ("Z", "X"):
            children.setdefault(st[1], []).append((pid, st[3]))
    out: dict[int, int] = {}
    todo = [root]
    while todo:
        for pid, ticks in children.get(todo.pop(), ()):
            if pid not in out:
                out[pid] = ticks
                todo.append(pid)
    return out


def still_running(recorded: dict[int, int]) -> list[int]:
    """The recorded processes (pid -> start ticks) that still run, the same process each."""
    return [
        pid
        for pid, ticks in recorded.items()
        if (st := stat(pid)) is not None and st[3] == ticks and st[0] not in ("Z", "X")
    ]


class TreeRecorder:
    """Records, in a thread, every process that ever runs below ``root`` until stopped."""

    def __init__(self, root: int, every_s: float = 0.02) -> None:
        self.root, self.every_s = root, every_s
        self.seen: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> TreeRecorder:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def record(self) -> None:
        self.seen.update(descendants(self.root))

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.record()

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self.record()


def as_from_a_terminal() -> None:
    """``preexec_fn`` for an arena the test will Ctrl-C: SIGINT at its default, as in a terminal.

    A test suite started in the background of a non-interactive shell (CI scripts, ``cmd &``)
    inherits SIGINT ignored, and Python then never raises KeyboardInterrupt: the test would
    judge its launcher's signal disposition instead of the arena.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
