"""AIVAT's chance terms in Palace: a face-down card nobody has seen, revealed (R-P13).

Nobody has seen the draw pile or an unrevealed face-down card (R-P17) and no decision depends
on them, so given the game so far every arrangement of those cards over their places is
equally likely. The reveal term (``arena.luck.palace_value.reveal_term``) must then have mean
zero over the arrangements, exactly, whoever plays: these tests enumerate them.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from arena.luck import known_strength, palace_value
from arena.luck.aivat import AIVAT_CHANCE, aivat_corrections, has_chance_aivat
from arena.luck.reference import random_policy
from games import REGISTRY
from games.palace import REVEAL
from games.rng import DealRng

GAME, PLAYERS = "palace", 4
ROOT = Path(__file__).resolve().parents[2]


def _before_a_reveal(deal: int, max_hidden: int):
    """Uniformly random play of ``deal`` up to the first state where the seat to move must reveal
    an unseen face-down card with at most ``max_hidden`` unseen cards left, or None."""
    state = REGISTRY[GAME].new_game(PLAYERS, deal)
    rng = DealRng(deal)
    while not state.is_over():
        seat = state.to_move()[0]
        moves = state.moves(seat)
        unseen = [a for a, m in enumerate(moves) if m[0] == REVEAL and not state._known[seat][m[1]]]
        if unseen and len(palace_value.hidden_places(state)) <= max_hidden:
            return state, seat, unseen[rng.randbelow(len(unseen))]
        state.apply(seat, random_policy(state, seat, rng))
    return None


def _arranged(state, places, cards):
    new = state.clone()
    for (s, i), card in zip(places, cards):
        (new._draw if s < 0 else new._down[s])[i] = card
    return new


def test_reveal_terms_apply_in_four_player_palace_only():
    """R-P13 reveals happen at any player count; the value has weights for four players."""
    assert has_chance_aivat(GAME, 4) and not has_chance_aivat(GAME, 3) and not has_chance_aivat(GAME, 5)
    assert not has_chance_aivat("tightwad", 3) and not has_chance_aivat("divers-weights", 2)
    assert AIVAT_CHANCE[GAME] is palace_value.reveal_term
    table = palace_value.REVEAL_WEIGHTS[PLAYERS]
    assert sorted(table) == [2, 3, 4]
    assert all(len(w) == palace_value.NFEATURES and any(w) for w in table.values())


@settings(max_examples=25)
@given(deal=st.integers(0, 2**63), builtin=st.sets(st.integers(0, PLAYERS - 1)))
def test_a_reveal_term_has_mean_zero_over_every_arrangement_of_the_unseen_cards(deal, builtin):
    """R-P13, R-P17: over every arrangement of the unseen cards (the draw pile and the face-down
    cards never revealed) over their places, the reveal term's mean is zero for every seat,
    exactly: the correction is unbiased whatever the weights and whoever plays."""
    found = _before_a_reveal(deal, max_hidden=5)
    assume(found is not None)
    state, seat, action = found
    places = palace_value.hidden_places(state)
    cards = [(state._draw if s < 0 else state._down[s])[i] for s, i in places]
    known = frozenset(builtin)
    totals = [0.0] * PLAYERS
    count = 0
    for perm in itertools.permutations(cards):
        term = palace_value.reveal_term(_arranged(state, places, perm), seat, action, known)
        assert term is not None
        totals = [t + x for t, x in zip(totals, term)]
        count += 1
    assert all(abs(t / count) < 1e-9 for t in totals), totals


def test_only_a_reveal_of_an_unseen_card_has_a_term():
    """A play from the hand has no reveal term, nor has revealing a card every player has seen
    (R-P13: an illegal reveal goes back face down, known to all)."""
    state = REGISTRY[GAME].new_game(PLAYERS, 3)
    seat = state.to_move()[0]
    assert palace_value.reveal_term(state, seat, 0, frozenset()) is None
    found = None
    for deal in range(200):
        got = _before_a_reveal(deal, max_hidden=16)
        if got is not None:
            found = got
            break
    assert found is not None
    state, seat, action = found
    assert palace_value.reveal_term(state, seat, action, frozenset()) is not None
    i = state.moves(seat)[action][1]
    state._known[seat][i] = True  # as if revealed before: nothing left to chance
    assert palace_value.reveal_term(state, seat, action, frozenset()) is None


def test_matches_without_a_builtin_player_get_the_reveal_terms_alone():
    """Whoever plays, the correction of a four-player match is the sum of its reveal terms (times
    their fixed coefficient) when no seat is the builtin random player; with builtin seats their
    draws' terms are added."""
    _, decisions = known_strength.play(GAME, PLAYERS, 77, 0, known_strength.noisy(GAME, 0.0), 5, "reveal-test")
    state = REGISTRY[GAME].new_game(PLAYERS, 77)
    by_hand = [0.0] * PLAYERS
    reveals = 0
    for seat, action in decisions:
        term = palace_value.reveal_term(state, seat, action, frozenset())
        if term is not None:
            reveals += 1
            by_hand = [a + b for a, b in zip(by_hand, term)]
        state.apply(seat, action)
    assert reveals > 0
    alone = aivat_corrections(GAME, PLAYERS, {}, 77, decisions, frozenset(), 0, 5)
    assert alone == [palace_value.REVEALS_SCALE * x for x in by_hand] and any(abs(x) > 1e-9 for x in alone)
    assert aivat_corrections(GAME, PLAYERS, {}, 77, decisions, frozenset({1, 2, 3}), 0, 5) != alone


def test_the_training_script_learns_the_reveal_weights_of_the_shipped_shape(tmp_path):
    """``benchmarks/palace_value.py --reveal`` is how REVEAL_WEIGHTS were made: on one deal it
    prints a table like the shipped one (3 vectors of 35 numbers), as the weights file's field."""
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "palace_value.py"),
            "--reveal",
            "--deals",
            "1",
            "--playouts",
            "1",
            "--processes",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("# ") and "sibling rows from 1 deals" in run.stdout
    table = json.loads(run.stdout.strip().splitlines()[-1])["reveal_weights"][str(PLAYERS)]
    assert sorted(table) == ["2", "3", "4"] and all(len(w) == palace_value.NFEATURES for w in table.values())
