"""shimmy's OpenSpiel -> PettingZoo wrapper on the bridge's games (docs/openspiel.md): it plays
them when given the game's name and parameters; PettingZoo's api_test refuses the string
observations. Runs only where shimmy is installed (pip install 'shimmy[openspiel]==2.0.1')."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspiel", reason="open_spiel is not installed (pip install -e '.[openspiel]')")
shimmy = pytest.importorskip("shimmy", reason="shimmy is not installed")
import numpy as np  # noqa: E402  (after the skips: the README's test install has no numpy)

import arena.openspiel  # noqa: E402,F401  (registers the games)


@pytest.mark.parametrize(
    "name,config", [("decktet_tightwad", {"players": 3}), ("decktet_divers_weights", {"players": 2})]
)
def test_shimmy_plays_a_game_given_its_name_and_parameters(name, config):
    env = shimmy.OpenSpielCompatibilityV0(game_name=name, config=config)
    env.reset(seed=1)
    for _agent in env.agent_iter(max_iter=2000):
        _obs, _r, term, trunc, info = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(info["action_mask"])[0]))
    assert env.game_state.is_terminal() and len(env.possible_agents) == config["players"]


def test_pettingzoo_api_test_refuses_string_observations():
    from pettingzoo.test import api_test

    env = shimmy.OpenSpielCompatibilityV0(game_name="decktet_tightwad", config={"players": 3})
    with pytest.raises(AttributeError, match="dtype"):
        api_test(env, num_cycles=3)
