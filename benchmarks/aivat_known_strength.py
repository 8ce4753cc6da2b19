"""AIVAT on bots of known strength, full size: the claims the unit tests check on small samples.

    python benchmarks/aivat_known_strength.py [--game tightwad|palace|both]

The hero is the game's reference rule policy playing a uniformly random action with probability
0, 0.3 or 0.6 (each noisier level weaker: arena.luck.known_strength), in every seat of every
deal, the other seats uniformly random (what ``{builtin: random}`` plays); each match's AIVAT
correction is computed from its decisions as the arena does (arena.luck.aivat). Claims, per game:

* unbiased: each level's corrected mean place agrees with its plain one within their intervals,
  and the correction's mean is zero within its interval;
* useful: the corrected figures keep the levels' order;
* Tightwad (40 deals x 3 seats x 3 levels): the per-deal variance (seats rotated, as the
  duplicate schedule plays them) is smaller with the correction for every level, by 30% or
  more for the level without random moves of its own (the hero's own random moves are its luck
  too, and nobody may correct them);
* Palace (30 deals x 4 seats x 3 levels): intervals over the deals' means with a Student t
  quantile (the seats of a deal share its unseen cards, and the levels share the deals); a
  reveal term can be worth most of a place, so 12 deals could not tell a bias from luck.

Prints one line per level and per claim, and exits 1 if a claim fails. About 2 minutes of CPU
per game on an idle core (measured 2026-12-03: the unit tests' former slow versions took 130 s
and 104 s on 2 busy cores).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.luck import known_strength  # noqa: E402
from arena.luck.aivat import AIVAT_ROLLOUTS, aivat_corrections  # noqa: E402
from arena.report.ratings import t95  # noqa: E402
from games.rng import derive_seed  # noqa: E402

LEVELS = (0.0, 0.3, 0.6)


def _var(xs: list[float]) -> float:
    m = sum(xs) / len(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def tightwad(deals: range = range(900_000, 900_040)) -> list[tuple[str, bool]]:
    game, players = "tightwad", 3
    claims = []
    plain_means, fixed_means = [], []
    for eps in LEVELS:
        plain, fixed, terms, deal_plain, deal_fixed = [], [], [], [], []
        for d in deals:
            ps, fs = [], []
            for s in range(players):
                seed = derive_seed("aivat-test-match", d, s, eps)
                p, decisions = known_strength.play(
                    game, players, d, s, known_strength.noisy(game, eps), seed, "aivat-test"
                )
                c = aivat_corrections(
                    game, players, {}, d, decisions, frozenset(range(players)) - {s}, AIVAT_ROLLOUTS[game], seed
                )[s]
                plain.append(p)
                fixed.append(p - c)
                terms.append(c)
                ps.append(p)
                fs.append(p - c)
            deal_plain.append(sum(ps) / players)
            deal_fixed.append(sum(fs) / players)
        mp, cp = known_strength.mean_ci(plain)
        mf, cf = known_strength.mean_ci(fixed)
        mt, ct = known_strength.mean_ci(terms)
        ratio = _var(deal_fixed) / _var(deal_plain)
        print(
            f"tightwad eps {eps}: plain {mp:.3f} ± {cp:.3f}, corrected {mf:.3f} ± {cf:.3f}, "
            f"correction {mt:+.3f} ± {ct:.3f}, rotated variance x{ratio:.2f}"
        )
        claims += [
            (f"tightwad eps {eps}: corrected agrees with plain", abs(mp - mf) <= math.hypot(cp, cf)),
            (f"tightwad eps {eps}: correction's mean is zero", abs(mt) <= ct),
            (f"tightwad eps {eps}: rotated variance smaller", ratio < (0.7 if eps == 0 else 1.0)),
        ]
        plain_means.append(mp)
        fixed_means.append(mf)
    claims.append(("tightwad: corrected means keep the levels' order", fixed_means == sorted(fixed_means)))
    return claims


def palace(deals: range = range(910_000, 910_030)) -> list[tuple[str, bool]]:
    game, players = "palace", 4
    t = t95(len(deals) - 1)
    claims = []
    fixed_means = []
    pooled = [0.0] * len(deals)
    for eps in LEVELS:
        plain, fixed = [], []
        for k, d in enumerate(deals):
            per: tuple[list[float], list[float]] = ([], [])
            for s in range(players):
                seed = derive_seed("aivat-palace-match", d, s, eps)
                p, decisions = known_strength.play(
                    game, players, d, s, known_strength.noisy(game, eps), seed, "aivat-palace-test"
                )
                c = aivat_corrections(
                    game, players, {}, d, decisions, frozenset(range(players)) - {s}, 0, seed, only=s
                )[s]
                per[0].append(p)
                per[1].append(p - c)
                pooled[k] += c / (len(LEVELS) * players)
            plain.append(sum(per[0]) / players)
            fixed.append(sum(per[1]) / players)
        mp, cp = known_strength.mean_ci(plain, t)
        mf, cf = known_strength.mean_ci(fixed, t)
        print(
            f"palace eps {eps}: plain {mp:.3f} ± {cp:.3f}, corrected {mf:.3f} ± {cf:.3f}, "
            f"rotated variance x{_var(fixed) / _var(plain):.2f}"
        )
        claims.append((f"palace eps {eps}: corrected agrees with plain", abs(mp - mf) <= math.hypot(cp, cf)))
        fixed_means.append(mf)
    mt, ct = known_strength.mean_ci(pooled, t)
    print(f"palace: correction {mt:+.3f} ± {ct:.3f}")
    claims += [
        ("palace: correction's mean is zero", abs(mt) <= ct),
        ("palace: corrected means keep the levels' order", fixed_means == sorted(fixed_means)),
    ]
    return claims


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", choices=("tightwad", "palace", "both"), default="both")
    args = ap.parse_args(argv)
    claims = []
    for name, run in (("tightwad", tightwad), ("palace", palace)):
        if args.game in (name, "both"):
            t0 = time.process_time()
            claims += run()
            print(f"{name}: {time.process_time() - t0:.0f} s of CPU")
    for claim, held in claims:
        print(f"{'holds' if held else 'FAILS'}: {claim}")
    return 0 if all(held for _, held in claims) else 1


if __name__ == "__main__":
    sys.exit(main())
