"""Time control as data, enforced by the referee's clock before it runs out."""

from __future__ import annotations

from arena.records.controls import TimeControl

__all__ = ["Clock", "TimeControl", "UNLIMITED_S"]

UNLIMITED_S = 10.0 * 365 * 24 * 3600  # "no timeouts" for debugging: ten years


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

    def deadline(self, sent_at: float) -> float:
        return sent_at + self.allowance() + (0.0 if self.unlimited else self.tc.grace_s)

    def spend(self, used_s: float) -> None:
        if self.bank_left is not None and used_s > self.tc.move_s:
            self.bank_left = max(0.0, self.bank_left - (used_s - self.tc.move_s))

    def time_left(self) -> float | None:
        return None if self.unlimited else round(self.allowance(), 3)
