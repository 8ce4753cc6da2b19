"""Learn the weights of Palace's AIVAT value (arena/luck/palace_value.py) and print them.

    python benchmarks/palace_value.py [--deals 60] [--first-seed 610000] [--playouts 2]
    python benchmarks/palace_value.py --reveal [--deals 300] [--playouts 4]
    python benchmarks/palace_value.py --scales [--deals 400] [--first-seed 700000]

The sample heuristic (bots/palace_heuristic.py) plays against random bots in every seat of
each deal, in process (benchmarks/bot_strength.py). At a quarter of the random seats'
decisions with a choice (picked by a hash of the deal, seat and decision, never by the
action), every child state gets its features for every seat one rule move ahead
(``arena.luck.palace_value.after_rule_move``, where the value reads them) and that seat's mean
place over ``--playouts`` playouts from the child (arena.luck.aivat.aivat_value, common random
numbers for siblings).
The weights, one vector per number of players still in, minimise the squared error of
V(child) - mean over siblings of V, against the same difference of the playout results:
what an AIVAT term uses. Seats already out have their exact place in both. Deals 610000..
are used by no measurement (docs/luck.md). Output: how much of the playout differences the
weights explain, then the ``value_weights`` field of the weights file as JSON; ``--out FILE``
writes the whole weights file with it (arena/luck/data/palace_weights.json to ship it). The defaults
take about 20 minutes of CPU, on as many processes as there are cores.

``--reveal`` learns ``reveal_weights``, the value of the reveal terms (a face-down card nobody
has seen, ``arena.luck.palace_value.reveal_term``), the same way at half of the reveals of any
seat (by a hash): the siblings are the states after the reveal with the revealed card
exchanged with each hidden card (8 of them, drawn by a hash, where more are hidden), and each
sibling's playouts put the sample heuristic in its own seat (the reference rule policy there
made the reveal terms overshoot: they removed less). The defaults (300 deals, 4 playouts)
take about 10 minutes of CPU.

``--scales`` fits ``draws_scale`` and ``reveals_scale``, the fixed coefficients of the two sums
of terms (arena.luck.aivat.AIVAT_SCALE), with the shipped weights: the heuristic plays every seat
of each deal against random bots, and least squares of the deals' mean places on their mean
unscaled sums gives the coefficients that remove the most variance from the rotated mean place.
Deals 700000.. are used by no measurement. The defaults take about 5 minutes of CPU.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from arena.bench.bot_strength import HEURISTICS, RANDOM_BOT, load_bot, start_message  # noqa: E402
from arena.bench.luck import _var, play_recorded  # noqa: E402
from arena.luck.aivat import aivat_parts, aivat_value  # noqa: E402
from arena.luck.palace_value import (  # noqa: E402
    NFEATURES,
    after_rule_move,
    dump_weights,
    exchanged,
    features,
    hidden_places,
    load_weights,
    revealed_place,
    weights_text,
)
from arena.luck.reference import random_policy  # noqa: E402
from games import REGISTRY  # noqa: E402
from games.rng import DealRng, derive_seed  # noqa: E402

GAME, PLAYERS = "palace", 4
ACTIVE = tuple(range(2, PLAYERS + 1))  # a weight vector per number of players still in
DIM = NFEATURES * len(ACTIVE)
RIDGE = 1e-3
REVEAL_KIDS = 8  # siblings per reveal, at most
_MASK = (1 << 64) - 1

_BOTS: dict[str, object] = {}


def _play(deal: int, seat: int) -> tuple[tuple[int, ...], list[tuple[int, int]]]:
    """The heuristic in ``seat``, random bots elsewhere: the places and the decisions
    (benchmarks/luck.py's seeding)."""
    if "hero" not in _BOTS:
        _BOTS["hero"] = load_bot(HEURISTICS[GAME])
        _BOTS["random"] = [load_bot(RANDOM_BOT) for _ in range(PLAYERS - 1)]
    randoms = _BOTS["random"]
    return play_recorded(GAME, randoms[:seat] + [_BOTS["hero"]] + randoms[seat:], deal, deal * 16 + seat)


def _row(child, seat: int, known: frozenset[int]) -> tuple[list[float], float]:
    """(the child's design row for ``seat``, its exact place if out, else 0)."""
    x = [0.0] * DIM
    if child._out[seat] or child.is_over():
        place = child.result().places[seat] if child.is_over() else child._out_order.index(seat)
        return x, float(place)
    block = ACTIVE.index(PLAYERS - len(child._out_order))
    x[block * NFEATURES : (block + 1) * NFEATURES] = features(child, seat, known)
    return x, 0.0


class _Sums:
    """Normal equations of sibling differences: X'X, X'y, y'y and the number of rows."""

    def __init__(self) -> None:
        self.xtx = [[0.0] * DIM for _ in range(DIM)]
        self.xty = [0.0] * DIM
        self.yty = 0.0
        self.rows = 0

    def add(self, kids: list[tuple[Any, list[float]]], known: frozenset[int]) -> None:
        """One set of siblings: (the state the value reads, every seat's playout mean place) each."""
        k = len(kids)
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
                    self.xty[i] += vi * dy
                    row = self.xtx[i]
                    for j, vj in nz:
                        row[j] += vi * vj
                self.yty += dy * dy
                self.rows += 1

    def result(self) -> tuple[list[list[float]], list[float], float, int]:
        return self.xtx, self.xty, self.yty, self.rows


def _replayed(deal: int):
    """For each hero seat of the deal's games (benchmarks/luck.py's seeding): (hero, the random
    seats, decision number, the state before it, seat, action), the decision applied after."""
    for hero in range(PLAYERS):
        known = frozenset(range(PLAYERS)) - {hero}
        state = REGISTRY[GAME].new_game(PLAYERS, deal)
        for n, (seat, action) in enumerate(_play(deal, hero)[1]):
            yield hero, known, n, state, seat, action
            state.apply(seat, action)


def deal_sums(args: tuple[int, int]) -> tuple[list[list[float]], list[float], float, int]:
    """Normal equations of one deal's sibling differences at the random seats' decisions."""
    deal, playouts = args
    sums = _Sums()
    for hero, known, n, state, seat, _ in _replayed(deal):
        k = len(state.legal_actions(seat))
        if seat in known and k > 1 and derive_seed("pick", deal, hero, n) % 4 == 0:
            seed = derive_seed("q", deal, hero, n)
            kids = []
            for c in range(k):
                child = state.clone()
                child.apply(seat, c)
                kids.append((after_rule_move(child), aivat_value(child, known, playouts, seed)))
            sums.add(kids, known)
    return sums.result()


def _heuristic_playouts(state: Any, hero: int, known: frozenset[int], playouts: int, seed: int) -> list[float]:
    """Every seat's mean place over ``playouts`` games from ``state``: the sample heuristic in
    ``hero``, uniform random elsewhere, each playout's random numbers fixed by (seed, playout)
    so that siblings share them."""
    bot = _BOTS["playout"]
    totals = [0.0] * PLAYERS
    for r in range(playouts):
        st = state.clone()
        match = bot.start(start_message(st, GAME, hero, derive_seed("playout", seed, r), ["bot"] * PLAYERS))
        base = (seed * 0x9E3779B97F4A7C15 + r * 0xBF58476D1CE4E5B9) & _MASK
        while not st.is_over():
            for seat in tuple(st.to_move()):
                if st.is_over() or seat not in st.to_move():
                    break
                if seat == hero:
                    action = bot.act(st.observation(seat), match)
                else:
                    action = random_policy(st, seat, DealRng((base + st.decisions * 0x94D049BB133111EB) & _MASK))
                st.apply(seat, action)
        for s, p in enumerate(st.result().places):
            totals[s] += p
    return [t / playouts for t in totals]


def reveal_sums(args: tuple[int, int]) -> tuple[list[list[float]], list[float], float, int]:
    """Normal equations of one deal's sibling differences at the reveals of unseen cards."""
    deal, playouts = args
    if "playout" not in _BOTS:
        _BOTS["playout"] = load_bot(HEURISTICS[GAME])
    sums = _Sums()
    for hero, known, n, state, seat, action in _replayed(deal):
        slot = revealed_place(state, seat, action)
        if slot is None or derive_seed("reveal-pick", deal, hero, n) % 2 != 0:
            continue
        places = hidden_places(state)
        if len(places) < 2:
            continue
        if len(places) > REVEAL_KIDS:
            rng = DealRng(derive_seed("reveal-kids", deal, hero, n))
            places = [places[rng.randbelow(len(places))] for _ in range(REVEAL_KIDS)]
        seed = derive_seed("reveal-playouts", deal, hero, n)
        kids = []
        for q in places:
            child = state.clone() if q == slot else exchanged(state, slot, q)
            child.apply(seat, action)
            kids.append((child, _heuristic_playouts(child, hero, known, playouts, seed)))
        sums.add(kids, known)
    return sums.result()


def scale_rows(deal: int) -> list[tuple[float, float, float]]:
    """For each seat of the deal, the heuristic sitting there: (its place, its unscaled sum of
    the random seats' draws' terms, its unscaled sum of the reveals' terms), as the leaderboards
    compute them (arena.luck.aivat.aivat_parts)."""
    rows = []
    for hero in range(PLAYERS):
        places, decisions = _play(deal, hero)
        draws, events = aivat_parts(
            GAME, PLAYERS, {}, deal, decisions, frozenset(range(PLAYERS)) - {hero}, 0, deal * 16 + hero, only=hero
        )
        rows.append((float(places[hero]), draws[hero], events[hero]))
    return rows


def fit_scales(per_deal: list[list[tuple[float, float, float]]]) -> tuple[float, float]:
    """The coefficients (draws, reveals) that minimise the variance of the deals' mean adjusted
    place, place - c1 * draws - c2 * reveals, averaged over the seats of each deal (the
    rotated schedule): least squares of the deals' mean places on their mean sums."""
    means = [[sum(r[i] for r in rows) / len(rows) for i in range(3)] for rows in per_deal]
    k = len(means)
    mu = [sum(m[i] for m in means) / k for i in range(3)]
    c = [[m[i] - mu[i] for i in range(3)] for m in means]
    sxx = [[sum(r[i] * r[j] for r in c) for j in (1, 2)] for i in (1, 2)]
    sxy = [sum(r[i] * r[0] for r in c) for i in (1, 2)]
    return tuple(_solve(sxx, sxy))  # type: ignore[return-value]


def saved(per_deal: list[list[tuple[float, float, float]]], scales: tuple[float, float]) -> float:
    """Matches saved against independent deals by the rotated, adjusted place (benchmarks/luck.py)."""
    plain = [r[0] for rows in per_deal for r in rows]
    adjusted = [sum(r[0] - scales[0] * r[1] - scales[1] * r[2] for r in rows) / len(rows) for rows in per_deal]
    return 1 - PLAYERS * _var(adjusted) / _var(plain)


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
    ap.add_argument("--reveal", action="store_true", help="learn REVEAL_WEIGHTS (the reveal terms' value)")
    ap.add_argument("--scales", action="store_true", help="fit DRAWS_SCALE and REVEALS_SCALE")
    ap.add_argument("--deals", type=int, help="default 60, 300 with --reveal, 400 with --scales")
    ap.add_argument("--first-seed", type=int, help="default 610000, or 700000 with --scales")
    ap.add_argument("--playouts", type=int, help="per sibling: default 2, or 4 with --reveal")
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    ap.add_argument(
        "--out",
        help="write the weights file with what was learned to this path "
        "(arena/luck/data/palace_weights.json to ship it)",
    )
    args = ap.parse_args(argv)
    if args.deals is None:
        args.deals = 300 if args.reveal else 400 if args.scales else 60
    if args.first_seed is None:
        args.first_seed = 700_000 if args.scales else 610_000
    if args.scales:
        return main_scales(args)
    if args.playouts is None:
        args.playouts = 4 if args.reveal else 2
    t0 = time.time()
    xtx = [[0.0] * DIM for _ in range(DIM)]
    xty = [0.0] * DIM
    yty, rows = 0.0, 0
    jobs = [(d, args.playouts) for d in range(args.first_seed, args.first_seed + args.deals)]
    with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
        work = reveal_sums if args.reveal else deal_sums
        for done, (a, b, c, r) in enumerate(pool.imap_unordered(work, jobs), 1):
            for i in range(DIM):
                xty[i] += b[i]
                for j in range(DIM):
                    xtx[i][j] += a[i][j]
            yty += c
            rows += r
            if done % 10 == 0:
                print(f"{done}/{len(jobs)} deals, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    w = _solve([[v + (RIDGE if i == j else 0.0) for j, v in enumerate(row)] for i, row in enumerate(xtx)], xty)
    explained = sum(wi * bi for wi, bi in zip(w, xty))  # y'Xw at the least-squares fit
    print(
        f"# {rows} sibling rows from {args.deals} deals ({args.first_seed}..), {args.playouts} playouts each: "
        f"the weights explain {explained / yty:.1%} of the playout differences; {time.time() - t0:.0f} s"
    )
    table = {str(PLAYERS): {str(active): w[b * NFEATURES : (b + 1) * NFEATURES] for b, active in enumerate(ACTIVE)}}
    write_weights(args.out, **{"reveal_weights" if args.reveal else "value_weights": table})
    return 0


def main_scales(args: argparse.Namespace) -> int:
    t0 = time.time()
    with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
        per_deal = pool.map(scale_rows, range(args.first_seed, args.first_seed + args.deals), chunksize=4)
    scales = fit_scales(per_deal)
    print(
        f"# {args.deals} deals ({args.first_seed}..), the heuristic in every seat against random bots: matches "
        f"saved {saved(per_deal, (1.0, 1.0)):.1%} with both sums at 1, {saved(per_deal, scales):.1%} with "
        f"these; {time.time() - t0:.0f} s"
    )
    write_weights(args.out, draws_scale=round(scales[0], 2), reveals_scale=round(scales[1], 2))
    return 0


def write_weights(out: str | None, **fields: Any) -> None:
    """Print the learned ``fields`` of the weights file (arena/luck/data/palace_weights.json) as
    JSON; with ``--out FILE``, write the shipped file with those fields replaced to FILE (the
    shipped file itself to adopt them: then bump AIVAT_VERSION)."""
    data = json.loads(weights_text())
    data.update(fields)
    print(json.dumps(fields))
    if out:
        text = dump_weights(data)
        load_weights(text)  # what the arena will read back
        Path(out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
