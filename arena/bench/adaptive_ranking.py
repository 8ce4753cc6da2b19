"""P9: how many matches `schedule: adaptive` saves against a full round robin, in simulation.

    python -m arena.bench.adaptive_ranking [--sizes 8 16 32] [--trials 20] [--deals 1 2 4]
                                          [--confidence 0.95] [--top 3] [--json out.json]

Fields of in-process players of known strength: player ``i`` plays the game's reference
rule policy (games/reference.py) with probability ``q_i`` at each decision, else a uniformly
random legal move (q = 1: the rule, 0: random). The top three have q 1.0, 0.7 and 0.4; the
rest spread evenly from 0.25 down to 0. The true order is the order of q (the pooled
round-robin scores of every trial check it for the places judged: ``calibration``). Tightwad with three players:
its engine plays a few thousand games a second, so no bot process is needed.

Each trial draws new deals and plays (1) the adaptive schedule's rounds exactly as
arena/tournament/adaptive.py plans them (its planner, its statistics) and (2) a full round
robin of every group of three with 1, 2, 4 ... deals, every deal in every seat rotation.
Both rank by the same Borda score and are right when the first ``top`` places are the true
ones in order. Matches are shared between the two where they coincide (same group, deal and
seats), which changes no outcome. The saving is the matches of the smallest round robin whose
correct-order rate reaches the adaptive one's, over the adaptive schedule's mean matches.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import multiprocessing as mp
import statistics
import time
from pathlib import Path
from typing import Any

from arena.stats.ranking import deal_set_sample
from arena.tournament.adaptive import plan
from games import REGISTRY
from games.reference import REFERENCE, play_out, random_policy
from games.rng import DealRng, derive_seed

GAME, PLAYERS = "tightwad", 3


def field(n: int) -> list[float]:
    """q per bot, strongest first: 1.0, 0.7, 0.4, then n - 3 evenly from 0.25 to 0."""
    rest = n - 3
    return [1.0, 0.7, 0.4] + [round(0.25 * (rest - 1 - i) / max(1, rest - 1), 4) for i in range(rest)]


def _mixed(q: float) -> Any:
    ref = REFERENCE[GAME]
    threshold = int(round(q * 1000))

    def policy(state: Any, seat: int, rng: DealRng) -> int:
        return ref(state, seat, rng) if rng.randbelow(1000) < threshold else random_policy(state, seat, rng)
    return policy


def trial(args: tuple[int, int, float, int | None, tuple[int, ...]]) -> dict[str, Any]:
    """One trial: the adaptive schedule and round robins of ``deals`` on the same deals."""
    n, number, confidence, top, deals = args
    qs = field(n)
    names = [f"q{i:02d}" for i in range(n)]   # name order is strength order: the true ranking
    policies = {b: _mixed(q) for b, q in zip(names, qs)}
    spec = REGISTRY[GAME]
    cache: dict[tuple[int, tuple[str, ...]], tuple[int, ...]] = {}
    played = [0]

    def deal_set(deal: int, members: tuple[str, ...]) -> list[tuple[tuple[str, ...], tuple[int, ...]]]:
        out = []
        for r in range(PLAYERS):
            order = tuple(members[(s + r) % PLAYERS] for s in range(PLAYERS))
            if (deal, order) not in cache:
                dseed = derive_seed("p9", n, number, "deal", deal)
                state = spec.new_game(PLAYERS, dseed, None)
                rng = DealRng(derive_seed("p9", n, number, deal, *order))
                cache[(deal, order)] = tuple(play_out(state, [policies[b] for b in order], rng).result().places)
                played[0] += 1
            out.append((order, cache[(deal, order)]))
        return out

    k = top or n
    cap = 10 ** 9
    found = plan(names, PLAYERS, confidence=confidence, top=top, seed=number, key=f"p9-{n}", game=GAME, cap=cap,
                 outcome=deal_set)
    result: dict[str, Any] = {"adaptive_matches": found.matches, "adaptive_status": found.status,
                              "adaptive_ok": found.race.ranking()[:k] == names[:k], "round_robin": {}}
    scores: dict[str, list[float]] = {b: [] for b in names}
    groups = list(itertools.combinations(names, PLAYERS))
    done = 0
    for d in sorted(deals):
        for deal in range(done, d):
            for g in groups:
                got = deal_set(10_000 + deal, g)
                for b in g:
                    scores[b].append(deal_set_sample(b, got))
        done = d
        rank = sorted(names, key=lambda b: (-statistics.fmean(scores[b]), b))
        result["round_robin"][d] = {"matches": len(groups) * d * PLAYERS, "ok": rank[:k] == names[:k]}
    result["scores"] = {b: statistics.fmean(s) for b, s in scores.items()}
    result["games_played"] = played[0]
    return result


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def measure_size(n: int, trials: int, confidence: float, top: int | None, deals: tuple[int, ...],
                 workers: int = 1) -> dict[str, Any]:
    jobs = [(n, t, confidence, top, deals) for t in range(trials)]
    t0 = time.perf_counter()
    if workers > 1:
        with mp.get_context("fork").Pool(workers) as pool:
            results = pool.map(trial, jobs)
    else:
        results = [trial(j) for j in jobs]
    adaptive = [r["adaptive_matches"] for r in results]
    mean = statistics.fmean(adaptive)
    half = 1.96 * statistics.stdev(adaptive) / math.sqrt(len(adaptive)) if len(adaptive) > 1 else math.inf
    ok = sum(r["adaptive_ok"] for r in results)
    rr = {}
    for d in sorted(deals):
        k = sum(r["round_robin"][d]["ok"] for r in results)
        rr[d] = {"matches": results[0]["round_robin"][d]["matches"], "correct": k / trials,
                 "correct_ci95": [round(x, 3) for x in wilson(k, trials)]}
    rate = ok / trials
    reach = next((d for d in sorted(deals) if rr[d]["correct"] >= rate), None)
    names = sorted(results[0]["scores"])
    pooled = {b: statistics.fmean(r["scores"][b] for r in results) for b in names}
    k = top or n
    calibrated = sorted(names, key=lambda b: -pooled[b])[:k] == names[:k]   # the order that is judged
    out: dict[str, Any] = {
        "bots": n, "trials": trials, "field_q": field(n), "top": top, "confidence": confidence,
        "adaptive": {"mean_matches": round(mean, 1), "mean_ci95": [round(mean - half, 1), round(mean + half, 1)],
                     "correct": rate, "correct_ci95": [round(x, 3) for x in wilson(ok, trials)],
                     "stopped": dict(sorted(statistics_count(r["adaptive_status"] for r in results).items()))},
        "round_robin": {str(d): v for d, v in rr.items()},
        "calibration": {"pooled_round_robin_scores": {b: round(v, 4) for b, v in pooled.items()},
                        "top_in_true_order": calibrated},
        "seconds": round(time.perf_counter() - t0, 1),
    }
    if reach is not None:
        m = rr[reach]["matches"]
        out["saving"] = {"round_robin_deals": reach, "round_robin_matches": m, "factor": round(m / mean, 2),
                         "factor_ci95": [round(m / (mean + half), 2), round(m / max(1e-9, mean - half), 2)]}
    else:
        top_d = max(deals)
        out["saving"] = {"round_robin_deals": None, "note": f"no round robin up to {top_d} deals reached the "
                         "adaptive correct-order rate", "factor_at_least": round(rr[top_d]["matches"] / mean, 2)}
    return out


def statistics_count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


def measure(sizes: tuple[int, ...] = (8, 16, 32), trials: int = 20, confidence: float = 0.95,
            top: int | None = 3, deals: tuple[int, ...] = (1, 2, 4), workers: int = 1,
            trials_by_size: dict[int, int] | None = None, deals_by_size: dict[int, tuple[int, ...]] | None = None
            ) -> list[dict[str, Any]]:
    return [measure_size(n, (trials_by_size or {}).get(n, trials), confidence, top,
                         (deals_by_size or {}).get(n, deals), workers) for n in sizes]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--deals", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    rows = []
    for n in a.sizes:   # each size printed as soon as it is measured
        rows += measure((n,), a.trials, a.confidence, a.top, tuple(a.deals), a.workers)
        print(json.dumps(rows[-1]), flush=True)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
