"""Two-player Divers Weights: a model of the other seat, for searching bots.

The hidden card that decides a two-player trick is the other seat's. Searched by its own
statistics, the other seat learns one preference per card whatever else it holds, and
uniformly sampled deals ignore what its plays have shown. A sensible player weighs the
cards it holds against the threshold, so ``OtherSeat`` models it as the one-ply evaluator of
bots/divers_heuristic.py (expected prize now minus the card's worth in a later trick) with
noise, a quarter of its plays random (cheap insurance against players it does not fit),
and draws its possible hands weighted by how likely that model makes the cards it played
this hand. A seat that plays unlike the model (a random bot) loses the model its weight.
What it holds decides the trick: in an experiment, a search that saw its hand led the
heuristic by 0.4 places, one that searched its choice instead was level with it; a fixed
model (no loss of weight) cost 0.2 places against random_bot (docs/performance.md).

``games.determinize.SeatBelief`` uses it (``other_seat``): each sampled state gets a hand
for the other seat drawn by weight (``deal``), and at the trick being decided that seat's
choice comes from the model (``action``). Everything here reads only the seat's
observation; ``deal`` and ``action`` work on a sampled state, which is this module's to set.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any

from games import decktet
from games.core import SearchRng, State
from games.divers_weights import HAND_SIZE, PLAY, SYMBOLS

RANK = decktet.RANK

MODEL_SAMPLES = 100  # guesses behind each card value
MODEL_NOISE = 0.2  # sd of the noise on the values when the model chooses
MODEL_TAU = 0.15  # the same noise as a softmax temperature, for the hands' weights
MODEL_RANDOM = 0.25  # share of the other seat's plays taken as uniformly random
HAND_SAMPLES = 500  # weighted hands the other seat may hold
MODEL_PRIOR = 0.5  # belief that the other seat plays like the model, before it has shown a card

Steps = list[tuple[dict[int, float], int]]


def _worth(mask: int, symbols: int) -> float:
    """R-D6 points of a prize set, with the heuristic's pull towards six suits."""
    k = bin(mask).count("1")
    return symbols + (5 if k == 6 else 0.4 * k)


def gains(prizes: Sequence[int]) -> list[float]:
    """What each card would add to these prizes' worth."""
    mask = symbols = 0
    for p in prizes:
        mask |= decktet.SUITS[p]
        symbols += SYMBOLS[p]
    w0 = _worth(mask, symbols)
    return [_worth(mask | decktet.SUITS[p], symbols + SYMBOLS[p]) - w0 for p in range(decktet.BASIC_SIZE)]


def _outcomes(
    pool: list[int], threshold: list[int] | None, k: int, gain: list[float], rnd: SearchRng, samples: int
) -> tuple[list[list[float]], list[int]]:
    """Per rank v, over sampled tricks: the best prize value beside v's card for each trick v
    wins alone, and how many tricks v wins tied. ``threshold`` None: a later trick, its
    threshold drawn from the pool; else the current one, the other card guessed as the
    heuristic does (half the time the nearest to half the threshold in a random hand)."""
    wins: list[list[float]] = [[] for _ in range(11)]
    ties = [0] * 11
    for _ in range(samples):
        if threshold is None:
            thr, other = rnd.sample(pool, 2)
        else:
            thr = threshold[0]
            if rnd.random() < 0.5 and len(pool) >= k:
                aim = RANK[thr] / 2
                other = min(rnd.sample(pool, k), key=lambda c: abs(RANK[c] - aim))
            else:
                other = rnd.choice(pool)
        limit, r = RANK[thr], RANK[other]
        best = max(gain[thr], gain[other])
        for v in range(1, 11):
            total = v + r
            if total == limit or (v < r if total < limit else v > r):
                continue
            if v == r:
                ties[v] += 1
            else:
                wins[v].append(best)
    return wins, ties


def card_values(
    pool: list[int], threshold: list[int], k: int, prizes: Sequence[int], rnd: SearchRng, samples: int = MODEL_SAMPLES
) -> dict[int, float]:
    """card -> expected prize now minus worth in a later trick, for every card of ``pool``
    (what the seat has not seen, its own hand included: the values need not know it)."""
    gain = gains(prizes)
    now = _outcomes(pool, threshold, k, gain, rnd, samples)
    later = _outcomes(pool, None, k, gain, rnd, samples) if k > 1 else ([[]] * 11, [0] * 11)
    out = {}
    for c in pool:
        v, g = RANK[c], gain[c]
        s = (now[1][v] - later[1][v]) * g
        for b in now[0][v]:
            s += b if b > g else g
        for b in later[0][v]:
            s -= b if b > g else g
        out[c] = s / samples
    return out


def fit(steps: Steps, hand: list[int], plays: list[int]) -> float:
    """P(the plays shown | the hand now, the model): at each earlier trick it held its hand
    now plus the cards it played from then on."""
    p = 1.0
    for j, (vals, b) in enumerate(steps):
        held = hand + plays[j:]
        top = max(vals[c] for c in held)
        z = sum(math.exp((vals[c] - top) / MODEL_TAU) for c in held)
        p *= MODEL_RANDOM / len(held) + (1 - MODEL_RANDOM) * math.exp((vals[b] - top) / MODEL_TAU) / z
    return p


def hand_steps(tricks: list[dict[str, Any]], seat: int, hand_no: int, past: dict[Any, Any], rnd: SearchRng) -> Steps:
    """(card values when it chose, card it played) for each trick of a hand, values cached
    in ``past`` by (hand, trick)."""
    public: list[int] = []
    prizes: list[int] = []
    steps: Steps = []
    for j, t in enumerate(tricks):
        key = (hand_no, j)
        if key not in past:
            gone = set(public + t["threshold"])
            pool = [c for c in range(decktet.BASIC_SIZE) if c not in gone]
            past[key] = card_values(pool, t["threshold"], HAND_SIZE - j, prizes, rnd)
        steps.append((past[key], t["played"][seat]))
        public += t["threshold"] + t["played"]
        prizes += [p["card"] for p in t["prizes"] if p["seat"] == seat]
    return steps


def belief(observation: dict[str, Any], past: dict[Any, Any], rnd: SearchRng) -> float:
    """P(the other seat plays like the model), from the finished hands of this game."""
    prev = observation.get("previous_hand")
    other = 1 - observation["seat"]
    done = past.setdefault("hands_fitted", {})
    if prev and prev["hand_number"] not in done and len(prev["tricks"]) == HAND_SIZE:
        steps = hand_steps(prev["tricks"], other, prev["hand_number"], past, rnd)[:-1]  # the last: no choice
        plays = [b for _, b in steps] + [prev["tricks"][-1]["played"][other]]
        log_ratio = math.log(fit(steps, [], plays))
        for j in range(len(steps)):
            log_ratio += math.log(HAND_SIZE - j)
        done[prev["hand_number"]] = log_ratio
    odds = MODEL_PRIOR / (1.0 - MODEL_PRIOR) * math.exp(max(-50.0, min(50.0, sum(done.values()))))
    return odds / (1.0 + odds)


class OtherSeat:
    """The other seat of a two-player hand, at the trick being decided."""

    def __init__(
        self, observation: dict[str, Any], unseen: Sequence[int], memory: dict[str, Any], rnd: SearchRng
    ) -> None:
        me = observation["seat"]
        self.seat = other = 1 - me
        self.trick = (observation["hand_number"], observation["trick_number"])
        hand = observation["hand"]
        self.k = k = len(hand)
        unseen = list(unseen)
        self.values = card_values(unseen + hand, observation["threshold"], k, observation["prizes"][other], rnd)
        # its hand's weights, from its plays in this hand's earlier tricks
        past = memory.setdefault("dw_past_values", {})
        steps = hand_steps(observation["tricks"], other, observation["hand_number"], past, rnd)
        # Two kinds of player: the model's, or one playing at random. The belief in the first
        # comes from the hands already finished (their every trick is known) and from this
        # hand's plays, which weigh each possible hand too.
        b = belief(observation, past, rnd)
        self.hands: list[list[int]] | None = None
        self.cum: list[float] = []
        at_random = 1.0 - b
        if steps:
            plays = [c for _, c in steps]
            uniform = 1.0
            for j in range(len(steps)):
                uniform /= k + len(steps) - j
            self.hands, total = [], 0.0
            for _ in range(HAND_SAMPLES):
                h = rnd.sample(unseen, k)
                total += b * fit(steps, h, plays) + (1.0 - b) * uniform
                self.hands.append(h)
                self.cum.append(total)
            at_random = (1.0 - b) * uniform * HAND_SAMPLES / total
        self.random_share = MODEL_RANDOM + (1.0 - MODEL_RANDOM) * at_random

    def _pick(self, cards: Sequence[int], rnd: SearchRng) -> int:
        if rnd.random() < self.random_share:
            return rnd.randrange(len(cards))
        vals = self.values
        return max(range(len(cards)), key=lambda i: vals[cards[i]] + rnd.gauss(0.0, MODEL_NOISE))

    def deal(self, state: State, rnd: SearchRng) -> None:
        """Give the sampled state a hand drawn by weight, and a choice the model would make if
        the seat has already chosen unseen."""
        st: Any = state
        s = self.seat
        hidden = st._played[s] is not None
        if self.hands:
            held = self.hands[min(bisect.bisect_left(self.cum, rnd.random() * self.cum[-1]), len(self.hands) - 1)]
            rest = st._deck + st._hands[s] + ([st._played[s]] if hidden else [])
            rest = [c for c in rest if c not in held]
            rnd.shuffle(rest)
            st._deck = rest
        else:
            held = st._hands[s] + ([st._played[s]] if hidden else [])
        held = list(held)
        if hidden:
            st._played[s] = held.pop(self._pick(held, rnd))
        st._hands[s] = sorted(held)
        st._move_cache.clear()

    def action(self, state: State, seat: int, rnd: SearchRng) -> int | None:
        """Its card at the trick being decided, or the prize the heuristic would take; None
        for any other seat or trick (the search decides those)."""
        st: Any = state
        if seat != self.seat or (st.hand_no, st.trick_no) != self.trick:
            return None
        moves = state.moves(seat)
        if st._phase == PLAY:
            return self._pick(moves, rnd)
        g = gains(st._prizes[seat])
        return max(range(len(moves)), key=lambda i: (g[moves[i]], -i))


def other_seat(
    observation: dict[str, Any], unseen: Sequence[int], memory: dict[str, Any], rnd: SearchRng
) -> OtherSeat | None:
    """The model for two-player Divers Weights without bidding, at a card to play; else None."""
    if observation["players"] != 2 or observation["bidding"] or observation["phase"] != "play":
        return None
    return OtherSeat(observation, unseen, memory, rnd)
