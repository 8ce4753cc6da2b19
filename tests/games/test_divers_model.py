"""games.divers_model: the model of the other seat in two-player Divers Weights that
``games.determinize.SeatBelief`` samples with (hands weighted by what the seat has played,
its choice at the trick being decided), and only there."""

from __future__ import annotations

import bisect
import json
import math
from random import Random
from typing import Any

from games import REGISTRY
from games import divers_model as dm
from games.determinize import Determinizer, SeatBelief


def _second_trick() -> tuple[Any, dict[str, Any]]:
    """Trick 1: seat 1 plays the card the model values most for it, seat 0 its first card; trick 2:
    seat 1 has chosen, unseen by seat 0. The state and seat 0's observation (through JSON)."""
    state = REGISTRY["divers-weights"].new_game(2, 4242, {})
    obs1 = state.observation(1)
    pool1 = [c for c in range(36) if c not in obs1["threshold"]]
    values1 = dm.card_values(pool1, obs1["threshold"], 5, [], Random(3))
    best = max(obs1["hand"], key=lambda c: values1[c])
    state.apply(1, obs1["hand"].index(best))
    state.apply(0, 0)
    while state.to_move() != (0, 1):
        state.apply(state.to_move()[0], 0)  # the winner's prize
    state.apply(1, 2)
    return state, json.loads(json.dumps(state.observation(0)))


def test_hands_of_the_other_seat_fit_its_plays() -> None:
    """The hands the model deals the other seat hold only cards this seat has not seen, its
    hidden choice included, and are weighted towards hands that explain the card it played
    earlier in the hand (under the model) better than hands drawn uniformly do."""
    state, obs = _second_trick()
    det = Determinizer(obs, state.options)
    memory: dict[str, Any] = {}
    model = dm.OtherSeat(obs, det.pool, memory, Random(5))
    unseen = set(det.pool)
    rnd = Random(7)
    for _ in range(200):
        s: Any = det.sample(rnd)
        model.deal(s, rnd)
        assert len(s._hands[1]) == 3 and s._played[1] is not None
        assert set(s._hands[1]) | {s._played[1]} <= unseen
        assert sorted(s._hands[1] + [s._played[1]] + s._deck) == sorted(unseen)

    vals = memory["dw_past_values"][(1, 0)]
    played = obs["tricks"][0]["played"][1]

    def fit(hand: list[int]) -> float:  # the model's probability of the card played, from this hand
        held = hand + [played]
        return math.exp(vals[played] / dm.MODEL_TAU) / sum(math.exp(vals[c] / dm.MODEL_TAU) for c in held)

    pick = Random(11)
    assert model.hands is not None
    weighted = []
    for _ in range(2000):
        i = min(bisect.bisect_left(model.cum, pick.random() * model.cum[-1]), len(model.hands) - 1)
        weighted.append(fit(model.hands[i]))
    uniform = [fit(pick.sample(sorted(unseen), 4)) for _ in range(2000)]
    assert sum(weighted) / len(weighted) > sum(uniform) / len(uniform) + 0.02


def _hand_played_by_the_model(follow: bool) -> float:
    """Seat 1 plays a whole hand choosing, at every trick, the card the model values most
    (``follow``) or least; the share of random play the model then expects from seat 1 at the
    next hand's first trick."""
    state: Any = REGISTRY["divers-weights"].new_game(2, 99, {})
    rnd = Random(1)
    while state.hand_no == 1:
        if state._phase == 1:  # a trick: seat 1 by the model's values, seat 0 its first card
            obs1 = state.observation(1)
            gone = set(obs1["threshold"] + obs1["discarded"] + [c for pr in obs1["prizes"] for c in pr])
            pool = [c for c in range(36) if c not in gone]
            vals = dm.card_values(pool, obs1["threshold"], len(obs1["hand"]), obs1["prizes"][1], rnd, 400)
            pick = (max if follow else min)(obs1["hand"], key=lambda c: vals[c])
            state.apply(1, obs1["hand"].index(pick))
            state.apply(0, 0)
        else:
            state.apply(state.to_move()[0], 0)
    obs = json.loads(json.dumps(state.observation(0)))
    assert obs["previous_hand"] is not None
    return dm.OtherSeat(obs, Determinizer(obs, state.options).pool, {}, Random(2)).random_share


def test_model_loses_weight_when_the_other_seat_plays_unlike_it() -> None:
    """After a hand where the other seat always played the card the model values most, the
    model expects less random play from it than before any card was shown; after a hand
    where it always played the card the model values least, more."""
    before = dm.MODEL_RANDOM + (1 - dm.MODEL_RANDOM) * (1 - dm.MODEL_PRIOR)
    assert _hand_played_by_the_model(True) < before < _hand_played_by_the_model(False)


def test_the_belief_uses_the_model_only_at_the_trick_being_decided() -> None:
    """SeatBelief's sampler: at two players without bidding the other seat's card in this
    trick comes from the model (a card of its sampled hand), its choices in later tricks and
    this seat's never; at four players, or with bidding, no model at all."""
    state, obs = _second_trick()
    sampler = SeatBelief("divers-weights", state.options).sampler(obs, Random(1))
    assert sampler.model is not None
    rnd = Random(2)
    for _ in range(20):
        s: Any = sampler.sample(rnd)
        s.apply(0, 0)  # seat 1 has chosen: the trick resolves
        if s.to_move() == (1,):  # seat 1 won alone: its prize by the model
            assert sampler.model_action(s, 1, rnd) in s.legal_actions(1)
            assert sampler.model_action(s, 0, rnd) is None
            s.apply(1, 0)
        elif s.to_move() == (0,):
            assert sampler.model_action(s, 0, rnd) is None
            s.apply(0, 0)
        assert s.trick_no == 3 and sampler.model_action(s, 1, rnd) is None  # a later trick: searched
    fresh = REGISTRY["divers-weights"].new_game(2, 5, {})
    assert SeatBelief("divers-weights", {}).sampler(fresh.observation(0), Random(1)).model is not None
    for players, options in ((4, {}), (2, {"bidding": True})):
        other = REGISTRY["divers-weights"].new_game(players, 5, options)
        belief = SeatBelief("divers-weights", other.options)
        assert belief.sampler(other.observation(other.to_move()[0]), Random(1)).model is None
