"""Learn the weights of Palace's AIVAT value (games/palace_value.py) and print them.

    python benchmarks/palace_value.py [--deals 160] [--first-seed 610000] [--playouts 2]

The sample heuristic (bots/palace_heuristic.py) plays against random bots in every seat of
each deal, in process (benchmarks/bot_strength.py). At a quarter of the random seats'
decisions with a choice (picked by a hash of the deal, seat and decision, never by the
action), every child state gets its features for every seat and that seat's mean place over
``--playouts`` playouts (games.reference.aivat_value, common random numbers for siblings).
The weights, one vector per number of players still in, minimise the squared error of
V(child) - mean over siblings of V, against the same difference of the playout results:
what an AIVAT term uses. Seats already out have their exact place in both. Deals 610000..
are used by no measurement (docs/luck.md). Output: the ``WEIGHTS`` table to paste into
games/palace_value.py, and how much of the playout differences it explains. The defaults
take about 20 minutes of CPU, on as many processes as there are cores.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bot_strength import HEURISTICS, RANDOM_BOT, load_bot  # noqa: E402
from luck import play_recorded  # noqa: E402
from games import REGISTRY  # noqa: E402
from games.palace_value import NFEATURES, features  # noqa: E402
from games.reference import aivat_value  # noqa: E402
from games.rng import derive_seed  # noqa: E402

GAME, PLAYERS = "palace", 4
ACTIVE = tuple(range(2, PLAYERS + 1))   # a weight vector per number of players still in
DIM = NFEATURES * len(ACTIVE)
RIDGE = 1e-3

_BOTS: dict[str, object] = {}


def _play(deal: int, seat: int) -> list[tuple[int, int]]:
    """The heuristic in ``seat``, random bots elsewhere: the decisions (benchmarks/luck.py's seeding)."""
    if not _BOTS:
        _BOTS["hero"] = load_bot(HEURISTICS[GAME])
        _BOTS["random"] = [load_bot(RANDOM_BOT) for _ in range(PLAYERS - 1)]
    randoms = _BOTS["random"]
    return play_recorded(GAME, randoms[:seat] + [_BOTS["hero"]] + randoms[seat:], deal, deal * 16 + seat)[1]


def _row(child, seat: int, known: frozenset[int]) -> tuple[list[float], float]:
    """(the child's design row for ``seat``, its exact place if out, else 0)."""
    x = [0.0] * DIM
    if child._out[seat] or child.is_over():
        place = child.result().places[seat] if child.is_over() else child._out_order.index(seat)
        return x, float(place)
    block = ACTIVE.index(PLAYERS - len(child._out_order))
    x[block * NFEATURES:(block + 1) * NFEATURES] = features(child, seat, known)
    return x, 0.0


def deal_sums(args: tuple[int, int]) -> tuple[list[list[float]], list[float], float, int]:
    """Normal equations of one deal's sibling differences: (X'X, X'y, y'y, rows)."""
    deal, playouts = args
    xtx = [[0.0] * DIM for _ in range(DIM)]
    xty = [0.0] * DIM
    yty = 0.0
    rows = 0
    for hero in range(PLAYERS):
        known = frozenset(range(PLAYERS)) - {hero}
        log = _play(deal, hero)
        state = REGISTRY[GAME].new_game(PLAYERS, deal)
        for n, (seat, action) in enumerate(log):
            k = len(state.legal_actions(seat))
            if seat in known and k > 1 and derive_seed("pick", deal, hero, n) % 4 == 0:
                seed = derive_seed("q", deal, hero, n)
                kids = []
                for c in range(k):
                    child = state.clone()
                    child.apply(seat, c)
                    kids.append((child, aivat_value(child, known, playouts, seed)))
                for q in range(PLAYERS):
                    xs, ys = [], []
                    for child, v in kids:
                        x, exact = _row(child, q, known)
                        xs.append(x)
                        ys.append(v[q] - exact)
                    mx = [sum(col) / k for col in zip(*xs)]
                    my = sum(ys) / k
                    for x, y in zip(xs, ys):
                        d = [a - b for a, b in zip(x, mx)]
                        nz = [(i, v) for i, v in enumerate(d) if v]
                        dy = y - my
                        for i, vi in nz:
                            xty[i] += vi * dy
                            row = xtx[i]
                            for j, vj in nz:
                                row[j] += vi * vj
                        yty += dy * dy
                        rows += 1
            state.apply(seat, action)
    return xtx, xty, yty, rows


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (the matrix is small and, with the ridge, regular)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        piv = m[c][c]
        for r in range(c + 1, n):
            f = m[r][c] / piv
            if f:
                for j in range(c, n + 1):
                    m[r][j] -= f * m[c][j]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][j] * x[j] for j in range(r + 1, n))) / m[r][r]
    return x


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=160)
    ap.add_argument("--first-seed", type=int, default=610_000)
    ap.add_argument("--playouts", type=int, default=2)
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    t0 = time.time()
    xtx = [[0.0] * DIM for _ in range(DIM)]
    xty = [0.0] * DIM
    yty, rows = 0.0, 0
    jobs = [(d, args.playouts) for d in range(args.first_seed, args.first_seed + args.deals)]
    with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
        for done, (a, b, c, r) in enumerate(pool.imap_unordered(deal_sums, jobs), 1):
            for i in range(DIM):
                xty[i] += b[i]
                for j in range(DIM):
                    xtx[i][j] += a[i][j]
            yty += c
            rows += r
            if done % 10 == 0:
                print(f"{done}/{len(jobs)} deals, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    w = _solve([[v + (RIDGE if i == j else 0.0) for j, v in enumerate(row)] for i, row in enumerate(xtx)], xty)
    explained = sum(wi * bi for wi, bi in zip(w, xty))   # y'Xw at the least-squares fit
    print(f"# {rows} sibling rows from {args.deals} deals ({args.first_seed}..), {args.playouts} playouts each: "
          f"the weights explain {explained / yty:.1%} of the playout differences; {time.time() - t0:.0f} s")
    print(weights_table({PLAYERS: {active: w[b * NFEATURES:(b + 1) * NFEATURES]
                                   for b, active in enumerate(ACTIVE)}}))
    return 0


def weights_table(weights: dict[int, dict[int, list[float]]], per_line: int = 7) -> str:
    """The ``WEIGHTS`` assignment of games/palace_value.py, as Python, 7 numbers a line."""
    lines = ["WEIGHTS: dict[int, dict[int, tuple[float, ...]]] = {"]
    for players, table in weights.items():
        lines.append(f"    {players}: {{")
        for active, vec in table.items():
            lines.append(f"        {active}: (")
            for i in range(0, len(vec), per_line):
                lines.append("            " + " ".join(f"{v:.6g}," for v in vec[i:i + per_line]))
            lines.append("        ),")
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
