"""Palace engine tests: every ruling R-P1..R-P17 (plus C1-C5 where Palace shows them).

Most tests build the exact situation by hand with ``build`` (a test-only
constructor that sets zones, pile and trump directly on a fresh state), then
check the legal moves or the effect of one decision.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import decktet
from games.core import IllegalActionError, OptionError
from games.palace import SPEC, PalaceState, auto_decks
from games.rng import DealRng

DS = decktet.DECK_SIZE


def P(name: str, copy: int = 0) -> int:
    """Physical card by name: ``P("The Soldier")``, ``P("Ace of Knots", 1)`` (second copy)."""
    return decktet.pid_of(name, copy)


EXCUSE = P("The Excuse")


def build(
    hands: list[list[int]],
    *,
    up: list[list[int]] | None = None,
    down: list[list[int]] | None = None,
    known: list[list[int]] | None = None,
    plays: list[tuple[int, list[int]]] = (),  # type: ignore[assignment]
    trump: int | None = None,
    draw: list[int] = (),  # type: ignore[assignment]
    turn: int = 0,
    out: list[int] = (),  # type: ignore[assignment]
    options: dict[str, Any] | None = None,
) -> PalaceState:
    """Test-only: a play-phase state with exactly these zones (cards are pids).

    ``down[s]`` lists up to four face-down cards (slot i = i-th item, -1 = empty
    slot); ``known[s]`` the slots revealed earlier; ``plays`` the plays still on
    the pile as (seat, cards); ``trump`` the trump Ace; ``draw`` the draw pile,
    drawn from its end. Cards not placed anywhere simply do not exist here.
    """
    n = len(hands)
    s = SPEC.new_game(n, 0, options or {})
    s._phase = "play"
    s._pending = {}
    s._swaps = ()
    s._hands = [list(h) for h in hands]
    s._up = [list(u) for u in (up or [[] for _ in range(n)])]
    downs = down or [[] for _ in range(n)]
    s._down = [list(d) + [-1] * (4 - len(d)) for d in downs]
    s._ndown = [sum(1 for p in d if p >= 0) for d in s._down]
    s._known = [[False] * 4 for _ in range(n)]
    for seat, slots in enumerate(known or []):
        for i in slots:
            s._known[seat][i] = True
    s._plays = [(seat, tuple(cards)) for seat, cards in plays]
    s._pile = [p for _, cards in s._plays for p in cards]
    s._trump_ace = trump if trump is not None else -1
    s._trump = decktet.SUITS[trump] if trump is not None else 0
    s._set_reference()
    s._draw = list(draw)
    s._removed = []
    s._out = [seat in out for seat in range(n)]
    s._out_order = list(out)
    s._log = []
    s._seen = [0] * n
    s._turn = turn
    s._to_move = (turn,)
    return s


def faces(cards: Any) -> list[int]:
    return sorted(p % DS for p in cards)


def play_sets(s: PalaceState, seat: int) -> list[list[int]]:
    """The card face multisets of every play move (Excuse and reveals included as kinds)."""
    out = []
    for a in s.legal_actions(seat):
        info = s.action_info(seat, a)
        if info["kind"] == "play":
            out.append(faces(info["cards"]))
        elif info["kind"] == "excuse":
            out.append(["excuse"])
        else:
            out.append([info["kind"], info.get("position")])
    return out


def find(s: PalaceState, seat: int, cards: list[int], trump: int | None = None) -> int:
    """Action id of the play of these faces (and this trump Ace, if given)."""
    want = faces(cards)
    for a in s.legal_actions(seat):
        info = s.action_info(seat, a)
        if info["kind"] == "excuse" and cards == [EXCUSE]:
            return a
        if info["kind"] != "play" or faces(info["cards"]) != want:
            continue
        if trump is None or info["cards"][-1] % DS == trump % DS:
            return a
    raise AssertionError(f"no legal play {cards} (trump {trump}) in {play_sets(s, seat)}")


def do(s: PalaceState, seat: int, cards: list[int], trump: int | None = None) -> None:
    s.apply(seat, find(s, seat, cards, trump))


def legal(s: PalaceState, seat: int, card: int) -> bool:
    """Is a one-card play of ``card`` offered to ``seat``?"""
    return any(info == [card % DS] for info in play_sets(s, seat))


FILLER = [P("The Author", 1), P("The Desert", 1)]  # Twos: always playable, keep seats busy


# ---- R-P1 players, options, decks -------------------------------------------------


def test_R_P1_player_range_and_option_validation():
    SPEC.new_game(2, 1)
    SPEC.new_game(10, 1)
    for bad_players in (1, 11):
        with pytest.raises(OptionError):
            SPEC.new_game(bad_players, 1)
    for bad in (
        {"decks": 1},
        {"decks": 17},
        {"decks": "many"},
        {"decks": True},
        {"decks": 2.0},
        {"extended": "yes"},
        {"extended": 1},
        {"wyrm_variant": None},
        {"decision_cap": 0},
        {"colour": "red"},
    ):
        with pytest.raises(OptionError):
            SPEC.new_game(4, 1, bad)
    opts = SPEC.resolve_options(4)
    assert opts == {
        "extended": False,
        "decks": "auto",
        "wyrm_variant": False,
        "decision_cap": SPEC.option("decision_cap").default,
    }


def test_R_P1_decks_auto_seats_six_basic_or_seven_extended_on_two_decks():
    assert [auto_decks(n, False) for n in range(2, 11)] == [2, 2, 2, 2, 2, 3, 3, 3, 4]
    assert [auto_decks(n, True) for n in range(2, 11)] == [2, 2, 2, 2, 2, 2, 3, 3, 3]
    for n, ext in ((6, False), (7, False), (7, True), (8, True), (10, False), (10, True)):
        s = SPEC.new_game(n, 5, {"extended": ext})
        d = auto_decks(n, ext)
        assert s._decks() == d
        assert len(s.all_cards()) == d * (45 if ext else 36)
        assert len(s._draw) == d * (45 if ext else 36) - 12 * n


def test_R_P1_explicit_decks_too_small_raises_and_bigger_is_used():
    with pytest.raises(OptionError) as e:
        SPEC.new_game(7, 1, {"decks": 2})
    assert "decks" in str(e.value)
    SPEC.new_game(7, 1, {"decks": 2, "extended": True})  # 90 cards >= 84
    s = SPEC.new_game(4, 1, {"decks": 5})
    assert len(s.all_cards()) == 180 and s._decks() == 5
    assert s.card_name(P("The Soldier", 4)) == "The Soldier#5"


def test_R_P1_extended_cards_only_with_option():
    basic = {decktet.RANK[p] for p in SPEC.new_game(4, 3).all_cards()}
    ext = {decktet.RANK[p] for p in SPEC.new_game(4, 3, {"extended": True}).all_cards()}
    assert not basic & {decktet.PAWN, decktet.COURT, decktet.EXCUSE}
    assert {decktet.PAWN, decktet.COURT, decktet.EXCUSE} <= ext


# ---- R-P2 rank order -------------------------------------------------------------


def test_R_P2_rank_order_aces_high_then_crown_court_pawn():
    order = [
        "The Author",
        "The Journey",
        "The Mountain",
        "The Forest",
        "The Lunatic",
        "The Chance Meeting",
        "The Diplomat",
        "The Pact",
        "The Watchman",
        "The Consul",
        "The Huntress",
        "Ace of Moons",
    ]
    for lo, hi in zip(order, order[1:]):
        s = build([[P(hi)], FILLER], plays=[(1, [P(lo)])], options={"extended": True})
        if lo != "The Chance Meeting":  # a Seven asks for lower (R-P7)
            assert legal(s, 0, P(hi)), (lo, hi)
        s = build([[P(lo), P("The Excuse")], FILLER], plays=[(1, [P(hi)])], options={"extended": True})
        if lo != "The Author" and hi != "The Chance Meeting":  # Twos always; lower on a Seven
            assert not legal(s, 0, P(lo)), (lo, hi)


def test_R_P2_each_court_card_rank_is_one_rank_for_meeting_and_four_of_a_kind():
    # Different Pawns meet each other; four different Pawns in a row blow up.
    s = build(
        [[P("The Harvest"), P("The Borderland")], [P("The Light Keeper")], [P("The Watchman"), *FILLER]],
        plays=[(2, [P("The Watchman", 1)])],
        options={"extended": True},
    )
    assert sorted(play_sets(s, 0)) == sorted(
        [faces([P("The Harvest")]), faces([P("The Borderland")]), faces([P("The Harvest"), P("The Borderland")])]
    )
    do(s, 0, [P("The Harvest"), P("The Borderland")])
    assert len(s._pile) == 3
    do(s, 1, [P("The Light Keeper")])
    assert s._pile == [] and P("The Light Keeper") in s._removed
    # A Court on top of three Pawns is not a fourth of a kind.
    s = build(
        [[P("The Consul"), *FILLER], FILLER],
        plays=[(1, [P("The Watchman"), P("The Harvest"), P("The Borderland")])],
        options={"extended": True},
    )
    do(s, 0, [P("The Consul")])
    assert len(s._pile) == 4


# ---- R-P3 setup and the swap decision ---------------------------------------------


def test_R_P3_deal_four_down_four_up_four_in_hand_rest_is_draw_pile():
    s = SPEC.new_game(5, 11)
    for seat in range(5):
        assert len(s._hands[seat]) == 4 and len(s._up[seat]) == 4 and s._ndown[seat] == 4
    assert len(s._draw) == 72 - 60
    assert s.to_move() == (0, 1, 2, 3, 4)
    assert s.observation(0)["phase"] == "swap"


def _outcome(hand: list[int], up: list[int], swaps: list[list[int]]) -> tuple[int, ...]:
    up = list(up)
    for h, u in swaps:
        assert h in hand
        up[up.index(u)] = h
    return tuple(sorted(p % DS for p in up))


def test_R_P3_swap_options_are_every_distinct_outcome_once():
    s = SPEC.new_game(2, 3)
    s._hands[0] = [P("The Pact"), P("The Pact", 1), P("The Forest"), P("The Sea")]
    s._up[0] = [P("The Sea", 1), P("The Mill"), P("The Castle"), P("The Author")]
    hand, up = s._hands[0], s._up[0]
    infos = [s.action_info(0, a) for a in s.legal_actions(0)]
    assert infos[0]["swaps"] == []  # zero swaps allowed, listed first
    outcomes = [_outcome(hand, up, i["swaps"]) for i in infos]
    assert len(outcomes) == len(set(outcomes))
    # Brute force: every choice of up to two one-for-one swaps.
    expected = set()
    for k in range(3):
        for hs in itertools.combinations(hand, k):
            for us in itertools.permutations(up, k):
                expected.add(_outcome(hand, up, list(zip(hs, us))))
    assert set(outcomes) == expected
    assert all(len(i["swaps"]) <= 2 for i in infos)


def test_R_P3_R_P17_swaps_are_simultaneous_and_hidden_until_all_have_chosen():
    s = SPEC.new_game(3, 21)
    before1 = s.observation(1)
    up0 = list(s._up[0])
    a = next(a for a in s.legal_actions(0) if len(s.action_info(0, a)["swaps"]) == 2)
    swaps = s.action_info(0, a)["swaps"]
    s.apply(0, a)
    assert s.to_move() == (1, 2)
    # Nothing of seat 0's choice is visible to seat 1 yet; seat 0 sees its own pending choice.
    after1 = s.observation(1)
    assert after1["tableaux"] == before1["tableaux"] and after1["swaps"] is None
    assert after1["events"] == [] and "my_swap" in after1 and after1["my_swap"] is None
    assert s.observation(0)["my_swap"] == swaps
    assert s._up[0] == up0
    with pytest.raises(IllegalActionError):
        s.apply(0, 0)  # already chosen
    s.apply(1, 0)
    s.apply(2, 0)
    obs = s.observation(1)
    assert obs["phase"] == "play"
    assert obs["swaps"] == [[0, h, u] for h, u in swaps]
    assert {"type": "swaps", "swaps": obs["swaps"]} in obs["events"]
    assert sorted(obs["tableaux"][0]["face_up"]) == sorted(
        [p for p in up0 if p not in [u for _, u in swaps]] + [h for h, _ in swaps]
    )
    for _, u in swaps:  # own hand now holds the old face-up cards
        assert u in s._hands[0]


# ---- R-P4 / C1 dealer and turn order ----------------------------------------------


def test_R_P4_C1_first_player_left_of_seeded_dealer_and_turns_go_clockwise():
    dealers = set()
    for seed in range(30):
        s = SPEC.new_game(4, seed)
        for seat in range(4):
            s.apply(seat, 0)
        d = s.observation(0)["dealer"]
        dealers.add(d)
        assert s.to_move() == ((d + 1) % 4,)
        assert SPEC.new_game(4, seed)._dealer == d  # C2: from the seed
    assert dealers == {0, 1, 2, 3}


def test_R_P4_turn_order_skips_players_who_are_out():
    s = build([[P("The Journey"), *FILLER], [], [P("The Pact"), *FILLER], FILLER], out=[1], turn=0)
    do(s, 0, [P("The Journey")])
    assert s.to_move() == (2,)
    s = build([FILLER, [], [P("The Pact")], [P("The Journey"), *FILLER]], out=[1, 2], turn=3)
    do(s, 3, [P("The Journey")])
    assert s.to_move() == (0,)


# ---- R-P5 active zone ------------------------------------------------------------


def test_R_P5_active_zone_hand_then_face_up_then_face_down():
    up = [P("The Pact"), P("The Sea")]
    s = build([[P("The Journey")], FILLER], up=[up, []], down=[[P("The Mill"), P("The Cave")], []])
    assert play_sets(s, 0) == [faces([P("The Journey")])]
    s = build([[], FILLER], up=[up, []], down=[[P("The Mill"), P("The Cave")], []])
    assert play_sets(s, 0) == [faces([P("The Pact")]), faces([P("The Sea")])]
    s = build([[], FILLER], up=[[], []], down=[[P("The Mill"), -1, P("The Cave")], []])
    assert play_sets(s, 0) == [["reveal", 0], ["reveal", 2]]


# ---- R-P6 reference card ---------------------------------------------------------


def test_R_P6_reference_is_highest_key_card_of_last_play():
    ak = P("Ace of Knots")
    # Last play: a non-trump Five and a trump Five (Knots): the trump one is the reference.
    s = build(
        [[P("The Lunatic"), P("The Market"), P("The Soldier", 1)], FILLER],
        plays=[(1, [P("The Journey")]), (1, [P("The Forest"), P("The Soldier")])],
        trump=ak,
    )
    obs = s.observation(0)
    assert obs["reference"] == P("The Soldier") and obs["pile_mode"] == "higher"
    assert obs["pile"] == [P("The Journey"), P("The Forest"), P("The Soldier")]
    assert obs["pile_plays"] == [
        {"seat": 1, "cards": [P("The Journey")]},
        {"seat": 1, "cards": [P("The Forest"), P("The Soldier")]},
    ]
    assert not legal(s, 0, P("The Lunatic"))  # non-trump 6 < trump 5
    assert legal(s, 0, P("The Market"))  # trump 6 beats trump 5
    assert legal(s, 0, P("The Soldier", 1))  # trump 5 meets trump 5


def test_R_P6_only_the_last_play_counts_not_older_plays():
    s = build([[P("The Journey"), P("The Pact")], FILLER], plays=[(1, [P("The Huntress")]), (1, [P("The Author")])])
    assert play_sets(s, 0) == [faces([P("The Journey")]), faces([P("The Pact")])]


# ---- R-P7 legality: trump and Seven interactions --------------------------------------


def test_R_P7_twos_legal_on_anything_and_anything_legal_on_twos():
    ak = P("Ace of Knots")
    s = build([[P("The Origin"), P("The Journey")], FILLER], plays=[(1, [P("The Windfall")])], trump=ak)
    assert legal(s, 0, P("The Origin")) and not legal(s, 0, P("The Journey"))
    s = build([[P("The Origin"), P("The Pact")], FILLER], plays=[(1, [P("The Cave")])])  # on a Seven
    assert legal(s, 0, P("The Origin")) and not legal(s, 0, P("The Pact"))
    s = build(
        [[P("The Journey"), P("The Pact")], FILLER], plays=[(1, [P("The Windfall")]), (1, [P("The Author")])], trump=ak
    )
    assert s.observation(0)["pile_mode"] == "any"
    assert legal(s, 0, P("The Journey")) and legal(s, 0, P("The Pact"))


def test_R_P7_after_a_trump_play_your_trump_cards_must_meet_or_beat_it():
    ak = P("Ace of Knots")  # trump suit Knots
    hand = [
        P("The Soldier"),
        P("The Market", 1),
        P("The Betrayal"),
        P("The Windfall"),
        P("The Pact"),
        P("Ace of Suns"),
        P("The Author"),
    ]
    s = build([hand, FILLER], plays=[(1, [P("The Market")])], trump=ak)  # trump Six
    assert not legal(s, 0, P("The Soldier"))  # trump 5 does not meet or beat trump 6
    assert legal(s, 0, P("The Market", 1))  # trump 6 meets
    assert legal(s, 0, P("The Betrayal"))  # trump 8 beats
    assert legal(s, 0, P("The Windfall"))  # trump Crown beats
    assert not legal(s, 0, P("The Pact"))  # non-trump 9 never meets a trump card
    assert not legal(s, 0, P("Ace of Suns"))  # nor does a non-trump Ace
    assert legal(s, 0, P("The Author"))  # a Two always
    assert s.order_key(P("The Market")) > s.order_key(P("Ace of Suns"))


def test_R_P7_trump_card_not_playable_on_non_trump_seven_unless_a_two():
    ak = P("Ace of Knots")
    hand = [
        P("The Soldier"),
        P("The Forest"),
        P("The Castle"),
        P("The Chance Meeting", 1),
        P("The Lunatic"),
        P("The Pact"),
        P("The Author"),
    ]
    s = build([hand, FILLER], plays=[(1, [P("The Chance Meeting")])], trump=ak)  # non-trump Seven
    assert s.observation(0)["pile_mode"] == "lower"
    assert not legal(s, 0, P("The Soldier"))  # trump 5: "higher", Seven demands lower
    assert not legal(s, 0, P("The Castle"))  # trump 7 does not meet a non-trump 7
    assert legal(s, 0, P("The Forest"))  # non-trump 5 is lower
    assert legal(s, 0, P("The Lunatic"))
    assert legal(s, 0, P("The Chance Meeting", 1))  # meets
    assert not legal(s, 0, P("The Pact"))  # higher
    assert legal(s, 0, P("The Author"))  # trump Two: a Two is legal on anything


def test_R_P7_on_a_trump_seven_lower_keys_include_every_non_trump_card():
    ak = P("Ace of Knots")
    hand = [P("The Pact"), P("The Betrayal"), P("The Market"), P("Ace of Suns"), P("The Castle", 1)]
    s = build([hand, FILLER], plays=[(1, [P("The Castle")])], trump=ak)  # trump Seven (Suns, Knots)
    assert legal(s, 0, P("The Pact"))  # (0,9) <= (1,7)
    assert legal(s, 0, P("Ace of Suns"))  # even a non-trump Ace is lower than a trump Seven
    assert legal(s, 0, P("The Market"))  # trump 6 < trump 7
    assert legal(s, 0, P("The Castle", 1))  # meets
    assert not legal(s, 0, P("The Betrayal"))  # trump 8 > trump 7
    # Normal upward comparison resumes as soon as a non-Seven is played.
    do(s, 0, [P("The Market")])
    assert s.observation(1)["pile_mode"] == "higher"


def test_R_P7_multi_card_play_must_be_all_legal_trump_five_on_non_trump_six():
    ak = P("Ace of Knots")
    s = build(
        [[P("The Soldier"), P("The Forest"), P("The Discovery")], FILLER], plays=[(1, [P("The Lunatic")])], trump=ak
    )
    assert play_sets(s, 0) == [faces([P("The Soldier")])]
    # Without a trump suit the Fives are simply too low: no legal play at all.
    s = build([[P("The Soldier"), P("The Forest")], FILLER], plays=[(1, [P("The Lunatic")])])
    assert play_sets(s, 0) == [] and not s._has_play(s._hands[0])


def test_R_P7_multi_card_plays_are_deduplicated_by_faces():
    hand = [P("The Pact"), P("The Pact", 1), P("The Darkness"), P("The Journey")]
    s = build([hand, FILLER])
    sets = play_sets(s, 0)
    assert len(sets) == len({tuple(x) for x in sets})
    pact, dark = P("The Pact") % DS, P("The Darkness") % DS
    nines = [x for x in sets if x[0] in (pact, dark)]
    assert sorted(nines) == sorted([[pact], [pact, pact], [dark], [pact, dark], [pact, pact, dark]])
    assert len(sets) == 6


# ---- R-P8 eating -----------------------------------------------------------------


def test_R_P8_forced_eat_is_automatic_and_the_turn_passes():
    pile = [(2, [P("The Journey")]), (0, [P("The Huntress")])]
    s = build(
        [[P("The Bard"), *FILLER], [P("The Forest"), P("The Pact")], [P("Ace of Suns"), P("The Mill")]],
        plays=pile,
        draw=[P("The Sailor"), P("The Market"), P("The Mountain")],
        turn=0,
    )
    do(s, 0, [P("The Bard")])  # Crown on Crown; seat 1 has nothing >= Crown
    assert s.to_move() == (2,)  # seat 1 was not asked
    assert sorted(s._hands[1]) == sorted(
        [P("The Forest"), P("The Pact"), P("The Journey"), P("The Huntress"), P("The Bard")]
    )
    assert s._pile == [] and s._draw == [P("The Sailor")]  # seat 0 drew one; eating draws nothing
    obs = s.observation(2)
    assert obs["pile_mode"] == "empty"
    assert {"type": "eat", "seat": 1, "cards": [P("The Journey"), P("The Huntress"), P("The Bard")]} in obs["events"]
    assert play_sets(s, 2) == [faces([P("The Mill")]), faces([P("Ace of Suns")])]  # any play on an empty pile


def test_R_P8_no_eat_while_a_legal_play_exists_and_face_up_zone_eats_too():
    s = build([[P("The Pact"), P("The Journey")], FILLER], plays=[(1, [P("The Mill")])])
    assert play_sets(s, 0) == [faces([P("The Pact")])]  # no "eat" action offered
    # Face-up zone with nothing legal: eat into hand, the face-up cards stay.
    s = build(
        [[P("The Castle")], [], FILLER],
        up=[[], [P("The Pact"), P("The Sea")], []],
        down=[[], [P("The Mill")], []],
        turn=0,
        plays=[(2, [P("The Lunatic")])],
    )
    do(s, 0, [P("The Castle")])
    assert s.to_move() == (2,)
    assert sorted(s._hands[1]) == sorted([P("The Lunatic"), P("The Castle")])
    assert s._up[1] == [P("The Pact"), P("The Sea")]


def test_R_P8_a_game_where_the_active_seat_can_only_eat_still_ends():
    # Seat 1 cannot answer the Crown: it eats without being asked and seat 0 moves again.
    s = build([[P("The Huntress"), P("The Journey")], [P("The Forest")]], turn=0)
    do(s, 0, [P("The Huntress")])
    assert s.to_move() == (0,) and sorted(s._hands[1]) == sorted([P("The Forest"), P("The Huntress")])
    do(s, 0, [P("The Journey")])
    assert s.is_over() and s.result().places == (0, 1)
    # Random play with every seat eating often still ends (see the property tests too).
    g = SPEC.new_game(2, 5)
    rng = DealRng(0)
    while not g.is_over():
        seat = g.to_move()[0]
        g.apply(seat, rng.randbelow(len(g.legal_actions(seat))))
    assert not g.result().capped


# ---- R-P9 Aces and trump ----------------------------------------------------------


def test_R_P9_aces_blow_up_set_trump_and_remove_previous_trump_ace():
    am = P("Ace of Moons")
    hand = [P("Ace of Suns"), P("Ace of Waves"), P("Ace of Waves", 1), P("The Pact")]
    s = build(
        [hand, FILLER],
        plays=[(1, [P("The Painter")]), (1, [P("The Market")])],
        trump=am,
        draw=[P("The Mill"), P("The Sailor"), P("The Forest")],
    )
    sets = [x for x in play_sets(s, 0)]
    # Aces: {S}, {W}, {W,W}, {S,W} x2 last, {S,W,W} x2 last; plus the Pact.
    assert len(sets) == 8
    do(s, 0, [P("Ace of Suns"), P("Ace of Waves")], trump=P("Ace of Waves"))
    obs = s.observation(1)
    assert obs["trump_ace"] == P("Ace of Waves") and obs["trump_suit"] == "Waves"
    assert obs["pile"] == [] and obs["pile_plays"] == []
    assert sorted(obs["removed"]) == sorted([P("The Painter"), P("The Market"), P("Ace of Suns"), am])
    assert s.to_move() == (0,)  # R-P11: the same player plays again
    assert sorted(s._hands[0]) == sorted([P("Ace of Waves", 1), P("The Pact"), P("The Forest"), P("The Sailor")])
    # A card is trump if any of its suits is the trump suit.
    assert s.order_key(P("The Sailor")) > s.order_key(P("Ace of Suns"))
    assert s.order_key(P("The Pact")) == 9 and s.order_key(P("Ace of Waves", 1)) == 16 + 13


def test_R_P9_multi_ace_play_chooses_which_ace_goes_last():
    hand = [P("Ace of Suns"), P("Ace of Wyrms"), *FILLER]
    s = build([hand, FILLER])
    trumps = sorted(
        s.action_info(0, a)["trump"]
        for a in s.legal_actions(0)
        if s.action_info(0, a).get("trump") is not None and len(s.action_info(0, a)["cards"]) == 2
    )
    assert trumps == sorted([P("Ace of Suns"), P("Ace of Wyrms")])
    do(s, 0, [P("Ace of Suns"), P("Ace of Wyrms")], trump=P("Ace of Suns"))
    assert s._trump_ace == P("Ace of Suns") and s._removed == [P("Ace of Wyrms")]


def test_R_P9_aces_must_be_legal_by_key():
    am = P("Ace of Moons")
    hand = [P("Ace of Suns"), P("Ace of Moons", 1)]
    s = build([hand, FILLER], plays=[(1, [P("The Lunatic")])], trump=am)  # trump Six (Moons, Waves)
    assert not legal(s, 0, P("Ace of Suns")) and legal(s, 0, P("Ace of Moons", 1))
    s = build([hand, FILLER], plays=[(1, [P("The Castle")])], trump=am)  # non-trump Seven
    assert play_sets(s, 0) == []  # an Ace is higher, and a Seven asks for lower
    s = build([hand, FILLER, FILLER], plays=[(1, [P("The Castle")])], trump=am, turn=2)
    do(s, 2, [P("The Author", 1)])
    do(s, 0, [P("Ace of Suns")])  # anything is legal on a Two
    assert s._trump_ace == P("Ace of Suns") and am in s._removed


# ---- R-P10 four of a kind ----------------------------------------------------------


def test_R_P10_four_of_a_kind_across_plays_and_players():
    s = build(
        [
            [P("The Pact"), P("The Pact", 1), P("The Journey")],
            [P("The Darkness"), *FILLER],
            [P("The Merchant"), P("The Sea")],
        ],
        plays=[(2, [P("The Forest")])],
        draw=[
            P("The Mill"),
            P("The Lunatic"),
            P("The Sailor"),
            P("The Cave"),
            P("The Bard"),
            P("The End"),
            P("The Castle"),
            P("The Diplomat"),
        ],
    )
    do(s, 0, [P("The Pact"), P("The Pact", 1)])  # two at once count one by one
    do(s, 1, [P("The Darkness")])
    assert len(s._pile) == 4
    do(s, 2, [P("The Merchant")])
    assert s._pile == []
    assert sorted(s._removed) == sorted(
        [P("The Forest"), P("The Pact"), P("The Pact", 1), P("The Darkness"), P("The Merchant")]
    )
    assert s.to_move() == (2,)  # R-P11: the blower plays again, after drawing up to four
    assert len(s._hands[2]) == 4
    ev = s.observation(2)["events"]
    assert any(e["type"] == "blow_up" and e["cause"] == "four" for e in ev)


def test_R_P10_four_at_once_and_excuse_does_not_break_the_run():
    s = build([[P("The Pact"), P("The Pact", 1), P("The Darkness"), P("The Merchant"), P("The Journey")], FILLER])
    do(s, 0, [P("The Pact"), P("The Pact", 1), P("The Darkness"), P("The Merchant")])
    assert s._pile == [] and s.to_move() == (0,)
    s = build(
        [[EXCUSE, P("The Journey")], [P("The Merchant"), *FILLER]],
        plays=[(1, [P("The Pact"), P("The Pact", 1), P("The Darkness")])],
        options={"extended": True},
    )
    do(s, 0, [EXCUSE])
    do(s, 1, [P("The Merchant")])
    assert s._pile == [] and s.to_move() == (1,)


# ---- R-P11 drawing -----------------------------------------------------------------


def test_R_P11_draw_up_to_four_after_a_play_only_while_draw_pile_lasts():
    s = build(
        [[P("The Journey"), P("The Pact"), P("The Mill")], FILLER],
        draw=[P("The Sailor"), P("The Market"), P("The Forest")],
    )
    do(s, 0, [P("The Journey")])
    assert sorted(s._hands[0]) == sorted([P("The Pact"), P("The Mill"), P("The Forest"), P("The Market")])
    assert s._draw == [P("The Sailor")]
    assert s.observation(1)["draw_pile"] == 1
    # Holding more than four after eating: no draw.
    s = build(
        [[P("The Journey"), P("The Pact"), P("The Mill"), P("The Cave"), P("The Sea"), P("The End")], FILLER],
        draw=[P("The Sailor")],
    )
    do(s, 0, [P("The Journey")])
    assert len(s._hands[0]) == 5 and s._draw == [P("The Sailor")]
    # Draw pile runs out: draw what is left.
    s = build([[P("The Journey"), P("The Pact")], FILLER], draw=[P("The Sailor")])
    do(s, 0, [P("The Journey")])
    assert len(s._hands[0]) == 2 and s._draw == []


# ---- R-P12 playing into the face-up tableau ------------------------------------------


def test_R_P12_last_hand_cards_may_take_face_up_cards_of_the_same_rank():
    up = [P("The Darkness"), P("The Pact", 1), P("The Journey")]
    s = build([[P("The Pact")], FILLER], up=[up, []])
    sets = play_sets(s, 0)
    pact, dark = P("The Pact") % DS, P("The Darkness") % DS
    assert sorted(sets) == sorted([[pact], [pact, pact], [pact, dark], [pact, pact, dark]])
    do(s, 0, [P("The Pact"), P("The Pact", 1), P("The Darkness")])
    assert s._hands[0] == [] and s._up[0] == [P("The Journey")]
    assert s._pile == [P("The Pact"), P("The Pact", 1), P("The Darkness")]
    # Not while the draw pile has cards, and not unless the play empties the hand.
    s = build([[P("The Pact")], FILLER], up=[up, []], draw=[P("The Mill")])
    assert play_sets(s, 0) == [[pact]]
    s = build([[P("The Pact"), P("The Forest")], FILLER], up=[up, []])
    assert sorted(play_sets(s, 0)) == sorted([[pact], [P("The Forest") % DS]])


def test_R_P12_face_up_additions_must_each_be_legal():
    ak = P("Ace of Knots")
    up = [P("The Pact"), P("The Merchant", 1)]  # non-trump 9, trump 9
    s = build([[P("The Merchant")], FILLER], up=[up, []], plays=[(1, [P("The Market")])], trump=ak)
    m = P("The Merchant") % DS
    assert sorted(play_sets(s, 0)) == [[m], [m, m]]


# ---- R-P13 face-down phase -----------------------------------------------------------


def test_R_P13_illegal_reveal_eats_and_card_returns_face_down_known_to_all():
    s = build([[], FILLER, FILLER], down=[[P("The Pact"), P("The Journey")], [], []], plays=[(2, [P("The Lunatic")])])
    assert play_sets(s, 0) == [["reveal", 0], ["reveal", 1]]
    s.apply(0, 1)
    assert s._hands[0] == [P("The Lunatic")] and s._pile == []
    assert s._down[0][:2] == [P("The Pact"), P("The Journey")]
    for seat in range(3):
        t = s.observation(seat)["tableaux"][0]
        assert t["known_face_down"] == [[1, P("The Journey")]]
        assert t["face_down"] == 2 and t["face_down_positions"] == [0, 1]
    ev = s.observation(1)["events"]
    assert {"type": "reveal", "seat": 0, "position": 1, "card": P("The Journey"), "legal": False} in ev
    assert s.to_move() == (1,)
    assert "The Journey" in s.observation_text(2)


def test_R_P13_legal_reveal_is_played_and_last_card_goes_out():
    s = build(
        [[], FILLER, FILLER],
        down=[[P("The Pact"), -1, P("The Journey")], [], []],
        known=[[2], [], []],
        plays=[(2, [P("The Lunatic")])],
    )
    assert s.action_info(0, 1)["card"] == P("The Journey")  # a known slot shows its card
    s.apply(0, 0)  # The Pact: 9 on 6
    assert s._pile[-1] == P("The Pact") and s._down[0] == [-1, -1, P("The Journey"), -1]
    assert s.to_move() == (1,)
    s = build([[], FILLER, FILLER], down=[[-1, P("The Pact")], [], []], plays=[(2, [P("The Lunatic")])])
    s.apply(0, 0)
    assert s.observation(1)["out_order"] == [0] and s.to_move() == (1,)


def test_R_P13_revealed_ace_blows_up_and_plays_again():
    s = build([[], FILLER], down=[[P("Ace of Leaves"), P("The Pact")], []], plays=[(1, [P("The Lunatic")])])
    s.apply(0, 0)
    assert s._trump_ace == P("Ace of Leaves") and s._pile == [] and s.to_move() == (0,)
    assert play_sets(s, 0) == [["reveal", 1]]


# ---- R-P14 the Excuse -------------------------------------------------------------


def test_R_P14_excuse_any_time_alone_removed_and_pile_unchanged():
    ext = {"extended": True}
    s = build(
        [[EXCUSE, P("The Pact")], [P("The Pact", 1), P("The Journey")], FILLER],
        plays=[(2, [P("The Chance Meeting")])],
        draw=[P("The Mill"), P("The Sea"), P("The Forest")],
        options=ext,
    )
    assert play_sets(s, 0) == [["excuse"]]  # nothing else is legal on the Seven, and no eat is forced
    do(s, 0, [EXCUSE])
    assert EXCUSE in s._removed
    obs = s.observation(1)
    assert obs["pile"] == [P("The Chance Meeting")] and obs["reference"] == P("The Chance Meeting")
    assert obs["pile_mode"] == "lower"
    assert len(s._hands[0]) == 4  # counts as a play: draw up to four
    # Seat 1 answers the same Seven: lower only.
    assert s.to_move() == (1,) and play_sets(s, 1) == [faces([P("The Journey")])]
    # ... and a seat with nothing lower eats it.
    s = build(
        [[EXCUSE, P("The Pact")], [P("The Pact", 1)], FILLER], plays=[(2, [P("The Chance Meeting")])], options=ext
    )
    do(s, 0, [EXCUSE])
    assert s.to_move() == (2,) and s._hands[1] == [P("The Pact", 1), P("The Chance Meeting")]
    # Alone: never combined with other cards, and one move for several Excuses.
    s = build([[EXCUSE, P("The Excuse", 1), P("The Pact")], FILLER], options=ext)
    assert play_sets(s, 0) == [[P("The Pact") % DS], ["excuse"]]


def test_R_P14_revealed_face_down_excuse_is_always_legal():
    s = build(
        [[], FILLER, FILLER],
        down=[[EXCUSE], [], []],
        plays=[(2, [P("The Chance Meeting")])],
        options={"extended": True},
    )
    s.apply(0, 0)
    assert EXCUSE in s._removed and s._pile == [P("The Chance Meeting")]
    assert s._out_order == [0] and s.to_move() == (1,)


# ---- R-P15 places --------------------------------------------------------------------


def test_R_P15_C3_places_by_going_out_order_last_is_loser():
    s = build([[P("The Journey"), P("The Sea")], [P("The Pact")], [P("The Merchant")]], turn=1)
    do(s, 1, [P("The Pact")])
    assert s._out_order == [1] and s.to_move() == (2,)
    do(s, 2, [P("The Merchant")])
    assert s.is_over() and s.to_move() == ()
    res = s.result()
    assert res.places == (2, 0, 1) and not res.capped
    assert res.scores == (0.0, 2.0, 1.0)


def test_R_P15_C4_capped_standing_out_first_then_fewest_cards_ties_shared():
    s = build(
        [
            [P("The Journey"), P("The Sea"), P("The Pact")],
            [P("The Mill"), P("The Cave"), P("The Forest")],
            [],
            [P("The Sailor"), P("The End"), P("The Bard"), P("The Author")],
        ],
        up=[[], [], [], [P("The Market")]],
        out=[2],
        turn=0,
        options={"decision_cap": 1},
    )
    do(s, 0, [P("The Journey")])  # seat 0 now holds 2 cards; the cap stops the game
    res = s.result()
    assert res.capped and s.is_over()
    assert res.places == (1, 2, 0, 3)
    s = build(
        [[P("The Journey"), P("The Sea")], [P("The Mill"), P("The Cave"), P("The Forest")], []],
        out=[2],
        turn=1,
        options={"decision_cap": 1},
    )
    do(s, 1, [P("The Mill")])
    assert s.result().places == (1, 1, 0)  # 2 cards each: tie shared


# ---- R-P16 Wyrm variant -------------------------------------------------------------


def test_R_P16_wyrm_variant_play_lower_after_a_wyrm_card_and_sevens_ordinary():
    w = {"wyrm_variant": True}
    s = build([[P("The Pact"), P("The Forest")], FILLER], plays=[(1, [P("The Chance Meeting")])], options=w)
    assert s.observation(0)["pile_mode"] == "higher"  # a Seven without Wyrms is ordinary
    assert legal(s, 0, P("The Pact")) and not legal(s, 0, P("The Forest"))
    s = build(
        [[P("The Journey"), P("The Pact"), P("The Soldier", 1)], FILLER], plays=[(1, [P("The Soldier")])], options=w
    )
    assert s.observation(0)["pile_mode"] == "lower"
    assert legal(s, 0, P("The Journey")) and legal(s, 0, P("The Soldier", 1)) and not legal(s, 0, P("The Pact"))
    # A play that merely contains one Wyrm card is enough.
    s = build([[P("The Journey"), P("The Pact")], FILLER], plays=[(1, [P("The Forest"), P("The Soldier")])], options=w)
    assert legal(s, 0, P("The Journey")) and not legal(s, 0, P("The Pact"))
    # Without the variant the same Soldier is an ordinary Five.
    s = build([[P("The Journey"), P("The Pact")], FILLER], plays=[(1, [P("The Soldier")])])
    assert not legal(s, 0, P("The Journey")) and legal(s, 0, P("The Pact"))
    # A Two bearing Wyrms (The Desert) is still a Two: anything is legal on it.
    s = build([[P("The Journey"), P("The Pact")], FILLER], plays=[(1, [P("The Desert")])], options=w)
    assert s.observation(0)["pile_mode"] == "any"


# ---- R-P17 / C5 observation -----------------------------------------------------------


def test_R_P17_observation_contents():
    s = build(
        [[P("The Pact"), P("The Journey")], [P("The Mill"), P("The Sea"), P("The End")]],
        up=[[P("The Cave")], []],
        down=[[P("The Forest"), P("The Lunatic")], [P("The Market")]],
        known=[[1], []],
        plays=[(1, [P("The Sailor")])],
        trump=P("Ace of Moons"),
        draw=[P("The Bard"), P("The Castle")],
        out=[],
    )
    s._removed = [P("The Huntress")]
    obs = s.observation(1)
    assert obs["phase"] == "play" and obs["turn"] == 0 and obs["to_move"] == [0]
    assert sorted(obs["hand"]) == sorted([P("The Mill"), P("The Sea"), P("The End")])
    t0 = obs["tableaux"][0]
    assert t0 == {
        "hand_size": 2,
        "face_up": [P("The Cave")],
        "face_down": 2,
        "face_down_positions": [0, 1],
        "known_face_down": [[1, P("The Lunatic")]],
        "out": False,
    }
    assert obs["pile"] == [P("The Sailor")] and obs["reference"] == P("The Sailor")
    assert obs["trump_ace"] == P("Ace of Moons") and obs["trump_suit"] == "Moons"
    assert obs["draw_pile"] == 2 and obs["removed"] == [P("The Huntress")] and obs["out_order"] == []
    assert obs["legal_actions"] == []  # not seat 1's turn
    flat = _ints(
        obs,
        skip={
            "seat",
            "players",
            "decision",
            "to_move",
            "hand_size",
            "face_down",
            "turn",
            "dealer",
            "draw_pile",
            "id",
            "position",
            "count",
            "place",
        },
    )
    for hidden in (P("The Pact"), P("The Journey"), P("The Forest"), P("The Market"), P("The Bard"), P("The Castle")):
        assert hidden not in flat
    assert json.loads(json.dumps(obs)) == obs


def _ints(x: Any, skip: set[str], key: str = "") -> list[int]:
    """Every int in a JSON value, except under the given keys (counts, seats) and position pairs."""
    if key in skip:
        return []
    if isinstance(x, bool):
        return []
    if isinstance(x, int):
        return [x]
    if isinstance(x, dict):
        return [i for k, v in x.items() for i in _ints(v, skip, k)]
    if isinstance(x, list):
        if key in ("known_face_down", "face_down_positions"):
            return [pair[1] for pair in x if isinstance(pair, list)]
        return [i for v in x for i in _ints(v, skip, key)]
    return []


def test_R_P17_C5_hidden_cards_permuted_leave_every_observation_unchanged():
    rng = DealRng(9)
    s = SPEC.new_game(4, 17, {"extended": True})
    step = 0
    while not s.is_over() and step < 400:
        if step % 13 == 0:
            for seat in range(4):
                obs = s.observation(seat)
                t = s.with_hidden_shuffled(seat, DealRng(step))
                assert t.observation(seat) == obs
                assert t.observation_text(seat) == s.observation_text(seat)
                assert sorted(t.all_cards()) == sorted(s.all_cards())
        seat = s.to_move()[0]
        s.apply(seat, rng.randbelow(len(s.legal_actions(seat))))
        step += 1


def test_R_P17_shuffle_really_moves_hidden_cards_and_follows_pending_swaps():
    s = SPEC.new_game(3, 4)
    a = next(a for a in s.legal_actions(1) if len(s.action_info(1, a)["swaps"]) == 1)
    s.apply(1, a)
    t = s.with_hidden_shuffled(0, DealRng(3))
    assert t._hands[0] == s._hands[0] and t._up == s._up
    assert (t._hands[1], t._hands[2], t._draw) != (s._hands[1], s._hands[2], s._draw)
    ((h, u),) = t._pending[1]
    assert h in t._hands[1] and u == s._pending[1][0][1]
    t.apply(0, 0)
    t.apply(2, 0)
    assert h in t._up[1] and u in t._hands[1]


# ---- errors, C2, properties --------------------------------------------------------


def test_illegal_actions_raise():
    s = build([[P("The Pact")], FILLER])
    with pytest.raises(IllegalActionError):
        s.apply(1, 0)  # not seat 1's turn
    with pytest.raises(IllegalActionError):
        s.apply(0, 5)
    with pytest.raises(IllegalActionError):
        s.apply(0, "0")  # type: ignore[arg-type]
    with pytest.raises(IllegalActionError):
        s.action_info(0, -1)


def test_C2_same_seed_same_deal_different_seed_different_deal():
    a, b, c = SPEC.new_game(6, 99), SPEC.new_game(6, 99), SPEC.new_game(6, 100)
    assert a.all_cards() == b.all_cards() and a._dealer == b._dealer
    assert a.all_cards() != c.all_cards()


def _random_game(players: int, seed: int, options: dict, policy: int, check_every: int = 0) -> tuple:
    s = SPEC.new_game(players, seed, options)
    deck = sorted(s.all_cards())
    rng = DealRng(policy)
    actions = []
    step = 0
    while not s.is_over():
        movers = tuple(s.to_move())
        assert movers
        for seat in movers:
            n = len(s.legal_actions(seat))
            assert n >= 1
            a = rng.randbelow(n)
            if check_every and step % check_every == 0:
                obs = s.observation(seat)
                assert json.loads(json.dumps(obs)) == obs
                assert s.with_hidden_shuffled(seat, DealRng(step)).observation(seat) == obs
            s.apply(seat, a)
            actions.append((seat, a))
            step += 1
            assert sorted(s.all_cards()) == deck
            if s.is_over():
                break
    return s, actions


options_st = st.fixed_dictionaries({"extended": st.booleans(), "wyrm_variant": st.booleans()})


@settings(max_examples=40)
@given(st.integers(2, 10), st.integers(0, 2**63 - 1), options_st, st.integers(0, 2**32))
def test_property_conserved_legal_ends_replays_and_no_leak(players, seed, options, policy):
    s, actions = _random_game(players, seed, options, policy, check_every=29)
    res = s.result()
    assert not res.capped
    assert sorted(res.places) == list(range(players))  # no ties at a natural end (R-P15)
    assert len(s._out_order) == players - 1
    s2, actions2 = _random_game(players, seed, options, policy)
    assert actions2 == actions and s2.result() == res
    assert s2.observation(0) == s.observation(0)


@settings(max_examples=20)
@given(st.integers(2, 10), st.integers(0, 2**63 - 1), st.integers(1, 60))
def test_property_C4_small_cap_gives_capped_result(players, seed, cap):
    s, actions = _random_game(players, seed, {"decision_cap": cap}, 1)
    assert s.is_over() and s.to_move() == ()
    res = s.result()
    if res.capped:
        assert len(actions) == cap
        keys = s.standing_keys()
        for i in range(players):
            for j in range(players):
                if keys[i] < keys[j]:
                    assert res.places[i] < res.places[j]
    assert min(res.places) == 0


def test_decks_auto_games_run_for_every_player_count():
    for n in range(2, 11):
        for ext in (False, True):
            s, _ = _random_game(n, n * 7 + ext, {"extended": ext}, n)
            assert Counter(s.result().places)[n - 1] == 1


def test_clone_is_independent_and_plays_on_identically():
    s = SPEC.new_game(4, 8, {"extended": True})
    rng = DealRng(2)
    for _ in range(40):
        seat = s.to_move()[0]
        s.apply(seat, rng.randbelow(len(s.legal_actions(seat))))
    c = s.clone()
    before = s.observation(0)
    r1, r2 = DealRng(5), DealRng(5)
    while not c.is_over():
        seat = c.to_move()[0]
        c.apply(seat, r1.randbelow(len(c.legal_actions(seat))))
    assert s.observation(0) == before  # the original did not move
    while not s.is_over():
        seat = s.to_move()[0]
        s.apply(seat, r2.randbelow(len(s.legal_actions(seat))))
    assert s.result() == c.result() and s.all_cards() == c.all_cards()


def test_R_P17_events_since_own_decision_and_bounded_for_seats_out():
    s = build([[P("The Journey"), *FILLER], [P("The Mountain")], [P("The Forest"), *FILLER]], turn=1)
    do(s, 1, [P("The Mountain")])  # seat 1 goes out
    do(s, 2, [P("The Forest")])
    do(s, 0, [P("The Author", 1)])
    ev0 = s.observation(0)["events"]
    assert ev0[0] == {"type": "play", "seat": 0, "cards": [P("The Author", 1)]}
    ev2 = s.observation(2)["events"]
    assert [e["type"] for e in ev2] == ["play", "play"]  # Forest, then seat 0's Two
    assert s.observation(1)["events"] == ev0  # out: only the latest decision's events
    assert SPEC.new_game(3, 0).observation(0)["events"] == []


# ---- C6: nothing public is missed --------------------------------------------------


@pytest.mark.parametrize("players,opts", [(2, {}), (4, {}), (5, {"extended": True, "wyrm_variant": True})])
def test_C6_every_event_reaches_every_seat_at_its_next_decision(players: int, opts: dict[str, Any]) -> None:
    """C6: a seat's observations at its decisions, read in order, show the whole public log."""
    for seed in range(3):
        s = SPEC.new_game(players, seed, {**opts, "decision_cap": 3000})
        rng = DealRng(seed)
        seen: list[list[dict[str, Any]]] = [[] for _ in range(players)]
        upto = [0] * players
        while not s.is_over():
            for seat in tuple(s.to_move()):
                seen[seat] += s.observation(seat)["events"]
                upto[seat] = len(s._log)
                s.apply(seat, rng.randbelow(len(s.legal_actions(seat))))
                if s.is_over():
                    break
        for seat in range(players):
            assert seen[seat] == [s._event_json(e) for e in s._log[: upto[seat]]]
