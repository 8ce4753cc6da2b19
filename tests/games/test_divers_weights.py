"""Divers Weights engine: rulings R-D1..R-D9 and C1-C5 (shared/RULINGS.md)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import decktet
from games.core import IllegalActionError, OptionError
from games.divers_weights import BID, OVER, PLAY, PRIZE, SPEC, DiversWeightsState, bid_points, prize_points
from games.rng import DealRng

c = decktet.pid_of


def names(cards: Iterable[int]) -> list[str]:
    return [decktet.card_name(p) for p in cards]


def rig(
    state: DiversWeightsState,
    hands: list[list[str]],
    threshold: Sequence[str] = (),
    *,
    deck_top: Sequence[str] = (),
    prizes: list[list[str]] | None = None,
    trick_no: int = 1,
    dealer: int | None = None,
    totals: list[int] | None = None,
    bids: list[int | None] | None = None,
    tricks_won: list[int] | None = None,
) -> DiversWeightsState:
    """Test-only constructor: rearrange a fresh state's 36 cards by name.

    Hands, threshold and prizes are set as given; every other card goes to the
    deck, with ``deck_top`` drawn first (in order). With a threshold the state is
    at that trick's simultaneous decision; without one (bidding) it stays at the
    bids, asked from the dealer's left. Cards stay conserved.
    """
    n = state.players
    hand_ids = [sorted(c(x) for x in h) for h in hands]
    thr = [c(x) for x in threshold]
    prize_ids = [[c(x) for x in pr] for pr in (prizes or [[] for _ in range(n)])]
    top = [c(x) for x in deck_top]
    used = [p for h in hand_ids for p in h] + thr + [p for pr in prize_ids for p in pr] + top
    assert len(set(used)) == len(used), "a card used twice"
    rest = [p for p in range(decktet.BASIC_SIZE) if p not in used]
    state._hands = hand_ids
    state._deck = rest + top[::-1]
    state._threshold = thr
    state._played = [None] * n
    state._prizes = prize_ids
    state._discard = []
    state._tricks = []
    state._winners = ()
    state.trick_no = trick_no
    if dealer is not None:
        state.dealer = dealer
    if totals is not None:
        state._totals = list(totals)
    if bids is not None:
        state._bids = list(bids)
    if tricks_won is not None:
        state._tricks_won = list(tricks_won)
    if thr:
        state._phase = PLAY
        state._to_move = tuple(range(n))
    else:
        assert state.bidding
        state._phase = BID
        state._to_move = ((state.dealer + 1) % n,)
    state._move_cache.clear()
    assert sorted(state.all_cards()) == list(range(decktet.BASIC_SIZE))
    return state


def play(state: DiversWeightsState, seat: int, name: str) -> None:
    """Apply the action whose card is ``name``."""
    pid = c(name)
    state.apply(seat, state.moves(seat).index(pid))


def play_trick(state: DiversWeightsState, cards: list[str]) -> None:
    for seat, name in enumerate(cards):
        play(state, seat, name)


def random_game(n: int, seed: int, options: dict[str, Any] | None = None, policy: int = 0):
    s = SPEC.new_game(n, seed, options)
    rng = DealRng(policy)
    log = []
    while not s.is_over():
        for seat in tuple(s.to_move()):
            a = rng.randbelow(len(s.legal_actions(seat)))
            log.append((seat, a))
            s.apply(seat, a)
            if s.is_over():  # a capped game can stop mid-snapshot
                break
    return s, log


def fresh(n: int = 3, seed: int = 1, **options: Any) -> DiversWeightsState:
    return SPEC.new_game(n, seed, options)  # type: ignore[return-value]


# ---- R-D1, R-D2, R-D3 ---------------------------------------------------------


def test_R_D1_players_two_to_four_basic_deck() -> None:
    for bad in (1, 5):
        with pytest.raises(OptionError):
            SPEC.new_game(bad, 0)
    for n in (2, 3, 4):
        s = fresh(n)
        assert sorted(s.all_cards()) == list(range(36))  # basic deck, no extended cards


def test_R_D1_ace_counts_one_crown_ten() -> None:
    s = rig(
        fresh(3),
        [["Ace of Suns", "The Author"], ["The Bard", "The Desert"], ["The Origin", "The Painter"]],
        ["Ace of Moons", "The Huntress"],
    )
    obs = s.observation(0)
    assert obs["threshold_total"] == 11
    # 1 + 10 + 2 = 13 > 11: the lowest (the Ace, counted 1) wins.
    play_trick(s, ["Ace of Suns", "The Bard", "The Origin"])
    assert s._phase == PRIZE and s.to_move() == (0,)
    assert s.observation(0)["reveal"]["total"] == 13


@pytest.mark.parametrize("n", [2, 3, 4])
def test_R_D2_deal_five_and_turn_n_minus_1(n: int) -> None:
    s = fresh(n, seed=11)
    obs = s.observation(0)
    assert obs["hand_sizes"] == [5] * n
    assert len(obs["threshold"]) == n - 1
    assert obs["deck_count"] == 36 - 5 * n - (n - 1)
    # Five tricks then a new hand, reshuffled from all 36 cards.
    rng = DealRng(3)
    tricks_seen = set()
    while s.hand_no == 1:
        tricks_seen.add(s.trick_no)
        assert len(s._threshold) == (n - 1 if s._phase == PLAY else len(s._threshold))
        for seat in tuple(s.to_move()):
            s.apply(seat, rng.randbelow(len(s.legal_actions(seat))))
    assert tricks_seen == {1, 2, 3, 4, 5}
    assert [len(h) for h in s._hands] == [5] * n and s.trick_no == 1
    assert len(s._hand_scores) == 1


def test_R_D3_simultaneous_decision_any_order() -> None:
    s = rig(
        fresh(3),
        [["The Author", "The Lunatic"], ["The Desert", "The Penitent"], ["The Origin", "The Market"]],
        ["The Journey", "The Diplomat"],
    )
    assert s.to_move() == (0, 1, 2)
    # Each seat's moves are its own hand cards in canonical order.
    assert s.moves(1) == sorted([c("The Desert"), c("The Penitent")])
    assert [s.action_info(1, i)["card"] for i in s.legal_actions(1)] == s.moves(1)
    play(s, 2, "The Market")
    assert s.to_move() == (0, 1)
    with pytest.raises(IllegalActionError):
        s.apply(2, 0)  # already chose
    play(s, 0, "The Lunatic")
    assert s.to_move() == (1,)
    play(s, 1, "The Penitent")
    # 6 + 6 + 6 = 18 > 11: everyone played the lowest rank -> all win, no decision.
    assert s.trick_no == 2 and s.to_move() == (0, 1, 2)
    assert s._prizes == [[c("The Lunatic")], [c("The Penitent")], [c("The Market")]]


# ---- R-D4, R-D5 ---------------------------------------------------------------


def test_R_D4_R_D5_sample_trick_of_the_text() -> None:
    """Threshold 3 + 8 = 11; played 6, 5, 4 total 15 > 11: the 4 wins (Bob, seat 2)."""
    s = rig(
        fresh(3),
        [["The Lunatic", "Ace of Moons"], ["The Forest", "Ace of Suns"], ["The Mountain", "Ace of Waves"]],
        ["The Journey", "The Diplomat"],
    )
    assert s.observation(0)["threshold_total"] == 11
    play_trick(s, ["The Lunatic", "The Forest", "The Mountain"])
    assert s._phase == PRIZE and s.to_move() == (2,)
    rev = s.observation(0)["reveal"]
    assert rev == {"total": 15, "rule": "lowest", "winners": [2]}
    # R-D5: the winner picks among threshold and played cards.
    assert names(s.moves(2)) == ["The Journey", "The Diplomat", "The Lunatic", "The Forest", "The Mountain"]
    assert s.action_info(2, 1) == {
        "id": 1,
        "text": "take The Diplomat as prize",
        "card": c("The Diplomat"),
        "from": "threshold",
    }
    assert s.action_info(2, 3)["seat"] == 1 and s.action_info(2, 3)["from"] == "played"
    play(s, 2, "The Diplomat")
    assert s._prizes == [[], [], [c("The Diplomat")]]
    assert sorted(s._discard) == sorted(c(x) for x in ["The Journey", "The Lunatic", "The Forest", "The Mountain"])
    assert s._tricks_won == [0, 0, 1]
    assert s.trick_no == 2 and s._phase == PLAY


def test_R_D4_total_below_threshold_highest_wins() -> None:
    s = rig(
        fresh(3),
        [["The Author", "The Sea"], ["The Journey", "The End"], ["The Mountain", "The Bard"]],
        ["The Huntress", "The Castle"],
    )  # 10 + 7 = 17
    play_trick(s, ["The Author", "The Journey", "The Mountain"])  # 2 + 3 + 4 = 9 < 17
    assert s.to_move() == (2,) and s.observation(1)["reveal"]["rule"] == "highest"


def test_R_D4_exact_equality_no_winner_all_discarded() -> None:
    s = rig(
        fresh(3),
        [["The Author", "The Sea"], ["The Journey", "The End"], ["The Mountain", "The Bard"]],
        ["Ace of Moons", "The Diplomat"],
    )  # 1 + 8 = 9
    play_trick(s, ["The Author", "The Journey", "The Mountain"])  # 2 + 3 + 4 = 9
    assert s._phase == PLAY and s.trick_no == 2 and s.to_move() == (0, 1, 2)  # no prize decision
    assert s._prizes == [[], [], []] and s._tricks_won == [0, 0, 0]
    assert sorted(s._discard) == sorted(
        c(x) for x in ["Ace of Moons", "The Diplomat", "The Author", "The Journey", "The Mountain"]
    )
    rec = s.observation(0)["tricks"][0]
    assert rec["winners"] == [] and rec["prizes"] == [] and rec["rule"] == "none"
    assert sorted(s.all_cards()) == list(range(36))


def test_R_D5_tied_winners_each_take_own_card_no_choice() -> None:
    s = rig(
        fresh(4),
        [
            ["The Author", "The Sea"],
            ["The Desert", "The End"],
            ["The Mountain", "The Bard"],
            ["The Diplomat", "The Huntress"],
        ],
        ["Ace of Moons", "The Journey", "The Painter"],
    )  # 1 + 3 + 3 = 7
    play_trick(s, ["The Author", "The Desert", "The Mountain", "The Diplomat"])  # 16 > 7: lowest (2) wins
    assert s._phase == PLAY and s.trick_no == 2  # no decision asked
    assert s._prizes == [[c("The Author")], [c("The Desert")], [], []]
    assert s._tricks_won == [1, 1, 0, 0]
    assert sorted(s._discard) == sorted(
        c(x) for x in ["Ace of Moons", "The Journey", "The Painter", "The Mountain", "The Diplomat"]
    )
    rec = s.observation(3)["tricks"][0]
    assert rec["winners"] == [0, 1]
    assert rec["prizes"] == [{"seat": 0, "card": c("The Author")}, {"seat": 1, "card": c("The Desert")}]


def test_R_D5_lone_winner_may_take_another_seats_card() -> None:
    s = rig(fresh(2), [["The Author", "The Sea"], ["The Pact", "The End"]], ["The Huntress"])  # 10
    play_trick(s, ["The Author", "The Pact"])  # 11 > 10: lowest wins, seat 0
    assert s.to_move() == (0,)
    play(s, 0, "The Pact")
    assert s._prizes == [[c("The Pact")], []]
    assert sorted(s._discard) == sorted([c("The Huntress"), c("The Author")])


# ---- R-D6 ---------------------------------------------------------------------


def test_R_D6_symbols_and_six_suit_bonus() -> None:
    assert prize_points([c("Ace of Moons")]) == 1
    assert prize_points([c("The Huntress")]) == 1  # Crown: one symbol
    assert prize_points([c("The Author")]) == 2
    assert prize_points([c("Ace of Moons"), c("The Sea"), c("The Pact")]) == 4  # Moons, Waves, Suns
    # Mountain (Moons Suns) + Sailor (Waves Leaves) + Battle (Wyrms Knots): 6 symbols + 5 bonus.
    assert prize_points([c("The Mountain"), c("The Sailor"), c("The Battle")]) == 11
    six_singles = [c(f"Ace of {x}") for x in decktet.SUIT_NAMES[:3]] + [
        c("The End"),
        c("The Calamity"),
        c("The Windfall"),
    ]
    assert prize_points(six_singles) == 6 + 5
    five_numbers = [c(x) for x in ["The Mountain", "The Sailor", "The Battle", "The Pact", "The Darkness"]]
    assert prize_points(five_numbers) == 15  # the stated maximum
    assert prize_points([]) == 0


def test_R_D6_hand_scored_at_end_of_hand() -> None:
    s = rig(
        fresh(2, hands=2),
        [["The Mountain"], ["The Savage"]],
        ["The Huntress"],
        trick_no=5,
        prizes=[["The Sailor", "The Battle"], ["Ace of Knots"]],
    )
    play_trick(s, ["The Mountain", "The Savage"])  # 4 + 3 = 7 < 10: highest (seat 0) wins
    play(s, 0, "The Huntress")  # Moons again: Sailor + Battle + Huntress = 5, no Suns -> no bonus
    assert s._hand_scores == [(5, 1)] and s._totals == [5, 1]
    s = rig(
        fresh(2, hands=2),
        [["The Mountain"], ["The Savage"]],
        ["The Huntress"],
        trick_no=5,
        prizes=[["The Sailor", "The Battle"], ["Ace of Knots"]],
    )
    play_trick(s, ["The Mountain", "The Savage"])
    play(s, 0, "The Mountain")  # Moons Suns: all six suits -> 6 + 5
    assert s._hand_scores == [(11, 1)]
    assert s.hand_no == 2 and s._prizes == [[], []]  # next hand dealt


# ---- R-D7 ---------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4])
def test_R_D7_default_one_hand_per_player_dealer_passes_left(n: int) -> None:
    s = fresh(n, seed=5 + n)
    rng = DealRng(n)
    dealers = []
    while not s.is_over():
        if not dealers or s.hand_no > len(dealers):
            dealers.append(s.dealer)
        for seat in tuple(s.to_move()):
            s.apply(seat, rng.randbelow(len(s.legal_actions(seat))))
    assert len(s._hand_scores) == n
    assert dealers == [(dealers[0] + k) % n for k in range(n)]  # C1: left = seat + 1
    assert sorted(dealers) == list(range(n))  # every seat deals once
    r = s.result()
    assert list(r.scores) == [sum(h[i] for h in s._hand_scores) for i in range(n)]


def test_R_D7_hands_option() -> None:
    s, _ = random_game(2, 9, {"hands": 5})
    assert len(s._hand_scores) == 5 and s.num_hands == 5


@pytest.mark.parametrize("seed", range(4))
def test_R_D7_target_ends_after_first_hand_reaching_it(seed: int) -> None:
    s, _ = random_game(3, seed, {"target": 25})
    running = [0, 0, 0]
    for k, h in enumerate(s._hand_scores):
        running = [a + b for a, b in zip(running, h)]
        assert (max(running) >= 25) == (k == len(s._hand_scores) - 1)
    assert list(s.result().scores) == running


def test_R_D7_target_stops_even_mid_schedule_and_ties_share_places() -> None:
    s = rig(
        fresh(3, target=30),
        [["The Author"], ["The Journey"], ["The Mountain"]],
        ["Ace of Moons", "The Diplomat"],
        trick_no=5,
        totals=[30, 30, 12],
    )
    play_trick(s, ["The Author", "The Journey", "The Mountain"])  # 9 = 9: no winner
    assert s.is_over() and s._phase == OVER and s.to_move() == ()
    r = s.result()
    assert r.scores == (30, 30, 12) and r.places == (0, 0, 2) and not r.capped


def test_R_D7_target_not_reached_deals_again() -> None:
    s = rig(
        fresh(3, target=31),
        [["The Author"], ["The Journey"], ["The Mountain"]],
        ["Ace of Moons", "The Diplomat"],
        trick_no=5,
        totals=[30, 30, 12],
        dealer=2,
    )
    play_trick(s, ["The Author", "The Journey", "The Mountain"])
    assert not s.is_over() and s.hand_no == 2 and s.dealer == 0  # left of seat 2 is seat 0


# ---- R-D8 ---------------------------------------------------------------------


def test_R_D8_bid_points_table() -> None:
    assert bid_points(2, 2) == 8  # made exactly
    assert bid_points(2, 4) == 10  # two overtricks
    assert bid_points(5, 5) == 20
    assert bid_points(3, 2) == 0  # failed
    assert bid_points(0, 0) == 20  # nil made
    assert bid_points(0, 1) == 0  # nil failed


def test_R_D8_bids_sequential_from_dealers_left_before_threshold() -> None:
    s = fresh(3, seed=4, bidding=True)
    d = s.dealer
    order = [(d + 1) % 3, (d + 2) % 3, d]
    assert s._phase == BID and s._threshold == [] and s.observation(0)["phase"] == "bid"
    for k, seat in enumerate(order):
        assert s.to_move() == (seat,)
        assert [s.action_info(seat, i)["bid"] for i in s.legal_actions(seat)] == [0, 1, 2, 3, 4, 5]
        obs = s.observation(seat)
        # later bidders see earlier bids
        assert [obs["bids"][x] for x in order[:k]] == [1] * k
        s.apply(seat, 1)
    assert s._phase == PLAY and len(s._threshold) == 2 and s.to_move() == (0, 1, 2)


def test_R_D8_no_prize_decision_winner_takes_own_card() -> None:
    s = rig(
        fresh(3, bidding=True),
        [["The Lunatic"], ["The Forest"], ["The Mountain"]],
        ["The Journey", "The Diplomat"],
        bids=[1, 1, 1],
    )
    play_trick(s, ["The Lunatic", "The Forest", "The Mountain"])
    assert s._phase == PLAY and s.trick_no == 2
    assert s._prizes == [[], [], [c("The Mountain")]] and s._tricks_won == [0, 0, 1]


def test_R_D8_scoring_made_overtricks_nil_failed() -> None:
    # Last trick of a 4-player hand; tied winners each count the trick (R-D5/R-D8).
    s = rig(
        fresh(4, bidding=True),
        [["The Author"], ["The Desert"], ["The Mountain"], ["The Diplomat"]],
        ["Ace of Moons", "The Journey", "The Painter"],
        trick_no=5,
        bids=[2, 1, 0, 0],
        tricks_won=[2, 0, 0, 1],
    )
    play_trick(s, ["The Author", "The Desert", "The Mountain", "The Diplomat"])  # 16 > 7: the 2s win
    # seat 0: bid 2, 3 tricks -> 8 + 1; seat 1: bid 1, 1 trick -> 4; seat 2: nil made -> 20;
    # seat 3: nil with a trick -> 0.
    assert s._hand_scores == [(9, 4, 20, 0)]
    s2 = rig(
        fresh(2, bidding=True),
        [["The Author"], ["The Desert"]],
        ["The Huntress"],
        trick_no=5,
        bids=[3, 0],
        tricks_won=[1, 0],
    )
    play_trick(s2, ["The Author", "The Desert"])  # 4 < 10: both 2s win
    assert s2._hand_scores == [(0, 0)]  # failed bid, failed nil


# ---- R-D9 ---------------------------------------------------------------------


def test_R_D9_observation_contents() -> None:
    s = rig(
        fresh(3, seed=2),
        [["The Lunatic", "Ace of Moons"], ["The Forest", "Ace of Suns"], ["The Mountain", "Ace of Waves"]],
        ["The Journey", "The Diplomat"],
        deck_top=["The Sea", "The End"],
        totals=[3, 4, 5],
    )
    play_trick(s, ["The Lunatic", "The Forest", "The Mountain"])
    play(s, 2, "The Forest")
    obs = s.observation(1)
    assert obs["phase"] == "play" and obs["hand"] == [c("Ace of Suns")]
    assert obs["threshold"] == [c("The Sea"), c("The End")] and obs["threshold_total"] == 20
    assert obs["tricks"] == [
        {
            "threshold": [c("The Journey"), c("The Diplomat")],
            "threshold_total": 11,
            "played": [c("The Lunatic"), c("The Forest"), c("The Mountain")],
            "total": 15,
            "rule": "lowest",
            "winners": [2],
            "prizes": [{"seat": 2, "card": c("The Forest")}],
        }
    ]
    assert obs["prizes"] == [[], [], [c("The Forest")]]
    assert obs["hand_points"] == [0, 0, 2] and obs["scores"] == [3, 4, 5]
    assert obs["bids"] == [None, None, None] and obs["dealer"] == s.dealer
    assert obs["hand_number"] == 1 and obs["trick_number"] == 2
    assert obs["deck_count"] == len(s._deck) == 36 - 6 - 2 - 2  # hands, two thresholds
    assert obs["hand_sizes"] == [1, 1, 1]
    assert "deck" not in obs and json.loads(json.dumps(obs)) == obs
    text = s.observation_text(1)
    assert "Ace of Suns" in text and "The Sea" in text


def test_R_D9_simultaneous_choice_hidden_from_others() -> None:
    s = rig(
        fresh(3),
        [["The Lunatic", "Ace of Moons"], ["The Forest", "Ace of Suns"], ["The Mountain", "Ace of Waves"]],
        ["The Journey", "The Diplomat"],
    )
    a, b = s.clone(), s.clone()
    play(a, 0, "The Lunatic")
    play(b, 0, "Ace of Moons")
    # Seats 1 and 2 cannot tell which card seat 0 chose; only that it chose.
    for seat in (1, 2):
        oa, ob = a.observation(seat), b.observation(seat)
        assert oa == ob and oa["chosen"] == [True, False, False] and oa["played"] == [None, None, None]
        assert a.observation_text(seat) == b.observation_text(seat)
    # A seat that already chose sees its own choice, and still nobody else's.
    play(a, 1, "The Forest")
    play(b, 1, "The Forest")
    assert a.observation(1) == b.observation(1)
    assert a.observation(1)["played"] == [None, c("The Forest"), None]
    assert a.observation(0)["played"] == [c("The Lunatic"), None, None]
    assert a.observation(0)["to_move"] == [2]
    # After the reveal every played card is public.
    play(a, 2, "The Mountain")
    assert a.observation(1)["played"] == [c("The Lunatic"), c("The Forest"), c("The Mountain")]


# ---- C1-C5 ----------------------------------------------------------------------


def test_C2_first_dealer_and_deal_from_seed() -> None:
    dealers = {fresh(4, seed=s).dealer for s in range(40)}
    assert dealers == {0, 1, 2, 3}
    a, la = random_game(4, 123, {"bidding": True}, policy=7)
    b, lb = random_game(4, 123, {"bidding": True}, policy=7)
    assert la == lb and a.result() == b.result() and a._hand_scores == b._hand_scores
    assert fresh(3, seed=8)._hands == fresh(3, seed=8)._hands
    assert fresh(3, seed=8)._hands != fresh(3, seed=9)._hands


def test_C3_result_places_and_scores() -> None:
    s, _ = random_game(4, 77)
    r = s.result()
    assert len(r.places) == 4 and not r.capped
    for i in range(4):
        assert r.places[i] == sum(1 for x in r.scores if x > r.scores[i])


def test_C4_cap_standing_counts_current_hand_so_far() -> None:
    s = rig(
        fresh(3, decision_cap=1000),
        [["The Lunatic", "Ace of Moons"], ["The Forest", "Ace of Suns"], ["The Mountain", "Ace of Waves"]],
        ["The Journey", "The Diplomat"],
        totals=[5, 6, 4],
    )
    play_trick(s, ["The Lunatic", "The Forest", "The Mountain"])
    s.cap = s.decisions + 1
    play(s, 2, "The Diplomat")  # 2 prize points, then the cap stops the game
    r = s.result()
    assert r.capped and r.scores == (5, 6, 6) and r.places == (2, 0, 0)


def test_C4_cap_standing_bidding_counts_made_bids_not_nil() -> None:
    s = rig(
        fresh(3, bidding=True),
        [["The Lunatic", "Ace of Moons"], ["The Forest", "Ace of Suns"], ["The Mountain", "Ace of Waves"]],
        ["The Journey", "The Diplomat"],
        bids=[0, 2, 1],
        totals=[0, 0, 0],
    )
    s.cap = s.decisions + 3
    play_trick(s, ["The Lunatic", "The Forest", "The Mountain"])  # seat 2 wins: bid 1 made
    r = s.result()
    assert r.capped and r.scores == (0, 0, 4) and r.places == (1, 1, 0)


@pytest.mark.parametrize("opts", [{}, {"bidding": True}, {"target": 1000}])
def test_C4_small_cap_ends_capped(opts: dict[str, Any]) -> None:
    s, log = random_game(3, 5, {**opts, "decision_cap": 17})
    assert len(log) == 17 and s.is_over() and s.result().capped


def test_C5_hidden_shuffle_keeps_observation_and_moves_hidden_cards() -> None:
    s = fresh(4, seed=21)
    play(s, 1, names(s.moves(1))[0])
    changed = 0
    for k in range(10):
        t = s.with_hidden_shuffled(0, DealRng(k))
        assert t.observation(0) == s.observation(0)
        assert sorted(t.all_cards()) == list(range(36))
        assert t._hands[0] == s._hands[0] and t._prizes == s._prizes
        assert all(t.moves(x) == sorted(t.moves(x)) for x in t.to_move())  # canonical order kept
        changed += t._hands[2] != s._hands[2] or t._played[1] != s._played[1]
    assert changed >= 8


# ---- options, errors, JSON --------------------------------------------------------


@pytest.mark.parametrize(
    "opts",
    [
        {"hands": 0},
        {"hands": "2"},
        {"hands": 2.0},
        {"target": 0},
        {"target": True},
        {"bidding": 1},
        {"bidding": "yes"},
        {"decision_cap": 0},
        {"colour": 1},
        {"hands": 2, "target": 30},
    ],
)
def test_options_validation(opts: dict[str, Any]) -> None:
    with pytest.raises(OptionError):
        SPEC.new_game(3, 0, opts)


def test_options_defaults() -> None:
    o = SPEC.resolve_options(3, {})
    assert o == {"hands": None, "target": None, "bidding": False, "decision_cap": 100_000}
    assert fresh(3).num_hands == 3 and fresh(2, hands=7).num_hands == 7
    assert fresh(2, target=50).num_hands is None
    assert SPEC.simultaneous and SPEC.rules_version == "2" and SPEC.id == "divers-weights"


def test_illegal_actions_raise() -> None:
    s = fresh(3)
    with pytest.raises(IllegalActionError):
        s.apply(0, 5)
    with pytest.raises(IllegalActionError):
        s.apply(0, -1)
    with pytest.raises(IllegalActionError):
        s.apply(3, 0)
    with pytest.raises(IllegalActionError):
        s.apply(0, "0")  # type: ignore[arg-type]
    s.apply(0, 0)
    for seat in (1, 2):
        s.apply(seat, 0)
    if s._phase == PRIZE:
        loser = next(x for x in range(3) if x not in s.to_move())
        with pytest.raises(IllegalActionError):
            s.apply(loser, 0)
    g, _ = random_game(2, 3)
    with pytest.raises(IllegalActionError):
        g.apply(0, 0)


def test_json_round_trip_every_phase() -> None:
    seen = set()
    for opts in ({}, {"bidding": True}):
        s = fresh(3, seed=31, **opts)
        rng = DealRng(1)
        while not s.is_over():
            for seat in range(3):
                o = s.observation(seat)
                assert json.loads(json.dumps(o)) == o
                seen.add(o["phase"])
            for seat in tuple(s.to_move()):
                s.apply(seat, rng.randbelow(len(s.legal_actions(seat))))
        o = s.observation(0)
        assert json.loads(json.dumps(o)) == o and o["phase"] == "over" and o["legal_actions"] == []
        seen.add(o["phase"])
    assert seen == {"bid", "play", "prize", "over"}


# ---- property test ----------------------------------------------------------------


@settings(max_examples=150)
@given(
    n=st.integers(2, 4),
    seed=st.integers(0, 2**63 - 1),
    policy=st.integers(0, 1000),
    bidding=st.booleans(),
    mode=st.sampled_from(["default", "hands", "target"]),
    cap=st.one_of(st.none(), st.integers(1, 60)),
)
def test_property_random_games(n: int, seed: int, policy: int, bidding: bool, mode: str, cap: int | None) -> None:
    opts: dict[str, Any] = {"bidding": bidding}
    if mode == "hands":
        opts["hands"] = 2
    elif mode == "target":
        opts["target"] = 20
    if cap is not None:
        opts["decision_cap"] = cap
    s = SPEC.new_game(n, seed, opts)
    rng = DealRng(policy)
    shuf = DealRng(policy + 1)
    log = []
    steps = 0
    while not s.is_over():
        movers = tuple(s.to_move())
        assert movers and all(len(s.legal_actions(m)) > 0 for m in movers)
        for seat in movers:
            assert sorted(s.all_cards()) == list(range(36))
            if steps % 3 == 0:
                o = s.observation(seat)
                assert s.with_hidden_shuffled(seat, shuf).observation(seat) == o
            a = rng.randbelow(len(s.legal_actions(seat)))
            s.apply(seat, a)
            log.append((seat, a))
            steps += 1
            if s.is_over():
                break
        assert steps < 10_000
    assert sorted(s.all_cards()) == list(range(36))
    r = s.result()
    if r.capped:
        assert steps == cap
    else:
        assert cap is None or steps <= cap
    # Same seed and actions replay identically.
    t = SPEC.new_game(n, seed, opts)
    for seat, a in log:
        t.apply(seat, a)
    assert t.result() == r and t.observation(0) == s.observation(0)


# ---- C6 and R-D10 ---------------------------------------------------------------


def test_C6_fifth_trick_of_a_hand_shown_to_every_seat_in_the_next_hand() -> None:
    """C6: the next hand resets the trick list; ``previous_hand`` still shows trick 5."""
    s = rig(
        fresh(3, seed=4),
        [["The Lunatic"], ["The Forest"], ["The Mountain"]],
        ["The Journey", "The Diplomat"],
        trick_no=5,
        totals=[0, 0, 0],
    )
    assert s.observation(0)["previous_hand"] is None
    play_trick(s, ["The Lunatic", "The Forest", "The Mountain"])  # 15 > 11: lowest (seat 2) wins
    play(s, 2, "The Diplomat")
    assert s.hand_no == 2 and s.trick_no == 1 and not s.is_over()
    fifth = {
        "threshold": [c("The Journey"), c("The Diplomat")],
        "threshold_total": 11,
        "played": [c("The Lunatic"), c("The Forest"), c("The Mountain")],
        "total": 15,
        "rule": "lowest",
        "winners": [2],
        "prizes": [{"seat": 2, "card": c("The Diplomat")}],
    }
    for seat in range(3):
        obs = s.observation(seat)
        assert obs["tricks"] == [] and obs["hand_number"] == 2
        prev = obs["previous_hand"]
        assert prev["hand_number"] == 1 and prev["tricks"] == [fifth]
        assert prev["prizes"] == [[], [], [c("The Diplomat")]] and prev["points"] == [0, 0, 2]
        assert prev["tricks_won"] == [0, 0, 1] and prev["bids"] == [None, None, None]
        assert obs["hand_scores"] == [[0, 0, 2]]


@pytest.mark.parametrize("opts", [{}, {"bidding": True}])
def test_C6_every_finished_trick_visible_to_every_seat_right_after(opts: dict[str, Any]) -> None:
    """C6 over whole random games: after each trick ends, every seat's observation shows it."""
    for n in (2, 3, 4):
        for seed in range(3):
            s = SPEC.new_game(n, seed, opts)
            rng = DealRng(seed)
            while not s.is_over():
                for seat in tuple(s.to_move()):
                    hand, before = s.hand_no, len(s._tricks)
                    record = None
                    s.apply(seat, rng.randbelow(len(s.legal_actions(seat))))
                    if s.hand_no != hand or s.is_over() and len(s._tricks) == 5:
                        record = s._last_hand[2][-1]
                    elif len(s._tricks) > before:
                        record = s._tricks[-1]
                    if record is None:
                        continue
                    want = s._trick_json(record)
                    for k in range(n):
                        obs = s.observation(k)
                        shown = obs["tricks"] if s.hand_no == hand else obs["previous_hand"]["tricks"]
                        assert shown[-1] == want and len(shown) == (5 if s.hand_no != hand else len(s._tricks))
                    if s.is_over():
                        break


def test_R_D10_capped_standing_secured_points_only() -> None:
    """R-D10: completed hands plus what the current hand has secured, nothing that can still change."""
    s = fresh(3, seed=9)
    s._totals = [10, 10, 10]
    # Prizes: points per suit symbol; the 5-point bonus only with all six suits in.
    s._prizes = [
        [c("The Lunatic"), c("The Forest")],  # 4 symbols, 3 suits
        [c("The Mountain"), c("The Sailor"), c("The Battle")],  # all six suits: 6 + 5
        [],
    ]
    assert s.standing() == [14, 21, 10]
    b = fresh(4, seed=9, bidding=True)
    b._totals = [1, 1, 1, 1]
    b._bids = [0, 2, 2, 1]
    b._tricks_won = [0, 1, 3, 1]  # nil: nothing yet; 2 not made yet; 2 made +1 over; 1 made
    assert b.standing() == [1, 1, 1 + 4 * 2 + 1, 1 + 4]
    b.cap = b.decisions + 1
    b.apply(b.to_move()[0], 0)
    assert b.result().capped and list(b.result().scores) == b.standing()


def test_hands_and_target_have_upper_bounds_r_d7():
    """R-D7's options are bounded like every number: a million hands would only run to the
    decision cap (minutes of play), so the option says its bound instead."""
    import pytest as _pytest

    from games.core import OptionError
    from games.divers_weights import MAX_HANDS, MAX_TARGET, SPEC

    assert SPEC.resolve_options(2, {"hands": MAX_HANDS})["hands"] == MAX_HANDS
    for name, bound in (("hands", MAX_HANDS), ("target", MAX_TARGET)):
        with _pytest.raises(OptionError, match=f"must be at most {bound}"):
            SPEC.resolve_options(2, {name: bound + 1})
