"""Giving up on a match the harness keeps failing, alike for the local pool and Ray.

A match whose worker dies, or whose harness raises, is played again, ``MAX_TRIES``
times at most; then it is given up, logged to run.log with its bots and seats, and
named in the run's summary (the run ends incomplete).
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from arena.records.spec import MatchSpec

log = logging.getLogger("arena.run")

MAX_TRIES = 3  # a match whose worker dies (or whose harness raises) this often is given up


class Retries:
    """How often each match failed for the harness (its worker died, the harness raised):
    played again up to ``MAX_TRIES`` times, then given up and named in ``given_up``.
    Shared by the local pool and the Ray executor, so both give up alike."""

    def __init__(self, given_up: list[str]) -> None:
        self.given_up = given_up
        self.tries: Counter[str] = Counter()

    def again(self, match: MatchSpec, why: str) -> bool:
        """Count one failed try of ``match`` (logged with its seats); True: play it again."""
        self.tries[match.match_id] += 1
        n = self.tries[match.match_id]
        if n >= MAX_TRIES:
            log.error("match %s (%s): %s; given up after %d tries", match.match_id, seats_text(match.bots), why, n)
            self.given_up.append(f"{match.match_id} ({seats_text(match.bots)}): {why}, {n} tries")
            return False
        log.error(
            "match %s (%s): %s; playing it again (try %d of %d)",
            match.match_id,
            seats_text(match.bots),
            why,
            n + 1,
            MAX_TRIES,
        )
        return True


def seats_text(bots: Any) -> str:
    """'seat 0 alice, seat 1 bob': who sat where, for run.log."""
    return ", ".join(f"seat {i} {b}" for i, b in enumerate(bots))
