"""Tightwad engine tests: rulings R-T1..R-T8 and C1-C5 (shared/RULINGS.md)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import decktet
from games.core import IllegalActionError, OptionError
from games.decktet import pid_of
from games.rng import DealRng
from games.tightwad import SPEC, TightwadState, _sort_key

P = pid_of


def make_state(
    hands: Sequence[Sequence[int]],
    *,
    dealer: int = 0,
    leader: int | None = None,
    penalties: Sequence[Sequence[int]] | None = None,
    points: Sequence[int] | None = None,
    seed: int = 0,
    options: dict[str, Any] | None = None,
) -> TightwadState:
    """Test-only constructor: a fresh game whose hands are set by hand.

    Every card not in a hand or a penalty pile goes to the set-aside cards, so the
    state still holds every card exactly once. The trick is empty and ``leader``
    (default: left of ``dealer``, R-T2) is to lead. Points default to the sum of
    the penalty cards' ranks.
    """
    n = len(hands)
    assert len({len(h) for h in hands}) == 1, "every hand holds as many cards"
    s = SPEC.new_game(n, seed, options)
    assert isinstance(s, TightwadState)
    pens = [list(p) for p in penalties] if penalties else [[] for _ in range(n)]
    s._hands = [sorted(h, key=_sort_key) for h in hands]
    s._pen = pens
    s._points = list(points) if points else [sum(decktet.RANK[p] for p in pen) for pen in pens]
    used = [p for h in hands for p in h] + [p for pen in pens for p in pen]
    assert len(used) == len(set(used)), "a physical card used twice"
    s._aside = [p for p in decktet.make_deck(s.ndecks) if p not in set(used)]
    s._tseats, s._tcards, s._done, s._ctl = [], [], [], -1
    s._dealer = dealer
    s._hand_size = len(hands[0])
    s._to_move = ((dealer + 1) % n if leader is None else leader,)
    s._move_cache.clear()
    return s


def play(s: TightwadState, seat: int, pid: int) -> None:
    """Play a given physical card (found among the seat's legal moves)."""
    moves = s.moves(seat)
    assert pid in moves, f"{s.card_name(pid)} not legal for seat {seat}: {[s.card_name(m) for m in moves]}"
    s.apply(seat, moves.index(pid))


def legal_names(s: TightwadState, seat: int) -> set[str]:
    return {decktet.face(p).name for p in s.moves(seat)}


def check_conserved(s: TightwadState) -> None:
    assert sorted(s.all_cards()) == decktet.make_deck(s.ndecks)


def random_game(
    players: int, seed: int, options: dict[str, Any] | None = None, play_seed: int = 1
) -> tuple[TightwadState, list[int]]:
    s = SPEC.new_game(players, seed, options)
    rng = DealRng(play_seed)
    actions = []
    while not s.is_over():
        seat = s.to_move()[0]
        a = rng.randbelow(len(s.legal_actions(seat)))
        actions.append(a)
        s.apply(seat, a)
    return s, actions


# ---- the seed text's example trick -----------------------------------------------


def test_seed_example_trick_R_T3_R_T4() -> None:
    """Steve leads the Soldier, Dylan's Calamity takes control, Valerie may only play a
    Crown or her lowest card (the Origin), Brandon's Ace of Wyrms wins (R-T3, R-T4)."""
    steve, dylan, valerie, brandon = 0, 1, 2, 3
    hands = [
        [P("The Soldier"), P("The Pact"), P("The Mill")],
        [P("The Calamity"), P("The Journey"), P("The Cave")],
        [P("The Origin"), P("The Sea"), P("The Merchant")],
        [P("Ace of Wyrms"), P("The Author"), P("The Bard")],
    ]
    s = make_state(hands, dealer=brandon)
    assert s.to_move() == (steve,)
    play(s, steve, P("The Soldier"))
    obs = s.observation(valerie)
    assert obs["trick"]["controller"] == steve
    play(s, dylan, P("The Calamity"))
    assert s.observation(valerie)["trick"]["controller"] == dylan
    # Another Crown or her lowest card; not the Merchant (9).
    assert legal_names(s, valerie) == {"The Origin", "The Sea"}
    play(s, valerie, P("The Origin"))
    assert s.observation(brandon)["trick"]["control"] == 1
    play(s, brandon, P("Ace of Wyrms"))
    # The trick is over: Brandon won it and leads the next one.
    assert s.to_move() == (brandon,)
    last = s.observation(steve)["tricks"][-1]
    assert last == {
        "leader": steve,
        "plays": [
            {"seat": steve, "card": P("The Soldier")},
            {"seat": dylan, "card": P("The Calamity")},
            {"seat": valerie, "card": P("The Origin")},
            {"seat": brandon, "card": P("Ace of Wyrms")},
        ],
        "control": 3,
        "controller": brandon,
        "winner": brandon,
    }


# ---- R-T1 ------------------------------------------------------------------------


@pytest.mark.parametrize("players,decks,aside", [(3, 1, 15), (4, 1, 8), (5, 1, 1), (6, 2, 30), (8, 2, 16), (10, 2, 2)])
def test_R_T1_R_T6_decks_and_first_deal(players: int, decks: int, aside: int) -> None:
    """R-T1: basic cards only, two decks above five players; R-T6: 7 cards each."""
    s = SPEC.new_game(players, 11)
    assert s.ndecks == decks
    cards = sorted(s.all_cards())
    assert cards == decktet.make_deck(decks)
    assert all(p % decktet.DECK_SIZE < decktet.BASIC_SIZE for p in cards)
    obs = s.observation(0)
    assert obs["decks"] == decks
    assert obs["hand_sizes"] == [7] * players
    assert obs["set_aside"] == aside


@pytest.mark.parametrize("players", [2, 11, 0, "4"])
def test_R_T1_player_count_bounds(players: Any) -> None:
    with pytest.raises(OptionError):
        SPEC.new_game(players, 1)


def test_R_T1_ranks_ace_1_crown_10() -> None:
    """R-T1/R-T5: an Ace is worth 1 penalty point, a Crown 10."""
    s = make_state([[P("Ace of Moons")], [P("The Forest")], [P("The Huntress")]], dealer=2)
    play(s, 0, P("Ace of Moons"))
    play(s, 1, P("The Forest"))  # 5 Moons over the Ace: takes control
    play(s, 2, P("The Huntress"))  # Crown of Moons: takes control, wins the last trick
    assert s.observation(0)["penalty_points"] == [0, 0, 10]
    s2 = make_state([[P("The Forest")], [P("Ace of Moons")], [P("The Sea")]], dealer=2)
    play(s2, 0, P("The Forest"))
    play(s2, 1, P("Ace of Moons"))  # the Ace of Moons takes control of a Moons card
    play(s2, 2, P("The Sea"))  # Waves: no shared suit with the Ace
    assert s2.observation(0)["penalty_points"] == [0, 1, 0]
    assert s2.observation(0)["penalty_cards"] == [[], [P("Ace of Moons")], []]


# ---- options and errors ----------------------------------------------------------


def test_options_validation() -> None:
    assert SPEC.resolve_options(4) == {"decision_cap": 100_000}
    assert [o.name for o in SPEC.options] == ["decision_cap"]
    for bad in ({"decision_cap": 0}, {"decision_cap": "9"}, {"decision_cap": 2.5}, {"decks": 2}, {"extended": True}):
        with pytest.raises(OptionError):
            SPEC.new_game(4, 1, bad)


def test_illegal_actions_raise() -> None:
    s = SPEC.new_game(4, 3)
    seat = s.to_move()[0]
    other = (seat + 1) % 4
    with pytest.raises(IllegalActionError):
        s.apply(other, 0)
    with pytest.raises(IllegalActionError):
        s.apply(seat, len(s.legal_actions(seat)))
    with pytest.raises(IllegalActionError):
        s.apply(seat, -1)
    with pytest.raises(IllegalActionError):
        s.apply(seat, True)  # type: ignore[arg-type]
    s, _ = random_game(4, 3)
    with pytest.raises(IllegalActionError):
        s.apply(0, 0)


def test_R_T3_illegal_card_is_not_offered_and_bad_id_raises() -> None:
    """R-T3: a card below the controlling rank that is not one's lowest has no action."""
    s = make_state(
        [[P("The Castle"), P("The Pact")], [P("The Author"), P("The Forest")], [P("The Sea"), P("The Cave")]], dealer=2
    )
    play(s, 0, P("The Castle"))  # 7 leads
    assert s.moves(1) == [P("The Author")]  # the Forest (5) is neither >= 7 nor lowest
    with pytest.raises(IllegalActionError):
        s.apply(1, 1)


# ---- R-T2 ------------------------------------------------------------------------


def test_R_T2_C2_first_dealer_and_deal_from_seed() -> None:
    """R-T2/C2: the first dealer and the deal are fixed by the seed; left of dealer leads."""
    dealers = set()
    for seed in range(40):
        a, b = SPEC.new_game(5, seed), SPEC.new_game(5, seed)
        assert a.observation(0) == b.observation(0)
        assert a._hands == b._hands and a._aside == b._aside
        d = a.observation(0)["dealer"]
        dealers.add(d)
        assert a.to_move() == ((d + 1) % 5,)
    assert dealers == set(range(5))
    assert SPEC.new_game(5, 1)._hands != SPEC.new_game(5, 2)._hands


def test_C2_deal_is_pinned() -> None:
    """C2: the deal for a seed never changes (pins DealRng use: dealer draw, then shuffle)."""
    s = SPEC.new_game(3, 12345)
    rng = DealRng(12345)
    dealer = rng.randbelow(3)
    deck = decktet.make_deck(1)
    rng.shuffle(deck)
    assert s._dealer == dealer
    for k in range(3):
        seat = (dealer + 1 + k) % 3
        assert sorted(s._hands[seat]) == sorted(deck[k:21:3])  # one at a time, from the left
    assert sorted(s._aside) == sorted(deck[21:])


def test_R_T2_winner_leads_next_trick() -> None:
    s = make_state(
        [[P("The Forest"), P("The Author")], [P("The Huntress"), P("The Desert")], [P("The Sea"), P("The Painter")]],
        dealer=2,
    )
    play(s, 0, P("The Forest"))
    play(s, 1, P("The Huntress"))  # Crown of Moons takes control of the Forest (Moons)
    play(s, 2, P("The Sea"))
    assert s.to_move() == (1,)
    obs = s.observation(1)
    assert obs["trick"] == {"leader": 1, "plays": [], "control": None, "controller": None}
    assert obs["trick_number"] == 2


# ---- R-T3 ------------------------------------------------------------------------


def test_R_T3_leader_may_play_anything() -> None:
    hand = [P("The Author"), P("The Mill"), P("The Bard"), P("Ace of Knots")]
    s = make_state(
        [
            [P(n) for n in ("The Forest", "The Sea", "The Cave", "The Pact")],
            hand,
            [P(n) for n in ("The Market", "The Savage", "The End", "The Lunatic")],
        ]
    )
    assert s.to_move() == (1,)
    assert sorted(s.moves(1)) == sorted(hand)


def test_R_T3_equal_or_higher_than_controller_or_lowest_rank() -> None:
    """R-T3: compared with the card controlling the trick (not the last one played);
    equal rank is legal; every card of one's lowest rank is legal; an Ace always is."""
    s = make_state(
        [
            [P("The Soldier"), P("The Journey"), P("The Mill"), P("The Market")],
            [P("The Pact"), P("Ace of Moons"), P("The Cave"), P("The Castle")],
            [P("The Penitent"), P("The Discovery"), P("The Author"), P("The Sailor")],
        ],
        dealer=2,
    )
    play(s, 0, P("The Soldier"))  # 5, Wyrms Knots: controls
    play(s, 1, P("The Pact"))  # 9, Moons Suns: no shared suit, the Soldier still controls
    assert s.observation(2)["trick"]["controller"] == 0
    # Against the Soldier (5), not the Pact: Penitent (6) higher, Discovery (5) equal,
    # Author (2) the lowest rank; the Sailor (4) is none of these.
    assert legal_names(s, 2) == {"The Penitent", "The Discovery", "The Author"}

    s = make_state(
        [
            [P("The Cave"), P("The Journey"), P("The Market")],
            [P("The Author"), P("The Origin"), P("The Forest")],
            [P("Ace of Leaves"), P("The Sailor"), P("The Mill")],
        ],
        dealer=2,
    )
    play(s, 0, P("The Cave"))  # 7 controls
    # Seat 1: Author (2) and Origin (2) are both its lowest rank; Forest (5) < 7.
    assert legal_names(s, 1) == {"The Author", "The Origin"}
    play(s, 1, P("The Origin"))
    # Seat 2: the Ace is its lowest; Mill (8) >= 7; Sailor (4) is neither.
    assert legal_names(s, 2) == {"Ace of Leaves", "The Mill"}


def test_R_T3_ace_always_legal() -> None:
    s = make_state([[P("The Huntress")], [P("Ace of Waves")], [P("The Bard")]], dealer=2)
    s2 = make_state(
        [[P("The Huntress"), P("The Pact")], [P("Ace of Waves"), P("Ace of Suns")], [P("The Bard"), P("The Sea")]],
        dealer=2,
    )
    for st_ in (s, s2):
        play(st_, 0, P("The Huntress"))  # a Crown controls: only Crowns or the lowest rank
        assert "Ace of Waves" in legal_names(st_, 1)
    assert legal_names(s2, 1) == {"Ace of Waves", "Ace of Suns"}


# ---- R-T4 ------------------------------------------------------------------------


def _control_after(lead: int, card: int, decks_players: int = 3) -> int:
    """Seat controlling the trick after seat 0 leads ``lead`` and seat 1 plays ``card``."""
    n = decks_players
    filler = [
        P("The Sea", 0),
        P("The End", 0),
        P("The Bard", 0),
        P("The Windfall", 0),
        P("The Huntress", 0),
        P("The Calamity", 1),
        P("The Sea", 1),
        P("The End", 1),
    ]
    filler = [f for f in filler if f not in (lead, card)]
    hands = [[lead], [card]] + [[filler[i]] for i in range(n - 2)]
    s = make_state(hands, dealer=n - 1)
    play(s, 0, lead)
    play(s, 1, card)
    return s.observation(0)["trick"]["controller"]


def test_R_T4_higher_sharing_suit_takes_control() -> None:
    assert _control_after(P("The Soldier"), P("The Betrayal")) == 1  # 8 Wyrms-Knots on 5
    assert _control_after(P("The Soldier"), P("The Cave")) == 1  # 7 shares Wyrms only


def test_R_T4_higher_without_shared_suit_does_not() -> None:
    assert _control_after(P("The Soldier"), P("The Pact")) == 0  # 9 Moons-Suns
    assert _control_after(P("Ace of Moons"), P("The Sea")) == 0


def test_R_T4_lower_non_ace_never_takes_control() -> None:
    assert _control_after(P("The Betrayal"), P("The Battle")) == 0  # 4 on 8, same suits


def test_R_T4_ace_takes_control_of_card_bearing_its_suit() -> None:
    assert _control_after(P("The Calamity"), P("Ace of Wyrms")) == 1
    assert _control_after(P("The Soldier"), P("Ace of Knots")) == 1
    assert _control_after(P("The Calamity"), P("Ace of Knots")) == 0  # Calamity bears Wyrms only
    assert _control_after(P("Ace of Moons"), P("Ace of Suns")) == 0


def test_R_T4_two_decks_ace_on_same_suit_ace_takes_control() -> None:
    """R-T4(b): with two decks an Ace takes control from the other copy of itself."""
    assert _control_after(P("Ace of Wyrms", 0), P("Ace of Wyrms", 1), 6) == 1
    assert _control_after(P("Ace of Wyrms", 1), P("Ace of Wyrms", 0), 6) == 1


def test_R_T4_two_decks_equal_rank_does_not_take_control() -> None:
    """R-T4: an equal-rank non-Ace card (the other copy, same suits) does not take control."""
    assert _control_after(P("The Soldier", 0), P("The Soldier", 1), 6) == 0
    assert _control_after(P("The Calamity", 1), P("The Calamity", 0), 6) == 0


def test_R_T4_after_an_ace_any_card_of_its_suit_takes_control() -> None:
    s = make_state([[P("The Calamity")], [P("Ace of Wyrms")], [P("The Desert")], [P("The Pact")]], dealer=3)
    play(s, 0, P("The Calamity"))
    play(s, 1, P("Ace of Wyrms"))
    play(s, 2, P("The Desert"))  # 2, Suns-Wyrms: higher than the Ace and shares Wyrms
    assert s.observation(0)["trick"]["controller"] == 2
    play(s, 3, P("The Pact"))  # 9, Moons-Suns: shares Suns with the Desert
    assert s.observation(0)["penalty_cards"][3] == [P("The Pact")]


# ---- R-T5 ------------------------------------------------------------------------


def test_R_T5_last_trick_penalty_is_controlling_card() -> None:
    """R-T5: the last trick's winner takes the card controlling it (not the highest card)."""
    s = make_state(
        [[P("The Author"), P("The Forest")], [P("The Desert"), P("The Merchant")], [P("The Origin"), P("The Sea")]],
        dealer=2,
    )
    play(s, 0, P("The Forest"))  # 5 Moons-Leaves
    play(s, 1, P("The Merchant"))  # 9 Leaves-Knots: takes control
    play(s, 2, P("The Sea"))  # Crown of Waves: higher but no shared suit
    assert s.to_move() == (1,) and s.observation(0)["round"] == 1  # a 2-card round goes on
    play(s, 1, P("The Desert"))  # 2 Suns-Wyrms
    play(s, 2, P("The Origin"))  # 2 Waves-Leaves: equal rank, no control
    play(s, 0, P("The Author"))  # 2 Moons-Knots
    obs = s.observation(2)
    assert obs["penalty_cards"] == [[], [P("The Desert")], []]
    assert obs["penalty_points"] == [0, 2, 0]
    assert obs["round"] == 2 and not s.is_over()
    # Every seat sees penalty cards (public).
    assert all(s.observation(k)["penalty_cards"][1] == [P("The Desert")] for k in range(3))


def test_R_T5_round_has_as_many_tricks_as_cards_in_hand() -> None:
    s = SPEC.new_game(4, 21)
    rng = DealRng(5)
    tricks_seen = 0
    while not s.is_over() and s.observation(0)["round"] == 1:
        obs = s.observation(0)
        assert obs["tricks_in_round"] == 7
        tricks_seen = max(tricks_seen, len(obs["tricks"]))
        seat = s.to_move()[0]
        s.apply(seat, rng.randbelow(len(s.legal_actions(seat))))
    assert tricks_seen == 6  # the 7th trick ended the round
    assert sum(len(p) for p in s.observation(0)["penalty_cards"]) == 1
    assert s.decisions == 28


# ---- R-T6 ------------------------------------------------------------------------


def test_R_T6_deal_passes_left_and_cards_regathered() -> None:
    s = make_state([[P("The Author")], [P("The Desert")], [P("The Origin")]], dealer=2)
    play(s, 0, P("The Author"))
    play(s, 1, P("The Desert"))
    play(s, 2, P("The Origin"))
    obs = s.observation(0)
    assert obs["dealer"] == 0  # 2 -> 0: left, wrapping round
    assert s.to_move() == (1,)  # left of the new dealer leads
    assert obs["hand_sizes"] == [7, 7, 7]
    assert obs["set_aside"] == 36 - 1 - 21
    assert obs["tricks"] == [] and obs["trick_number"] == 1
    check_conserved(s)
    dealt = {p for h in s._hands for p in h} | set(s._aside)
    assert P("The Author") not in dealt  # the penalty card stays out
    assert P("The Desert") in dealt and P("The Origin") in dealt  # trick cards are back


def test_R_T6_fewer_cards_than_seven_each() -> None:
    """R-T6: min(7, floor(available / players)); 5 players, 36 - 2 penalty cards -> 6 each."""
    hands = [[P("The Journey")], [P("The Painter")], [P("The Savage")], [P("The Mountain")], [P("The Sailor")]]
    s = make_state(hands, dealer=1, penalties=[[P("Ace of Moons")], [], [], [], []])
    for seat, h in zip((2, 3, 4, 0, 1), (hands[2], hands[3], hands[4], hands[0], hands[1])):
        play(s, seat, h[0])
    obs = s.observation(0)
    assert sum(len(p) for p in obs["penalty_cards"]) == 2
    assert obs["hand_sizes"] == [6] * 5 and obs["tricks_in_round"] == 6
    assert obs["set_aside"] == 34 - 30
    assert obs["dealer"] == 2
    check_conserved(s)


def test_R_T6_R_T7_nothing_to_deal_ends_game() -> None:
    """R-T6: if min(7, floor(available/players)) is 0 the game ends; R-T7 places, no loser.

    Points are set by hand (real games cannot reach this: 34 penalty cards are worth far
    more than 3 x 9 points), to exercise the rule as written.
    """
    hands = [[P("The Author")], [P("The Desert")], [P("The Origin")]]
    keep = {P("The Author"), P("The Desert"), P("The Origin"), P("Ace of Moons")}
    rest = [p for p in decktet.make_deck(1) if p not in keep]
    pens = [rest[:11], rest[11:22], rest[22:]]  # 32 penalties; the Ace of Moons is aside
    s = make_state(hands, dealer=2, penalties=pens, points=[2, 5, 2])
    play(s, 0, P("The Author"))
    play(s, 1, P("The Desert"))
    play(s, 2, P("The Origin"))  # seat 0 takes the Author: 33 penalty cards
    # 36 - 33 = 3 available -> 1 card each: one more round is played, then 2 // 3 = 0.
    assert not s.is_over() and s.observation(0)["hand_sizes"] == [1, 1, 1]
    for _ in range(3):
        seat = s.to_move()[0]
        s.apply(seat, 0)
    assert s.is_over() and not s.result().capped
    assert s.observation(0)["phase"] == "over"
    pts = s.observation(0)["penalty_points"]
    assert max(pts) < 10
    res = s.result()
    assert res.scores == tuple(-float(p) for p in pts)
    assert res.places == tuple(sum(1 for q in pts if q < p) for p in pts)
    check_conserved(s)


# ---- R-T7 ------------------------------------------------------------------------


def test_R_T7_reaching_ten_ends_game_loser_alone_last_ties_shared() -> None:
    pens = [[P("The Author")], [], [P("The Pact")], [P("Ace of Moons"), P("The Desert")]]
    hands = [[P("The Forest")], [P("The Journey")], [P("The Lunatic")], [P("The Cave")]]
    s = make_state(hands, dealer=3, penalties=pens)  # points 2, 0, 9, 3
    play(s, 0, P("The Forest"))  # 5 Moons-Leaves
    play(s, 1, P("The Journey"))  # 3
    play(s, 2, P("The Lunatic"))  # 6 Moons-Waves: takes control
    play(s, 3, P("The Cave"))  # 7 Waves-Wyrms: shares Waves, takes control
    # Seat 3 took the Cave: 3 + 7 = 10 -> the game ends, seat 3 alone last.
    assert s.is_over() and s.to_move() == ()
    res = s.result()
    assert res.scores == (-2.0, 0.0, -9.0, -10.0)
    assert res.places == (1, 0, 2, 3)
    assert not res.capped


def test_R_T7_ties_shared_and_nine_does_not_end() -> None:
    pens = [[P("The Author")], [P("The Desert")], [P("The Journey")]]
    hands = [[P("The Origin")], [P("The Painter")], [P("The Forest")]]
    s = make_state(hands, dealer=2, penalties=pens)  # 2, 2, 3
    play(s, 0, P("The Origin"))
    play(s, 1, P("The Painter"))
    play(s, 2, P("The Forest"))  # 5 Moons-Leaves: shares Leaves with the Origin
    assert s.observation(0)["penalty_points"] == [2, 2, 8]
    assert not s.is_over()
    assert s.standing_keys() == [(0, 2), (0, 2), (0, 8)]


def test_R_T7_exactly_ten_loses_even_if_points_tie_otherwise() -> None:
    s = make_state(
        [[P("The Bard")], [P("Ace of Suns")], [P("The Huntress")]], dealer=2, penalties=[[], [P("The Pact")], []]
    )  # 0, 9, 0
    play(s, 0, P("The Bard"))
    play(s, 1, P("Ace of Suns"))  # takes control of the Bard: seat 1 gets 1 -> 10
    play(s, 2, P("The Huntress"))
    assert s.is_over()
    assert s.result().places == (0, 2, 0)
    assert s.result().scores == (0.0, -10.0, 0.0)


def test_C4_R_T7_capped_game_standing() -> None:
    """C4: a capped game is marked capped and placed by points, fewest first, ties shared."""
    s, actions = random_game(5, 8, {"decision_cap": 40})
    assert len(actions) == 40 and s.is_over() and s.to_move() == ()
    res = s.result()
    assert res.capped
    pts = s.observation(0)["penalty_points"]
    assert max(pts) < 10
    assert res.places == tuple(sum(1 for q in pts if q < p) for p in pts)
    assert len(set(res.places)) < 5  # several seats without penalty share place 0
    assert s.legal_actions(0) == range(0)


# ---- R-T8 / C5 -------------------------------------------------------------------


def test_R_T8_observation_contents() -> None:
    s = make_state(
        [[P("The Forest"), P("The Author")], [P("The Huntress"), P("The Desert")], [P("The Sea"), P("The Painter")]],
        dealer=2,
        penalties=[[P("Ace of Knots")], [], []],
    )
    play(s, 0, P("The Forest"))
    play(s, 1, P("The Huntress"))
    play(s, 2, P("The Sea"))
    play(s, 1, P("The Desert"))
    obs = s.observation(2)
    assert obs["phase"] == "play" and obs["to_move"] == [2] and obs["seat"] == 2
    assert obs["hand"] == [P("The Painter")]
    assert obs["hand_sizes"] == [1, 0, 1]
    assert obs["dealer"] == 2 and obs["round"] == 1 and obs["decks"] == 1
    assert obs["set_aside"] == 36 - 6 - 1
    assert obs["penalty_cards"] == [[P("Ace of Knots")], [], []]
    assert obs["penalty_points"] == [1, 0, 0]
    assert obs["trick"] == {"leader": 1, "plays": [{"seat": 1, "card": P("The Desert")}], "control": 0, "controller": 1}
    assert obs["tricks"] == [
        {
            "leader": 0,
            "plays": [
                {"seat": 0, "card": P("The Forest")},
                {"seat": 1, "card": P("The Huntress")},
                {"seat": 2, "card": P("The Sea")},
            ],
            "control": 1,
            "controller": 1,
            "winner": 1,
        }
    ]
    assert obs["trick_number"] == 2 and obs["tricks_in_round"] == 2
    assert obs["legal_actions"] == [{"id": 0, "text": "play The Painter", "card": P("The Painter")}]
    # Not to move: no actions.
    assert s.observation(0)["legal_actions"] == []
    assert json.loads(json.dumps(obs)) == obs
    text = s.observation_text(2)
    assert "The Painter" in text and "The Desert*" in text


def _card_ids_in(obs: dict[str, Any]) -> set[int]:
    ids = set(obs["hand"])
    end = obs["last_round_end"]
    for t in [obs["trick"], *obs["tricks"], *([end["last_trick"]] if end else [])]:
        ids.update(p["card"] for p in t["plays"])
    for pen in obs["penalty_cards"]:
        ids.update(pen)
    ids.update(a["card"] for a in obs["legal_actions"])
    return ids


def test_C5_R_T8_no_hidden_information() -> None:
    for n in (3, 6, 10):
        s = SPEC.new_game(n, 77 + n)
        rng = DealRng(n)
        for _ in range(3 * n):
            if s.is_over():
                break
            for seat in range(n):
                obs = s.observation(seat)
                hidden = {p for k in range(n) if k != seat for p in s._hands[k]} | set(s._aside)
                assert not (_card_ids_in(obs) & hidden)
                assert obs == s.with_hidden_shuffled(seat, DealRng(seat)).observation(seat)
                assert json.loads(json.dumps(obs)) == obs
            seat = s.to_move()[0]
            s.apply(seat, rng.randbelow(len(s.legal_actions(seat))))


def test_C5_with_hidden_shuffled_moves_hidden_cards() -> None:
    s = SPEC.new_game(4, 5)
    c = s.with_hidden_shuffled(0, DealRng(99))
    assert c._hands[0] == s._hands[0]
    assert [len(h) for h in c._hands] == [len(h) for h in s._hands]
    assert c._hands[1:] != s._hands[1:]
    assert sorted(c.all_cards()) == sorted(s.all_cards())


# ---- two decks: one action per face -----------------------------------------------


def test_R_T1_two_decks_one_action_per_face() -> None:
    thirds = [
        P("Ace of Moons", 0),
        P("Ace of Moons", 1),
        P("Ace of Suns", 0),
        P("Ace of Suns", 1),
        P("Ace of Waves", 0),
    ]
    hands = [[P("The Soldier", 0), P("The Soldier", 1), P("The Pact", 1)]] + [
        [P(n, 0), P(n, 1), third]
        for n, third in zip(("The Sea", "The Bard", "The Huntress", "The Windfall", "The Calamity"), thirds)
    ]
    s = make_state(hands, dealer=5)
    assert s.moves(0) == [P("The Soldier", 0), P("The Pact", 1)]
    assert [a["text"] for a in s.observation(0)["legal_actions"]] == ["play The Soldier#1", "play The Pact#2"]
    s.apply(0, 0)
    assert s._hands[0] == [P("The Soldier", 1), P("The Pact", 1)]
    # Two copies of the Sea: one action (the lowest pid); the Ace is the lowest rank.
    assert s.moves(1) == [P("Ace of Moons", 0), P("The Sea", 0)]


# ---- properties ------------------------------------------------------------------


@settings(max_examples=150)
@given(
    players=st.integers(3, 10),
    seed=st.integers(0, 2**63 - 1),
    play_seed=st.integers(0, 1000),
    cap=st.one_of(st.none(), st.integers(1, 60)),
)
def test_property_random_games(players: int, seed: int, play_seed: int, cap: int | None) -> None:
    """C2/C4/C5 and card conservation over random games."""
    options = {} if cap is None else {"decision_cap": cap}
    s = SPEC.new_game(players, seed, options)
    rng = DealRng(play_seed)
    shuf = DealRng(play_seed + 1)
    actions = []
    step = 0
    while not s.is_over():
        check_conserved(s)
        (seat,) = s.to_move()
        n_legal = len(s.legal_actions(seat))
        assert n_legal > 0
        if step % 7 == 0:
            obs = s.observation(seat)
            assert s.with_hidden_shuffled(seat, shuf).observation(seat) == obs
            assert len({len(h) for h in s._hands}) <= 2  # hands differ by at most one
        a = rng.randbelow(n_legal)
        actions.append(a)
        s.apply(seat, a)
        step += 1
        assert step <= 20_000
    check_conserved(s)
    res = s.result()
    assert res.capped == (cap is not None and len(actions) == cap and max(s._points) < 10)
    assert sorted(res.places)[0] == 0 and len(res.places) == players
    if not res.capped and max(s._points) >= 10:
        loser = s._points.index(max(s._points))
        assert res.places[loser] == players - 1
        assert res.places.count(players - 1) == 1
    # Same seed and actions replay identically.
    r = SPEC.new_game(players, seed, options)
    for a in actions:
        r.apply(r.to_move()[0], a)
    assert r.result() == res
    assert r.observation(0) == s.observation(0)


# ---- C6: nothing public is missed ------------------------------------------------


def test_C6_last_trick_of_a_round_shown_to_every_seat_in_the_next_round() -> None:
    """C6: the round's last trick (cards, winner) and its penalty show in the next round."""
    s = make_state([[P("The Forest")], [P("The Author")], [P("The Painter")]], dealer=2)
    assert s.observation(0)["last_round_end"] is None
    play(s, 0, P("The Forest"))
    play(s, 1, P("The Author"))
    play(s, 2, P("The Painter"))
    assert s._round == 2 and not s.is_over()  # a new round was dealt: the trick list is reset
    expected = {
        "round": 1,
        "last_trick": {
            "leader": 0,
            "plays": [
                {"seat": 0, "card": P("The Forest")},
                {"seat": 1, "card": P("The Author")},
                {"seat": 2, "card": P("The Painter")},
            ],
            "control": 0,
            "controller": 0,
            "winner": 0,
        },
        "penalty": {"seat": 0, "card": P("The Forest"), "points": 5},
    }
    for seat in range(3):
        obs = s.observation(seat)
        assert obs["tricks"] == [] and obs["round"] == 2
        assert obs["last_round_end"] == expected


@pytest.mark.parametrize("players", [3, 4, 7])
def test_C6_every_finished_trick_visible_to_every_seat_right_after(players: int) -> None:
    """C6 over whole random games: after each trick ends, every seat's observation shows it."""
    for seed in range(4):
        s = SPEC.new_game(players, seed)
        rng = DealRng(seed)
        while not s.is_over():
            seat = s.to_move()[0]
            before = len(s._done)
            rnd = s._round
            s.apply(seat, rng.randbelow(len(s.legal_actions(seat))))
            if s._round == rnd and len(s._done) == before:
                continue  # no trick finished
            for k in range(players):
                obs = s.observation(k)
                last = obs["tricks"][-1] if s._round == rnd else obs["last_round_end"]["last_trick"]
                assert last["plays"][-1] == {"seat": seat, "card": last["plays"][-1]["card"]}
                assert len(last["plays"]) == players and last["winner"] == last["controller"]
                if s._round != rnd or s.is_over() and obs["last_round_end"]:
                    end = obs["last_round_end"]
                    assert end["round"] == rnd and end["penalty"]["seat"] == last["winner"]
                    assert end["penalty"]["card"] in obs["penalty_cards"][last["winner"]]
