"""Invariants every engine keeps, over many seeds, player counts and options.

Covers C2 (same seed, same game), C3 (a result for every seat), C4 (the cap ends
every game) and C5 (no leak of hidden cards), for all three games at once.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import REGISTRY
from games.core import OptionError
from games.rng import DealRng
from games.simulate import random_playout
from tests.games.variants import VARIANTS

SETTINGS = settings(max_examples=60)
variant = st.sampled_from(VARIANTS)
seed = st.integers(min_value=0, max_value=2**63 - 1)


def _check_result(state) -> None:
    res = state.result()
    n = state.players
    assert len(res.places) == n and len(res.scores) == n
    assert min(res.places) == 0
    for p in res.places:
        # competition ranking: a place equals the number of seats strictly ahead
        assert p == sum(1 for q in res.places if q < p)


@SETTINGS
@given(variant, seed, st.integers(0, 2**32))
def test_cards_conserved_and_legal_action_exists_until_end(v, deal_seed, policy_seed):
    """C3: every game ends with a full result; cards are never created or lost."""
    game, players, options = v
    spec = REGISTRY[game]
    state = spec.new_game(players, deal_seed, options)
    deck = sorted(state.all_cards())
    assert len(set(deck)) == len(deck)
    rng = DealRng(policy_seed)
    steps = 0
    while not state.is_over():
        movers = state.to_move()
        assert movers, "a game that is not over must have someone to move"
        seat = movers[0]
        n = len(state.legal_actions(seat))
        assert n >= 1
        state.apply(seat, rng.randbelow(n))
        steps += 1
        assert sorted(state.all_cards()) == deck
        assert steps <= state.cap
    assert state.to_move() == ()
    for s in range(players):
        assert len(state.legal_actions(s)) == 0
    _check_result(state)


@SETTINGS
@given(variant, seed, st.integers(0, 2**32))
def test_C2_same_seed_replays_identically(v, deal_seed, policy_seed):
    game, players, options = v
    spec = REGISTRY[game]
    a, acts_a = random_playout(spec, players, deal_seed, options, policy_seed=policy_seed)
    b, acts_b = random_playout(spec, players, deal_seed, options, policy_seed=policy_seed)
    assert acts_a == acts_b
    assert a.result() == b.result()
    assert [a.observation(s) for s in range(players)] == [b.observation(s) for s in range(players)]


@SETTINGS
@given(variant, seed, st.integers(0, 2**32), st.integers(0, 2**32))
def test_C5_observation_unchanged_when_hidden_cards_permuted(v, deal_seed, policy_seed, perm_seed):
    """No observation reveals hands, deck order or face-down cards."""
    game, players, options = v
    state = REGISTRY[game].new_game(players, deal_seed, options)
    rng = DealRng(policy_seed)
    perm = DealRng(perm_seed)
    step = 0
    while not state.is_over():
        if step % 7 == 0:
            for s in range(players):
                obs = state.observation(s)
                shuffled = state.with_hidden_shuffled(s, perm)
                assert shuffled.observation(s) == obs
                assert shuffled.observation_text(s) == state.observation_text(s)
                assert sorted(shuffled.all_cards()) == sorted(state.all_cards())
                assert json.loads(json.dumps(obs)) == obs
        seat = state.to_move()[0]
        state.apply(seat, rng.randbelow(len(state.legal_actions(seat))))
        step += 1


@SETTINGS
@given(variant, seed, st.integers(1, 40))
def test_C4_decision_cap_ends_every_game(v, deal_seed, cap):
    game, players, options = v
    spec = REGISTRY[game]
    full, full_actions = random_playout(spec, players, deal_seed, options)
    state, actions = random_playout(spec, players, deal_seed, {**options, "decision_cap": cap})
    assert state.is_over()
    _check_result(state)
    res = state.result()
    if len(full_actions) > cap:
        assert res.capped and len(actions) == cap
        assert actions == full_actions[:cap]
    else:
        assert not res.capped
        assert actions == full_actions
        assert res == full.result()


def test_C4_every_game_declares_a_cap_option_with_a_large_default():
    for spec in REGISTRY.values():
        opt = spec.option("decision_cap")
        assert opt.default >= 1000


def test_C4_a_cap_too_large_to_be_a_cap_is_refused():
    for spec in REGISTRY.values():
        players = spec.min_players
        assert spec.resolve_options(players, {"decision_cap": 10_000_000})["decision_cap"] == 10_000_000
        with pytest.raises(OptionError, match="at most 10000000"):
            spec.resolve_options(players, {"decision_cap": 10**23})


def test_C1_seats_are_numbered_from_zero_and_observations_name_them():
    for game, players, options in VARIANTS:
        state = REGISTRY[game].new_game(players, 1, options)
        for s in range(players):
            obs = state.observation(s)
            assert obs["seat"] == s and obs["players"] == players
            assert all(0 <= m < players for m in obs["to_move"])
