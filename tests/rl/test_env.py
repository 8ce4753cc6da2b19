"""The PettingZoo environments pass PettingZoo's own checks and follow the engines exactly."""

from __future__ import annotations

import warnings

import pytest

try:
    import numpy as np
    from pettingzoo.test import api_test, seed_test
except ImportError:  # the optional extra is not installed
    pytest.skip(
        "pettingzoo/numpy not installed: pip install -e '.[rl]' to run the RL environment tests",
        allow_module_level=True,
    )

from arena.rl import encoding as E
from arena.rl.env import env, raw_env
from games import get_game

CASES = [
    ("tightwad", 3, {}),
    ("tightwad", 6, {}),
    ("divers-weights", 2, {}),
    ("divers-weights", 3, {"bidding": True}),
    ("palace", 2, {}),
    ("palace", 4, {"extended": True}),
]
IDS = [f"{g}-{n}p{'-' + ','.join(o) if o else ''}" for g, n, o in CASES]


@pytest.fixture(autouse=True)
def _quiet_pettingzoo():
    # api_test warns that Dict observations are not plain arrays; PettingZoo's own
    # classic environments (observation + action_mask) get the same warnings.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("game,players,options", CASES, ids=IDS)
def test_pettingzoo_api_test(game, players, options):
    api_test(env(game, players, options), num_cycles=1000)


@pytest.mark.parametrize("game,players,options", CASES, ids=IDS)
def test_pettingzoo_seed_test(game, players, options):
    seed_test(lambda: env(game, players, options), num_cycles=500)


def _play(e, seed: int, pick):
    """Plays one game; returns (seat, engine action id, mask slots) per step and the final rewards."""
    e.reset(seed=seed)
    moves, rewards = [], {}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        if term or trunc:
            rewards[agent] = reward
            e.step(None)
            continue
        view = info["observation"]
        assert view["seat"] == int(agent.split("_")[1]) and view["seat"] in view["to_move"]
        slot = pick(obs["action_mask"])
        moves.append((view["seat"], E.slot_actions(view)[slot], np.flatnonzero(obs["action_mask"]).tolist()))
        e.step(slot)
    return moves, rewards


@pytest.mark.parametrize("game,players,options", CASES, ids=IDS)
def test_steps_follow_the_engine_and_rewards_follow_places(game, players, options):
    e = raw_env(game, players, options)
    rng = np.random.default_rng(1)
    moves, rewards = _play(e, 7, lambda mask: int(rng.choice(np.flatnonzero(mask))))
    state = get_game(game).new_game(players, e.deal_seed, options)
    for seat, action, mask in moves:
        assert seat in state.to_move()
        # The mask the agent saw is exactly the slots of this seat's legal actions.
        assert mask == sorted(set(E.action_slots(state.observation(seat))))
        state.apply(seat, action)
    assert state.is_over()
    places = state.result().places
    assert rewards == {f"player_{s}": 1.0 - 2.0 * places[s] / (players - 1) for s in range(players)}


def test_reset_seed_fixes_the_deal():
    e = raw_env("palace", 3)
    e.reset(seed=11)
    first = e.infos[e.agent_selection]["observation"]
    seq = [e.deal_seed]
    e.reset()
    seq.append(e.deal_seed)
    e.reset(seed=11)
    assert e.infos[e.agent_selection]["observation"] == first
    e.reset()
    assert [seq[0], e.deal_seed] == seq  # a seedless reset continues the seeded sequence
    e.reset(seed=12)
    assert e.deal_seed != seq[0]


def test_observation_is_the_encoded_json_view_with_its_mask():
    e = raw_env("tightwad", 4)
    e.reset(seed=3)
    agent = e.agent_selection
    obs, _, _, _, info = e.last()
    view = info["observation"]
    assert obs["observation"].dtype == np.float64
    assert obs["observation"].tolist() == E.encode(view)
    assert sorted(np.flatnonzero(obs["action_mask"]).tolist()) == sorted(E.action_slots(view))
    assert e.observation_space(agent).contains(obs)
    others = [a for a in e.agents if a != agent]
    assert all(e.infos[a] == {} for a in others)  # only the deciding seat's view is built


def test_options_and_player_count_reach_the_engine():
    e = raw_env("divers-weights", 4, {"bidding": True, "hands": 1})
    e.reset(seed=0)
    view = e.infos[e.agent_selection]["observation"]
    assert view["phase"] == "bid" and view["players"] == 4 and view["hands"] == 1
    assert e.observation_space("player_0")["observation"].shape == (E.obs_size("divers-weights", 4),)
    assert e.action_space("player_0").n == 78
    with pytest.raises(ValueError, match="players"):
        raw_env("divers-weights", 7)
    with pytest.raises(ValueError, match="bidding"):
        raw_env("divers-weights", 2, {"bidding": "yes"})


def test_an_illegal_slot_is_refused_and_changes_nothing():
    e = raw_env("tightwad", 3)
    e.reset(seed=5)
    mask = e.observe(e.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    before = e.engine.decisions
    with pytest.raises(ValueError, match=f"slot {bad} is not legal"):
        e.step(bad)
    assert e.engine.decisions == before


def test_a_capped_game_is_a_truncation():
    e = raw_env("palace", 2, {"decision_cap": 5})
    rng = np.random.default_rng(0)
    e.reset(seed=0)
    ends = []
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        if term or trunc:
            ends.append((term, trunc, info["result"]["capped"]))
            e.step(None)
        else:
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert ends == [(False, True, True)] * 2


@pytest.mark.parametrize("kind", [str, float, np.float64, lambda s: s + 0.7])
def test_a_slot_that_is_not_an_integer_is_refused_and_changes_nothing(kind):
    """A float (a policy's arithmetic gone wrong) or a string is not silently truncated to a slot."""
    e = raw_env("tightwad", 3)
    e.reset(seed=5)
    slot = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])
    with pytest.raises(ValueError, match="is not a slot number"):
        e.step(kind(slot))
    assert e.engine.decisions == 0
    e.step(np.int64(slot))  # numpy integers are slots
    assert e.engine.decisions == 1
