"""arena.openspiel: the three games as OpenSpiel Python games (skipped without open_spiel)."""

from __future__ import annotations

import json

import pytest

pyspiel = pytest.importorskip("pyspiel", reason="open_spiel is not installed (pip install -e '.[openspiel]')")
import arena.openspiel  # noqa: E402,F401  (registers the games)

CASES = [
    ("decktet_tightwad", {"players": 3}), ("decktet_tightwad", {"players": 6}),
    ("decktet_divers_weights", {"players": 2}), ("decktet_divers_weights", {"players": 4, "bidding": True}),
    ("decktet_palace", {"players": 2}),
    pytest.param("decktet_palace", {"players": 4}, marks=pytest.mark.slow),
    pytest.param("decktet_palace", {"players": 3, "extended": True, "wyrm_variant": True}, marks=pytest.mark.slow),
]


@pytest.mark.parametrize("name,params", CASES)
def test_random_sim_test_passes(name: str, params: dict) -> None:
    game = pyspiel.load_game(name, {**params, "decision_cap": 300})   # capped games end too (C4)
    assert game.num_players() == params["players"]
    assert game.get_type().information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_dynamics_chance_and_strings_are_the_engines() -> None:
    assert pyspiel.load_game("decktet_tightwad").get_type().dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    game = pyspiel.load_game("decktet_divers_weights", {"players": 3})
    assert game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
    state = game.new_initial_state()
    assert state.is_chance_node()
    outcomes = state.chance_outcomes()
    assert len(outcomes) == arena.openspiel.DEALS and abs(sum(p for _, p in outcomes) - 1) < 1e-9
    state.apply_action(7)   # deal 7: the engine's seed 7
    assert state.current_player() == pyspiel.PlayerId.SIMULTANEOUS   # every seat picks a card (R-D3)
    from games import REGISTRY

    engine = REGISTRY["divers-weights"].new_game(3, 7, state.get_game().options)
    for seat in range(3):
        assert json.loads(state.observation_string(seat)) == json.loads(json.dumps(engine.observation(seat)))
    state.apply_actions([0, 1, 0])
    info = state.information_state_string(1)
    assert "> 1" in info and info.endswith(state.observation_string(1))
