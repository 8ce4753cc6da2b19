"""/proc scanning, the child subreaper, and process-tree kills.

Used for cleanup at every level; at levels without a PID namespace or cgroup it
is the only thing that catches setsid/double-fork escapees (they re-parent to
the referee, which is a ``PR_SET_CHILD_SUBREAPER``).
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time
from collections.abc import Set

_CLK_TCK = os.sysconf("SC_CLK_TCK")
_subreaper_done = 0  # the pid that became a subreaper (0: none yet)
_subreaper_lock = threading.Lock()


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (once; idempotent)."""
    global _subreaper_done
    with _subreaper_lock:
        # per process: a forked worker inherits this flag but not the prctl, and its
        # bots' orphans would then go to the parent, which neither sweeps nor reaps them
        if _subreaper_done == os.getpid():
            return True
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            ok = bool(libc.prctl(36, 1, 0, 0, 0) == 0)  # PR_SET_CHILD_SUBREAPER
        except (OSError, AttributeError):
            ok = False
        _subreaper_done = os.getpid() if ok else 0
        return ok


def stat(pid: int) -> tuple[int, int, float, int] | None:
    """(ppid, start ticks, cpu seconds incl. reaped children, pgid) of ``pid``, or None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    rest = raw[raw.rfind(b")") + 2 :].split()
    # fields after comm: state(0) ppid(1) pgrp(2) ... utime(11) stime(12) cutime(13) cstime(14) ... starttime(19)
    try:
        cpu = (int(rest[11]) + int(rest[12]) + int(rest[13]) + int(rest[14])) / _CLK_TCK
        return int(rest[1]), int(rest[19]), cpu, int(rest[2])
    except (IndexError, ValueError):
        return None


def table() -> dict[int, tuple[int, int, float, int]]:
    """Every visible process: pid -> (ppid, start ticks, cpu seconds, pgid)."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = stat(int(name))
            if st is not None:
                out[int(name)] = st
    return out


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (CONFIG_PROC_CHILDREN, else a /proc scan)."""
    try:
        out: list[int] = []
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(x) for x in f.read().split()]
        return out
    except FileNotFoundError:
        return [p for p, st in table().items() if st[0] == pid] if os.path.exists(f"/proc/{pid}") else []
    except OSError:
        return []


def descendants(root: int, tab: dict[int, tuple[int, int, float, int]] | None = None) -> set[int]:
    """All current descendants of ``root`` (not including it)."""
    tab = table() if tab is None else tab
    kids: dict[int, list[int]] = {}
    for pid, (ppid, *_rest) in tab.items():
        kids.setdefault(ppid, []).append(pid)
    out: set[int] = set()
    stack = [root]
    while stack:
        for c in kids.get(stack.pop(), ()):
            if c not in out:
                out.add(c)
                stack.append(c)
    return out


def tree_cpu(root: int) -> float:
    """CPU seconds of ``root`` and its live descendants (reaped ones via cutime)."""
    tab = table()
    return sum(tab[p][2] for p in descendants(root, tab) | {root} if p in tab)


def kill_pids(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def reap(pids: set[int], timeout: float = 0.0) -> None:
    """Reap those of ``pids`` that are or become our zombie children (never touches others).

    A killed process deep in a tree is re-parented to us only after its parent
    died, so this waits up to ``timeout`` for that to happen.
    """
    me = os.getpid()
    end = time.monotonic() + timeout
    left = set(pids)
    while left:
        for pid in list(left):
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    left.discard(pid)
                    continue
            except ChildProcessError:
                pass
            except OSError:
                left.discard(pid)
                continue
            st = stat(pid)
            if st is None or (
                st[0] != me
                and _state(pid) in (b"Z", b"X")
                and st[0] != 1
                and stat(st[0]) is not None
                and _state(st[0]) not in (b"Z", b"X", None)
            ):
                left.discard(pid)  # gone, or a living parent will reap it
        if not left or time.monotonic() >= end:
            return
        time.sleep(0.002)


def sweep(
    roots: set[int],
    *,
    protect: set[int],
    since_ticks: int,
    orphans: bool,
    keep: Set[int] = frozenset(),
    timeout: float = 2.0,
) -> int:
    """SIGKILL the trees under ``roots`` until none is left; returns the number killed.

    Pids in ``keep`` are killed but not reaped (their owner collects the status).
    With ``orphans`` it also kills our own children that are not in ``protect``
    and started at or after ``since_ticks``: escapees re-parented to us.
    """
    me = os.getpid()
    killed: set[int] = set()
    end = time.monotonic() + timeout
    while True:
        tab = table()
        targets: set[int] = set()
        for r in roots | killed:
            if r in tab:
                targets |= descendants(r, tab) | {r}
        if orphans:
            for pid, (ppid, start, _cpu, _pg) in tab.items():
                if ppid == me and pid not in protect and start >= since_ticks:
                    targets |= descendants(pid, tab) | {pid}
        targets -= protect
        # a killed zombie stays in the table until reaped: count only the living
        live = {p for p in targets if _state(p) not in (b"Z", b"X", None)}
        if not live:
            reap((killed | targets) - keep, timeout=0.3)
            return len(killed)
        kill_pids(live)
        killed |= live
        reap(killed - keep)
        if time.monotonic() >= end:
            return len(killed)
        time.sleep(0.002)


def orphaned_inits(marker: bytes, *, protect: set[int], since_ticks: int) -> set[int]:
    """Our own children whose command line holds ``marker`` (a sandbox's start script), started at
    or after ``since_ticks``, and not in ``protect``.

    bubblewrap's init arms its parent-death signal only after it has been cloned, so a monitor killed
    in that window leaves the init orphaned to us (the subreaper), still waiting for the dead monitor.
    """
    found = set()
    for pid in children(os.getpid()):
        st = stat(pid)
        if pid in protect or st is None or st[1] < since_ticks or _state(pid) in (b"Z", b"X", None):
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker in f.read():
                    found.add(pid)
        except OSError:
            continue
    return found


def _state(pid: int) -> bytes | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return raw[raw.rfind(b")") + 2 : raw.rfind(b")") + 3]


def start_ticks(pid: int) -> int:
    """Start time of ``pid`` in clock ticks since boot (0 if unknown)."""
    st = stat(pid)
    return st[1] if st else 0


def boot_ticks_now() -> int:
    """Now, in the clock-tick scale of ``start_ticks``."""
    with open("/proc/uptime") as f:
        return int(float(f.read().split()[0]) * _CLK_TCK)
