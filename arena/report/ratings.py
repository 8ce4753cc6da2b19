"""TrueSkill ratings, per-bot statistics and head-to-head records from stored results.

``compute_ratings(rows, params=None)`` is a pure function of the result rows
(``arena.tournament.store.ResultRow``, e.g. from ``ResultStore.iter_results()``, or match-record
dicts). It sorts them by (schedule ``index``, ``match_id``) before rating, so the same
set of results gives the same report however many workers played them, in whatever
order they finished, interrupted or not.

Rating model (the ``trueskill`` package's):

* Every match is one ``TrueSkill.rate(groups, ranks=places)`` update with one one-player
  team per seat, run by ``arena.report.fast_trueskill`` (the package's message schedule
  on plain floats, about 4x faster, equal to the package to 1e-9; the package itself
  with the mpmath backend takes over where float maths fails); ``places`` are the match's places after the fault policy (0 = best),
  and seats with equal places are a tie (shared rank). (The package's chain
  approximation gives tied seats nearly, not exactly, equal updates: about 0.005 mu.)
* Parameters (``RatingParams``, overridable from a dict with the same keys):
  ``mu`` = 25, ``sigma`` = 25/3, ``beta`` = sigma/2, ``tau`` = sigma/100,
  ``draw_probability`` = 0.10. When only ``sigma`` is overridden, ``beta`` and ``tau``
  follow it. The parameters are returned with the report (``report.params``).
* Conservative rating = mu - 3 * sigma; leaderboards sort by it (ties by name).
* Scopes: one rating per game (``scope`` = the game id), computed from that game's
  matches alone, and ``overall``: every match of every game rated in index order on
  one shared set of ratings.
* Matches with a ``sandbox`` fault (the harness failed, not the bot; a current
  arena does not store them) are skipped here; so is a match where every seat
  faulted (nobody played: its shared first place means nothing; notable reason
  ``all_faulted``), and a match the TrueSkill maths cannot rate (a FloatingPointError
  on an extreme upset, if the ``mpmath`` backend is not installed to retry it). Both
  show up as ``skipped`` counts and in the notable matches.
* A bot sitting in several seats of one match (more seats than bots) gets the mean of
  its per-seat rating changes; that match counts once in its ``matches`` and ``firsts``
  (if any of its seats was first), its ``mean_place`` averages over its seats, and in
  head-to-head, seats of the same bot are not compared.

Per bot and scope (``BotStanding``): mu, sigma, conservative, rated ``matches``,
``mean_place`` (1-based: 1.0 = always first; places are the game's, ties shared) and
``mean_place_ci95``, the half-width of its 95% interval (``mean_place_interval``: the
seats of one deal, every rotation and group, are one cluster, since they share the cards;
None with fewer than two deals),
``firsts`` (matches with place 0, shared firsts included), ``unrated`` (its matches
that were skipped), ``faults`` (count by fault kind over all its stored matches of the
scope, rated or not) and ``history``: (index, mu, sigma) after each rated match it
played, for the rating plot.

Head-to-head (``HeadToHead``), for each ordered pair (A, B) over the rated matches of
the scope where both sat: times A placed above B, below, tied; ``share`` = above /
(above + below) (None without a decided meeting) with its 95% Wilson score interval.

``report.to_json()`` is the stable machine-readable form, documented in
``arena/report/leaderboard.py`` and ``docs/leaderboard-json.md``.
"""

from __future__ import annotations

import base64
import json
import math
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple, TypedDict, overload

import trueskill

from arena.report.fast_trueskill import FastTrueSkill
from arena.tournament.store import SANDBOX_FAULT, ResultRow

JSON_FORMAT = "decktet-arena-leaderboard"
JSON_VERSION = 1
OVERALL = "overall"
Z95 = 1.959963984540054  # two-sided 95% normal quantile
FAULT_KINDS = ("timeout", "crash", "protocol", "illegal", "resource", "sandbox")  # FaultKind order


@dataclass(frozen=True)
class RatingParams:
    """TrueSkill environment parameters (defaults are the package's own)."""

    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    tau: float = 25.0 / 300.0
    draw_probability: float = 0.10

    @classmethod
    def from_dict(cls, overrides: Mapping[str, Any] | None) -> RatingParams:
        """Defaults with ``overrides`` applied; beta and tau follow an overridden sigma
        unless given too. Unknown keys or non-positive values raise ValueError."""
        overrides = dict(overrides or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"unknown rating parameter(s) {unknown}; known: {sorted(known)}")
        try:
            values = {k: float(v) for k, v in overrides.items()}
        except (TypeError, ValueError):
            raise ValueError(f"rating parameters must be numbers: {overrides}") from None
        sigma = values.get("sigma", cls.sigma)
        values.setdefault("sigma", sigma)
        values.setdefault("beta", sigma / 2.0)
        values.setdefault("tau", sigma / 100.0)
        params = cls(**values)
        if min(params.sigma, params.beta) <= 0 or params.tau < 0:
            raise ValueError("sigma and beta must be > 0 and tau >= 0")
        if not 0.0 <= params.draw_probability < 1.0:
            raise ValueError("draw_probability must be in [0, 1)")
        return params

    def env(self, backend: str | None = None) -> trueskill.TrueSkill:
        return trueskill.TrueSkill(
            mu=self.mu,
            sigma=self.sigma,
            beta=self.beta,
            tau=self.tau,
            draw_probability=self.draw_probability,
            backend=backend,
        )

    def fast(self) -> FastTrueSkill:
        return FastTrueSkill(self.mu, self.sigma, self.beta, self.tau, self.draw_probability)

    def to_json(self) -> dict[str, float]:
        return {
            "mu": self.mu,
            "sigma": self.sigma,
            "beta": self.beta,
            "tau": self.tau,
            "draw_probability": self.draw_probability,
        }


class HistoryPoint(NamedTuple):
    """A bot's rating right after one of its rated matches (x = schedule index).
    A named tuple: a 100,000-match report holds over a million of them."""

    index: int  # type: ignore[assignment]  # hides tuple.index, as History.index does
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        return self.mu - 3.0 * self.sigma


class History(Sequence[HistoryPoint]):
    """A bot's rating history as three columns (index, mu, sigma): a 100,000-match league
    holds over a million points, and the rating cache and leaderboard.json read and write
    them a column, or a line, at a time. Reads as a sequence of ``HistoryPoint``."""

    # _text: (n, the JSON text of the first n points). Formatting floats is most of the cost
    # of leaderboard.json, so the text is kept, and cached with the ratings: a view of a
    # cached league then formats only the points rated since.
    __slots__ = ("index", "mu", "sigma", "_text")
    # the index column hides Sequence.index (the position of a value), which a History does not offer
    index: array[int]  # type: ignore[assignment]
    mu: array[float]
    sigma: array[float]

    def __init__(self, index: Iterable[int] = (), mu: Iterable[float] = (), sigma: Iterable[float] = ()) -> None:
        self.index, self.mu, self.sigma = array("q", index), array("d", mu), array("d", sigma)
        if not len(self.index) == len(self.mu) == len(self.sigma):
            raise ValueError("history columns of different lengths")
        self._text: tuple[int, str] = (0, "[]")

    def append(self, index: int, mu: float, sigma: float) -> None:
        self.index.append(index)
        self.mu.append(mu)
        self.sigma.append(sigma)

    def copy(self) -> History:
        new = History(self.index, self.mu, self.sigma)
        new._text = self._text
        return new

    def __len__(self) -> int:
        return len(self.index)

    @overload
    def __getitem__(self, i: int) -> HistoryPoint: ...
    @overload
    def __getitem__(self, i: slice) -> History: ...

    def __getitem__(self, i: int | slice) -> HistoryPoint | History:
        if isinstance(i, slice):
            return History(self.index[i], self.mu[i], self.sigma[i])
        return HistoryPoint(self.index[i], self.mu[i], self.sigma[i])

    def __iter__(self) -> Iterator[HistoryPoint]:
        return map(HistoryPoint._make, zip(self.index, self.mu, self.sigma))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, History):
            return (self.index, self.mu, self.sigma) == (other.index, other.mu, other.sigma)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.index.tobytes(), self.mu.tobytes(), self.sigma.tobytes()))

    def __repr__(self) -> str:
        return f"History({list(self)!r})"

    def json_text(self) -> str:
        """``[[index,mu,sigma],...]`` as json.dumps writes the list of points, compact."""
        n, text = self._text
        if n != len(self):
            rest = json.dumps(list(zip(self.index[n:], self.mu[n:], self.sigma[n:])), separators=(",", ":"))
            text = rest if n == 0 else text[:-1] + "," + rest[1:]
            self._text = (len(self), text)
        return text

    def has_text(self) -> bool:
        """Whether ``json_text()`` is ready without formatting a point."""
        return self._text[0] == len(self)

    def adopt_text(self, text: Any) -> None:
        """Take ``text`` (from the rating cache) as ``json_text()`` if it has the shape of this
        history's text: only JSON number characters, one point per bracket pair, and this
        history's first and last points. Otherwise it is ignored (and rebuilt when asked)."""
        n = len(self)
        if (
            n
            and isinstance(text, str)
            and text.count("[") == n + 1
            and text.count("]") == n + 1
            and _HISTORY_CHARS.fullmatch(text) is not None
            and text.startswith("[" + _point_json(self[0]))
            and text.endswith(_point_json(self[n - 1]) + "]")
        ):
            self._text = (n, text)


_HISTORY_CHARS = re.compile(r"[\[\]0-9,.e+-]*")


def _point_json(point: HistoryPoint) -> str:
    return json.dumps(list(point), separators=(",", ":"))


@dataclass(frozen=True)
class BotStanding:
    """One bot's line on a leaderboard (see the module docstring)."""

    rank: int
    name: str
    mu: float
    sigma: float
    matches: int
    mean_place: float | None
    firsts: int
    unrated: int
    faults: dict[str, int]
    history: History
    mean_place_ci95: float | None = None  # half-width of the 95% interval of mean_place
    # luck-adjusted mean place and its interval's half-width (arena.report.luck); None: unavailable
    adjusted_place: float | None = None
    adjusted_place_ci95: float | None = None
    deals: int = 0  # deals (clusters) behind mean_place's interval
    worst_place: int = 0  # the largest table it sat at: places run 1..worst_place
    shared_rank: int = 0  # the rank of the first bot it is tied with (itself if untied)
    tied: bool = False  # its conservative rating, as shown (2 decimals), equals another's

    @property
    def conservative(self) -> float:
        return self.mu - 3.0 * self.sigma

    @property
    def rank_label(self) -> str:
        """'2', or '=2' for each of the bots tied at rank 2."""
        return f"={self.shared_rank}" if self.tied else str(self.rank)

    @property
    def mean_place_interval(self) -> tuple[float, float] | None:
        """The 95% interval of mean_place, clipped to the places 1..worst_place; None from
        fewer than MIN_DEALS_FOR_INTERVAL deals."""
        return place_interval(self.mean_place, self.mean_place_ci95, self.deals, self.worst_place)

    @property
    def adjusted_place_interval(self) -> tuple[float, float] | None:
        return place_interval(self.adjusted_place, self.adjusted_place_ci95, self.deals, self.worst_place)

    @property
    def faults_total(self) -> int:
        return sum(self.faults.values())


@dataclass(frozen=True)
class HeadToHead:
    """How ``bot`` fared against ``opponent`` in the rated matches where both sat."""

    bot: str
    opponent: str
    above: int
    below: int
    tied: int

    @property
    def meetings(self) -> int:
        return self.above + self.below + self.tied

    @property
    def share(self) -> float | None:
        decided = self.above + self.below
        return self.above / decided if decided else None

    @property
    def ci95(self) -> tuple[float, float] | None:
        decided = self.above + self.below
        return wilson_interval(self.above, decided) if decided else None


@dataclass(frozen=True)
class NotableMatch:
    """A match worth a look: a faulted seat (``reason`` = fault kind), a decision-capped
    game (``capped``) or a match the maths could not rate (``numeric``)."""

    match_id: str
    index: int
    game: str
    reason: str
    seat: int | None = None
    bot: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class ScopeReport:
    """The leaderboard of one scope (a game id, or ``overall``)."""

    scope: str
    games: tuple[str, ...]
    matches: int  # stored matches of the scope
    rated: int
    skipped: int
    standings: tuple[BotStanding, ...]  # by rank
    head_to_head: tuple[HeadToHead, ...]  # by (bot, opponent)

    def standing(self, name: str) -> BotStanding:
        for s in self.standings:
            if s.name == name:
                return s
        raise KeyError(name)

    def pair(self, bot: str, opponent: str) -> HeadToHead:
        return self._pairs[(bot, opponent)]

    @cached_property
    def _pairs(self) -> dict[tuple[str, str], HeadToHead]:
        return {(h.bot, h.opponent): h for h in self.head_to_head}


class _DealsMode(TypedDict):
    mode: str  # "secret" or "public"


class DealsJson(_DealsMode, total=False):
    """How a tournament drew its deals, as leaderboard.json says: ``{"mode": "secret"}`` or
    ``{"mode": "public", "seed": N}`` (the tournament file's seed)."""

    seed: int | None


class BetaJson(TypedDict):
    game: str
    players: int
    beta: float  # 0: no baseline correction for this (game, players)


class AivatJson(TypedDict):
    version: str  # AIVAT_VERSION
    matches: int  # matches AIVAT corrects (they have builtin random players or reveals)
    corrected: int  # of them, with their corrections stored
    draws: int
    reveals: int


class ReferenceDealsJson(TypedDict):
    game: str
    players: int
    options: dict[str, Any]
    deals: int


class LuckJson(TypedDict):
    """How the luck-adjusted places were made (``arena.report.luck.describe``; leaderboard.json's
    ``luck``)."""

    reference: str  # the reference policies' version (REFERENCE_VERSION)
    rollouts: int  # games per seat and deal
    beta: list[BetaJson]
    aivat: AivatJson
    reference_deals: list[ReferenceDealsJson]
    available: bool  # every standing has the figure


@dataclass(frozen=True)
class RatingReport:
    """Everything the leaderboards show: scopes (``overall`` first, then games by id)."""

    params: RatingParams
    scopes: tuple[ScopeReport, ...]
    notable: tuple[NotableMatch, ...] = field(default=())
    deals: DealsJson | None = None  # how the deals were drawn; None: unknown
    sandbox: tuple[tuple[str, bool], ...] = field(default=())  # (level, safe for untrusted bots)
    scheduled: int = 0  # matches of the tournament's schedule
    counted: int = 0  # of them, stored as played and counted here
    # how the luck-adjusted mean places were made (arena.report.luck.describe); None: no baselines
    luck: LuckJson | None = None
    tournament: str | None = None  # its name, for the pages' titles (not in the JSON)
    luck_off: bool = False  # the tournament computes no baselines (luck_rollouts: 0; not in the JSON)
    # schedule: adaptive entries, as recorded by the run (arena/tournament/adaptive.py): the race
    adaptive: tuple[dict[str, Any], ...] = field(default=())

    @property
    def complete(self) -> bool:
        return self.counted >= self.scheduled and not self.adaptive_playing

    @property
    def adaptive_playing(self) -> list[str]:
        """The adaptive entries whose race is not over: their next round may still be unplanned,
        so every scheduled match being counted does not make the tournament complete."""
        return [f"{a.get('key')} ({a.get('players')} players)" for a in self.adaptive if a.get("status") == "playing"]

    def scope(self, name: str) -> ScopeReport:
        for s in self.scopes:
            if s.scope == name:
                return s
        raise KeyError(name)

    def to_json(self, histories: bool = True) -> dict[str, Any]:
        """The stable JSON form (format ``decktet-arena-leaderboard``, version 1).
        ``histories=False`` leaves every rating history None (``render_json`` writes them)."""
        return {
            "format": JSON_FORMAT,
            "version": JSON_VERSION,
            "complete": self.complete,
            "scheduled": self.scheduled,
            "counted": self.counted,
            "rating": {"system": "trueskill", "params": self.params.to_json(), "conservative": "mu - 3 * sigma"},
            "deals": None if self.deals is None else dict(self.deals),
            "scopes": [_scope_json(s, histories) for s in self.scopes],
            "notable": [
                {
                    "match_id": n.match_id,
                    "index": n.index,
                    "game": n.game,
                    "reason": n.reason,
                    "seat": n.seat,
                    "bot": n.bot,
                    "detail": n.detail,
                }
                for n in self.notable
            ],
            "sandbox": [{"level": lvl, "safe": safe} for lvl, safe in self.sandbox],  # added in v1
            "luck": None if self.luck is None else dict(self.luck),  # added in v1
        } | ({"adaptive": [dict(a) for a in self.adaptive]} if self.adaptive else {})  # added in v1


def _r(x: float) -> float:
    # Six decimals: small files, and no last-bit libm noise between machines.
    return round(x, 6)


def _pair(interval: tuple[float, float] | None) -> list[float] | None:
    return None if interval is None else [_r(interval[0]), _r(interval[1])]


def _scope_json(s: ScopeReport, histories: bool = True) -> dict[str, Any]:
    return {
        "scope": s.scope,
        "games": list(s.games),
        "matches": s.matches,
        "rated": s.rated,
        "skipped": s.skipped,
        "standings": [
            {
                "rank": b.rank,
                "bot": b.name,
                "mu": _r(b.mu),
                "sigma": _r(b.sigma),
                "conservative": _r(b.conservative),
                "matches": b.matches,
                "mean_place": None if b.mean_place is None else _r(b.mean_place),
                "mean_place_ci95": None if b.mean_place_ci95 is None else _r(b.mean_place_ci95),
                "adjusted_place": None if b.adjusted_place is None else _r(b.adjusted_place),
                "adjusted_place_ci95": None if b.adjusted_place_ci95 is None else _r(b.adjusted_place_ci95),
                "deals": b.deals,
                "worst_place": b.worst_place,
                "mean_place_interval": _pair(b.mean_place_interval),
                "adjusted_place_interval": _pair(b.adjusted_place_interval),
                "shared_rank": b.shared_rank,
                "tied": b.tied,
                "firsts": b.firsts,
                "unrated": b.unrated,
                "faults_total": b.faults_total,
                "faults": dict(b.faults),
                "history": [list(h) for h in b.history] if histories else None,  # rounded (``_Scope.rate``)
            }
            for b in s.standings
        ],
        "head_to_head": [
            {
                "bot": h.bot,
                "opponent": h.opponent,
                "above": h.above,
                "below": h.below,
                "tied": h.tied,
                "share": None if h.share is None else _r(h.share),
                "ci95": None if h.ci95 is None else [_r(h.ci95[0]), _r(h.ci95[1])],
            }
            for h in s.head_to_head
        ],
    }


# two-sided 95% Student t quantiles by degrees of freedom; beyond 30, the normal one
_T95 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)
_DEAL = re.compile(r"^(.+/p\d+/d\d+)/r\d+/[0-9a-f]+$")


def t95(dof: int) -> float:
    """Two-sided 95% Student t quantile for ``dof`` degrees of freedom (inf below 1)."""
    if dof < 1:
        return math.inf
    return _T95[dof - 1] if dof <= len(_T95) else Z95


def deal_cluster(match_id: str) -> str:
    """The deal a scheduled match belongs to (``<entry>/p<players>/d<deal>``: every rotation
    and group of a deal shares its cards); any other id is a cluster of its own."""
    m = _DEAL.match(match_id)
    return m.group(1) if m else match_id


# A t interval from 2 to 4 deals is either huge (t = 12.7 at 2 deals: "2.88 ± 4.76" on a
# 1-4 scale) or, when the deals happened to agree, "± 0.00": neither is worth showing.
MIN_DEALS_FOR_INTERVAL = 5


def place_interval(mean: float | None, half: float | None, deals: int, worst: int) -> tuple[float, float] | None:
    """(low, high) of a place's 95% interval within the scale 1..worst; None with too few deals."""
    if mean is None or half is None or deals < MIN_DEALS_FOR_INTERVAL:
        return None
    low, high = mean - half, mean + half
    return max(1.0, low) if worst else low, min(float(worst), high) if worst else high


def mark_ties(standings: list[BotStanding]) -> list[BotStanding]:
    """Ranked standings with ties marked: bots whose conservative ratings read the same
    (2 decimals, as every leaderboard shows them) share the first one's rank."""
    shown = [f"{s.conservative:.2f}" for s in standings]
    counts = Counter(shown)
    first: dict[str, int] = {}
    for s, key in zip(standings, shown):
        first.setdefault(key, s.rank)
    return [replace(s, shared_rank=first[key], tied=counts[key] > 1) for s, key in zip(standings, shown)]


def mean_place_interval(clusters: Iterable[tuple[int, int]]) -> float | None:
    """Half-width of the 95% interval of a mean place given per deal (sum of places, seats).

    The mean is the seat-weighted one the leaderboard shows (sum over sum); its variance is
    the cluster-robust one over deals, with a Student t quantile (deals - 1 degrees of
    freedom). None with fewer than two deals.
    """
    pairs = [(float(total), n) for total, n in clusters if n > 0]
    k = len(pairs)
    if k < 2:
        return None
    seats = sum(n for _, n in pairs)
    mean = sum(t for t, _ in pairs) / seats
    var = k / (k - 1) * sum((t - mean * n) ** 2 for t, n in pairs) / (seats * seats)
    return t95(k - 1) * math.sqrt(var)


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (95% for the default z)."""
    if trials <= 0:
        raise ValueError("the Wilson interval needs at least one trial")
    p = successes / trials
    z2 = z * z
    denom = 1.0 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    return max(0.0, centre - half), min(1.0, centre + half)


class _Scope:
    """Mutable accumulator of one scope while the rows are replayed."""

    def __init__(self, name: str, params: RatingParams) -> None:
        self.name = name
        self.params = params
        self.fast = params.fast()
        self.games: set[str] = set()
        self.ratings: dict[str, tuple[float, float]] = {}  # bot -> (mu, sigma)
        self.matches = self.rated = self.skipped = 0
        self.played: Counter[str] = Counter()
        self.seats: Counter[str] = Counter()
        self.place_sum: Counter[str] = Counter()
        self.firsts: Counter[str] = Counter()
        self.unrated: Counter[str] = Counter()
        self.faults: dict[str, Counter[str]] = {}
        self.history: dict[str, History] = {}
        self.h2h: dict[tuple[str, str], list[int]] = {}
        self.deal_sum: dict[str, dict[str, int]] = {}  # bot -> deal -> sum of its places
        self.deal_seats: dict[str, dict[str, int]] = {}  # bot -> deal -> its seats
        self.table: Counter[str] = Counter()  # bot -> largest table it sat at

    def see(self, row: ResultRow) -> None:
        """Count what every stored match contributes (rated or not)."""
        self.matches += 1
        self.games.add(row.game)
        for bot, kind in zip(row.bots, row.faults):
            self.ratings.setdefault(bot, (self.params.mu, self.params.sigma))
            self.faults.setdefault(bot, Counter())
            if kind is not None:
                self.faults[bot][kind] += 1

    def skip(self, row: ResultRow) -> None:
        self.skipped += 1
        for bot in set(row.bots):
            self.unrated[bot] += 1

    def rate(self, row: ResultRow, deal: str | None = None) -> bool:
        """Update ratings and statistics with one match; False if it cannot be rated.
        ``deal``: its ``deal_cluster`` (computed once for every scope it counts in)."""
        ratings = self.ratings
        try:
            new = _rate(self.fast, self.params, [ratings[b] for b in row.bots], list(row.places))
        except FloatingPointError:
            return False
        per_bot: dict[str, list[tuple[float, float]]] = {}
        for bot, rating in zip(row.bots, new):
            per_bot.setdefault(bot, []).append(rating)
        for bot, results in per_bot.items():
            if len(results) == 1:
                r = ratings[bot] = results[0]
            else:  # one bot in several seats: the mean of its per-seat updates
                old_mu = ratings[bot][0]
                mu = old_mu + sum(m - old_mu for m, _ in results) / len(results)
                sigma = sum(s for _, s in results) / len(results)
                r = ratings[bot] = (mu, sigma)
            # rounded once, as published (``_r``): a view of a cached league then rounds none
            # of its million history points
            history = self.history.get(bot)
            if history is None:
                history = self.history[bot] = History()
            history.append(row.index, round(r[0], 6), round(r[1], 6))
        self.rated += 1
        if deal is None:
            deal = deal_cluster(row.match_id)
        for bot, place in zip(row.bots, row.places):
            self.seats[bot] += 1
            self.place_sum[bot] += place + 1
            sums = self.deal_sum.setdefault(bot, {})
            sums[deal] = sums.get(deal, 0) + place + 1
            seats = self.deal_seats.setdefault(bot, {})
            seats[deal] = seats.get(deal, 0) + 1
        table = len(row.places)
        for bot in per_bot:
            self.played[bot] += 1
            if table > self.table[bot]:
                self.table[bot] = table
            if any(p == 0 for b, p in zip(row.bots, row.places) if b == bot):
                self.firsts[bot] += 1
        h2h = self.h2h
        seated = list(zip(row.bots, row.places))
        for a, pa in seated:
            for b, pb in seated:
                if a == b:  # the same seat, or one bot in two seats
                    continue
                cell = h2h.get((a, b))
                if cell is None:  # (setdefault would build a list for every pair)
                    cell = h2h[a, b] = [0, 0, 0]
                cell[0 if pa < pb else 1 if pa > pb else 2] += 1
        return True

    def state(self) -> dict[str, Any]:
        """Everything accumulated so far, as plain JSON-able data (for the rating cache)."""
        hist = {
            b: [_pack_array(h.index), _pack_array(h.mu), _pack_array(h.sigma), h.json_text()]
            for b, h in self.history.items()
        }
        return {
            "name": self.name,
            "games": sorted(self.games),
            "ratings": {b: list(r) for b, r in self.ratings.items()},
            "counts": [self.matches, self.rated, self.skipped],
            "played": dict(self.played),
            "seats": dict(self.seats),
            "place_sum": dict(self.place_sum),
            "firsts": dict(self.firsts),
            "unrated": dict(self.unrated),
            "table": dict(self.table),
            "faults": {b: dict(c) for b, c in self.faults.items()},
            "history": hist,
            "h2h": [[a, b, *cell] for (a, b), cell in self.h2h.items()],
            "deals": {
                b: [list(per), _pack("q", list(per.values())), _pack("q", list(self.deal_seats[b].values()))]
                for b, per in self.deal_sum.items()
            },
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any], params: RatingParams) -> _Scope:
        scope = cls(str(state["name"]), params)
        scope.games = set(map(str, state["games"]))
        scope.ratings = {str(b): (float(r[0]), float(r[1])) for b, r in state["ratings"].items()}
        scope.matches, scope.rated, scope.skipped = (int(x) for x in state["counts"])
        for name in ("played", "seats", "firsts", "unrated", "table"):
            setattr(scope, name, Counter({str(b): int(n) for b, n in state[name].items()}))
        scope.place_sum = Counter({str(b): int(n) for b, n in state["place_sum"].items()})
        scope.faults = {str(b): Counter({str(k): int(n) for k, n in c.items()}) for b, c in state["faults"].items()}
        scope.history = {}
        for b, (idx, mus, sigmas, *text) in state["history"].items():
            history = scope.history[str(b)] = History(
                _unpack_array("q", idx), _unpack_array("d", mus), _unpack_array("d", sigmas)
            )
            if text:
                history.adopt_text(text[0])
        scope.h2h = {(str(a), str(b)): [int(x), int(y), int(z)] for a, b, x, y, z in state["h2h"]}
        scope.deal_sum, scope.deal_seats = {}, {}
        for b, (keys, sums, seats) in state["deals"].items():
            sums, seats = _unpack("q", sums), _unpack("q", seats)
            if not len(keys) == len(sums) == len(seats) or not all(isinstance(k, str) for k in keys):
                raise ValueError("per-deal columns of different lengths")
            scope.deal_sum[str(b)] = dict(zip(keys, sums))
            scope.deal_seats[str(b)] = dict(zip(keys, seats))
        return scope

    def report(self) -> ScopeReport:
        standings = []
        for bot, (mu, sigma) in self.ratings.items():
            played = self.played[bot]
            standings.append(
                BotStanding(
                    rank=0,
                    name=bot,
                    mu=mu,
                    sigma=sigma,
                    matches=played,
                    mean_place=self.place_sum[bot] / self.seats[bot] if played else None,
                    mean_place_ci95=mean_place_interval(
                        zip(self.deal_sum.get(bot, {}).values(), self.deal_seats.get(bot, {}).values())
                    ),
                    deals=len(self.deal_sum.get(bot, {})),
                    worst_place=self.table[bot],
                    firsts=self.firsts[bot],
                    unrated=self.unrated[bot],
                    faults=_ordered_faults(self.faults.get(bot, Counter())),
                    history=self.history[bot].copy() if bot in self.history else History(),
                )
            )
        standings.sort(key=lambda s: (-s.conservative, s.name))
        standings = mark_ties([replace(s, rank=i + 1) for i, s in enumerate(standings)])
        h2h = tuple(HeadToHead(a, b, *cell) for (a, b), cell in sorted(self.h2h.items()))
        return ScopeReport(
            scope=self.name,
            games=tuple(sorted(self.games)),
            matches=self.matches,
            rated=self.rated,
            skipped=self.skipped,
            standings=tuple(standings),
            head_to_head=h2h,
        )


def _pack(code: str, values: list[Any]) -> str:
    return base64.b64encode(array(code, values).tobytes()).decode("ascii")


def _pack_array(values: array[Any]) -> str:
    return base64.b64encode(values.tobytes()).decode("ascii")


def _unpack_array(code: str, text: str) -> array[Any]:
    out = array(code)
    out.frombytes(base64.b64decode(text, validate=True))
    return out


def _unpack(code: str, text: str) -> list[Any]:
    return _unpack_array(code, text).tolist()


def _ordered_faults(counts: Counter[str]) -> dict[str, int]:
    known = [k for k in FAULT_KINDS if counts.get(k)]
    other = sorted(k for k in counts if k not in FAULT_KINDS and counts[k])
    return {k: counts[k] for k in known + other}


_MPMATH_ENVS: dict[RatingParams, trueskill.TrueSkill | None] = {}


def _rate(
    fast: FastTrueSkill, params: RatingParams, ratings: list[tuple[float, float]], ranks: list[int]
) -> list[tuple[float, float]]:
    """New (mu, sigma) per seat: the package's update (run by FastTrueSkill, same maths)."""
    try:
        return fast.rate(ratings, ranks)
    except FloatingPointError:
        # An extreme upset overflows the float backend; mpmath (optional) copes.
        if params not in _MPMATH_ENVS:
            try:
                _MPMATH_ENVS[params] = params.env(backend="mpmath")
            except (ImportError, ValueError):
                _MPMATH_ENVS[params] = None
        precise = _MPMATH_ENVS[params]
        if precise is None:
            raise
        groups = [(precise.create_rating(mu, sigma),) for mu, sigma in ratings]
        out = precise.rate(groups, ranks=ranks)
        return [(float(r.mu), float(r.sigma)) for (r,) in out]


def _as_row(item: ResultRow | Mapping[str, Any]) -> ResultRow:
    if isinstance(item, ResultRow):
        return item
    if isinstance(item, Mapping):
        return ResultRow.from_record(item)
    raise TypeError(f"expected a ResultRow or a match record, got {type(item).__name__}")


def compute_ratings(
    rows: Iterable[ResultRow | Mapping[str, Any]],
    params: RatingParams | Mapping[str, Any] | None = None,
    *,
    cache: str | Path | None = None,
    cache_key: bytes | None = None,
    scheduled: int | None = None,
) -> RatingReport:
    """Ratings, statistics, head-to-head and notable matches of a set of stored results.

    ``rows``: ``ResultRow``s or match records, in any order (they are sorted by index
    and match id). ``params``: a ``RatingParams`` or a dict of overrides. ``scheduled``:
    the tournament's number of matches (default: as many as were counted). Raises
    ValueError if two rows share a match id.

    ``cache``: a file for the rating state after the longest complete prefix of the
    schedule (indexes 0..k-1 all present; ``arena.report.rating_cache``). A valid cache
    (same parameters, same k first rows) is resumed from, so only the rows after it are
    rated; the file is rewritten when the complete prefix has grown. The report is the
    same with or without it. ``cache_key`` (required with ``cache``): the HMAC key that seals
    it, ``rating_cache.key_from_secret`` of the results folder's secret.
    """
    from arena.report import rating_cache

    if cache is not None and not cache_key:
        raise ValueError("a rating cache needs its key (rating_cache.key_from_secret of the folder's secret)")
    seal = cache_key or b""  # what seals the cache (only read when there is one)

    if not isinstance(params, RatingParams):
        params = RatingParams.from_dict(params)
    ordered = sorted((_as_row(r) for r in rows), key=lambda r: (r.index, r.match_id))
    seen: set[str] = set()
    for row in ordered:
        if row.match_id in seen:
            raise ValueError(f"match {row.match_id!r} appears twice in the results")
        seen.add(row.match_id)

    overall = _Scope(OVERALL, params)
    per_game: dict[str, _Scope] = {}
    notable: list[NotableMatch] = []
    start = 0
    textless = False
    prefix = rating_cache.complete_prefix(ordered) if cache is not None else 0
    if cache is not None:
        saved = rating_cache.load(cache, params, ordered, seal)
        if saved is not None:
            try:
                resumed = (
                    _Scope.from_state(saved[1][0], params),
                    {s["name"]: _Scope.from_state(s, params) for s in saved[1][1:]},
                )
            except (ValueError, TypeError, KeyError, AttributeError, IndexError):
                resumed = None  # a cache of another shape (damaged, or another version's): rebuilt
            if resumed is not None:
                start = saved[0]
                notable = [NotableMatch(*f) for f in saved[2]]
                overall, per_game = resumed
                # a cache without the histories' texts (an older arena's) is written again with them
                textless = any(not h.has_text() for s in (overall, *per_game.values()) for h in s.history.values())

    def snapshot(k: int) -> None:
        if cache is not None and k == prefix and (k > start or textless):
            rating_cache.save(
                cache,
                params,
                ordered,
                k,
                [overall.state()] + [per_game[g].state() for g in sorted(per_game)],
                notable,
                seal,
            )

    for i in range(start, len(ordered)):
        snapshot(i)
        row = ordered[i]
        game = per_game.get(row.game)
        if game is None:
            game = per_game[row.game] = _Scope(row.game, params)
        for seat, (bot, kind, detail) in enumerate(zip(row.bots, row.faults, row.fault_details)):
            if kind is not None:
                notable.append(NotableMatch(row.match_id, row.index, row.game, kind, seat, bot, detail))
        if row.capped:
            notable.append(NotableMatch(row.match_id, row.index, row.game, "capped"))
        numeric = False
        all_faulted = all(kind is not None for kind in row.faults)
        if all_faulted:
            notable.append(
                NotableMatch(row.match_id, row.index, row.game, "all_faulted", detail="every seat faulted; not rated")
            )
        deal = deal_cluster(row.match_id)
        for scope in (overall, game):
            scope.see(row)
            unratable = row.sandbox_fault or SANDBOX_FAULT in row.faults or all_faulted
            if unratable or not scope.rate(row, deal):
                scope.skip(row)
                numeric = numeric or not unratable
        if numeric:
            notable.append(
                NotableMatch(
                    row.match_id, row.index, row.game, "numeric", detail="TrueSkill could not rate this result"
                )
            )
    snapshot(len(ordered))
    scopes = [overall.report()] + [per_game[g].report() for g in sorted(per_game)]
    counted = sum(1 for row in ordered if not row.sandbox_fault)
    return RatingReport(
        params=params,
        scopes=tuple(scopes),
        notable=tuple(notable),
        scheduled=counted if scheduled is None else scheduled,
        counted=counted,
    )
