"""Tightwad: a Decktet trick-taking game where nobody wants the last trick.

Rulings R-T1..R-T8 (shared/RULINGS.md). One decision per card played; dealing,
trick resolution, penalties and reshuffles happen automatically inside ``_apply``.

State layout (plain lists for speed):
* ``_hands[s]``: seat s's cards, kept sorted by (face, copy), which is also
  ascending rank because the Decktet table lists faces in rank order.
* current trick: ``_tseats``/``_tcards`` in play order, ``_ctl`` the index of
  the controlling card (with its rank/suits cached in ``_crank``/``_csuits``).
* ``_done``: this round's finished tricks as (seats, cards, control index).
* ``_aside``: the cards set aside this round (hidden; only their count is public).
* ``_pen[s]`` / ``_points[s]``: public penalty cards and points.
* ``_last_end``: the latest finished round's last trick and penalty (C6: it is
  shown to every seat in the next round, which resets ``_done``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from games import decktet
from games.core import GameSpec, Result, SearchRng, State, cap_option, places_from_keys
from games.rng import DealRng

RANK = decktet.RANK
SUITS = decktet.SUITS
_DS = decktet.DECK_SIZE
ACE = decktet.ACE
HAND_MAX = 7
LOSING_POINTS = 10
DEFAULT_CAP = 100_000


def _sort_key(pid: int) -> int:
    """(face, copy): ascending rank, copies of a face adjacent, lowest pid first."""
    return (pid % _DS) * decktet.MAX_DECKS + pid // _DS


def decks_for(players: int) -> int:
    """R-T1: two basic decks shuffled together above five players."""
    return 2 if players > 5 else 1


class TightwadState(State):
    """A game of Tightwad (R-T1..R-T8)."""

    def __init__(self, players: int, seed: int, options: dict[str, Any]) -> None:
        super().__init__(players, seed, options)
        n = players
        self.ndecks = decks_for(n)
        self._rng = DealRng(seed)
        self._seat_t = tuple((s,) for s in range(n))
        self._hands: list[list[int]] = [[] for _ in range(n)]
        self._pen: list[list[int]] = [[] for _ in range(n)]
        self._points = [0] * n
        self._tseats: list[int] = []
        self._tcards: list[int] = []
        self._ctl = -1
        self._crank = 0
        self._csuits = 0
        self._done: list[tuple[tuple[int, ...], tuple[int, ...], int]] = []
        self._aside: list[int] = []
        self._round = 0
        self._hand_size = 0
        self._loser = -1
        self._last_end: tuple[int, tuple[int, ...], tuple[int, ...], int, int] | None = None
        # R-T2: the first dealer comes from the seed, before the first shuffle.
        self._dealer = self._rng.randbelow(n)
        self._start_round(decktet.make_deck(self.ndecks))

    # ---- dealing ----------------------------------------------------------------

    def _start_round(self, pool: list[int]) -> None:
        """Shuffle ``pool`` and deal (R-T6); ends the game if no card can be dealt."""
        n = self.players
        k = min(HAND_MAX, len(pool) // n)
        self._round += 1
        self._done = []
        self._tseats = []
        self._tcards = []
        self._ctl = -1
        if k == 0:
            # R-T6: nothing to deal; the game ends and places follow R-T7.
            self._aside = pool
            self._hand_size = 0
            self._over = True
            self._to_move = ()
            return
        pool.sort()  # canonical order, so the deal depends on the seed only
        self._rng.shuffle(pool)
        first = (self._dealer + 1) % n
        # One card at a time, clockwise from the dealer's left.
        for s in range(n):
            seat = (first + s) % n
            self._hands[seat] = sorted(pool[s : n * k : n], key=_sort_key)
        self._aside = pool[n * k :]
        self._hand_size = k
        self._to_move = self._seat_t[first]

    # ---- moves ------------------------------------------------------------------

    def _decks(self) -> int:
        return self.ndecks

    def _legal_moves(self, seat: int) -> list[int]:
        hand = self._hands[seat]
        if self._tcards:
            # R-T3: equal or higher than the controlling card, or one's lowest rank.
            crank = self._crank
            low = RANK[hand[0]]
            cand = [p for p in hand if RANK[p] >= crank or RANK[p] == low]
        else:
            cand = hand[:]
        if self.ndecks > 1 and len(cand) > 1:
            # Two copies of a face are the same play: offer the lowest pid only.
            out = [cand[0]]
            last = cand[0] % _DS
            for p in cand:
                f = p % _DS
                if f != last:
                    out.append(p)
                    last = f
            return out
        return cand

    def _move_text(self, seat: int, move: int) -> str:
        return f"play {self.card_name(move)}"

    def _move_fields(self, seat: int, move: int) -> dict[str, Any]:
        return {"card": move}

    def _apply(self, seat: int, move: int) -> None:
        self._hands[seat].remove(move)
        r = RANK[move]
        s = SUITS[move]
        tcards = self._tcards
        if not tcards:
            self._ctl = 0
            self._crank = r
            self._csuits = s
        elif s & self._csuits and (r > self._crank or r == ACE):
            # R-T4: higher and sharing a suit, or an Ace of a suit the controller bears.
            self._ctl = len(tcards)
            self._crank = r
            self._csuits = s
        tcards.append(move)
        self._tseats.append(seat)
        n = self.players
        if len(tcards) < n:
            self._to_move = self._seat_t[(seat + 1) % n]
            return
        self._finish_trick()

    def _finish_trick(self) -> None:
        ctl = self._ctl
        winner = self._tseats[ctl]
        self._done.append((tuple(self._tseats), tuple(self._tcards), ctl))
        self._tseats = []
        self._tcards = []
        self._ctl = -1
        if self._hands[winner]:
            self._to_move = self._seat_t[winner]  # R-T2: the winner leads
            return
        # R-T5: last trick of the round; its controlling card is the penalty.
        penalty = self._done[-1][1][ctl]
        # C6: the round's last trick and its penalty stay visible to every seat.
        self._last_end = (self._round, self._done[-1][0], self._done[-1][1], ctl, penalty)
        self._pen[winner].append(penalty)
        self._points[winner] += RANK[penalty]
        if self._points[winner] >= LOSING_POINTS:
            self._loser = winner  # R-T7
            self._over = True
            self._to_move = ()
            return
        pool = self._aside
        for _, cards, _ in self._done:
            pool.extend(cards)
        pool.remove(penalty)
        self._dealer = (self._dealer + 1) % self.players  # R-T6: the deal passes left
        self._start_round(pool)

    # ---- observation ------------------------------------------------------------

    @staticmethod
    def _trick_json(seats: Any, cards: Any, ctl: int) -> dict[str, Any]:
        return {
            "leader": seats[0] if seats else None,
            "plays": [{"seat": s, "card": c} for s, c in zip(seats, cards)],
            "control": ctl if cards else None,
            "controller": seats[ctl] if cards else None,
        }

    def _observe(self, seat: int) -> dict[str, Any]:
        trick = self._trick_json(self._tseats, self._tcards, self._ctl)
        if not self._tcards:
            trick["leader"] = self._to_move[0] if self._to_move else None
        done = []
        for seats, cards, ctl in self._done:
            t = self._trick_json(seats, cards, ctl)
            t["winner"] = seats[ctl]
            done.append(t)
        return {
            "phase": "over" if self._over else "play",
            "decks": self.ndecks,
            "round": self._round,
            "dealer": self._dealer,
            "hand": self._hands[seat][:],
            "hand_sizes": [len(h) for h in self._hands],
            "tricks_in_round": self._hand_size,
            "trick_number": len(self._done) + (0 if self._over else 1),
            "trick": trick,
            "tricks": done,
            "penalty_cards": [p[:] for p in self._pen],
            "penalty_points": self._points[:],
            "set_aside": len(self._aside),
            "last_round_end": self._round_end_json(),
        }

    def _round_end_json(self) -> dict[str, Any] | None:
        """C6: how the latest finished round ended (its last trick and penalty), shown until
        the new round's first trick is over (every seat has then seen it) and at the end."""
        if self._last_end is None or (self._done and not self._over):
            return None
        rnd, seats, cards, ctl, penalty = self._last_end
        trick = self._trick_json(seats, cards, ctl)
        trick["winner"] = seats[ctl]
        return {
            "round": rnd,
            "last_trick": trick,
            "penalty": {"seat": seats[ctl], "card": penalty, "points": RANK[penalty]},
        }

    def _observe_text(self, seat: int) -> str:
        name = self.card_name
        hand = ", ".join(name(p) for p in self._hands[seat]) or "-"
        if self._tcards:
            plays = "; ".join(
                f"{s}:{name(c)}{'*' if i == self._ctl else ''}"
                for i, (s, c) in enumerate(zip(self._tseats, self._tcards))
            )
        else:
            plays = "(empty)"
        pens = " ".join(
            f"{s}:{self._points[s]}[{', '.join(name(p) for p in self._pen[s])}]" for s in range(self.players)
        )
        return "\n".join(
            (
                f"Tightwad round {self._round} (dealer {self._dealer}), trick "
                f"{len(self._done) + 1}/{self._hand_size}, seat {seat}, to move {list(self._to_move)}",
                f"hand: {hand}",
                f"trick (* controls): {plays}",
                f"penalties: {pens}",
            )
        )

    # ---- what a search needs (games.core) ----------------------------------------

    def rollout_action(self, seat: int, rng: SearchRng) -> int:
        """The highest legal card (shed danger while it is still cheap), 10% random."""
        moves = self.moves(seat)
        if len(moves) == 1 or rng.random() < 0.1:
            return rng.randrange(len(moves))
        return len(moves) - 1

    def horizon(self) -> int:
        """The round: one round's penalty is what a decision changes."""
        return self._round

    def points(self) -> tuple[float, ...]:
        """Penalty points (fewer is better)."""
        return tuple(self._points)

    def returns(self, seat: int, start: Sequence[float] | None) -> float:
        """At the end of the game its place; before, the penalty points it took since
        ``start`` against the others' mean (one round's penalty is at most 10)."""
        if self._over or start is None:
            return super().returns(seat, start)
        pts, n = self._points, self.players
        mine = pts[seat] - start[seat]
        others = sum(pts[s] - start[s] for s in range(n) if s != seat) / (n - 1)
        return max(0.0, min(1.0, 0.5 + (others - mine) / 10.0))

    # ---- result and test hooks --------------------------------------------------

    def standing_keys(self) -> list[tuple[int, int]]:
        """R-T7 order keys (lower is better): the loser alone last, then points."""
        return [(1 if s == self._loser else 0, self._points[s]) for s in range(self.players)]

    def _result(self) -> Result:
        return Result(
            places=places_from_keys(self.standing_keys()),
            scores=tuple(float(-p) for p in self._points),
            capped=self.capped,
        )

    def clone(self) -> TightwadState:
        """A fast independent copy (search bots clone at every simulation)."""
        return self._fast_clone(
            ("_hands", "_pen"),  # type: ignore[return-value]
            ("_points", "_tseats", "_tcards", "_done", "_aside"),
        )

    def all_cards(self) -> list[int]:
        out: list[int] = []
        for h in self._hands:
            out.extend(h)
        out.extend(self._tcards)
        for _, cards, _ in self._done:
            out.extend(cards)
        if self._loser >= 0:
            # The game's last trick stays in the history, but its penalty card has moved.
            out.remove(self._pen[self._loser][-1])
        out.extend(self._aside)
        for p in self._pen:
            out.extend(p)
        return out

    def with_hidden_shuffled(self, seat: int, rng: DealRng) -> TightwadState:
        """Other seats' hands and the set-aside cards permuted among themselves."""
        c = self.clone()
        assert isinstance(c, TightwadState)
        others = [s for s in range(self.players) if s != seat]
        pool = [p for s in others for p in c._hands[s]] + c._aside
        rng.shuffle(pool)
        i = 0
        for s in others:
            k = len(c._hands[s])
            c._hands[s] = sorted(pool[i : i + k], key=_sort_key)
            i += k
        c._aside = pool[i:]
        c._move_cache.clear()
        return c


SPEC = GameSpec(
    id="tightwad",
    title="Tightwad",
    rules_version="2",
    min_players=3,
    max_players=10,
    simultaneous=False,
    options=(
        replace(
            cap_option(DEFAULT_CAP),
            doc="Hard cap on decisions (ruling C4). Default 100000, far above the longest "
            "possible game (at most 91 rounds of at most 70 cards, with 10 players). A capped "
            "game is placed as R-T7: by penalty points, fewest first, ties shared.",
        ),
    ),
    state_class=TightwadState,
)
TightwadState.spec = SPEC
