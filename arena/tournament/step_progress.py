"""Progress of a long step as plain lines, `arena: <what>: N of M <unit> (P%)`: never silent
for more than ``every_s`` seconds, and never a line per item. Used where the run has no bar
(the luck baselines after the matches); the lines reach a terminal's live display like any
other message."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO


class StepProgress:
    """``progress(done, total)`` callback: the ``intro`` line at 0, then a count line at most
    every ``every_s`` seconds (and always the last one, with the time it took)."""

    def __init__(
        self,
        err: TextIO,
        what: str,
        unit: str,
        *,
        intro: str = "",
        every_s: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.err, self.what, self.unit, self.intro = err, what, unit, intro
        self.every_s, self.clock = every_s, clock
        self.started = self.last = clock()

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if done == 0:
            self.started = self.last = now
            self.err.write(f"arena: {self.what}: 0 of {total} {self.unit}{self.intro}\n")
        elif done >= total:
            self.err.write(f"arena: {self.what}: {total} of {total} {self.unit} done in {now - self.started:.1f} s\n")
        elif now - self.last >= self.every_s:
            self.last = now
            self.err.write(f"arena: {self.what}: {done} of {total} {self.unit} ({100 * done // total}%)\n")
        else:
            return
        self.err.flush()
