"""Time control as data, enforced by the referee's clock before it runs out.

The clock is wall time from the ask, made fair on a busy machine: time a bot spent
waiting on the run queue for a CPU (measured by ``arena.match.fairclock``) extends its
deadline, up to ``Clock.wait_cap()``. The arithmetic lives here, free of /proc, so it is
tested on its own.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

UNLIMITED_S = 10.0 * 365 * 24 * 3600  # "no timeouts" for debugging: ten years

# The most a decision's deadline moves for time spent waiting for a CPU: 10x move_s,
# at least 2 s (a loaded 2-core machine can hold a runnable bot back for a second),
# at most 30 s, so that no bot can stall a match for long.
WAIT_CAP_FACTOR = 10.0
WAIT_CAP_MIN_S = 2.0
WAIT_CAP_MAX_S = 30.0
# While a bot is seen waiting for a CPU at its deadline, the referee looks again this
# much later (a running thread's CPU time moves within one tick, 4 ms at HZ=250).
WAIT_STEP_S = 0.025


@dataclass(frozen=True)
class TimeControl:
    startup_s: float = 10.0       # from launch to the bot's hello (Python start-up is slow)
    move_s: float = 1.0           # per decision
    bank_s: float | None = None   # optional per-match bank, spent when a decision takes over move_s
    grace_s: float = 0.05         # pipe and scheduling latency allowed on top of every limit

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Clock:
    """One seat's clock in one match: per-decision limit plus an optional bank."""

    def __init__(self, tc: TimeControl, unlimited: bool = False) -> None:
        self.tc = tc
        self.unlimited = unlimited
        self.bank_left = tc.bank_s

    def allowance(self) -> float:
        """Seconds this seat may think for the next decision (excluding grace)."""
        if self.unlimited:
            return UNLIMITED_S
        return self.tc.move_s + (self.bank_left or 0.0)

    def wait_cap(self) -> float:
        """The most a deadline may move for time spent waiting for a CPU (0 = pure wall time)."""
        return 0.0 if self.unlimited else wait_cap(self.tc.move_s)

    def deadline(self, sent_at: float) -> float:
        return sent_at + self.allowance() + (0.0 if self.unlimited else self.tc.grace_s)

    def spend(self, used_s: float) -> None:
        """Charge a decision that took ``used_s`` (wall time less the CPU wait credited)."""
        if self.bank_left is not None and used_s > self.tc.move_s:
            self.bank_left = max(0.0, self.bank_left - (used_s - self.tc.move_s))

    def time_left(self) -> float | None:
        return None if self.unlimited else round(self.allowance(), 3)


def wait_cap(limit_s: float) -> float:
    """The cap on the CPU-wait extension of a deadline whose own limit is ``limit_s``."""
    return min(WAIT_CAP_MAX_S, max(WAIT_CAP_MIN_S, WAIT_CAP_FACTOR * limit_s))


def wait_credit(*, late_s: float, window_s: float, bot_wait_s: float, bot_cpu_s: float,
                cpus: int, referee_wait_s: float) -> float:
    """Seconds of a decision that were the machine's fault, not the bot's.

    ``late_s``: how late the referee took its first look (it measures nothing before).
    Over the ``window_s`` measured since: ``bot_wait_s`` is the longest run-queue wait of
    any one of the bot's threads (the longest, not the sum: many runnable threads must
    not add up to more time than passed), ``bot_cpu_s`` the CPU the whole bot tree used,
    ``referee_wait_s`` the referee's own wait to be scheduled (it noticed the answer late).
    A bot that kept all ``cpus`` busy itself waited on its own threads: its wait counts
    only as far as it left the machine room for others.
    """
    window_s = max(0.0, window_s)
    room = max(0.0, window_s - max(0.0, bot_cpu_s) / max(1, cpus))
    bot = min(max(0.0, bot_wait_s), room)
    return max(0.0, late_s) + min(window_s, bot + max(0.0, referee_wait_s))


def extended_deadline(*, wall_deadline: float, credit_s: float, cap_s: float, now: float,
                      waiting_now: bool, step_s: float = WAIT_STEP_S) -> float | None:
    """The deadline after crediting CPU waits, or None if the bot has run out of time.

    ``waiting_now``: a bot thread is runnable but not running right now (its current wait
    is not yet in the kernel's counters), so look again ``step_s`` later. Never beyond
    ``wall_deadline + cap_s``.
    """
    target = wall_deadline + min(max(0.0, credit_s), cap_s)
    if waiting_now:
        target = max(target, now + step_s)
    target = min(target, wall_deadline + cap_s)
    return target if target > now else None
