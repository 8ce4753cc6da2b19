"""No seat's information state or observation string tells apart two histories that differ only
in what that seat cannot see (ruling C5): another seat's hidden choice within a simultaneous step
(the sequential form), or where the hidden cards lie."""

from __future__ import annotations

import random

import pytest

pyspiel = pytest.importorskip("pyspiel", reason="open_spiel is not installed (pip install -e '.[openspiel]')")
import arena.openspiel  # noqa: E402,F401  (registers the games)
from games.rng import DealRng  # noqa: E402

CASES = [
    ("decktet_divers_weights", {"players": 4, "simultaneous": False}),
    ("decktet_divers_weights", {"players": 3, "bidding": True, "simultaneous": False}),
    ("decktet_palace", {"players": 3, "simultaneous": False, "decision_cap": 60}),
    ("decktet_tightwad", {"players": 4, "decision_cap": 60}),
]


def _views(state, seats):
    return [(state.information_state_string(s), state.observation_string(s)) for s in seats]


def _check_hidden_choice(state, rnd):
    """The first chooser of a simultaneous step tries every choice; the later choosers then make
    the same choices in every branch, and each must see the same thing in every branch."""
    movers = list(state.engine.to_move())
    later = movers[1:]
    tail = []  # the later choosers' choices, all but the last (which resolves the step)
    probe = state.clone()
    probe.apply_action(0)
    for _ in later[:-1]:
        tail.append(rnd.choice(probe.legal_actions()))
        probe.apply_action(tail[-1])
    seen = set()
    for a in state.legal_actions():
        branch = state.clone()
        branch.apply_action(a)
        views = [tuple(_views(branch, later))]
        for b in tail:
            branch.apply_action(b)
            views.append(tuple(_views(branch, later)))
        seen.add(tuple(views))
    assert len(seen) == 1, "a later chooser's view depends on an earlier hidden choice"
    return len(state.legal_actions())


@pytest.mark.parametrize("name,params", CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_information_states_hide_what_the_seat_cannot_see(name, params):
    game = pyspiel.load_game(name, params)
    n = game.num_players()
    rnd = random.Random(5)
    branches = shuffles = 0
    for deal in (3, 8):
        state = game.new_initial_state()
        state.apply_action(deal)
        while not state.is_terminal():
            for seat in range(n):  # the hidden cards moved about: this seat's view is the same
                moved = state.clone()
                moved.engine = state.engine.with_hidden_shuffled(seat, DealRng(rnd.randrange(1 << 30)))
                assert _views(moved, [seat]) == _views(state, [seat])
                shuffles += 1
            if len(state.engine.to_move()) > 1:
                branches += _check_hidden_choice(state, rnd)
            state.apply_action(rnd.choice(state.legal_actions()))
    assert shuffles > 50 and (branches > 20 or name == "decktet_tightwad")
