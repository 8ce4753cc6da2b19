"""games.determinize: sampled states fit the observation, use only public information (C5),
and play forward with the real rules."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from typing import Any

import pytest

from games import REGISTRY, decktet
from games.determinize import Determinizer, determinize
from games.rng import DealRng
from games.simulate import play_randomly

CASES = [
    ("tightwad", 3, {}),
    ("tightwad", 4, {}),
    ("tightwad", 7, {}),
    ("divers-weights", 2, {}),
    ("divers-weights", 3, {}),
    ("divers-weights", 4, {"bidding": True}),
    ("palace", 2, {}),
    ("palace", 4, {}),
    ("palace", 5, {"extended": True, "wyrm_variant": True}),
]


def public(obs: dict[str, Any]) -> dict[str, Any]:
    """The observation as the bot gets it: through JSON; Palace's recent events set aside
    (a sampled state has no history of events, only the position)."""
    out = json.loads(json.dumps(obs))
    out.pop("events", None)
    return out


def positions(game: str, players: int, options: dict[str, Any], seed: int, every: int = 3):
    """(state, seat) at every ``every``-th decision of a random game, every seat to move."""
    spec = REGISTRY[game]
    s = spec.new_game(players, seed, {**options, "decision_cap": 400})
    rng = DealRng(seed)
    k = 0
    while not s.is_over():
        for seat in tuple(s.to_move()):
            if k % every == 0:
                yield s, seat
            k += 1
            s.apply(seat, rng.randbelow(len(s.legal_actions(seat))))
            if s.is_over():
                return


@pytest.mark.parametrize("game,players,options", CASES)
def test_samples_fit_the_observation_and_play_forward(game: str, players: int, options: dict) -> None:
    for seed in range(2):
        for state, seat in positions(game, players, options, seed):
            obs = public(state.observation(seat))
            det = Determinizer(obs, state.options)
            for k in range(2):
                d = det.sample(random.Random(k))
                assert public(d.observation(seat)) == obs
                assert sorted(d.all_cards()) == sorted(state.all_cards())
                play_randomly(d, DealRng(k))  # the real rules carry it to the end
                assert d.is_over()


@pytest.mark.parametrize("game,players,options", CASES)
def test_C5_samples_do_not_depend_on_the_real_hidden_cards(game: str, players: int, options: dict) -> None:
    """Two positions that differ only in hidden cards give identical samples for the same rng."""
    for state, seat in positions(game, players, options, seed=5, every=7):
        other = state.with_hidden_shuffled(seat, DealRng(99))
        obs_a, obs_b = public(state.observation(seat)), public(other.observation(seat))
        assert obs_a == obs_b
        a = determinize(obs_a, state.options, 1234)
        b = determinize(obs_b, other.options, 1234)
        for s in range(players):
            if s != seat:
                assert a._hands[s] == b._hands[s]


def _hidden_hand_counts(game: str, players: int, seed: int, samples: int) -> tuple[Any, ...]:
    spec = REGISTRY[game]
    real = spec.new_game(players, seed)
    det = Determinizer(public(real.observation(0)), real.options)
    rng = random.Random(seed)
    hits, truth_overlap = Counter(), []
    truth = set(real._hands[1])
    for _ in range(samples):
        d = det.sample(rng)
        hits.update(d._hands[1])
        truth_overlap.append(len(truth & set(d._hands[1])))
    return det.pool, len(real._hands[1]), hits, truth_overlap


@pytest.mark.parametrize("game,players", [("tightwad", 4), ("divers-weights", 3), ("palace", 3)])
def test_C5_sampled_hidden_cards_are_independent_of_the_real_ones(game: str, players: int) -> None:
    """Statistically: every unseen card is equally likely in another seat's sampled hand, and the
    sampled hand shares with the real one only what chance gives (no leak of the truth)."""
    samples = 3000
    for seed in (1, 2):
        pool, k, hits, overlap = _hidden_hand_counts(game, players, seed, samples)
        p = k / len(pool)
        expected = samples * p
        chi2 = sum((hits[c] - expected) ** 2 / expected for c in pool)
        dof = len(pool) - 1
        assert chi2 < dof + 5 * math.sqrt(2 * dof), (chi2, dof)  # about 5 sigma: no card favoured
        mean = sum(overlap) / samples
        # overlap with the truth is hypergeometric: mean k*k/N; 5 standard errors of slack
        var = k * p * (1 - p) * (len(pool) - k) / (len(pool) - 1)
        assert abs(mean - k * p) < 5 * math.sqrt(var / samples), (mean, k * p)


def test_the_sampler_sees_the_json_observation_only() -> None:
    """The Determinizer is built from a JSON text: no engine object, no seed reaches it."""
    real = REGISTRY["divers-weights"].new_game(3, 8)
    text = json.dumps(real.observation(2))
    d = Determinizer(json.loads(text), {"hands": None, "target": None, "bidding": False, "decision_cap": 100_000})
    a, b = d.sample(7), d.sample(7)
    assert a._hands == b._hands and a._deck == b._deck
    assert a._rng.getstate() != real._rng.getstate()


def test_R_T3_tightwad_samples_respect_a_play_under_the_controlling_card() -> None:
    """A seat that followed under the controller played its lowest rank: it holds nothing lower."""
    spec = REGISTRY["tightwad"]
    for seed in range(40):
        s = spec.new_game(3, seed)
        lead = s.to_move()[0]
        s.apply(lead, len(s.legal_actions(lead)) - 1)  # the highest card leads
        nxt = s.to_move()[0]
        r_ctl = decktet.RANK[s._tcards[0]]
        moves = s.moves(nxt)
        low = [i for i, p in enumerate(moves) if decktet.RANK[p] < r_ctl]
        if not low:
            continue
        s.apply(nxt, low[0])
        floor = decktet.RANK[s._tcards[1]]
        me = s.to_move()[0]
        det = Determinizer(public(s.observation(me)), s.options)
        for k in range(50):
            d = det.sample(k)
            assert min(decktet.RANK[p] for p in d._hands[nxt]) >= floor
        return
    pytest.fail("no seed gave a play under the controlling card")


def test_bad_observation_is_refused() -> None:
    real = REGISTRY["tightwad"].new_game(3, 1)
    obs = public(real.observation(0))
    obs["hand_sizes"][1] += 1
    with pytest.raises(ValueError, match="do not match"):
        Determinizer(obs, real.options)


# ---- Palace: the public history (issue 30 item 4) --------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as hst

from games.palace import PalaceState  # noqa: E402
from games.palace_history import PalaceHistory, illegal  # noqa: E402


def _exact(obs: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(obs))


class _Table:
    """A real game with every seat's history fed as its bot would: each observation it decides on."""

    def __init__(self, game: str, players: int, options: dict[str, Any], seed: int) -> None:
        self.state = REGISTRY[game].new_game(players, seed, {**options, "decision_cap": 400})
        self.hist = [PalaceHistory(self.state.options) for _ in range(players)] if game == "palace" else None
        self.rng = DealRng(seed)

    def observe(self, seat: int) -> dict[str, Any]:
        obs = _exact(self.state.observation(seat))
        if self.hist:
            self.hist[seat].update(obs)
        return obs

    def step(self, choose=None) -> None:
        seat = self.state.to_move()[0]
        self.observe(seat)
        n = len(self.state.legal_actions(seat))
        self.state.apply(seat, choose(seat, n) if choose else self.rng.randbelow(n))


@settings(max_examples=60)
@given(
    case=hst.sampled_from(CASES),
    seed=hst.integers(0, 10**6),
    steps=hst.integers(0, 150),
    sample_seed=hst.integers(0, 2**32),
    with_history=hst.booleans(),
)
def test_every_sample_reproduces_the_observation_exactly_and_plays_to_the_end(
    case: tuple[str, int, dict], seed: int, steps: int, sample_seed: int, with_history: bool
) -> None:
    game, players, options = case
    table = _Table(game, players, options, seed)
    for _ in range(steps):
        if table.state.is_over():
            return
        table.step()
    if table.state.is_over():
        return
    seat = table.state.to_move()[0]
    obs = table.observe(seat)
    history = table.hist[seat] if table.hist and with_history else None
    d = Determinizer(obs, table.state.options, history=history).sample(sample_seed)
    assert _exact(d.observation(seat)) == obs  # events, legal actions and all
    assert sorted(d.all_cards()) == sorted(table.state.all_cards())
    if history is not None:
        for s in range(players):
            assert set(history.known[s]) <= set(d._hands[s]) and set(history.known[s]) <= set(table.state._hands[s])
    play_randomly(d, DealRng(sample_seed))
    assert d.is_over()


def test_R_P3_R_P17_a_face_up_card_swapped_into_a_hand_stays_in_a_hand() -> None:
    """Seat 1 swaps a face-up card into its hand: public once all have chosen. Seat 0's
    samples keep it in seat 1's hand (with the history), or at least in a hand (the
    observation alone cannot tell whose after an eat); never in the draw pile or face down."""
    checked = 0
    for seed in range(40):
        table = _Table("palace", 3, {}, seed)
        st = table.state
        first = (st._dealer + 1) % 3
        if first != 0:
            continue
        moves = st.moves(1)
        swap = next(i for i, m in enumerate(moves) if len(m[1]) == 2)  # two swaps
        for seat in (0, 1, 2):
            table.observe(seat)
            st.apply(seat, swap if seat == 1 else 0)
        obs = table.observe(0)
        swapped = [u for s, _, u in obs["swaps"]]
        assert len(swapped) == 2
        with_h = Determinizer(obs, st.options, history=table.hist[0])
        alone = Determinizer(obs, st.options)
        rng = random.Random(seed)
        for _ in range(1000):
            assert set(swapped) <= set(with_h.sample(rng)._hands[1])
            d = alone.sample(rng)
            assert set(swapped) <= set(d._hands[1]) | set(d._hands[2])
        checked += 1
        if checked == 2:
            return
    pytest.fail("no seed let seat 0 play first")


def test_R_P8_a_seat_that_was_forced_to_eat_held_no_playable_card() -> None:
    """Right after seat s was forced to eat (R-P8), every sample gives s a hand whose cards
    other than the pile just eaten were all unplayable on the pile it could not answer."""
    checked = 0
    for seed in range(60):
        table = _Table("palace", 3, {}, seed)
        st = table.state
        eats: list[tuple[int, tuple[int, int, int], tuple[int, ...]]] = []

        def recording_eat(seat: int, st: PalaceState = st) -> None:
            if st._hands[seat]:  # a hand that could not answer (not a face-down reveal)
                eats.append((seat, (st._mode, st._ref, st._trump), tuple(st._pile)))
            PalaceState._eat(st, seat)

        st._eat = recording_eat
        while not st.is_over() and st.decisions < 300:
            seat = st.to_move()[0]
            before = len(eats)
            obs = table.observe(seat)
            if before and obs["events"]:
                last = obs["events"][-1]
                s, cons, eaten = eats[-1]
                if (
                    last["type"] == "eat"
                    and last["seat"] == s != seat
                    and tuple(last["cards"]) == eaten
                    and len(st._hands[s]) > len(eaten)
                ):
                    det = Determinizer(obs, st.options, history=table.hist[seat])
                    rng = random.Random(seed)
                    for _ in range(300):
                        hand = det.sample(rng)._hands[s]
                        rest = [p for p in hand if p not in set(last["cards"])]
                        assert all(illegal(p, cons) for p in rest), (seed, s, rest)
                    checked += 1
                    if checked == 6:
                        return
            n = len(st.legal_actions(seat))
            st.apply(seat, table.rng.randbelow(n))
    pytest.fail(f"only {checked} forced eats checked")
