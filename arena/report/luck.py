"""The luck-adjusted mean place, beside the plain one (docs/luck.md).

For a bot's seat ``s`` in a match on deal ``d`` (place ``p``, 1-based):

    adjusted place = p - beta * (h(d, s) - eta_s) - a(m, s)

``h(d, s)``: the mean place of the game's fixed reference policy in seat ``s`` of deal
``d`` against random players (``arena.luck.reference``); ``eta_s``: the mean of ``h(., s)``
over the population of deals, estimated on reference deals that no tournament plays
(``arena.luck.baselines``). Over random deals ``h(d, s) - eta_s`` has mean zero in every
seat and depends on no bot, so the adjusted mean place has the plain one's expectation
(unbiased) for every bot, whatever seats it sat; when a deal is one the reference does
well (or badly) from, the bot's place tends to be too, and the difference cancels that
part of the luck of the draw. ``a(m, s)``: the AIVAT correction of match ``m`` for the draws
of the arena's builtin random players and, in four-player Palace, for the face-down cards
revealed (0 without either), a sum of terms each of mean zero under their known odds, so it
keeps every expectation too. ``beta``
(``arena.luck.reference.luck_beta``) is fixed per (game, players) in advance, so it keeps the
mean zero; where it is 0 the seat needs no baseline (and without a builtin player its
adjusted place is its plain place).

The interval: the cluster-robust variance over deals of the bot's ``p - beta h - a`` (as for the
plain mean place) plus beta squared times the variance of the ``eta`` estimate (its
reference deals are a sample too), with the same Student t quantile.

A bot whose rated seats do not all have a stored baseline (and correction, where AIVAT
corrects the match) gets None (unavailable): the
adjusted figure is never over a different set of matches than the plain one. From a single
deal it has no interval (None), as the plain mean place.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable

from arena.luck.aivat import AIVAT_VERSION
from arena.luck.baselines import Baselines, Eta
from arena.luck.reference import REFERENCE_VERSION, luck_beta
from arena.report.ratings import OVERALL, LuckJson, RatingReport, deal_cluster, t95
from arena.tournament.store import SANDBOX_FAULT, ResultRow

Key = tuple[str, int, str, str]


class _Acc:
    __slots__ = ("seats", "missing", "deal_sum", "deal_seats", "weights", "shift")
    # weights: per configuration, beta times the seats sat per seat number (eta's share)

    def __init__(self) -> None:
        self.seats = self.missing = 0
        self.deal_sum: dict[str, float] = {}
        self.deal_seats: dict[str, int] = {}
        self.weights: dict[Key, list[float]] = {}  # config -> beta * seats sat per seat number
        self.shift = 0.0  # sum of beta * eta over its seats

    def value(self, etas: dict[Key, Eta]) -> tuple[float, float | None] | None:
        if self.missing or not self.seats:
            return None
        k = len(self.deal_sum)
        n = self.seats
        sums = [(self.deal_sum[d], self.deal_seats[d]) for d in self.deal_sum]
        mean = sum(t for t, _ in sums) / n
        if k < 2:  # one deal: a figure without an interval, as the plain mean place
            return mean + self.shift / n, None
        var = k / (k - 1) * sum((t - mean * m) ** 2 for t, m in sums) / (n * n)
        for key, counts in self.weights.items():
            cov = etas[key][1]
            w = [c / n for c in counts]
            var += sum(w[a] * w[b] * cov[a][b] for a in range(len(w)) for b in range(len(w)))
        return mean + self.shift / n, t95(k - 1) * math.sqrt(max(var, 0.0))


def _union(games: Iterable[dict[str, _Acc]]) -> dict[str, _Acc]:
    """The overall scope's accumulators from the games' (their deals and configurations are
    distinct: a deal cluster names its game entry, a configuration its game)."""
    out: dict[str, _Acc] = {}
    for per_bot in list(games):
        for bot, acc in per_bot.items():
            total = out.get(bot)
            if total is None:
                total = out[bot] = _Acc()
            total.seats += acc.seats
            total.missing += acc.missing
            total.shift += acc.shift
            total.deal_sum.update(acc.deal_sum)
            total.deal_seats.update(acc.deal_seats)
            total.weights.update(acc.weights)
    return out


def _rated(row: ResultRow, numeric: set[str]) -> bool:
    # as arena.report.ratings counts a match (faults of every seat, sandbox faults, maths)
    return not (
        row.sandbox_fault
        or SANDBOX_FAULT in row.faults
        or all(k is not None for k in row.faults)
        or row.match_id in numeric
    )


def adjust(report: RatingReport, rows: Iterable[ResultRow], baselines: Baselines | None) -> RatingReport:
    """``report`` with every standing's ``adjusted_place`` (and interval) filled in where the
    stored baselines allow, and ``report.luck`` saying how; unchanged without baselines."""
    if baselines is None:
        return report
    etas = baselines.eta
    numeric = {n.match_id for n in report.notable if n.reason == "numeric"}
    accs: dict[str, dict[str, _Acc]] = {}  # per game; ``overall`` is their union below
    by_match = baselines.by_match
    betas: dict[tuple[str, int], float] = {}
    for row in rows:
        if not _rated(row, numeric):
            continue
        per_bot = accs.get(row.game)
        if per_bot is None:
            per_bot = accs[row.game] = {}
        beta = betas.get((row.game, row.players))
        if beta is None:
            beta = betas[(row.game, row.players)] = luck_beta(row.game, row.players)
        deal = deal_cluster(row.match_id)
        aivat: list[float] | None = [0.0] * len(row.places)  # a match AIVAT does not correct: no term
        if row.match_id in baselines.needs_aivat:
            got = baselines.aivat.get(row.match_id)
            if got is None or (got and len(got) != len(row.places)):
                aivat = None  # not computed yet: the figure is n/a, never over other matches
            elif got:
                aivat = got
        if beta == 0.0 and aivat is not None:  # no baseline needed
            for seat, bot in enumerate(row.bots):
                acc = per_bot.get(bot)
                if acc is None:
                    acc = per_bot[bot] = _Acc()
                acc.seats += 1
                acc.deal_sum[deal] = acc.deal_sum.get(deal, 0.0) + row.places[seat] + 1 - aivat[seat]
                acc.deal_seats[deal] = acc.deal_seats.get(deal, 0) + 1
            continue
        found = by_match.get(row.match_id)
        if aivat is None or found is None or found[0] not in etas or len(found[1]) != len(row.places):
            for bot in row.bots:
                acc = per_bot.get(bot)
                if acc is None:
                    acc = per_bot[bot] = _Acc()
                acc.seats += 1
                acc.missing += 1
            continue
        key, h = found
        mean = etas[key][0]
        for seat, bot in enumerate(row.bots):
            acc = per_bot.get(bot)
            if acc is None:
                acc = per_bot[bot] = _Acc()
            acc.seats += 1
            sums, seats = acc.deal_sum, acc.deal_seats
            sums[deal] = sums.get(deal, 0.0) + row.places[seat] + 1 - beta * h[seat] - aivat[seat]
            seats[deal] = seats.get(deal, 0) + 1
            weights = acc.weights.get(key)
            if weights is None:
                weights = acc.weights[key] = [0.0] * len(h)
            weights[seat] += beta
            acc.shift += beta * mean[seat]
    accs[OVERALL] = _union(accs.values())
    scopes = []
    available = True  # every standing of every scope has the figure
    for scope in report.scopes:
        per_bot = accs.get(scope.scope, {})
        standings = []
        for s in scope.standings:
            acc = per_bot.get(s.name)
            value = acc.value(etas) if acc is not None else None
            if value is None:
                available = False
            else:
                s = dataclasses.replace(s, adjusted_place=value[0], adjusted_place_ci95=value[1])
            standings.append(s)
        scopes.append(dataclasses.replace(scope, standings=tuple(standings)))
    return dataclasses.replace(report, scopes=tuple(scopes), luck=describe(baselines, available, sorted(betas.items())))


def describe(baselines: Baselines, available: bool, betas: list[tuple[tuple[str, int], float]]) -> LuckJson:
    """``report.luck``: the reference version, games per seat, each rated (game, players)'s
    beta (0: no correction there), the reference deals behind each eta, and whether every
    standing has the figure."""
    return {
        "reference": REFERENCE_VERSION,
        "rollouts": baselines.rollouts,
        "beta": [{"game": g, "players": p, "beta": b} for (g, p), b in betas],
        "aivat": {
            "version": AIVAT_VERSION,
            "matches": len(baselines.needs_aivat),
            "corrected": sum(1 for m in baselines.needs_aivat if baselines.aivat.get(m)),
            "draws": baselines.aivat_draws,
            "reveals": baselines.aivat_reveals,
        },
        "reference_deals": [
            {"game": g, "players": p, "options": json.loads(o), "deals": e[2]}
            for (g, p, o, _), e in sorted(baselines.eta.items())
        ],
        "available": available,
    }
