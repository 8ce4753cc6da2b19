"""Active ranking by a sequential test on fitted ratings, on duplicate deals.

One *deal set* is one group of bots playing one deal in every seat rotation. It gives every
bot in the group its *share*: the mean, over its opponents in the group and over the
rotations, of 1 (finished ahead), 0.5 (tie) or 0 (behind) (``deal_set_sample``). Within a
deal set the card luck of the seats cancels (every bot played every seat of the same deal),
and the whole finishing order counts.

The ratings are fitted to every deal set at once (arena/stats/rating_fit.py: least squares
on the shares centred within each deal set, with the covariance of the fit), so rating(a) -
rating(b) estimates the pair's mean share difference from every deal set, through the third
bots both have met and their opponents in turn, and its standard error ``se`` comes from the
fit. Pair (a, b) is *decided* when the difference d lies beyond a sequential boundary:

- with a ``margin`` m > 0 (the indifference zone; the schedule's default is 0.05): Wald's
  sequential probability ratio test of d = +m against d = -m, whose log likelihood ratio for
  a normal estimate is 2 m d / se^2, against log(1 / (1 - confidence)). A pair whose true
  difference is at least m either way is then decided the wrong way round with probability
  1 - confidence at most, however many looks the run takes (Wald's bound; overshoot between
  looks only lowers it). Pairs closer than m may be decided either way round: the claim is
  about the pairs further apart.
- with no margin: |d| > z se, z the constant boundary (``boundary``) that a pair whose true
  difference is 0 crosses, either way, at any look up to ``horizon`` samples, with probability
  1 - confidence at most (Siegmund's crossing approximation).

Both rest on the normal approximation of the fit and on its plug-in variance (shrunk towards
a share's largest, ``PRIOR_VAR``), not on a theorem for these bounded samples; P9
(benchmarks/adaptive_ranking.py) measures the wrong decisions. No bot with fewer than
``MIN_SAMPLES`` deal sets is in a decided pair. Decisions are taken again from all the data at
every round (a pair may become undecided again).

The test assumes the order of a pair does not depend on the third bots of its groups (no
rock-paper-scissors among the bots, as an additive rating says): the decided pairs are then
joined by transitivity, bot ``i``'s possible ranks are [1 + (bots surely ahead), n - (bots
surely behind)], and the target partition is every rank on its own (the whole ranking) or
ranks 1..k on their own and the rest as one set (the top k, in order). A bot is decided once
its possible ranks fall in one set; the race is over when every bot is decided. Only the
order needs deciding, not every pair: the *useful* pairs are those still open among each bot
and the next in the estimated order (down to the k-th), and, with the top k, the k-th and
each bot below it; transitivity decides the rest. The schedule (arena/tournament/adaptive.py)
plays only groups of useful pairs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from arena.stats.rating_fit import Fit


def pair_share(places: Sequence[int], seat: int, others: Iterable[int]) -> float:
    """The share of ``others`` (seats) that ``seat`` finished ahead of in one match (ties half)."""
    mine = places[seat]
    seats = list(others)
    won = sum(1.0 if mine < places[o] else 0.5 if mine == places[o] else 0.0 for o in seats)
    return won / len(seats)


def deal_set_sample(bot: str, matches: Sequence[tuple[Sequence[str], Sequence[int]]]) -> float:
    """``bot``'s share: its mean share of opponents beaten over the matches of one deal set,
    each match given as (bot names in seat order, places in seat order, 0 = first)."""
    total = 0.0
    for bots, places in matches:
        seat = list(bots).index(bot)
        total += pair_share(places, seat, (s for s in range(len(bots)) if s != seat))
    return total / len(matches)


MIN_SAMPLES = 4  # a bot with fewer samples (deal sets) than this is in no decided pair
PRIOR_VAR = 0.25  # the fit's residual variance is shrunk towards this (a share lies in [0, 1])
PRIOR_DOF = 2.0  # by this many pseudo degrees of freedom


def boundary(delta: float, horizon: int) -> float:
    """The constant z a pair's standardized mean must pass, at any of up to ``horizon`` looks
    (one per sample from ``MIN_SAMPLES`` on), for a false decision of probability at most
    ``delta`` even between two equal bots, where a decision either way is false: the
    probability that a standardized random walk leaves [-z, z] over sizes [MIN_SAMPLES,
    horizon] is about T z phi(z), T = ln(horizon / MIN_SAMPLES) (the walk in log time is an
    Ornstein-Uhlenbeck process; Siegmund's approximation, each side half of it). Between
    unequal bots only one side is wrong: about delta / 2. Checked by simulation
    (tests/tournament/test_adaptive.py, and P9's count of wrong decided pairs)."""
    t = max(1.0, math.log(max(horizon, MIN_SAMPLES + 1) / MIN_SAMPLES))
    lo, hi = 0.5, 12.0
    for _ in range(60):
        z = (lo + hi) / 2
        if t * z * math.exp(-z * z / 2) / math.sqrt(2 * math.pi) > delta:
            lo = z
        else:
            hi = z
    return hi


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
        return self.total / self.n if self.n else 0.0


@dataclass
class PairRace:
    """Tests on the fitted ratings, their transitive closure and the decisions they allow
    (module docstring).

    ``top`` None: decide the whole ranking; k: decide ranks 1..k in order (the rest unordered).
    ``margin``: the indifference zone (0: none, the test of ``boundary``).
    """

    names: tuple[str, ...]
    confidence: float = 0.95
    top: int | None = None
    horizon: int = 10_000  # the most paired samples a pair can get (the schedule's cap)
    margin: float = 0.0  # the indifference zone: pairs closer than this may be decided either way
    shares: dict[str, _Tally] = field(default_factory=dict)
    pairs: dict[tuple[int, int], _Tally] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.names = tuple(self.names)
        if len(set(self.names)) != len(self.names) or len(self.names) < 2:
            raise ValueError("a race needs at least two distinct bots")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError("confidence must lie strictly between 0 and 1")
        if self.top is not None and not 1 <= self.top < len(self.names):
            raise ValueError("top must be at least 1 and less than the number of bots")
        if not 0.0 <= self.margin < 1.0:
            raise ValueError("margin must be at least 0 and below 1")
        if self.horizon < 1:
            raise ValueError("the horizon must be at least 1")
        self._index = {n: i for i, n in enumerate(self.names)}
        self._z = boundary(1.0 - self.confidence, self.horizon)
        self._llr = math.log(1.0 / (1.0 - self.confidence))  # Wald's bound, with a margin
        for name in self.names:
            self.shares.setdefault(name, _Tally())
        self._cache: tuple | None = None
        self._fit_cache: Fit | None = None
        # per pair (i < j): weight, weighted sum and sum of squares of i's share minus j's, each
        # sample weighted 1/m for a group of m (rating_fit.py); and the data's degrees of freedom
        self._weighted: dict[tuple[int, int], list[float]] = {}
        self._dof = 0.0
        self._met = [0] * len(self.names)  # samples (deal sets or single pairs) per bot

    # ---- data -----------------------------------------------------------------------------

    def add(self, matches: Sequence[tuple[Sequence[str], Sequence[int]]]) -> None:
        """One deal set: (bot names in seat order, places) of each of its matches."""
        members = sorted(set(matches[0][0]), key=self._index.__getitem__)
        share = {b: deal_set_sample(b, matches) for b in members}
        for b in members:
            self.shares[b].add(share[b])
            self._met[self._index[b]] += 1
        for x, a in enumerate(members):
            for b in members[x + 1 :]:
                self._add_pair(a, b, share[a] - share[b], 1.0 / len(members))
        self._dof += len(members) - 1

    def add_pair(self, a: str, b: str, diff: float) -> None:
        """One paired sample on its own (a group of two): ``a``'s share minus ``b``'s, in [-1, 1]."""
        self._add_pair(a, b, diff, 0.5)
        self._dof += 1
        self._met[self._index[a]] += 1
        self._met[self._index[b]] += 1

    def _add_pair(self, a: str, b: str, diff: float, weight: float) -> None:
        if not -1.0 <= diff <= 1.0:
            raise ValueError(f"a paired sample lies in [-1, 1], got {diff}")
        i, j = self._index[a], self._index[b]
        if i > j:
            i, j, diff = j, i, -diff
        self.pairs.setdefault((i, j), _Tally()).add(diff)
        w = self._weighted.setdefault((i, j), [0.0, 0.0, 0.0])
        w[0] += weight
        w[1] += weight * diff
        w[2] += weight * diff * diff
        self._cache = None
        self._fit_cache = None

    def fit(self) -> Fit:
        """The ratings fitted to every sample so far, with their covariance (rating_fit.py)."""
        if self._fit_cache is None:
            data = {k: (w[0], w[1], w[2]) for k, w in self._weighted.items()}
            self._fit_cache = Fit(len(self.names), data, self._dof, PRIOR_VAR, PRIOR_DOF)
        return self._fit_cache

    def samples(self, name: str) -> int:
        return self.shares[name].n

    def pair_samples(self, a: str, b: str) -> int:
        i, j = sorted((self._index[a], self._index[b]))
        t = self.pairs.get((i, j))
        return t.n if t else 0

    # ---- decisions ------------------------------------------------------------------------

    def _sign(self, i: int, j: int) -> int:
        """+1: bot i is ahead of bot j, -1: behind, 0: undecided (on the fitted ratings)."""
        if min(self._met[i], self._met[j]) < MIN_SAMPLES:
            return 0
        f = self.fit()
        d = f.rating[i] - f.rating[j]
        if self.margin > 0:  # SPRT of d = +margin against d = -margin: LLR = 2 margin d / se^2
            w = self._llr * f.se(i, j) ** 2 / (2 * self.margin)
        else:
            w = self._z * f.se(i, j)
        return 1 if d > w else -1 if d < -w else 0

    def _state(self) -> tuple[list[int], list[int], list[tuple[int, int]], list[tuple[int, int]]]:
        """(bits of the bots surely behind each bot, surely ahead, its (best, worst) rank,
        the (ahead, behind) index pairs decided directly)."""
        if self._cache is not None:
            return self._cache
        n = len(self.names)
        behind = [0] * n
        direct = []
        for i in range(n):
            for j in range(i + 1, n):
                s = self._sign(i, j)
                if s > 0:
                    behind[i] |= 1 << j
                    direct.append((i, j))
                elif s < 0:
                    behind[j] |= 1 << i
                    direct.append((j, i))
        for k in range(n):  # transitive closure (Warshall on bit sets)
            bit = 1 << k
            for i in range(n):
                if behind[i] & bit:
                    behind[i] |= behind[k]
        ahead = [0] * n
        for i in range(n):
            for j in _bits(behind[i]):
                ahead[j] |= 1 << i
        ranks = []
        for i in range(n):
            both = behind[i] & ahead[i]  # a cycle (some decision is wrong): neither side counts
            ranks.append((1 + bin(ahead[i] & ~both).count("1"), n - bin(behind[i] & ~both).count("1")))
        self._cache = (behind, ahead, ranks, direct)
        return self._cache

    def _set_of(self, rank: int) -> int:
        if self.top is None or rank <= self.top:
            return rank
        return self.top + 1

    def rank_range(self, name: str) -> tuple[int, int]:
        """(best, worst) rank, 1-based, that ``name`` may still hold."""
        return self._state()[2][self._index[name]]

    def decided(self, name: str) -> bool:
        best, worst = self.rank_range(name)
        return self._set_of(best) == self._set_of(worst)

    def active(self) -> list[str]:
        """The bots still undecided, in name order."""
        return [n for n in self.names if not self.decided(n)]

    def done(self) -> bool:
        return not self.active()

    def useful(self) -> dict[str, list[str]]:
        """For each bot with any, the bots it forms a useful pair with, in name order: the
        pairs still open that decide the target in the estimated order (``ranking``): each
        bot and the next, down to the k-th (the whole ranking: down to the last), and, with
        the top k, the k-th and every bot below it. Once these are decided, transitivity
        decides the rest; a pair further apart is easier but never needed. (Should none be
        open while the race is not over, as with a cycle of decisions, every open pair of an
        undecided bot is useful: ``_open_pairs``.)"""
        behind, ahead, _, _ = self._state()
        n, k = len(self.names), self.top or len(self.names)
        order = [self._index[b] for b in self.ranking()]
        wanted = [(order[t], order[t + 1]) for t in range(min(k, n - 1))]
        if k < n:
            wanted += [(order[k - 1], order[t]) for t in range(k + 1, n)]
        out: dict[str, list[str]] = {}
        for i, j in wanted:
            if ((behind[i] >> j) ^ (ahead[i] >> j)) & 1:  # ordered (a cycle counts as open)
                continue
            out.setdefault(self.names[i], []).append(self.names[j])
            out.setdefault(self.names[j], []).append(self.names[i])
        if not out and not self.done():
            return self._open_pairs()
        return {a: sorted(bs, key=self._index.__getitem__) for a, bs in sorted(out.items())}

    def _open_pairs(self) -> dict[str, list[str]]:
        """For each bot with any, the bots it forms a useful pair with, in name order. A pair
        is useful while neither is surely ahead of the other, one of them is undecided and its
        order matters: with the whole ranking, always; with the top k, when one of the two is
        undecided and *estimated* in the top k (it needs every pair ordered), or when the
        other is estimated in the top k (an undecided bot estimated below the top k needs k
        bots shown ahead of it: the top k are the surest; the bots near it cost most and the
        bots below it do not help). The estimate is the stored
        ratings' order (``refresh``)."""
        behind, ahead, ranks, _ = self._state()
        n, k = len(self.names), self.top or len(self.names)
        open_ = [self._set_of(b) != self._set_of(w) for b, w in ranks]
        # estimated rank: 1 + the bots rated strictly higher (tied bots, as before any data,
        # share the best of their places: no bot is passed over for its name)
        fitted = self.fit().rating
        est = [1 + sum(r > fitted[i] + 1e-12 for r in fitted) for i in range(n)]
        out: dict[str, list[str]] = {}

        def wants(i: int, j: int) -> bool:  # does deciding (i, j) help undecided bot i?
            return open_[i] and (est[i] <= k or est[j] <= k)

        for i in range(n):
            for j in range(i + 1, n):
                if ((behind[i] >> j) ^ (ahead[i] >> j)) & 1:  # ordered (a cycle counts as open)
                    continue
                if not (wants(i, j) or wants(j, i)) or min(ranks[i][0], ranks[j][0]) > k:
                    continue
                out.setdefault(self.names[i], []).append(self.names[j])
                out.setdefault(self.names[j], []).append(self.names[i])
        return {a: sorted(bs, key=self._index.__getitem__) for a, bs in sorted(out.items())}

    def decided_pairs(self) -> list[tuple[str, str]]:
        """(ahead, behind) for every pair the test decides directly (not only by transitivity),
        in ranking order."""
        pos = {b: i for i, b in enumerate(self.ranking())}
        got = [(self.names[a], self.names[b]) for a, b in self._state()[3]]
        return sorted(got, key=lambda p: (pos[p[0]], pos[p[1]]))

    # ---- the estimated order --------------------------------------------------------------

    def refresh(self) -> None:
        """Kept for the schedule, which calls it once per round: the fit is exact and
        recomputed whenever data arrive, so there is nothing to bring up to date."""

    def ratings(self) -> dict[str, float]:
        """The fitted ratings (rating_fit.py): rating(a) - rating(b) estimates the pair's
        mean share difference, also for pairs that never met."""
        r = self.fit().rating
        return {name: r[i] for i, name in enumerate(self.names)}

    def ranking(self) -> list[str]:
        """Bots best first: an order that keeps every decided pair (the closure), the rest by
        rating (ties by name)."""
        behind, ahead, _, _ = self._state()
        rating = self.ratings()
        left = list(range(len(self.names)))
        out = []
        while left:
            placed = sum(1 << i for i in out)
            free = [i for i in left if not (ahead[i] & ~placed & ~behind[i])] or left  # a cycle: take any
            best = min(free, key=lambda i: (-rating[self.names[i]], self.names[i]))
            out.append(best)
            left.remove(best)
        return [self.names[i] for i in out]

    def summary(self) -> list[dict[str, object]]:
        """One entry per bot, in ranking order: rating, mean share with its plain 95% interval,
        deal sets, possible ranks, decided."""
        rating = self.ratings()
        out = []
        for name in self.ranking():
            t = self.shares[name]
            w = 1.96 * math.sqrt(max(0.0, t.squares / t.n - t.mean**2) / t.n) if t.n > 1 else 0.5
            best, worst = self.rank_range(name)
            out.append(
                {
                    "bot": name,
                    "rating": round(rating[name], 6),
                    "score": round(t.mean if t.n else 0.5, 6),
                    "low": round(max(0.0, t.mean - w) if t.n else 0.0, 6),
                    "high": round(min(1.0, t.mean + w) if t.n else 1.0, 6),
                    "samples": t.n,
                    "ranks": [best, worst],
                    "decided": self._set_of(best) == self._set_of(worst),
                }
            )
        return out


def _bits(mask: int) -> Iterable[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low
