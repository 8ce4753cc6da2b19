"""The engines' search hooks (games.core: what a search needs) in every game: a rollout policy
that plays any game to its end, action keys that a seat's every sampled state shares, the
horizon, points, standing and returns, and rule decisions."""

from __future__ import annotations

import json
from random import Random
from typing import Any

import pytest

from games import REGISTRY
from games.determinize import SeatBelief
from games.palace import palace_swap_choice
from games.rng import DealRng
from tests.games.variants import VARIANTS


def _positions(game: str, players: int, options: dict[str, Any], seed: int, every: int = 5):
    """(state, seat) at every ``every``-th decision of a random game, until it ends."""
    state = REGISTRY[game].new_game(players, seed, {**options, "decision_cap": 600})
    rng = DealRng(seed)
    k = 0
    while not state.is_over():
        seat = state.to_move()[0]
        if k % every == 0:
            yield state, seat
        state.apply(seat, rng.randbelow(len(state.legal_actions(seat))))
        k += 1
    yield state, 0


@pytest.mark.parametrize("game,players,options", VARIANTS, ids=[f"{g}-{n}-{o}" for g, n, o in VARIANTS])
def test_rollout_action_plays_every_game_to_its_end(game: str, players: int, options: dict[str, Any]) -> None:
    """Every seat by ``rollout_action``: a legal id every time, and the game ends uncapped."""
    for seed in range(2):
        state = REGISTRY[game].new_game(players, seed, options)
        rnd = Random(seed)
        while not state.is_over():
            for seat in tuple(state.to_move()):
                if state.is_over() or seat not in state.to_move():
                    break
                a = state.rollout_action(seat, rnd)
                assert a in state.legal_actions(seat)
                state.apply(seat, a)
        assert not state.capped


CASES = [
    ("tightwad", 4, {}),
    ("divers-weights", 2, {}),
    ("divers-weights", 4, {}),
    ("divers-weights", 3, {"bidding": True}),
    ("palace", 2, {}),
    ("palace", 4, {"extended": True}),
]


@pytest.mark.parametrize("game,players,options", CASES, ids=[f"{g}-{n}-{o}" for g, n, o in CASES])
def test_action_keys_are_the_same_in_every_state_the_seat_cannot_tell_apart(
    game: str, players: int, options: dict[str, Any]
) -> None:
    """The keys of the seat's legal actions in the real state and in states sampled from its
    observation alone are the same list, one distinct key per action; and the public hooks
    that a simulation starts from (horizon, points) agree too."""
    belief = SeatBelief(game, {**options, "decision_cap": 600})
    rnd = Random(1)
    checked = 0
    for state, seat in _positions(game, players, options, 7, every=1):
        if state.is_over():
            break
        obs = json.loads(json.dumps(state.observation(seat)))
        if seat == 0:
            belief.update(obs)
        if seat != 0 or checked > 40:
            continue
        keys = state.action_keys(seat)
        assert len(set(keys)) == len(keys) == len(state.legal_actions(seat))
        sampler = belief.sampler(obs, rnd)
        for _ in range(3):
            s = sampler.sample(rnd)
            assert s.action_keys(seat) == keys
            assert s.horizon() == state.horizon() and s.points() == state.points()
        checked += 1
    assert checked > 5


def test_divers_weights_two_player_card_keys_carry_the_threshold_total() -> None:
    """Two players without bidding: a card to play is keyed with the trick's threshold total;
    four players, or bidding: (phase, move) alone."""
    two = REGISTRY["divers-weights"].new_game(2, 3, {})
    total = two.observation(0)["threshold_total"]
    assert two.action_keys(0) == [(1, c, total) for c in two.moves(0)]
    for players, options in ((4, {}), (2, {"bidding": True})):
        s = REGISTRY["divers-weights"].new_game(players, 3, options)
        seat = s.to_move()[0]
        assert all(len(k) == 2 for k in s.action_keys(seat))


@pytest.mark.parametrize("game,players,options", CASES, ids=[f"{g}-{n}-{o}" for g, n, o in CASES])
def test_returns_standing_and_horizon(game: str, players: int, options: dict[str, Any]) -> None:
    """Returns lie in [0, 1] throughout; at the end they rank the places (first highest, last
    lowest) and the standing is the result's places; the horizon changes exactly when a
    Tightwad round or a Divers Weights hand ends, never in Palace."""
    start = None
    prev = None
    stretch = {"tightwad": "round", "divers-weights": "hand_number", "palace": "game"}[game]
    for state, _ in _positions(game, players, options, 11, every=1):
        if start is None:
            start = state.points()
        obs = state.observation(0)
        h = state.horizon()
        if prev is not None and not state.is_over():
            assert (h != prev[0]) == (obs[stretch] != prev[1])
        prev = (h, obs[stretch])
        r = [state.returns(s, start) for s in range(players)]
        assert all(0.0 <= x <= 1.0 for x in r)
        assert len(state.standing_places()) == players
    assert state.is_over()
    places = state.result().places
    assert state.standing_places() == places
    r = [state.returns(s, start) for s in range(players)]
    for a in range(players):
        for b in range(players):
            if places[a] < places[b]:
                assert r[a] > r[b]
    if game != "divers-weights":
        assert r == [1.0 - places[s] / (players - 1) for s in range(players)]


def test_tightwad_returns_before_the_end_weigh_the_round_penalty() -> None:
    """Before the game ends Tightwad scores the round: the seat that took its penalty has the
    lowest return, the others share the highest."""
    state = REGISTRY["tightwad"].new_game(4, 5, {})
    start = state.points()
    rng = DealRng(5)
    while state.horizon() == 1:
        seat = state.to_move()[0]
        state.apply(seat, rng.randbelow(len(state.legal_actions(seat))))
    assert not state.is_over()
    pts = state.points()
    loser = max(range(4), key=lambda s: pts[s])
    r = [state.returns(s, start) for s in range(4)]
    assert r[loser] < 0.5 < min(r[s] for s in range(4) if s != loser)


def test_palace_setup_swap_is_settled_by_rule() -> None:
    """Palace's ``rule_action`` at the setup swap is the swap rule on the seat's own moves,
    from the observation alone; None once play begins and in the other games."""
    state = REGISTRY["palace"].new_game(3, 8, {})
    cls = type(state)
    for seat in range(3):
        obs = json.loads(json.dumps(state.observation(seat)))
        assert cls.rule_action(obs) == palace_swap_choice(state.moves(seat))
    for seat in range(3):
        state.apply(seat, 0)
    assert cls.rule_action(state.observation(state.to_move()[0])) is None
    for game, players in (("tightwad", 3), ("divers-weights", 2)):
        s = REGISTRY[game].new_game(players, 8, {})
        assert type(s).rule_action(s.observation(s.to_move()[0])) is None
