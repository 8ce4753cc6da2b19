"""Divers Weights: a silent-auction trick game for 2 to 4 players.

Rulings R-D1..R-D9 (shared/RULINGS.md). One hand: shuffle the 36 basic cards, deal
5 to each seat (R-D2); with bidding, one bid per seat starting left of the dealer
(R-D8); then 5 tricks. Each trick turns n-1 threshold cards from the deck
automatically, asks every seat at once for a card (a simultaneous decision, R-D3),
reveals and resolves it (R-D4); a lone winner then chooses a prize (R-D5, a second
decision) unless bidding is on.

Choices made where RULINGS is silent (documented so bots and tests agree):

* First dealer: the first draw of the game's ``DealRng(seed)`` (C2), before the
  first shuffle; the deal then passes left after every hand (R-D7).
* With bidding, the bids come before the first trick's threshold cards are turned
  ("before the first trick"), so bidders see only their own hand.
* With bidding, every winner's automatic prize is the card that winner played (a
  lone winner is treated like tied winners); prizes only count tricks there.
* Options ``hands`` and ``target`` are exclusive: the ruling says ``target`` ends the
  game "instead", so setting both is an OptionError.
* Observation history (R-D9) covers the tricks of the current hand, plus the whole
  latest finished hand as ``previous_hand`` (C6: its fifth trick was never shown
  before the next deal); older hands appear as their per-hand scores.
* Capped standing (C4, R-D10): totals of completed hands plus the points the current hand
  has already secured: R-D6 points of the prizes taken so far (bonus only once all six
  suits are in), or with bidding 4 x bid + overtricks once a bid >= 1 is made (a nil
  bid scores only when its hand ends, as it could still fail).

State layout (plain lists for speed): ``_hands[s]`` sorted pids (pid order is rank
order for the basic deck); ``_deck`` draws from its end; ``_threshold``/``_played``
the current trick (``_played[s]`` is None until seat s chooses); ``_prizes[s]`` and
``_discard`` for this hand; ``_tricks`` records of this hand's finished tricks.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import Any

from games import decktet
from games.core import GameSpec, Option, OptionError, Result, SearchRng, State, cap_option, places_from_keys
from games.rng import DealRng

RANK = decktet.RANK
SUITS = decktet.SUITS
HAND_SIZE = 5
TRICKS = 5
MAX_BID = 5
NIL_POINTS = 20
BONUS = 5
DEFAULT_CAP = 100_000
# Suit symbols per card (R-D6): Aces and Crowns 1, numbered cards 2.
SYMBOLS: tuple[int, ...] = tuple(bin(SUITS[p]).count("1") for p in range(decktet.BASIC_SIZE))
_NAMES: tuple[str, ...] = tuple(decktet.card_name(p) for p in range(decktet.BASIC_SIZE))

BID, PLAY, PRIZE, OVER = 0, 1, 2, 3
PHASE_NAMES = ("bid", "play", "prize", "over")
_BID_MOVES = tuple(range(MAX_BID + 1))


def prize_points(cards: list[int] | tuple[int, ...]) -> int:
    """R-D6: one point per suit symbol on the prize cards, +5 if all six suits appear."""
    pts = 0
    seen = 0
    for p in cards:
        pts += SYMBOLS[p]
        seen |= SUITS[p]
    return pts + BONUS if seen == decktet.ALL_SUITS else pts


def bid_points(bid: int, tricks: int) -> int:
    """R-D8: made bid (>= 1) 4 x bid + overtricks; nil with no trick 20; else 0."""
    if bid == 0:
        return NIL_POINTS if tricks == 0 else 0
    return 4 * bid + (tricks - bid) if tricks >= bid else 0


class DiversWeightsState(State):
    """A game of Divers Weights (R-D1..R-D9)."""

    def __init__(self, players: int, seed: int, options: dict[str, Any]) -> None:
        super().__init__(players, seed, options)
        n = players
        self.bidding: bool = options["bidding"]
        self.target: int | None = options["target"]
        # R-D7: default one hand per player; with a target the hand count is open.
        self.num_hands: int | None = None if self.target is not None else (options["hands"] or n)
        self._seats = tuple(range(n))
        self._rng = DealRng(seed)
        self._totals = [0] * n
        self._hand_scores: list[tuple[int, ...]] = []
        self._hands: list[list[int]] = [[] for _ in range(n)]
        self._deck: list[int] = []
        self._threshold: list[int] = []
        self._played: list[int | None] = [None] * n
        self._prizes: list[list[int]] = [[] for _ in range(n)]
        self._discard: list[int] = []
        self._tricks: list[tuple[Any, ...]] = []
        self._tricks_won = [0] * n
        self._bids: list[int | None] = [None] * n
        self._winners: tuple[int, ...] = ()
        self._total = 0
        self._rule = "none"
        self._phase = PLAY
        self._last_hand: tuple[Any, ...] | None = None
        self.hand_no = 0
        self.trick_no = 0
        # C2: the first dealer is drawn from the seed, before the first shuffle.
        self.dealer = self._rng.randbelow(n)
        self._start_hand()

    # ---- flow -------------------------------------------------------------------

    def _start_hand(self) -> None:
        """R-D2: gather all 36 cards, shuffle, deal 5 each from the dealer's left."""
        n = self.players
        deck = list(range(decktet.BASIC_SIZE))
        self._rng.shuffle(deck)
        hands: list[list[int]] = [[] for _ in range(n)]
        for _ in range(HAND_SIZE):
            for k in range(1, n + 1):
                hands[(self.dealer + k) % n].append(deck.pop())
        for h in hands:
            h.sort()
        self._hands = hands
        self._deck = deck
        self._threshold = []
        self._played = [None] * n
        self._prizes = [[] for _ in range(n)]
        self._discard = []
        self._tricks = []
        self._tricks_won = [0] * n
        self._bids = [None] * n
        self._winners = ()
        self.hand_no += 1
        self.trick_no = 0
        if self.bidding:
            self._phase = BID
            self._to_move = ((self.dealer + 1) % n,)
        else:
            self._start_trick()

    def _start_trick(self) -> None:
        """R-D2: turn n-1 threshold cards; R-D3: every seat chooses at once."""
        deck = self._deck
        self._threshold = [deck.pop() for _ in range(self.players - 1)]
        self._played = [None] * self.players
        self.trick_no += 1
        self._phase = PLAY
        self._to_move = self._seats

    def _resolve(self) -> None:
        """R-D4/R-D5 after the reveal."""
        played: list[int] = self._played  # type: ignore[assignment]
        ranks = [RANK[p] for p in played]
        total = sum(ranks)
        thr = 0
        for p in self._threshold:
            thr += RANK[p]
        if total < thr:
            win, self._rule = max(ranks), "highest"
        elif total > thr:
            win, self._rule = min(ranks), "lowest"
        else:
            win, self._rule = -1, "none"
        self._total = total
        winners = tuple(s for s in self._seats if ranks[s] == win)
        self._winners = winners
        if len(winners) == 1 and not self.bidding:
            self._phase = PRIZE
            self._to_move = winners
            return
        # Tied winners (or any winner when bidding) take their own card.
        self._finish_trick(tuple((s, played[s]) for s in winners))

    def _finish_trick(self, prizes: tuple[tuple[int, int], ...]) -> None:
        """Hand out prizes, discard the rest, record the trick, go on."""
        taken = set()
        for s, p in prizes:
            self._prizes[s].append(p)
            taken.add(p)
        for s in self._winners:
            self._tricks_won[s] += 1
        discard = self._discard
        for p in self._threshold:
            if p not in taken:
                discard.append(p)
        for q in self._played:
            if q not in taken:
                discard.append(q)  # type: ignore[arg-type]
        self._tricks.append(
            (tuple(self._threshold), tuple(self._played), self._total, self._winners, prizes, self._rule)
        )
        self._threshold = []
        self._played = [None] * self.players
        self._winners = ()
        if self.trick_no >= TRICKS:
            self._end_hand()
        else:
            self._start_trick()

    def _end_hand(self) -> None:
        """R-D6/R-D8 scoring, R-D7 end of game or next dealer."""
        pts = tuple(self._hand_points(s) for s in self._seats)
        for s in self._seats:
            self._totals[s] += pts[s]
        self._hand_scores.append(pts)
        # C6: the next hand resets the trick list; its fifth trick stays visible here.
        self._last_hand = (
            self.hand_no,
            self.dealer,
            tuple(self._tricks),
            tuple(tuple(pr) for pr in self._prizes),
            tuple(self._tricks_won),
            tuple(self._bids),
            pts,
        )
        if self.target is not None:
            done = max(self._totals) >= self.target
        else:
            done = self.hand_no >= self.num_hands  # type: ignore[operator]
        if done:
            self._phase = OVER
            self._over = True
            self._to_move = ()
        else:
            self.dealer = (self.dealer + 1) % self.players
            self._start_hand()

    def _hand_points(self, seat: int) -> int:
        if self.bidding:
            bid = self._bids[seat]
            return 0 if bid is None else bid_points(bid, self._tricks_won[seat])
        return prize_points(self._prizes[seat])

    def secured_points(self, seat: int) -> int:
        """Points the current hand has already secured for ``seat`` (capped standing)."""
        if self._phase == OVER:
            return 0
        if self.bidding:
            bid = self._bids[seat]
            if not bid or self._tricks_won[seat] < bid:
                return 0  # nil bids and unmade bids can still change
            return bid_points(bid, self._tricks_won[seat])
        return prize_points(self._prizes[seat])

    def standing(self) -> list[int]:
        """Totals of completed hands plus the current hand's secured points (C4)."""
        return [self._totals[s] + self.secured_points(s) for s in self._seats]

    def standing_keys(self) -> list[int]:
        """The standing's order keys (lower is better): minus the points."""
        return [-x for x in self.standing()]

    # ---- what a search needs (games.core) ----------------------------------------

    search_opponents = True  # simultaneous tricks reward guessing what the others will play

    def rollout_action(self, seat: int, rng: SearchRng) -> int:
        """A card near the threshold's mean rank (30% random), the prize worth most to this
        seat (most symbols and new suits), a low bid."""
        moves = self.moves(seat)
        if len(moves) == 1:
            return 0
        phase = self._phase
        if phase == PLAY:
            if rng.random() < 0.3:
                return rng.randrange(len(moves))
            aim = sum(RANK[p] for p in self._threshold) / self.players
            return min(range(len(moves)), key=lambda i: abs(RANK[moves[i]] - aim))
        if phase == PRIZE:
            mine = 0
            for p in self._prizes[seat]:
                mine |= SUITS[p]
            return max(
                range(len(moves)),
                key=lambda i: (SYMBOLS[moves[i]] + bin(SUITS[moves[i]] & ~mine).count("1"), rng.random()),
            )
        return rng.choice((0, 1, 1, 2)) if len(moves) > 2 else 0  # a bid

    def action_keys(self, seat: int) -> list[Hashable]:
        """(phase, move); in a two-player trick without bidding a card also carries the
        threshold total (public), so that a search tree chooses a later trick's card for
        the threshold turned instead of learning one card per trick whatever was turned."""
        moves = self.moves(seat)
        ph = self._phase
        if ph == PLAY and self.players == 2 and not self.bidding:
            total = sum(RANK[p] for p in self._threshold)
            return [(PLAY, m, total) for m in moves]
        return [(ph, m) for m in moves]

    def horizon(self) -> int:
        """The hand: its prizes are what a decision changes."""
        return self.hand_no

    def points(self) -> tuple[float, ...]:
        return tuple(self.standing())

    def returns(self, seat: int, start: Sequence[float] | None) -> float:
        """Its place by the points (weighing 0.7 at the end of the game, 0.3 before: the place
        decides only at the end) and its gain since ``start`` against the best other gain."""
        n = self.players
        over = self._over
        scores: Sequence[float] = self.result().scores if over else self.standing()
        place = places_from_keys([-x for x in scores])[seat]
        base = scores if start is None else start
        gain = [scores[s] - base[s] for s in range(n)]
        margin = gain[seat] - max(gain[s] for s in range(n) if s != seat)
        share = 0.7 if over else 0.3
        return share * (1.0 - place / (n - 1)) + (1 - share) * max(0.0, min(1.0, 0.5 + margin / 20.0))

    # ---- decisions --------------------------------------------------------------

    def _legal_moves(self, seat: int) -> list[int]:
        ph = self._phase
        if ph == PLAY:
            return list(self._hands[seat])
        if ph == BID:
            return list(_BID_MOVES)
        if ph == PRIZE:
            return self._threshold + self._played  # type: ignore[operator]
        return []

    def _move_text(self, seat: int, move: int) -> str:
        ph = self._phase
        if ph == BID:
            return f"bid {move} trick{'s' if move != 1 else ''}"
        if ph == PLAY:
            return f"play {_NAMES[move]}"
        return f"take {_NAMES[move]} as prize"

    def _move_fields(self, seat: int, move: int) -> dict[str, Any]:
        ph = self._phase
        if ph == BID:
            return {"bid": move}
        if ph == PLAY:
            return {"card": move}
        if move in self._threshold:
            return {"card": move, "from": "threshold"}
        return {"card": move, "from": "played", "seat": self._played.index(move)}

    def _apply(self, seat: int, move: int) -> None:
        ph = self._phase
        if ph == PLAY:
            self._hands[seat].remove(move)
            self._played[seat] = move
            tm = self._to_move
            if len(tm) == 1:
                self._to_move = ()
                self._resolve()
            else:
                self._to_move = tuple(s for s in tm if s != seat)
        elif ph == PRIZE:
            self._finish_trick(((seat, move),))
        else:  # BID
            self._bids[seat] = move
            nxt = (seat + 1) % self.players
            if nxt == (self.dealer + 1) % self.players:
                self._start_trick()
            else:
                self._to_move = (nxt,)

    # ---- observation ------------------------------------------------------------

    @staticmethod
    def _trick_json(rec: tuple[Any, ...]) -> dict[str, Any]:
        thr, played, total, winners, prizes, rule = rec
        t = 0
        for p in thr:
            t += RANK[p]
        return {
            "threshold": list(thr),
            "threshold_total": t,
            "played": list(played),
            "total": total,
            "rule": rule,
            "winners": list(winners),
            "prizes": [{"seat": s, "card": p} for s, p in prizes],
        }

    def _observe(self, seat: int) -> dict[str, Any]:
        ph = self._phase
        played = self._played
        thr_total = 0
        for p in self._threshold:
            thr_total += RANK[p]
        if ph == PRIZE:
            shown = list(played)
            current = {"total": self._total, "rule": self._rule, "winners": list(self._winners)}
        else:
            # R-D3/R-D9: during the simultaneous decision only one's own choice shows.
            shown = [None] * self.players
            shown[seat] = played[seat]
            current = None
        return {
            "phase": PHASE_NAMES[ph],
            "bidding": self.bidding,
            "dealer": self.dealer,
            "hand_number": self.hand_no,
            "hands": self.num_hands,
            "target": self.target,
            "trick_number": self.trick_no,
            "hand": list(self._hands[seat]),
            "hand_sizes": [len(h) for h in self._hands],
            "deck_count": len(self._deck),
            "threshold": list(self._threshold),
            "threshold_total": thr_total,
            "chosen": [p is not None for p in played],
            "played": shown,
            "reveal": current,
            "tricks": [self._trick_json(r) for r in self._tricks],
            "prizes": [list(pr) for pr in self._prizes],
            "tricks_won": list(self._tricks_won),
            "bids": list(self._bids),
            "discarded": list(self._discard),
            "hand_points": [self.secured_points(s) for s in self._seats],
            "scores": list(self._totals),
            "hand_scores": [list(h) for h in self._hand_scores],
            "previous_hand": self._previous_hand_json(),
        }

    def _previous_hand_json(self) -> dict[str, Any] | None:
        """C6: every trick, prize and score of the latest finished hand, shown during the next
        hand's bids and first trick (every seat decides there) and at the end; else None."""
        if self._last_hand is None or (self._tricks and not self._over):
            return None
        hand_no, dealer, tricks, prizes, won, bids, pts = self._last_hand
        return {
            "hand_number": hand_no,
            "dealer": dealer,
            "tricks": [self._trick_json(r) for r in tricks],
            "prizes": [list(pr) for pr in prizes],
            "tricks_won": list(won),
            "bids": list(bids),
            "points": list(pts),
        }

    def _observe_text(self, seat: int) -> str:
        def names(cards: Any) -> str:
            return ", ".join(_NAMES[p] for p in cards) or "-"

        hands = self.num_hands if self.num_hands is not None else f"to {self.target}"
        lines = [
            f"Divers Weights seat {seat}: hand {self.hand_no} ({hands}), trick {self.trick_no}/{TRICKS}, "
            f"dealer {self.dealer}, phase {PHASE_NAMES[self._phase]}",
            f"Your hand: {names(self._hands[seat])}",
        ]
        if self._threshold:
            total = sum(RANK[p] for p in self._threshold)
            lines.append(f"Threshold: {names(self._threshold)} = {total}")
        if self._phase == PRIZE:
            lines.append("Played: " + "; ".join(f"{s}: {_NAMES[p]}" for s, p in enumerate(self._played)))  # type: ignore[index]
            lines.append(f"Total {self._total}, {self._rule} wins: seats {list(self._winners)}")
        elif self._played[seat] is not None:
            lines.append(f"Your choice: {_NAMES[self._played[seat]]}")  # type: ignore[index]
        if self.bidding:
            lines.append("Bids: " + " ".join(f"{s}:{b if b is not None else '-'}" for s, b in enumerate(self._bids)))
        lines.append("Prizes: " + "; ".join(f"{s}: {names(pr)}" for s, pr in enumerate(self._prizes)))
        lines.append("Scores: " + " ".join(f"{s}:{t}" for s, t in enumerate(self._totals)))
        return "\n".join(lines)

    # ---- end, conservation, hidden info -------------------------------------------

    def _result(self) -> Result:
        scores = self.standing() if self.capped else list(self._totals)
        return Result(places_from_keys([-x for x in scores]), tuple(scores), self.capped)

    def clone(self) -> DiversWeightsState:
        """A fast independent copy (search bots clone at every simulation)."""
        return self._fast_clone(
            ("_hands", "_prizes"),  # type: ignore[return-value]
            (
                "_totals",
                "_hand_scores",
                "_deck",
                "_threshold",
                "_played",
                "_discard",
                "_tricks",
                "_tricks_won",
                "_bids",
            ),
        )

    def all_cards(self) -> list[int]:
        out = list(self._deck) + self._threshold + self._discard
        out += [p for p in self._played if p is not None]
        for h in self._hands:
            out += h
        for pr in self._prizes:
            out += pr
        return out

    def with_hidden_shuffled(self, seat: int, rng: DealRng) -> DiversWeightsState:
        """Permute the deck, the other hands and the others' unrevealed choices."""
        c = self.clone()
        others = [s for s in self._seats if s != seat]
        hidden_choice = [s for s in others if c._phase == PLAY and c._played[s] is not None]
        pool = list(c._deck)
        for s in others:
            pool += c._hands[s]
        pool += [c._played[s] for s in hidden_choice]  # type: ignore[misc]
        rng.shuffle(pool)
        i = len(c._deck)
        c._deck = pool[:i]
        for s in others:
            k = len(c._hands[s])
            c._hands[s] = sorted(pool[i : i + k])
            i += k
        for s in hidden_choice:
            c._played[s] = pool[i]
            i += 1
        c._move_cache.clear()
        return c


# Bounds so that a game stays a game: 1,000 hands are at most 29,000 decisions, within the
# decision cap; a target beyond any reachable total would only run to the cap.
MAX_HANDS = 1000
MAX_TARGET = 100_000


def _check_options(players: int, options: dict[str, Any]) -> None:
    if options["hands"] is not None and options["target"] is not None:
        raise OptionError(
            "divers-weights",
            "target",
            "set either 'hands' or 'target', not both (R-D7: target replaces the hand count); remove one of them",
        )


SPEC = GameSpec(
    id="divers-weights",
    title="Divers Weights",
    rules_version="2",
    min_players=2,
    max_players=4,
    simultaneous=True,
    options=(
        Option(
            "hands",
            None,
            "Number of hands (R-D7); null = one hand per player, so every seat deals once. Not with 'target'.",
            min=1,
            max=MAX_HANDS,
            nullable=True,
        ),
        Option(
            "target",
            None,
            "If set, the game ends after the first hand in which someone's total "
            "reaches this score (R-D7), instead of after 'hands' hands.",
            min=1,
            max=MAX_TARGET,
            nullable=True,
        ),
        Option(
            "bidding",
            False,
            "Bidding variant (R-D8): bid 0-5 tricks before each hand's first trick; prizes are taken automatically.",
            kind=bool,
        ),
        replace(
            cap_option(DEFAULT_CAP),
            doc="Hard cap on decisions (ruling C4). Default 100000, far above a normal game "
            "(one hand is at most 4 bids + 5 tricks x 5 decisions = 29; 4 hands = 116). A capped "
            "game is placed by total score plus the current hand's secured points, highest first.",
        ),
    ),
    state_class=DiversWeightsState,
    check_options=_check_options,
)
DiversWeightsState.spec = SPEC
