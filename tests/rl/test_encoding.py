"""The fixed observation vectors and action slots (arena/rl/encoding.py), without numpy."""

from __future__ import annotations

import ast
import random
import sys
from pathlib import Path

import pytest

from arena.rl import encoding as E
from games import decktet, get_game

CASES = [
    ("tightwad", 3, {}),
    ("tightwad", 6, {}),
    ("tightwad", 10, {}),
    ("divers-weights", 2, {}),
    ("divers-weights", 3, {"bidding": True}),
    ("divers-weights", 4, {}),
    ("palace", 2, {}),
    ("palace", 4, {"extended": True}),
    ("palace", 10, {"wyrm_variant": True}),
]


def test_card_table_matches_the_engines():
    assert E.FACES == tuple((c.rank, c.suits) for c in decktet.CARDS)
    assert E.SUIT_BITS == decktet.SUIT_BITS and E.SUIT_NAMES == decktet.SUIT_NAMES


def test_encoding_uses_the_standard_library_only():
    # Exported bots carry this file into the sandbox, where only the stdlib (and botkit) exist.
    tree = ast.parse(Path(E.__file__).read_text(encoding="utf-8"))
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert names <= set(sys.stdlib_module_names) - {"__future__"}, names


def _random_views(game: str, players: int, options: dict, games: int = 6):
    """Every (observation) a seat sees along random games, including the final views."""
    for seed in range(games):
        state = get_game(game).new_game(players, seed, options)
        rng = random.Random(seed)
        while not state.is_over():
            seat = state.to_move()[0]
            yield state.observation(seat)
            state.apply(seat, rng.randrange(len(state.legal_actions(seat))))
        for seat in range(players):
            yield state.observation(seat)


@pytest.mark.parametrize("game,players,options", CASES)
def test_vectors_have_a_fixed_size_in_the_unit_range(game, players, options):
    size = E.obs_size(game, players)
    for obs in _random_views(game, players, options):
        v = E.encode(obs)
        assert len(v) == size
        assert all(isinstance(x, float) and 0.0 <= x <= 1.0 for x in v)
        slots = E.action_slots(obs)
        assert len(slots) == len(obs["legal_actions"])
        assert all(0 <= s < E.ACTION_SIZE[game] for s in slots)
        # slot -> the first action id with that slot, and every slot is reachable.
        mapping = E.slot_actions(obs)
        assert set(mapping) == set(slots)
        assert all(slots[i] == s and s not in slots[:i] for s, i in mapping.items())


@pytest.mark.parametrize("game,players,options", [c for c in CASES if c[0] != "palace"])
def test_tightwad_and_divers_weights_slots_are_one_per_action(game, players, options):
    for obs in _random_views(game, players, options):
        slots = E.action_slots(obs)
        assert len(set(slots)) == len(slots)


def test_slots_name_the_card_or_the_bid():
    tw = get_game("tightwad").new_game(3, 1)
    obs = tw.observation(tw.to_move()[0])
    assert E.action_slots(obs) == [a["card"] % 45 for a in obs["legal_actions"]]
    dw = get_game("divers-weights").new_game(2, 1, {"bidding": True})
    obs = dw.observation(dw.to_move()[0])
    assert obs["phase"] == "bid" and E.action_slots(obs) == [36 + b for b in range(6)]
    dw = get_game("divers-weights").new_game(2, 1)
    obs = dw.observation(0)
    assert E.action_slots(obs) == obs["hand"]  # play card pid
    dw.apply(0, 0)
    dw.apply(1, 0)
    while dw.observation(dw.to_move()[0])["phase"] != "prize":
        for seat in dw.to_move():
            dw.apply(seat, 0)
    obs = dw.observation(dw.to_move()[0])
    assert E.action_slots(obs) == [42 + a["card"] for a in obs["legal_actions"]]


def test_palace_swap_slots_are_hand_and_face_up_positions():
    state = get_game("palace").new_game(3, 1)
    obs = state.observation(0)
    hand, up = obs["hand"], obs["tableaux"][0]["face_up"]
    slots = E.action_slots(obs)
    for a, slot in zip(obs["legal_actions"], slots):
        pairs = [(hand.index(h), up.index(u)) for h, u in a["swaps"]]
        if not pairs:
            assert slot == 0
        elif len(pairs) == 1:
            assert slot == 1 + 4 * pairs[0][0] + pairs[0][1]
        else:
            assert 17 <= slot < 53
    assert len(set(slots)) == len(slots)  # each distinct outcome keeps its own slot


def test_palace_play_slots_name_rank_count_trump_and_the_new_trump_ace():
    obs = {
        "game": "palace",
        "seat": 0,
        "trump_suit": "Waves",
        "legal_actions": [
            {"id": 0, "kind": "play", "cards": [15]},  # The Forest (5, Moons Leaves): 1 card of rank 5
            {"id": 1, "kind": "play", "cards": [16]},  # The Discovery (5, Suns Waves): a trump
            {"id": 2, "kind": "play", "cards": [15, 61]},  # two of rank 5, one a trump
            {"id": 3, "kind": "play", "cards": [0, 45 + 3]},  # two Aces, the last (Leaves) is the new trump
            {"id": 4, "kind": "excuse", "card": 44},
            {"id": 5, "kind": "reveal", "position": 2, "card": None},
            {"id": 6, "kind": "play", "cards": [15 + 45 * k for k in range(10)]},  # ten: the 8+ slot
            {"id": 7, "kind": "play", "cards": [17]},  # The Soldier (5, Wyrms Knots): same slot as id 0
        ],
    }
    rank5 = 53 + 16 * 3
    assert E.action_slots(obs) == [rank5, rank5 + 8, rank5 + 8 + 1, 229 + 8 * 3 + 1, 277, 280, rank5 + 7, rank5]
    assert E.slot_actions(obs)[rank5] == 0  # a shared slot plays the first such action
    obs["trump_suit"] = None  # before any Ace: nothing is a trump
    assert E.action_slots(obs)[:3] == [rank5, rank5, rank5 + 1]


def test_unknown_game_is_a_clear_error():
    with pytest.raises(ValueError, match="no encoding for game 'chess'"):
        E.obs_size("chess", 2)
