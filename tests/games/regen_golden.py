"""Regenerate the golden playthroughs: ``python -m tests.games.regen_golden [game-id ...]``.

Only run this after a deliberate rule change (and bump the game's rules_version);
the diff of tests/games/golden/ is the review of that change.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from games import REGISTRY
from games.simulate import random_playout

GOLDEN_DIR = Path(__file__).parent / "golden"

CASES: dict[str, list[tuple[int, int, dict]]] = {
    "tightwad": [(3, 11, {}), (4, 2026, {}), (6, 7, {})],
    "divers-weights": [(2, 11, {}), (3, 2026, {}), (4, 5, {"bidding": True})],
    "palace": [(2, 11, {}), (4, 2026, {}), (5, 9, {"extended": True, "wyrm_variant": True})],
}


def playthrough(game: str, players: int, seed: int, options: dict) -> dict:
    spec = REGISTRY[game]
    state, actions = random_playout(spec, players, seed, options, policy_seed=seed)
    return {
        "game": game,
        "rules_version": spec.rules_version,
        "players": players,
        "seed": seed,
        "options": options,
        "policy_seed": seed,
        "actions": [list(a) for a in actions],
        "result": state.result().to_json(),
        "final_observation_seat0": state.observation(0),
    }


def path_for(game: str, players: int, seed: int) -> Path:
    return GOLDEN_DIR / f"{game}_p{players}_s{seed}.json"


def main(argv: list[str]) -> None:
    games = argv or list(CASES)
    GOLDEN_DIR.mkdir(exist_ok=True)
    for game in games:
        for players, seed, options in CASES[game]:
            data = playthrough(game, players, seed, options)
            path_for(game, players, seed).write_text(json.dumps(data, indent=1) + "\n")
            print("wrote", path_for(game, players, seed))


if __name__ == "__main__":
    main(sys.argv[1:])
