"""The fair clock's measurements: how long a bot waited for a CPU during one decision.

Linux keeps, per thread, ``/proc/<pid>/task/<tid>/schedstat``: CPU time (ns), time spent
runnable on a run queue waiting for a CPU (ns), and the number of times it got one. When
a decision's wall deadline passes, the referee adds up what the bot's process tree (as the
host sees it: the sandbox launcher chain and the bot with its threads and children) waited
since the ask, and moves the deadline by that much (``timecontrol.wait_credit`` and
``extended_deadline``; capped by ``Clock.wait_cap``). A sleeping or stopped bot is not
runnable and earns nothing; a busy one is charged its CPU time.

Cost: nothing is read for a decision answered within ``BASELINE_AFTER_S``; a slower one
pays one look at the tree (a few /proc reads) then, and one more per check past its
deadline. Without schedstat (another OS, a kernel without CONFIG_SCHED_INFO) the clock
is pure wall time (``AVAILABLE`` is False).
"""

from __future__ import annotations

import os

from arena.match.timecontrol import extended_deadline, wait_credit

# The first look at the bot's counters comes this long after the ask: answers within it
# cost nothing, and the wait it misses is far inside grace_s.
BASELINE_AFTER_S = 0.005

# tid -> (cpu ns, run-queue wait ns, timeslices, runnable now)
Threads = dict[int, tuple[int, int, int, bool]]


def _ints(path: str) -> list[int] | None:
    try:
        with open(path, "rb") as f:
            return [int(x) for x in f.read().split()[:3]]
    except (OSError, ValueError):
        return None


def _available() -> bool:
    v = _ints("/proc/thread-self/schedstat")
    return v is not None and len(v) == 3


AVAILABLE = _available()
try:
    CPUS = len(os.sched_getaffinity(0))
except (AttributeError, OSError):  # pragma: no cover
    CPUS = os.cpu_count() or 1


def describe() -> str:
    """One line for `arena run`'s sandbox details and the docs."""
    if AVAILABLE:
        return "wall time less CPU waits (per-thread schedstat)"
    return "wall time only (no /proc schedstat here)"


def referee_wait_ns() -> int:
    """Run-queue wait of the calling thread so far (the referee's own)."""
    v = _ints("/proc/thread-self/schedstat")
    return v[1] if v and len(v) == 3 else 0


def tree_threads(root: int, limit: int = 4096) -> Threads:
    """Every thread of ``root`` and its descendants with its scheduler counters."""
    out: Threads = {}
    todo, seen = [root], set()
    while todo and len(seen) < limit:       # bounded: the pids cap bounds a bot anyway
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            base = f"/proc/{pid}/task/{tid}/"
            counters = _ints(base + "schedstat")
            try:
                with open(base + "stat", "rb") as f:
                    raw = f.read()
                state = raw[raw.rfind(b")") + 2:raw.rfind(b")") + 3]
            except OSError:
                continue
            if counters is not None and len(counters) == 3:
                out[int(tid)] = (counters[0], counters[1], counters[2], state == b"R")
            try:
                with open(base + "children", "rb") as f:
                    todo += [int(x) for x in f.read().split()]
            except (OSError, ValueError):
                pass
    return out


def baseline_due(asked_at: float, wall_deadline: float) -> float:
    """When the referee takes its first look at a decision's counters."""
    return min(asked_at + BASELINE_AFTER_S, wall_deadline)


class WaitMeter:
    """One decision of one bot, from its first look on: how far its deadline may move.

    Created only once ``baseline_due`` has passed without an answer (so a fast answer
    costs nothing); it takes the baseline at once.
    """

    def __init__(self, root: int, due: float, wall_deadline: float, cap_s: float,
                 now: float) -> None:
        self.root = root
        self.wall = wall_deadline
        self.cap = cap_s
        self.due = due
        threads = tree_threads(root)
        self.base: tuple[float, Threads, int] = (now, threads, referee_wait_ns())
        self.prev: tuple[float, Threads] = (now, threads)
        self.streak = {tid: now for tid, s in threads.items() if s[3]}  # tid -> runnable since
        self.probed: set[int] = set()        # tids given one extra look at the last check
        self.credit_s = 0.0

    def measure(self, now: float) -> tuple[float, bool]:
        """(seconds credited so far, whether a bot thread is waiting for a CPU right now)."""
        t0, base, ref0 = self.base
        prev_t, prev = self.prev
        cur = tree_threads(self.root)
        longest = cpu = 0.0
        waiting = False
        probed: set[int] = set()
        active = [tid for tid, s in cur.items() if s[3] or base.get(tid, (-1,))[:3] != s[:3]
                  or base[tid][3]]
        for tid, (c, w, n, runnable) in cur.items():
            b = base.get(tid)
            if b is None or c < b[0] or w < b[1]:
                b = (0, 0, 0, False)          # born since the baseline: all of it is new
            cpu += (c - b[0]) / 1e9
            if len(active) == 1 and tid == active[0] and b[3] and (n, w) == b[2:0:-1]:
                # the bot's only working thread was on a CPU at the first look and was never
                # scheduled in again: it neither slept nor queued since, so whatever is not
                # its CPU time was taken from it (a host stalling this VM's CPUs, IRQs)
                longest = max(longest, (now - t0) - (c - b[0]) / 1e9)
            ongoing = 0.0
            p = prev.get(tid)
            if runnable and p is not None and p[3] and p[:3] == (c, w, n):
                # runnable at both looks and never scheduled between: waiting all along
                ongoing = now - self.streak.get(tid, prev_t)
                waiting = True
            elif runnable:
                self.streak[tid] = now        # its current wait, if any, is not counted yet
                if tid not in self.probed:    # look once more; a busy thread shows CPU moving
                    probed.add(tid)
                    waiting = True
            else:
                self.streak.pop(tid, None)
            longest = max(longest, (w - b[1]) / 1e9 + ongoing)
        self.prev = (now, cur)
        self.probed = probed
        credit = wait_credit(late_s=t0 - self.due, window_s=now - t0, bot_wait_s=longest,
                             bot_cpu_s=cpu, cpus=CPUS,
                             referee_wait_s=(referee_wait_ns() - ref0) / 1e9)
        self.credit_s = min(credit, self.cap)
        return credit, waiting

    def extend(self, now: float) -> float | None:
        """At the deadline: the new deadline, or None when the bot's own time is up."""
        credit, waiting = self.measure(now)
        return extended_deadline(wall_deadline=self.wall, credit_s=credit, cap_s=self.cap,
                                 now=now, waiting_now=waiting)

    def accepts(self, arrived: float) -> bool:
        """An answer that arrived after the current deadline: still within the bot's own time?"""
        credit, _ = self.measure(arrived)
        return arrived <= self.wall + min(credit, self.cap)

    def charge(self, arrived: float) -> None:
        """An answer in time: measure the credit (for the bank) if a baseline was taken."""
        if arrived > self.base[0]:
            self.measure(arrived)
