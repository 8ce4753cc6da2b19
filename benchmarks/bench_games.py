"""Decisions per second of pure-Python random play, in process, on one core.

    python benchmarks/bench_games.py [--seconds 3]

Two figures per game: without observations (the engine alone), and with the
full observation of the deciding seat built at every decision (as the referee
does). Targets: 100,000/s for Tightwad and Divers Weights and 30,000/s for
Palace without observations; 30,000/s for every game with them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games import REGISTRY  # noqa: E402
from games.rng import DealRng  # noqa: E402

SETUPS = {"tightwad": (4, {}), "divers-weights": (4, {}), "palace": (4, {})}
TARGETS = {"tightwad": (100_000, 30_000), "divers-weights": (100_000, 30_000), "palace": (30_000, 30_000)}


def decisions_per_second(game: str, players: int, options: dict, observe: bool, seconds: float) -> float:
    spec = REGISTRY[game]
    rng = DealRng(12345)
    decisions = 0
    seed = 0
    start = time.perf_counter()
    end = start + seconds
    while time.perf_counter() < end:
        state = spec.new_game(players, seed, options)
        seed += 1
        while not state.is_over():
            for seat in tuple(state.to_move()):
                if seat not in state.to_move():
                    continue
                if observe:
                    n = len(state.observation(seat)["legal_actions"])
                else:
                    n = len(state.legal_actions(seat))
                state.apply(seat, rng.randbelow(n))
                decisions += 1
    return decisions / (time.perf_counter() - start)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    ap.add_argument("--game", choices=sorted(REGISTRY), action="append")
    args = ap.parse_args()
    ok = True
    print(f"{'game':16} {'players':>7} {'no obs/s':>10} {'target':>8} {'with obs/s':>11} {'target':>8}")
    for game in args.game or list(SETUPS):
        players, options = SETUPS[game]
        plain = decisions_per_second(game, players, options, False, args.seconds)
        full = decisions_per_second(game, players, options, True, args.seconds)
        t_plain, t_full = TARGETS[game]
        ok &= plain >= t_plain and full >= t_full
        print(f"{game:16} {players:>7} {plain:>10,.0f} {t_plain:>8,} {full:>11,.0f} {t_full:>8,}")
    print("all targets met" if ok else "SOME TARGETS MISSED")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
