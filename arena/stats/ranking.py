"""Active ranking on duplicate deal sets (Heckel, Shah, Ramchandran, Wainwright 2016).

A bot's *Borda score* is the expected share of opponents it finishes ahead of, in a group
whose other seats hold bots drawn uniformly from the rest of the field, over every seat
rotation of one deal (a tie counts half). It is model-free (no Bradley-Terry or Thurstone
assumption), it is what a full round robin's mean place converges to, and its order is the
"true ranking" here.

One *sample* of bot ``i`` is one deal set of a group drawn for ``i``: the mean, over its
opponents in the group and over the group's seat rotations, of 1 (ahead), 0.5 (tie) or 0
(behind). Samples lie in [0, 1]; their mean estimates the Borda score without bias.

Each bot's score gets a confidence interval meant to hold at every round at once, however
the run decides when to stop: a normal interval on its samples (``half_width``: the sample
variance shrunk towards the largest possible, 1/4, and no claim below ``MIN_SAMPLES``), its
error ``1 - confidence`` shared over the bots and over doubling epochs of the sample size
(``epoch_delta``). It is an approximation (the normal law, and one look per epoch paid for),
not a theorem; in simulation (benchmarks/adaptive_ranking.py, P9) the decisions were right
more often than ``confidence`` says. If every interval holds, every decision below is right.

Decisions (Heckel et al.'s AR algorithm for a partition of the ranks): bot ``i``'s rank lies
in [1 + (bots surely ahead), n - (bots surely behind)], where "surely ahead" means the other's
interval lies wholly above ``i``'s. The target partition is every rank on its own (the whole
ranking) or ranks 1..k on their own and the rest as one set (the top k, in order). A bot is
decided once its possible ranks fall in one set; an active bot gets another sample each
round; the race is over when every bot is decided.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from dataclasses import dataclass, field
from typing import Iterable, Sequence


def pair_share(places: Sequence[int], seat: int, others: Iterable[int]) -> float:
    """The share of ``others`` (seats) that ``seat`` finished ahead of in one match (ties half)."""
    mine = places[seat]
    seats = list(others)
    won = sum(1.0 if mine < places[o] else 0.5 if mine == places[o] else 0.0 for o in seats)
    return won / len(seats)


def deal_set_sample(bot: str, matches: Sequence[tuple[Sequence[str], Sequence[int]]]) -> float:
    """One sample of ``bot``: its mean share of opponents beaten over the matches of one deal
    set, each match given as (bot names in seat order, places in seat order, 0 = first)."""
    total = 0.0
    for bots, places in matches:
        seat = list(bots).index(bot)
        total += pair_share(places, seat, (s for s in range(len(bots)) if s != seat))
    return total / len(matches)


MIN_SAMPLES = 3   # fewer samples than this give no decision (the variance is not yet known)
PRIOR_WEIGHT = 1.0  # pseudo-samples of the largest variance a [0, 1] sample can have (1/4)


def half_width(n: int, mean: float, sq_mean: float, delta: float) -> float:
    """Half-width of a two-sided interval of level 1 - ``delta`` for the mean of ``n`` samples
    in [0, 1]: the normal approximation z * sqrt(V / n), with V the sample variance shrunk
    towards 1/4 by ``PRIOR_WEIGHT`` pseudo-samples (so a few equal samples do not claim
    certainty). Infinite below ``MIN_SAMPLES``."""
    if n < MIN_SAMPLES:
        return math.inf
    var = max(0.0, sq_mean - mean * mean) * n / (n - 1)
    var = (var * (n - 1) + 0.25 * PRIOR_WEIGHT) / (n - 1 + PRIOR_WEIGHT)
    return NormalDist().inv_cdf(1.0 - delta / 2.0) * math.sqrt(var / n)


def epoch_delta(delta: float, n: int) -> float:
    """The error allowed at sample size ``n`` so that the errors of every size sum to at most
    ``delta``: sizes are grouped in doubling epochs (epoch e holds n in [2^e, 2^(e+1))), epoch e
    gets 6 delta / (pi^2 (e + 1)^2), and a bound checked at every size of an epoch costs
    (approximately, as in the law of the iterated logarithm) one epoch's share."""
    epoch = max(0, n.bit_length() - 1)
    return 6.0 * delta / (math.pi ** 2 * (epoch + 1) ** 2)


@dataclass
class _Tally:
    n: int = 0
    total: float = 0.0
    squares: float = 0.0

    def add(self, x: float) -> None:
        self.n += 1
        self.total += x
        self.squares += x * x

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else 0.5


@dataclass
class BordaRace:
    """Borda scores with anytime intervals and the decisions they allow (module docstring).

    ``top`` None: decide the whole ranking; k: decide ranks 1..k in order (the rest unordered).
    """

    names: tuple[str, ...]
    confidence: float = 0.95
    top: int | None = None
    tallies: dict[str, _Tally] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.names = tuple(self.names)
        if len(set(self.names)) != len(self.names) or len(self.names) < 2:
            raise ValueError("a race needs at least two distinct bots")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError("confidence must lie strictly between 0 and 1")
        if self.top is not None and not 1 <= self.top < len(self.names):
            raise ValueError("top must be at least 1 and less than the number of bots")
        for name in self.names:
            self.tallies.setdefault(name, _Tally())

    def add(self, name: str, sample: float) -> None:
        if not 0.0 <= sample <= 1.0:
            raise ValueError(f"a sample lies in [0, 1], got {sample}")
        self.tallies[name].add(sample)

    def samples(self, name: str) -> int:
        return self.tallies[name].n

    def score(self, name: str) -> float:
        return self.tallies[name].mean

    def interval(self, name: str) -> tuple[float, float]:
        t = self.tallies[name]
        if t.n == 0:
            return (0.0, 1.0)
        delta = epoch_delta((1.0 - self.confidence) / len(self.names), t.n)
        w = half_width(t.n, t.mean, t.squares / t.n, delta)
        return (max(0.0, t.mean - w), min(1.0, t.mean + w))

    def _intervals(self) -> dict[str, tuple[float, float]]:
        return {n: self.interval(n) for n in self.names}

    def rank_range(self, name: str, intervals: dict[str, tuple[float, float]] | None = None) -> tuple[int, int]:
        """(best, worst) rank, 1-based, that ``name`` may still hold."""
        iv = intervals or self._intervals()
        lo, hi = iv[name]
        ahead = sum(1 for o in self.names if o != name and iv[o][0] > hi)
        behind = sum(1 for o in self.names if o != name and iv[o][1] < lo)
        return (1 + ahead, len(self.names) - behind)

    def _set_of(self, rank: int) -> int:
        if self.top is None or rank <= self.top:
            return rank
        return self.top + 1

    def decided(self, name: str, intervals: dict[str, tuple[float, float]] | None = None) -> bool:
        best, worst = self.rank_range(name, intervals)
        return self._set_of(best) == self._set_of(worst)

    def active(self) -> list[str]:
        """The bots still undecided, in name order."""
        iv = self._intervals()
        return [n for n in self.names if not self.decided(n, iv)]

    def done(self) -> bool:
        return not self.active()

    def ranking(self) -> list[str]:
        """Bots by estimated Borda score, best first (ties by name)."""
        return sorted(self.names, key=lambda n: (-self.score(n), n))

    def decided_pairs(self) -> list[tuple[str, str]]:
        """(ahead, behind) for every pair whose order is settled (disjoint intervals), in
        ranking order of the first bot then of the second."""
        iv = self._intervals()
        order = self.ranking()
        return [(a, b) for i, a in enumerate(order) for b in order[i + 1:] if iv[a][0] > iv[b][1]]

    def summary(self) -> list[dict[str, object]]:
        """One entry per bot, in ranking order: score, interval, samples, possible ranks, decided."""
        iv = self._intervals()
        out = []
        for name in self.ranking():
            best, worst = self.rank_range(name, iv)
            out.append({"bot": name, "score": round(self.score(name), 6),
                        "low": round(iv[name][0], 6), "high": round(iv[name][1], 6),
                        "samples": self.samples(name), "ranks": [best, worst],
                        "decided": self._set_of(best) == self._set_of(worst)})
        return out
