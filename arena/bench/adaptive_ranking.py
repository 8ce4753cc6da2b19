"""P9: how many matches `schedule: adaptive` saves against a full round robin, in simulation.

    python -m arena.bench.adaptive_ranking [--sizes 8 16 32] [--trials 20] [--deals 1 2 4]
                                          [--confidence 0.95] [--margin 0.05] [--top 3]
                                          [--field contenders] [--workers 2] [--json out.json]

Fields of in-process players of known strength: player ``i`` plays the game's reference
rule policy (arena/luck/reference.py) with probability ``q_i`` at each decision, else a uniformly
random legal move (q = 1: the rule, 0: random). ``contenders`` (the default): the top three
have q 1.0, 0.7 and 0.4, the rest spread evenly from 0.25 down to 0; ``spread``: q evenly
from 1 to 0 (for ``--top 0``, the whole ranking). The true order is the order of q (the
pooled round-robin scores of every trial check it for the places judged: ``calibration``).
Each trial names the players at random, so no tie-break by name can favour the true order.
Tightwad with three players: the engine plays about a thousand games a second on one core,
so no bot process is needed.

Each trial draws new deals and plays (1) the adaptive schedule's rounds exactly as
arena/tournament/adaptive.py plans them (its planner, its statistics: ``plan`` is called with
an outcome function that plays the group's deal set on the real engine) and (2) a full round
robin of every group of three with each number of deals of ``--deals`` (nested: the larger adds
deals to the smaller, so sizes in between cost nothing), every deal in every seat rotation,
ranked by Borda score (mean share of opponents beaten). Each is right when its first ``top``
places are the true ones in order. The saving compares the two at an equal correct-order
rate: the round robin's matches at the adaptive schedule's rate, interpolated between the
two measured sizes whose rates bracket it (linear in the rate, on log matches; the 1-deal
round robin if it is already as good: no smaller full round robin exists), over the adaptive
schedule's mean matches. The adaptive schedule is capped, as `arena run` caps it, at the
largest round robin measured (a run stopped there counts as right or wrong as it stands).
Its 95% interval resamples the trials (bootstrap). Also reported:
the smallest measured round robin that reaches the rate, and the decided pairs the adaptive
runs got wrong (the per-pair error, to hold below 1 - confidence for pairs further apart than
the margin: how many of the wrong ones are, by the pooled round-robin scores, is reported too).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import multiprocessing as mp
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from arena.interrupts import held_pool
from arena.luck.reference import REFERENCE, play_out, random_policy
from arena.stats.ranking import deal_set_sample
from arena.tournament.adaptive import plan
from games import REGISTRY
from games.rng import DealRng, derive_seed

GAME, PLAYERS = "tightwad", 3


def contenders(n: int) -> list[float]:
    """q per bot, strongest first: 1.0, 0.7, 0.4, then n - 3 evenly from 0.25 to 0."""
    rest = n - 3
    return [1.0, 0.7, 0.4] + [round(0.25 * (rest - 1 - i) / max(1, rest - 1), 4) for i in range(rest)]


def spread(n: int) -> list[float]:
    """q per bot, strongest first: evenly from 1 down to 0 (for the whole ranking)."""
    return [round(1 - i / (n - 1), 4) for i in range(n)]


FIELDS = {"contenders": contenders, "spread": spread}
FIELD = "contenders"  # --field; set before the trials are forked
MARGIN = 0.05  # --margin: the adaptive schedule's indifference zone (its default); set before forking


def field(n: int) -> list[float]:
    return FIELDS[FIELD](n)


def _mixed(q: float) -> Any:
    ref = REFERENCE[GAME]
    threshold = int(round(q * 1000))

    def policy(state: Any, seat: int, rng: DealRng) -> int:
        return ref(state, seat, rng) if rng.randbelow(1000) < threshold else random_policy(state, seat, rng)

    return policy


def trial(args: tuple[Any, ...]) -> dict[str, Any]:
    """One trial: the adaptive schedule and round robins of ``deals`` on new deals, and, for
    each confidence of ``curve`` (a sixth, optional item), the adaptive schedule again on the
    same deals at that confidence."""
    n, number, confidence, top, deals = args[:5]
    curve: tuple[float, ...] = args[5] if len(args) > 5 else ()
    qs = field(n)
    # bot i (strength order: the true ranking) gets a name drawn per trial, so that no tie-break
    # by name can favour the true order
    labels = [f"b{i:02d}" for i in range(n)]
    DealRng(derive_seed("p9-names", n, number)).shuffle(labels)
    names = labels
    policies = {b: _mixed(q) for b, q in zip(names, qs)}
    spec = REGISTRY[GAME]
    cache: dict[tuple[int, tuple[str, ...]], tuple[int, ...]] = {}

    def deal_set(deal: int, members: tuple[str, ...]) -> list[tuple[tuple[str, ...], tuple[int, ...]]]:
        out = []
        for r in range(PLAYERS):
            order = tuple(members[(s + r) % PLAYERS] for s in range(PLAYERS))
            if (deal, order) not in cache:
                dseed = derive_seed("p9", n, number, "deal", deal)
                state = spec.new_game(PLAYERS, dseed, None)
                rng = DealRng(derive_seed("p9", n, number, deal, *order))
                cache[(deal, order)] = tuple(play_out(state, [policies[b] for b in order], rng).result().places)
            out.append((order, cache[(deal, order)]))
        return out

    k = top or n
    groups = list(itertools.combinations(names, PLAYERS))
    cap = len(groups) * PLAYERS * max(deals)  # as `arena run` caps it: the largest round robin measured

    def adaptive(c: float) -> Any:
        return plan(
            names,
            PLAYERS,
            confidence=c,
            top=top,
            margin=MARGIN,
            seed=number,
            key=f"p9-{n}",
            game=GAME,
            cap=cap,
            outcome=deal_set,
        )

    found = adaptive(confidence)
    truth = {b: i for i, b in enumerate(names)}
    pairs = found.race.decided_pairs()
    result: dict[str, Any] = {
        "adaptive_matches": found.matches,
        "adaptive_status": found.status,
        "adaptive_ok": found.race.ranking()[:k] == names[:k],
        "decided_pairs": len(pairs),
        "wrong_pairs": sum(truth[a] > truth[b] for a, b in pairs),
        "wrong_pair_list": [[truth[a], truth[b]] for a, b in pairs if truth[a] > truth[b]],
        "round_robin": {},
        "curve": {},
    }
    for c in curve:  # the same deals (and the same cached games where the runs meet)
        other = adaptive(c)
        result["curve"][c] = {"matches": other.matches, "ok": other.race.ranking()[:k] == names[:k]}
    scores: dict[str, list[float]] = {b: [] for b in names}
    done = 0
    for d in sorted(deals):
        for deal in range(done, d):
            for g in groups:  # the round robin's deals are not the adaptive rounds' deals
                got = deal_set(1_000_000 + deal, g)
                for b in g:
                    scores[b].append(deal_set_sample(b, got))
        done = d
        rank = sorted(names, key=lambda b: (-statistics.fmean(scores[b]), b))
        result["round_robin"][d] = {"matches": len(groups) * d * PLAYERS, "ok": rank[:k] == names[:k]}
    result["scores"] = [statistics.fmean(scores[b]) for b in names]  # in strength order
    return result


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _log_between(rate: float, r0: float, m0: float, r1: float, m1: float) -> float:
    """The matches at ``rate`` between (r0, m0) and (r1, m1): linear in the rate, on log matches."""
    f = (rate - r0) / (r1 - r0)
    return math.exp(math.log(m0) + f * (math.log(m1) - math.log(m0)))


def equal_rate_matches(rate: float, rr: list[tuple[int, float]]) -> tuple[float, int | None]:
    """The round robin's matches at correct-order ``rate``: (interpolated, smallest reaching).

    ``rr`` holds (matches, correct-order rate) per round robin size, smallest first. Interpolated: between the
    two measured sizes whose rates bracket ``rate``, linearly in the rate on log(matches); at or
    below the 1-deal rate, the 1-deal round robin (no smaller full round robin exists). Smallest
    reaching: the matches of the first size whose rate is at least ``rate`` (None if none)."""
    reach = next((m for m, r in rr if r >= rate), None)
    if rate <= rr[0][1]:
        return float(rr[0][0]), reach
    for (m0, r0), (m1, r1) in zip(rr, rr[1:]):
        if r0 < rate <= r1:
            return _log_between(rate, r0, m0, r1, m1), reach
    return math.inf, reach


def saving(results: list[dict[str, Any]], deals: tuple[int, ...]) -> tuple[float, int | None]:
    rate = statistics.fmean(r["adaptive_ok"] for r in results)
    mean = statistics.fmean(r["adaptive_matches"] for r in results)
    rr = [
        (results[0]["round_robin"][d]["matches"], statistics.fmean(r["round_robin"][d]["ok"] for r in results))
        for d in sorted(deals)
    ]
    inter, reach = equal_rate_matches(rate, rr)
    return inter / mean, reach


def bootstrap(results: list[dict[str, Any]], deals: tuple[int, ...], draws: int = 2000) -> tuple[float, float]:
    """95% percentile interval of the interpolated saving over trials resampled with replacement
    (the adaptive run and the round robins of a trial stay together)."""
    rng = DealRng(derive_seed("p9-bootstrap", len(results)))
    got = sorted(saving([results[rng.randbelow(len(results))] for _ in results], deals)[0] for _ in range(draws))
    return got[int(0.025 * draws)], got[min(draws - 1, int(0.975 * draws))]


class _Serial:
    def __enter__(self) -> _Serial:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def imap(self, f: Any, jobs: Any) -> Any:
        return map(f, jobs)


def curve_points(results: list[dict[str, Any]], confidence: float) -> list[tuple[float, float, float]]:
    """(confidence, correct-order rate, mean matches) of the adaptive schedule at the main
    confidence and each of the curve's, in the order of confidence."""
    points = {confidence: [(r["adaptive_matches"], r["adaptive_ok"]) for r in results]}
    for c in results[0]["curve"]:
        points[c] = [(r["curve"][c]["matches"], r["curve"][c]["ok"]) for r in results]
    return sorted(
        (c, statistics.fmean(ok for _, ok in got), statistics.fmean(m for m, _ in got)) for c, got in points.items()
    )


def adaptive_at_rate(rate: float, points: list[tuple[float, float, float]]) -> float | None:
    """The adaptive schedule's matches at correct-order ``rate``: between the two confidences
    whose rates bracket it, linearly in the rate on log(matches); the lowest confidence's if it
    is already as often right (an upper bound); None if no confidence measured reaches it."""
    if rate <= points[0][1]:
        return points[0][2]
    best = None
    for (_, r0, m0), (_, r1, m1) in zip(points, points[1:]):
        if r0 < rate <= r1:
            got = _log_between(rate, r0, m0, r1, m1)
            best = got if best is None else min(best, got)
    if best is None and any(r >= rate for _, r, _ in points):  # reached, but not bracketed (rates not monotone)
        best = min(m for _, r, m in points if r >= rate)
    return best


def savings_at_round_robin_rates(
    results: list[dict[str, Any]], confidence: float, deals: tuple[int, ...]
) -> dict[int, float | None]:
    """Per round robin size: its matches over the adaptive schedule's at its correct-order rate."""
    points = curve_points(results, confidence)
    out: dict[int, float | None] = {}
    for d in sorted(deals):
        rate = statistics.fmean(r["round_robin"][d]["ok"] for r in results)
        got = adaptive_at_rate(rate, points)
        out[d] = results[0]["round_robin"][d]["matches"] / got if got else None
    return out


def bootstrap_curve(
    results: list[dict[str, Any]], confidence: float, deals: tuple[int, ...], draws: int = 2000
) -> dict[int, tuple[float | None, float | None]]:
    """95% percentile interval of each size's saving at the round robin's rate (resampled trials).
    A resample in which no confidence measured reaches the rate has no saving: it sorts lowest,
    and an end that falls on such resamples is None (no figure at that end)."""
    rng = DealRng(derive_seed("p9-bootstrap-curve", len(results)))
    got: dict[int, list[float]] = {d: [] for d in deals}
    for _ in range(draws):
        sample = [results[rng.randbelow(len(results))] for _ in results]
        for d, v in savings_at_round_robin_rates(sample, confidence, deals).items():
            got[d].append(v if v is not None else 0.0)
    out = {}
    for d, vs in got.items():
        vs.sort()
        low, high = vs[int(0.025 * draws)], vs[min(draws - 1, int(0.975 * draws))]
        out[d] = (low or None, high or None)
    return out


def measure_size(
    n: int,
    trials: int,
    confidence: float,
    top: int | None,
    deals: tuple[int, ...],
    workers: int = 1,
    progress: bool = False,
    curve: tuple[float, ...] = (),
) -> dict[str, Any]:
    jobs = [(n, t, confidence, top, deals, tuple(c for c in curve if c != confidence)) for t in range(trials)]
    t0 = time.perf_counter()
    results = []
    with held_pool(mp.get_context("fork"), workers) if workers > 1 else _Serial() as pool:
        for r in pool.imap(trial, jobs):
            results.append(r)
            if progress:
                print(f"  {n} bots: trial {len(results)} of {trials}", file=sys.stderr, flush=True)
    pooled = [statistics.fmean(r["scores"][i] for r in results) for i in range(n)]
    adaptive = [r["adaptive_matches"] for r in results]
    mean = statistics.fmean(adaptive)
    half = 1.96 * statistics.stdev(adaptive) / math.sqrt(len(adaptive)) if len(adaptive) > 1 else math.inf
    ok = sum(r["adaptive_ok"] for r in results)
    rr = {}
    for d in sorted(deals):
        k = sum(r["round_robin"][d]["ok"] for r in results)
        rr[d] = {
            "matches": results[0]["round_robin"][d]["matches"],
            "correct": k / trials,
            "correct_ci95": [round(x, 3) for x in wilson(k, trials)],
        }
    k = top or n
    calibrated = sorted(range(n), key=lambda i: -pooled[i])[:k] == list(range(k))  # the order that is judged
    decided = sum(r["decided_pairs"] for r in results)
    wrong = sum(r["wrong_pairs"] for r in results)
    factor, reach = saving(results, deals)
    low, high = bootstrap(results, deals)
    finite = math.isfinite(factor)
    return {
        "bots": n,
        "trials": trials,
        "field": FIELD,
        "field_q": field(n),
        "top": top,
        "confidence": confidence,
        "margin": MARGIN,
        "adaptive": {
            "mean_matches": round(mean, 1),
            "mean_ci95": [round(mean - half, 1), round(mean + half, 1)],
            "correct": ok / trials,
            "correct_ci95": [round(x, 3) for x in wilson(ok, trials)],
            "decided_pairs": decided,
            "wrong_pairs": wrong,
            "pair_error": round(wrong / decided, 5) if decided else None,
            "pair_error_ci95": [round(x, 5) for x in wilson(wrong, decided)],
            # the wrong pairs as (true place of the bot decided ahead, of the one behind), 0-based,
            # and how many were further apart than the margin: rating difference = 1.5 (n - 1) / n
            # times the difference of the pooled round-robin mean shares (three players, the
            # additive model of arena/stats/rating_fit.py): the pairs the confidence is about
            "wrong_pairs_true_places": sorted(p for r in results for p in r["wrong_pair_list"]),
            "wrong_pairs_beyond_margin": sum(
                1.5 * (n - 1) / n * (pooled[b] - pooled[a]) > MARGIN for r in results for a, b in r["wrong_pair_list"]
            ),
            "stopped": dict(sorted(statistics_count(r["adaptive_status"] for r in results).items())),
        },
        "round_robin": {str(d): v for d, v in rr.items()},
        # None: no round robin measured reached the adaptive rate (then the factor is at least
        # the largest one's matches over the adaptive mean); an interval end None: unbounded
        "saving": {
            "factor": round(factor, 2) if finite else None,
            "factor_at_least": None if finite else round(rr[max(deals)]["matches"] / mean, 2),
            "factor_ci95": [round(x, 2) if math.isfinite(x) else None for x in (low, high)],
            "round_robin_reaching": reach,
            "factor_smallest_reaching": round(reach / mean, 2) if reach else None,
        },
        "calibration": {"pooled_round_robin_scores": [round(v, 4) for v in pooled], "top_in_true_order": calibrated},
        **(_curve_summary(results, confidence, deals) if curve else {}),
        "seconds": round(time.perf_counter() - t0, 1),
    }


def _curve_summary(results: list[dict[str, Any]], confidence: float, deals: tuple[int, ...]) -> dict[str, Any]:
    """The other way to compare at an equal rate: hold each round robin at its own rate and move
    the adaptive schedule's confidence to it (``--curve``)."""
    points = curve_points(results, confidence)
    at = savings_at_round_robin_rates(results, confidence, deals)
    ci = bootstrap_curve(results, confidence, deals)
    trials = len(results)
    return {
        "curve": [
            {
                "confidence": c,
                "correct": rate,
                "correct_ci95": [round(x, 3) for x in wilson(round(rate * trials), trials)],
                "mean_matches": round(m, 1),
            }
            for c, rate, m in points
        ],
        "saving_at_round_robin_rate": {
            str(d): {
                "factor": round(v, 2) if v is not None else None,
                "factor_ci95": [round(x, 2) if x is not None else None for x in ci[d]],
            }
            for d, v in at.items()
        },
    }


def statistics_count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


def measure(
    sizes: tuple[int, ...] = (8, 16, 32),
    trials: int = 20,
    confidence: float = 0.95,
    top: int | None = 3,
    deals: tuple[int, ...] = (1, 2, 4),
    workers: int = 1,
    trials_by_size: dict[int, int] | None = None,
    deals_by_size: dict[int, tuple[int, ...]] | None = None,
) -> list[dict[str, Any]]:
    return [
        measure_size(
            n, (trials_by_size or {}).get(n, trials), confidence, top, (deals_by_size or {}).get(n, deals), workers
        )
        for n in sizes
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--deals", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--top", type=int, default=3, help="0: the whole ranking")
    ap.add_argument("--field", choices=sorted(FIELDS), default="contenders")
    ap.add_argument("--margin", type=float, default=0.05, help="the adaptive schedule's margin (0: none)")
    ap.add_argument(
        "--curve",
        type=float,
        nargs="+",
        default=[],
        help="also run the adaptive schedule at these confidences on the same deals, and compare at each "
        "round robin's own rate",
    )
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    global FIELD, MARGIN
    FIELD = a.field
    MARGIN = a.margin
    rows = []
    for n in a.sizes:  # each size printed as soon as it is measured
        rows.append(
            measure_size(
                n, a.trials, a.confidence, a.top or None, tuple(a.deals), a.workers, progress=True, curve=tuple(a.curve)
            )
        )
        print(json.dumps(rows[-1]), flush=True)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
