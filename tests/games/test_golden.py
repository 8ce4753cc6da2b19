"""Golden playthroughs: recorded seeds, actions and results. Any rule change shows here."""

from __future__ import annotations

import json

import pytest

from games import REGISTRY
from games.simulate import replay_actions
from tests.games.regen_golden import CASES, path_for, playthrough

ALL = [(g, p, s, o) for g, cases in CASES.items() for p, s, o in cases]


@pytest.mark.parametrize("game,players,seed,options", ALL, ids=[f"{g}-p{p}-s{s}" for g, p, s, _ in ALL])
def test_golden_playthrough_is_reproduced(game, players, seed, options):
    path = path_for(game, players, seed)
    assert path.exists(), f"missing golden file; run python -m tests.games.regen_golden {game}"
    golden = json.loads(path.read_text())
    assert golden["rules_version"] == REGISTRY[game].rules_version
    # the recorded actions replay to the recorded result...
    state = replay_actions(REGISTRY[game], players, seed, options, [tuple(a) for a in golden["actions"]])
    assert state.is_over()
    assert state.result().to_json() == golden["result"]
    assert state.observation(0) == golden["final_observation_seat0"]
    # ...and the same deal and policy still choose exactly those actions.
    assert playthrough(game, players, seed, options) == golden
