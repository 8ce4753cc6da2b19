"""Benchmarks behind `arena bench`: engine speed, and the protocol round trip.

Performance is measured here, never asserted in unit tests. Figures are ratios
measured side by side in one run, because the machine is shared and noisy.
"""

from __future__ import annotations

import time
from typing import Any

from games import REGISTRY
from games.rng import DealRng

GAME_SETUPS: dict[str, tuple[int, dict[str, Any]]] = {
    "tightwad": (4, {}), "divers-weights": (4, {}), "palace": (4, {}),
}
GAME_TARGETS = {"tightwad": (100_000, 30_000), "divers-weights": (100_000, 30_000),
                "palace": (30_000, 30_000)}


def decisions_per_second(game: str, players: int, options: dict[str, Any], observe: bool,
                         seconds: float) -> float:
    """Random play in process on one core; ``observe`` builds the deciding seat's
    full observation at every decision, as the referee does."""
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


def bench_games(seconds: float = 3.0, games: list[str] | None = None) -> list[dict[str, Any]]:
    rows = []
    for game in games or list(GAME_SETUPS):
        players, options = GAME_SETUPS[game]
        plain = decisions_per_second(game, players, options, False, seconds)
        full = decisions_per_second(game, players, options, True, seconds)
        t_plain, t_full = GAME_TARGETS[game]
        rows.append({"game": game, "players": players, "no_obs_per_s": round(plain),
                     "target_no_obs": t_plain, "with_obs_per_s": round(full), "target_with_obs": t_full,
                     "met": plain >= t_plain and full >= t_full})
    return rows
