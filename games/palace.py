"""Palace: a Decktet shedding game (Shithead adaptation); nobody wins, one player loses.

Rulings R-P1..R-P17 (shared/RULINGS.md). Decisions: one simultaneous setup swap
(R-P3), then one decision per play, Excuse or face-down pick. Eating (R-P8),
drawing (R-P11), blow-ups (R-P9/R-P10) and face-down reveals (R-P13) happen
automatically inside ``_apply``.

State layout (plain lists for speed):
* ``_hands[s]`` hand, ``_up[s]`` face-up tableau (compact, slot order),
  ``_down[s]`` four face-down slots (-1 = empty), ``_known[s]`` which slots
  were revealed and put back (R-P13), ``_ndown[s]`` occupied slots.
* ``_pile`` the central pile bottom to top; ``_plays`` the plays still on it as
  (seat, cards). The reference (R-P6) is cached in ``_mode``/``_ref``/``_refpid``
  and recomputed only when a play lands on the pile.
* ``_mode``: EMPTY (anything goes), ANY (last play was Twos), HIGHER, LOWER
  (Sevens, or a Wyrm card in the Wyrm variant). ``_ref`` is the order key
  ``16 * is_trump + order`` of the reference card.
* ``_log``: public events as tuples; each seat's observation lists those since
  its own previous decision (``_seen``); a seat that is out, and so never
  decides again, gets those since the latest decision (keeps it bounded).

Observation (R-P17): ``hand`` (own), ``tableaux`` (per seat: hand_size, face_up,
face_down count, face_down_positions, known_face_down [[slot, card]], out),
``pile`` and ``pile_plays`` (seat, cards), ``reference`` and ``pile_mode``
(empty / any / higher / lower), ``trump_ace`` and ``trump_suit``, ``draw_pile``
(count), ``removed``, ``out_order``, ``swaps`` ([seat, from hand, from face-up],
null until every seat has chosen), ``events`` (play, reveal, eat, draw count,
blow_up, out, loser, swaps) since this seat's previous decision (a seat that
is out: since the latest decision of anyone), and during
setup ``my_swap``. Action fields: ``kind`` play/excuse/reveal/swap with
``cards`` (+ ``from_face_up``, ``trump`` for Aces: the last card), ``card``,
``position``, ``swaps``.
"""

from __future__ import annotations

from typing import Any

from games import decktet
from games.core import (
    GameSpec,
    IllegalActionError,
    Option,
    OptionError,
    Result,
    SearchRng,
    State,
    cap_option,
    places_from_keys,
)
from games.rng import DealRng

RANK = decktet.RANK
SUITS = decktet.SUITS
_DS = decktet.DECK_SIZE
_NPID = _DS * decktet.MAX_DECKS
WYRMS = decktet.WYRMS
START_EACH = 12  # 4 face down + 4 face up + 4 in hand (R-P3)
HAND_TARGET = 4
DEFAULT_CAP = 100_000

# R-P2 order: 2..9, Pawn 10, Court 11, Crown 12, Ace 13; the Excuse 0 (it has no rank).
_ORDER_OF_RANK = {
    decktet.EXCUSE: 0,
    decktet.ACE: 13,
    decktet.PAWN: 10,
    decktet.COURT: 11,
    decktet.CROWN: 12,
    **{r: r for r in range(2, 10)},
}
ORD: tuple[int, ...] = tuple(_ORDER_OF_RANK[RANK[p]] for p in range(_NPID))
ACE_ORD = 13
SEVEN = 7
TWO = 2
TRUMP = 16  # added to the order for trump cards: key = (is_trump, rank) as one int
# Display / canonical order: by game rank, then face, then copy.
SORTKEY: tuple[int, ...] = tuple(ORD[p] * 10_000 + (p % _DS) * 100 + p // _DS for p in range(_NPID))
_SORTKEY_OF = dict(enumerate(SORTKEY)).__getitem__  # a dict's is the cheapest key function

EMPTY, ANY, HIGHER, LOWER = 0, 1, 2, 3
MODE_NAMES = ("empty", "any", "higher", "lower")
_SUIT_NAME = dict(zip(decktet.SUIT_BITS, decktet.SUIT_NAMES))

# Move kinds (first tuple item).
SWAP, PLAY, EXCUSE, REVEAL = 0, 1, 2, 3

_NAMES: dict[int, tuple[str, ...]] = {}


def _names(decks: int) -> tuple[str, ...]:
    t = _NAMES.get(decks)
    if t is None:
        t = tuple(decktet.card_name(p, decks) for p in range(_DS * decks))
        _NAMES[decks] = t
    return t


_PLAY_TEXTS: dict[int, dict[tuple[int, ...], str]] = {}
_PLAY_TEXTS_MAX = 100_000  # combos remembered per deck count; beyond it the memo starts afresh


def _play_texts(decks: int) -> dict[tuple[int, ...], str]:
    """Memo of ``_play_text`` for this deck count: the same plays recur at every decision."""
    t = _PLAY_TEXTS.get(decks)
    if t is None:
        t = _PLAY_TEXTS[decks] = {}
    return t


def _play_text(cards: tuple[int, ...], decks: int) -> str:
    """The action text of a play of hand (or face-up) cards alone; an Ace goes last."""
    texts = _play_texts(decks)
    text = texts.get(cards)
    if text is None:
        names = _names(decks)
        p = cards[-1]
        text = "play " + ", ".join(map(names.__getitem__, cards))
        if ORD[p] == ACE_ORD:
            text += " (new trump)" if len(cards) == 1 else " (trump: " + names[p] + ")"
        if len(texts) >= _PLAY_TEXTS_MAX:
            texts.clear()
        texts[cards] = text
    return text


def deck_size(extended: bool) -> int:
    return _DS if extended else decktet.BASIC_SIZE


def auto_decks(players: int, extended: bool) -> int:
    """R-P1: smallest number >= 2 of decks that deals 12 cards to every player."""
    size = deck_size(extended)
    d = 2
    while d * size < START_EACH * players:
        d += 1
    return d


def resolve_decks(players: int, options: dict[str, Any]) -> int:
    d = options["decks"]
    return auto_decks(players, options["extended"]) if d == "auto" else d


def _check_options(players: int, options: dict[str, Any]) -> None:
    d = options["decks"]
    if d != "auto":
        size = deck_size(options["extended"])
        if d * size < START_EACH * players:
            need = auto_decks(players, options["extended"])
            raise OptionError(
                "palace",
                "decks",
                f"{d} decks of {size} cards cannot deal 12 cards to each of {players} players; "
                f"use at least {need} or 'auto'",
            )


def _submultisets(pids: list[int]) -> list[tuple[int, ...]]:
    """Every non-empty sub-multiset of ``pids`` (sorted by ``SORTKEY``) by face, one pid
    choice each (lowest copies first)."""
    if len(pids) == 1:
        return [(pids[0],)]
    if len(pids) == 2:  # the usual pair, spelled out
        p, q = pids
        return [(p,), (p, q)] if p % _DS == q % _DS else [(q,), (p,), (p, q)]
    byface: dict[int, list[int]] = {}
    for p in pids:
        f = p % _DS
        g = byface.get(f)
        if g is None:
            byface[f] = [p]
        else:
            g.append(p)
    combos: list[tuple[int, ...]] = [()]
    for group in byface.values():
        combos = [c + tuple(group[:k]) for c in combos for k in range(len(group) + 1)]
    return combos[1:]


class PalaceState(State):
    """A game of Palace (R-P1..R-P17)."""

    def __init__(self, players: int, seed: int, options: dict[str, Any]) -> None:
        super().__init__(players, seed, options)
        n = players
        self.extended: bool = options["extended"]
        self.wyrm: bool = options["wyrm_variant"]
        self.ndecks = resolve_decks(n, options)
        self._rng = DealRng(seed)
        # R-P4: the first dealer comes from the seed, before the shuffle.
        self._dealer = self._rng.randbelow(n)
        deck = decktet.make_deck(self.ndecks, self.extended)
        self._rng.shuffle(deck)
        self._down: list[list[int]] = []
        self._up: list[list[int]] = []
        self._hands: list[list[int]] = []
        for s in range(n):
            self._down.append(deck[12 * s : 12 * s + 4])
            self._up.append(deck[12 * s + 4 : 12 * s + 8])
            self._hands.append(deck[12 * s + 8 : 12 * s + 12])
        self._draw: list[int] = deck[12 * n :]  # drawn from the end
        self._known = [[False] * 4 for _ in range(n)]
        self._ndown = [4] * n
        self._pile: list[int] = []
        self._plays: list[tuple[int, tuple[int, ...]]] = []
        self._mode = EMPTY
        self._ref = 0
        self._refpid = -1
        self._trump_ace = -1
        self._trump = 0
        self._removed: list[int] = []
        self._out = [False] * n
        self._out_order: list[int] = []
        self._turn = -1
        self._phase = "swap"
        self._pending: dict[int, tuple[Any, ...]] = {}
        self._swaps: tuple[tuple[int, int, int], ...] | None = None  # (seat, from hand, from face-up)
        self._log: list[tuple[Any, ...]] = []
        self._seen = [0] * n
        self._last_dec = 0  # log length at the latest decision of any seat
        self._seat_t = tuple((s,) for s in range(n))
        self._to_move = tuple(range(n))

    # ---- helpers ------------------------------------------------------------------

    def _decks(self) -> int:
        return self.ndecks

    def card_name(self, pid: int) -> str:
        return _names(self.ndecks)[pid]

    def order_key(self, pid: int) -> int:
        """Order key (is_trump, rank) of R-P9 as one int: 16 * is_trump + rank order."""
        return ORD[pid] + TRUMP if SUITS[pid] & self._trump else ORD[pid]

    def is_legal(self, pid: int) -> bool:
        """R-P7 (and R-P14): may this card be played on the pile now?"""
        mode = self._mode
        o = ORD[pid]
        if mode <= ANY or o <= TWO:  # empty pile, after Twos, a Two, or the Excuse (0)
            return True
        k = o + TRUMP if SUITS[pid] & self._trump else o
        return k >= self._ref if mode == HIGHER else k <= self._ref

    def _set_reference(self) -> None:
        """R-P6/R-P7/R-P16: reference card and comparison mode from the last play on the pile."""
        if not self._plays:
            self._mode, self._ref, self._refpid = EMPTY, 0, -1
            return
        cards = self._plays[-1][1]
        trump = self._trump
        best, bestk = -1, -1
        wyrm = False
        for p in cards:
            k = ORD[p] + TRUMP if SUITS[p] & trump else ORD[p]
            if k > bestk:
                best, bestk = p, k
            if SUITS[p] & WYRMS:
                wyrm = True
        o = ORD[best]
        if o == TWO:
            mode = ANY
        elif wyrm if self.wyrm else o == SEVEN:
            mode = LOWER
        else:
            mode = HIGHER
        self._mode, self._ref, self._refpid = mode, bestk, best

    def _has_play(self, zone: list[int]) -> bool:
        """Is any card of ``zone`` legal (``is_legal`` inlined: asked after every play)?"""
        mode = self._mode
        if mode <= ANY:
            return True
        ref = self._ref
        trump = self._trump
        for p in zone:
            o = ORD[p]
            if o <= TWO:
                return True
            k = o + TRUMP if SUITS[p] & trump else o
            if (k >= ref) if mode == HIGHER else (k <= ref):
                return True
        return False

    def cards_left(self, seat: int) -> int:
        return len(self._hands[seat]) + len(self._up[seat]) + self._ndown[seat]

    # ---- moves --------------------------------------------------------------------

    def _legal_moves(self, seat: int) -> list[Any]:
        if self._phase == "swap":
            return self._swap_moves(seat)
        hand = self._hands[seat]
        if hand:
            zone = hand
        elif self._up[seat]:
            zone = self._up[seat]
        else:
            return self._reveal_moves(seat)
        mode = self._mode
        ref = self._ref
        trump = self._trump
        legal: list[int] = []
        excuse = -1
        illegal = False
        for p in zone:
            o = ORD[p]
            if o == 0:
                excuse = p
                continue
            if mode >= HIGHER and o != TWO:
                k = o + TRUMP if SUITS[p] & trump else o
                if (k < ref) if mode == HIGHER else (k > ref):
                    illegal = True
                    continue
            legal.append(p)
        # One sort orders the plays by rank, and each rank's cards as _submultisets wants them.
        legal.sort(key=_SORTKEY_OF)
        moves: list[Any] = []
        # R-P12: a play that empties the hand with the draw pile empty may take face-up cards.
        if (
            zone is hand
            and not self._draw
            and excuse < 0
            and not illegal
            and legal
            and ORD[legal[0]] == ORD[legal[-1]]
            and self._up[seat]
        ):
            self._emptying_moves(moves, seat, legal)
        n = len(legal)
        i = 0
        while i < n:
            p = legal[i]
            o = ORD[p]
            j = i + 1
            while j < n and ORD[legal[j]] == o:
                j += 1
            if j == i + 1:  # the common lone card of its rank: one move, Ace or not
                moves.append((PLAY, (p,), ()))
            elif o == ACE_ORD:
                for c in _submultisets(legal[i:j]):
                    self._ace_moves(moves, c, ())
            else:
                moves.extend((PLAY, c, ()) for c in _submultisets(legal[i:j]))
            i = j
        if excuse >= 0:
            moves.append((EXCUSE, excuse))
        return moves

    def _emptying_moves(self, moves: list[Any], seat: int, group: list[int]) -> None:
        """R-P12: the whole hand (one rank, ``group``) plus legal face-up cards of that rank."""
        o = ORD[group[0]]
        legal_up = sorted((p for p in self._up[seat] if ORD[p] == o and self.is_legal(p)), key=_SORTKEY_OF)
        if not legal_up:
            return
        full = _submultisets(group)[-1]  # the last combo takes every card of every face
        ups_list = _submultisets(legal_up)
        if o == ACE_ORD:
            for u in ups_list:
                self._ace_moves(moves, full + u, u)
        else:
            moves.extend((PLAY, full + u, u) for u in ups_list)

    @staticmethod
    def _ace_moves(moves: list[Any], cards: tuple[int, ...], ups: tuple[int, ...]) -> None:
        """R-P9: one move per distinct Ace face that may go last (the new trump indicator)."""
        if len(cards) == 1:
            moves.append((PLAY, cards, ups))
            return
        faces = set()
        for i, p in enumerate(cards):
            f = p % _DS
            if f not in faces:
                faces.add(f)
                moves.append((PLAY, cards[:i] + cards[i + 1 :] + (p,), ups))

    def _reveal_moves(self, seat: int) -> list[Any]:
        """R-P13: one move per face-down slot (known slots of the same face offered once)."""
        down = self._down[seat]
        known = self._known[seat]
        moves: list[Any] = []
        faces = set()
        for i in range(4):
            p = down[i]
            if p < 0:
                continue
            if known[i]:
                if p % _DS in faces:
                    continue
                faces.add(p % _DS)
            moves.append((REVEAL, i))
        return moves

    def _swap_moves(self, seat: int) -> list[Any]:
        """R-P3: every distinct outcome of 0, 1 or 2 one-for-one swaps, once each.

        An outcome is the multiset of face-up faces, kept as one int with four bits
        per face (a count of at most 4 never carries), so each swap is two additions."""
        hand = sorted(self._hands[seat], key=_SORTKEY_OF)
        up = self._up[seat]
        hw = [1 << 4 * (p % _DS) for p in hand]
        uw = [1 << 4 * (p % _DS) for p in up]
        base = sum(uw)
        seen = {base}
        moves: list[Any] = [(SWAP, ())]
        for i, h in enumerate(hand):
            for j, u in enumerate(up):
                key = base - uw[j] + hw[i]
                if key not in seen:
                    seen.add(key)
                    moves.append((SWAP, ((h, u),)))
        nh, nu = len(hand), len(up)
        for i1 in range(nh):
            for i2 in range(i1 + 1, nh):
                for j1 in range(nu):
                    for j2 in range(j1 + 1, nu):
                        key = base - uw[j1] - uw[j2] + hw[i1] + hw[i2]
                        if key not in seen:
                            seen.add(key)
                            moves.append((SWAP, ((hand[i1], up[j1]), (hand[i2], up[j2]))))
        return moves

    def action_info(self, seat: int, action: int) -> dict[str, Any]:
        """Same contract as ``State.action_info``, built in one step (observations list many)."""
        moves = self._move_cache.get(seat)
        if moves is None:
            moves = self.moves(seat)
        if type(action) is not int or not 0 <= action < len(moves):
            raise IllegalActionError(seat, action, f"no such action (legal ids 0..{len(moves) - 1})")
        return self._describe(seat, action, moves[action])

    def _action_infos(self, seat: int) -> list[dict[str, Any]]:
        """Every ``action_info`` in id order, in one pass: plain plays, nearly every
        move, are built inline as ``_describe`` does; the rest by ``_describe``."""
        decks = self.ndecks
        texts = _play_texts(decks)
        infos = []
        for i, move in enumerate(self.moves(seat)):
            if move[0] == PLAY and not move[2]:
                cards = move[1]
                text = texts.get(cards) or _play_text(cards, decks)
                p = cards[-1]
                if ORD[p] == ACE_ORD:
                    infos.append({"id": i, "text": text, "kind": "play", "cards": list(cards), "trump": p})
                else:
                    infos.append({"id": i, "text": text, "kind": "play", "cards": list(cards)})
            else:
                infos.append(self._describe(seat, i, move))
        return infos

    def _describe(self, seat: int, action: int, move: Any) -> dict[str, Any]:
        """The ``action_info`` of one move; plain plays and swaps, the many, built directly."""
        kind = move[0]
        if kind == PLAY and not move[2]:
            cards = move[1]
            text = _play_text(cards, self.ndecks)
            p = cards[-1]
            if ORD[p] == ACE_ORD:
                return {"id": action, "text": text, "kind": "play", "cards": list(cards), "trump": p}
            return {"id": action, "text": text, "kind": "play", "cards": list(cards)}
        if kind == SWAP:
            return {
                "id": action,
                "text": self._move_text(seat, move),
                "kind": "swap",
                "swaps": [[h, u] for h, u in move[1]],
            }
        info = {"id": action, "text": self._move_text(seat, move)}
        info.update(self._move_fields(seat, move))
        return info

    def _move_text(self, seat: int, move: Any) -> str:
        names = _names(self.ndecks)
        kind = move[0]
        if kind == PLAY:
            cards, ups = move[1], move[2]
            if ups:
                own = [names[p] for p in cards if p not in ups]
                text = "play " + ", ".join(own) + " + face-up " + ", ".join(names[p] for p in cards if p in ups)
            else:
                text = "play " + ", ".join([names[p] for p in cards])
            if ORD[cards[0]] == ACE_ORD:
                text += " (trump: " + names[cards[-1]] + ")"
            return text
        if kind == EXCUSE:
            return f"play {names[move[1]]} (skip)"
        if kind == REVEAL:
            i = move[1]
            if self._known[seat][i]:
                return f"reveal face-down {i} ({names[self._down[seat][i]]})"
            return f"reveal face-down {i}"
        if not move[1]:
            return "keep tableau (no swap)"
        return "swap " + "; ".join([names[h] + " (hand) <-> " + names[u] + " (face-up)" for h, u in move[1]])

    def _move_fields(self, seat: int, move: Any) -> dict[str, Any]:
        kind = move[0]
        if kind == PLAY:
            cards = move[1]
            f: dict[str, Any] = {"kind": "play", "cards": list(cards)}
            if move[2]:
                f["from_face_up"] = list(move[2])
            if ORD[cards[0]] == ACE_ORD:
                f["trump"] = cards[-1]
            return f
        if kind == EXCUSE:
            return {"kind": "excuse", "card": move[1]}
        if kind == REVEAL:
            i = move[1]
            return {"kind": "reveal", "position": i, "card": self._down[seat][i] if self._known[seat][i] else None}
        return {"kind": "swap", "swaps": [[h, u] for h, u in move[1]]}

    # ---- applying -----------------------------------------------------------------

    def _apply(self, seat: int, move: Any) -> None:
        self._seen[seat] = self._last_dec = len(self._log)
        kind = move[0]
        if kind == SWAP:
            self._pending[seat] = move[1]
            self._to_move = tuple(s for s in self._to_move if s != seat)
            if not self._to_move:
                self._resolve_swaps()
            return
        if kind == PLAY:
            cards, ups = move[1], move[2]
            hand = self._hands[seat]
            if hand:
                for p in cards:
                    if ups and p in ups:
                        self._up[seat].remove(p)
                    else:
                        hand.remove(p)
            else:
                up = self._up[seat]
                for p in cards:
                    up.remove(p)
            self._log.append(("play", seat, cards, ups))
            again = self._land(seat, cards)
        elif kind == EXCUSE:
            zone = self._hands[seat] or self._up[seat]
            zone.remove(move[1])
            self._log.append(("play", seat, (move[1],), ()))
            self._removed.append(move[1])  # R-P14: the pile does not change
            again = False
        else:
            i = move[1]
            p = self._down[seat][i]
            legal = self.is_legal(p)
            self._log.append(("reveal", seat, i, p, legal))
            if legal:
                self._down[seat][i] = -1
                self._known[seat][i] = False
                self._ndown[seat] -= 1
                if ORD[p] == 0:
                    self._removed.append(p)
                    again = False
                else:
                    again = self._land(seat, (p,))
            else:
                # R-P13: eat; the card goes back face down, known to all.
                self._known[seat][i] = True
                self._eat(seat)
                self._advance(seat, False)
                return
        self._refill(seat)
        self._check_out(seat)
        self._advance(seat, again)

    def _land(self, seat: int, cards: tuple[int, ...]) -> bool:
        """Put a play on the pile with R-P9/R-P10 effects; True if the pile blew up."""
        o = ORD[cards[0]]
        if o == ACE_ORD:
            removed = self._pile + list(cards[:-1])
            if self._trump_ace >= 0:
                removed.append(self._trump_ace)
            self._removed.extend(removed)
            self._trump_ace = cards[-1]
            self._trump = SUITS[cards[-1]]
            self._pile = []
            self._plays = []
            self._mode, self._ref, self._refpid = EMPTY, 0, -1
            self._log.append(("blow_up", seat, "ace", tuple(removed), cards[-1]))
            return True
        pile = self._pile
        pile.extend(cards)
        self._plays.append((seat, cards))
        r = RANK[cards[0]]
        if len(pile) >= 4 and RANK[pile[-2]] == r and RANK[pile[-3]] == r and RANK[pile[-4]] == r:
            self._removed.extend(pile)
            self._log.append(("blow_up", seat, "four", tuple(pile), -1))
            self._pile = []
            self._plays = []
            self._mode, self._ref, self._refpid = EMPTY, 0, -1
            return True
        self._set_reference()
        return False

    def _refill(self, seat: int) -> None:
        """R-P11: draw until holding four, while the draw pile lasts."""
        hand = self._hands[seat]
        draw = self._draw
        k = 0
        while len(hand) < HAND_TARGET and draw:
            hand.append(draw.pop())
            k += 1
        if k:
            self._log.append(("draw", seat, k))

    def _eat(self, seat: int) -> None:
        """R-P8: take the whole pile into hand; nothing is drawn."""
        self._hands[seat].extend(self._pile)
        self._log.append(("eat", seat, tuple(self._pile)))
        self._pile = []
        self._plays = []
        self._mode, self._ref, self._refpid = EMPTY, 0, -1

    def _check_out(self, seat: int) -> None:
        if not self._hands[seat] and not self._up[seat] and not self._ndown[seat]:
            self._out[seat] = True
            self._out_order.append(seat)
            self._log.append(("out", seat, len(self._out_order) - 1))

    def _advance(self, seat: int, again: bool) -> None:
        """Next seat to decide (R-P4, R-P11 play again); forced eats (R-P8) happen here."""
        n = self.players
        out = self._out
        if len(self._out_order) >= n - 1:
            self._finish()
            return
        nxt = seat
        if not (again and not out[seat]):
            nxt = (seat + 1) % n
            while out[nxt]:
                nxt = (nxt + 1) % n
        while True:
            zone = self._hands[nxt] or self._up[nxt]
            if zone and not self._has_play(zone):
                self._eat(nxt)
                nxt = (nxt + 1) % n
                while out[nxt]:
                    nxt = (nxt + 1) % n
                continue
            break
        self._turn = nxt
        self._to_move = self._seat_t[nxt]

    def _finish(self) -> None:
        for s in range(self.players):
            if not self._out[s]:
                self._log.append(("loser", s))
        self._phase = "over"
        self._turn = -1
        self._over = True
        self._to_move = ()

    def _resolve_swaps(self) -> None:
        """R-P3/R-P17: all swaps happen (and become public) once every seat has chosen."""
        swaps = []
        for s in range(self.players):
            hand, up = self._hands[s], self._up[s]
            for h, u in self._pending.get(s, ()):
                hand[hand.index(h)] = u
                up[up.index(u)] = h
                swaps.append((s, h, u))
        self._pending = {}
        self._swaps = tuple(swaps)
        self._log.append(("swaps", self._swaps))
        self._phase = "play"
        first = (self._dealer + 1) % self.players
        self._turn = first
        self._to_move = self._seat_t[first]

    # ---- observation --------------------------------------------------------------

    @staticmethod
    def _event_json(e: tuple[Any, ...]) -> dict[str, Any]:
        t = e[0]
        if t == "play":
            d: dict[str, Any] = {"type": "play", "seat": e[1], "cards": list(e[2])}
            if e[3]:
                d["from_face_up"] = list(e[3])
            return d
        if t == "draw":
            return {"type": "draw", "seat": e[1], "count": e[2]}
        if t == "reveal":
            return {"type": "reveal", "seat": e[1], "position": e[2], "card": e[3], "legal": e[4]}
        if t == "blow_up":
            return {
                "type": "blow_up",
                "seat": e[1],
                "cause": e[2],
                "removed": list(e[3]),
                "trump_ace": e[4] if e[4] >= 0 else None,
            }
        if t == "eat":
            return {"type": "eat", "seat": e[1], "cards": list(e[2])}
        if t == "out":
            return {"type": "out", "seat": e[1], "place": e[2]}
        if t == "loser":
            return {"type": "loser", "seat": e[1]}
        return {"type": "swaps", "swaps": [list(t) for t in e[1]]}

    def _tableaux(self) -> list[dict[str, Any]]:
        """Every seat's public zones (R-P17)."""
        tableaux = []
        for hand, up, down, known, nd, out in zip(
            self._hands, self._up, self._down, self._known, self._ndown, self._out
        ):
            tableaux.append(
                {
                    "hand_size": len(hand),
                    "face_up": up.copy(),
                    "face_down": nd,
                    "face_down_positions": [0, 1, 2, 3] if nd == 4 else [i for i in range(4) if down[i] >= 0],
                    "known_face_down": [[i, down[i]] for i in range(4) if known[i]] if True in known else [],
                    "out": out,
                }
            )
        return tableaux

    def _observe(self, seat: int) -> dict[str, Any]:
        tr = self._trump_ace
        event_json = self._event_json
        obs: dict[str, Any] = {
            "phase": self._phase,
            "dealer": self._dealer,
            "turn": self._turn if self._turn >= 0 else None,
            "hand": sorted(self._hands[seat], key=_SORTKEY_OF),
            "tableaux": self._tableaux(),
            "pile": self._pile.copy(),
            "pile_plays": [{"seat": s, "cards": list(c)} for s, c in self._plays],
            "reference": self._refpid if self._refpid >= 0 else None,
            "pile_mode": MODE_NAMES[self._mode],
            "trump_ace": tr if tr >= 0 else None,
            "trump_suit": _SUIT_NAME[self._trump] if tr >= 0 else None,
            "draw_pile": len(self._draw),
            "removed": self._removed.copy(),
            "out_order": self._out_order.copy(),
            "swaps": None if self._swaps is None else [list(t) for t in self._swaps],
            "events": [event_json(e) for e in self._log[self._last_dec if self._out[seat] else self._seen[seat] :]],
        }
        if self._phase == "swap":
            mine = self._pending.get(seat)
            obs["my_swap"] = None if mine is None else [[h, u] for h, u in mine]
        return obs

    def _observe_text(self, seat: int) -> str:
        names = _names(self.ndecks)

        def cs(cards: Any) -> str:
            return ", ".join(names[p] for p in cards) or "-"

        lines = [f"Palace, seat {seat}, phase {self._phase}, turn {self._turn if self._turn >= 0 else '-'}"]
        lines.append("hand: " + cs(sorted(self._hands[seat], key=_SORTKEY_OF)))
        for s in range(self.players):
            known = [f"{i}:{names[self._down[s][i]]}" for i in range(4) if self._known[s][i]]
            state = "out" if self._out[s] else f"hand {len(self._hands[s])}"
            lines.append(
                f"  seat {s} [{state}] up: {cs(self._up[s])}; down {self._ndown[s]}"
                + (f" (known {', '.join(known)})" if known else "")
            )
        trump = names[self._trump_ace] if self._trump_ace >= 0 else "none"
        ref = names[self._refpid] if self._refpid >= 0 else "-"
        lines.append(f"pile ({MODE_NAMES[self._mode]}, ref {ref}): {cs(self._pile)}")
        lines.append(
            f"trump: {trump}; draw pile {len(self._draw)}; removed {len(self._removed)}; out: {self._out_order}"
        )
        return "\n".join(lines)

    # ---- result -------------------------------------------------------------------

    def standing_keys(self) -> list[tuple[int, int]]:
        """R-P15: out players by order of going out, then the rest by fewest cards left."""
        order = {s: i for i, s in enumerate(self._out_order)}
        return [(0, order[s]) if s in order else (1, self.cards_left(s)) for s in range(self.players)]

    def _result(self) -> Result:
        places = places_from_keys(self.standing_keys())
        # Score: how many seats finished strictly behind this one.
        scores = tuple(float(sum(1 for q in places if q > p)) for p in places)
        return Result(places, scores, self.capped)

    # ---- what a search needs (games.core) ------------------------------------------

    rollout_decisions = 60  # then the standing scores the simulation: a whole game is long

    def rollout_action(self, seat: int, rng: SearchRng) -> int:
        """Strong cards face up; then the lowest ordinary rank, as many as possible, 15% random."""
        moves = self.moves(seat)
        if len(moves) == 1:
            return 0
        first = moves[0][0]
        if first == SWAP:
            return palace_swap_choice(moves)
        if first != PLAY:
            return 0 if moves[-1][0] != EXCUSE else len(moves) - 1
        if rng.random() < 0.15:
            return rng.randrange(len(moves))
        return palace_play_choice(self, moves)

    @staticmethod
    def rule_action(observation: dict[str, Any]) -> int | None:
        """The setup swap (R-P3) by rule: the swap that leaves the strongest cards face up.
        Up to 50 one-shot choices whose worth shows only much later: not worth searching."""
        if observation.get("phase") != "swap":
            return None
        return palace_swap_choice([(SWAP, tuple((h, u) for h, u in a["swaps"])) for a in observation["legal_actions"]])

    # ---- tests' hooks -------------------------------------------------------------

    def all_cards(self) -> list[int]:
        cards: list[int] = []
        for s in range(self.players):
            cards.extend(self._hands[s])
            cards.extend(self._up[s])
            cards.extend(p for p in self._down[s] if p >= 0)
        cards.extend(self._pile)
        cards.extend(self._draw)
        cards.extend(self._removed)
        if self._trump_ace >= 0:
            cards.append(self._trump_ace)
        return cards

    def clone(self) -> PalaceState:
        new = object.__new__(type(self))
        d = self.__dict__.copy()
        for k in ("_hands", "_up", "_down", "_known"):
            d[k] = [x.copy() for x in d[k]]
        for k in ("_ndown", "_pile", "_plays", "_draw", "_removed", "_out", "_out_order", "_log", "_seen"):
            d[k] = d[k].copy()
        d["_pending"] = dict(d["_pending"])
        d["_rng"] = DealRng(0)
        d["_rng"].setstate(self._rng.getstate())
        d["_move_cache"] = {}
        d["options"] = dict(d["options"])
        new.__dict__ = d
        return new

    def with_hidden_shuffled(self, seat: int, rng: DealRng) -> PalaceState:
        """Permute other hands, every unknown face-down card and the draw pile (C5, R-P17)."""
        new = self.clone()
        pool: list[int] = []
        for s in range(self.players):
            if s != seat:
                pool.extend(new._hands[s])
            pool.extend(p for i, p in enumerate(new._down[s]) if p >= 0 and not new._known[s][i])
        pool.extend(new._draw)
        rng.shuffle(pool)
        it = iter(pool)
        old_hands = [h.copy() for h in new._hands]
        for s in range(self.players):
            if s != seat:
                new._hands[s] = [next(it) for _ in new._hands[s]]
            down = new._down[s]
            for i in range(4):
                if down[i] >= 0 and not new._known[s][i]:
                    down[i] = next(it)
        new._draw = [next(it) for _ in new._draw]
        # A pending (still secret) swap of another seat follows its hand cards by position.
        for s, pairs in list(new._pending.items()):
            if s != seat:
                new._pending[s] = tuple((new._hands[s][old_hands[s].index(h)], u) for h, u in pairs)
        return new


# ---- the reference rule (games.reference, the search hooks, games.palace_value) -------------

_KEPT = {0: 14, 7: 15, TWO: 16, 13: 17}  # Excuse, Sevens, Twos, Aces are kept back


def palace_cost(p: int) -> int:
    o = ORD[p]
    return _KEPT.get(o, o)


def palace_swap_choice(moves: list[Any]) -> int:
    """Setup: the swap that leaves the strongest face-up cards (Twos, Sevens, Aces, high ranks)."""
    return max(
        range(len(moves)),
        key=lambda i: (sum(palace_cost(h) - palace_cost(u) for h, u in moves[i][1]), -len(moves[i][1]), -i),
    )


def palace_play_choice(state: State, moves: list[Any]) -> int:
    """The lowest ordinary rank, as many cards as possible; a four of a kind first; Sevens,
    Twos, Aces and the Excuse kept for when nothing else goes."""
    pile = state._pile  # type: ignore[attr-defined]
    top = ORD[pile[-1]] if pile else -1
    run_len = 0
    for p in reversed(pile):
        if ORD[p] != top:
            break
        run_len += 1
    best, best_k = 0, None
    for i, m in enumerate(moves):
        cards = m[1] if m[0] == PLAY else (m[1],)
        k = (0 if ORD[cards[0]] == top and run_len + len(cards) >= 4 else 1, palace_cost(cards[0]), -len(cards))
        if best_k is None or k < best_k:
            best, best_k = i, k
    return best


SPEC = GameSpec(
    id="palace",
    title="Palace",
    rules_version="1",
    min_players=2,
    max_players=10,
    simultaneous=True,
    options=(
        Option("extended", False, "Include the extended cards: Pawns, Courts, the Excuse (R-P1).", kind=bool),
        Option(
            "decks",
            "auto",
            "Decktets shuffled together (R-P1): 2..16, or 'auto' = the smallest number >= 2 "
            "that deals 12 cards to every player.",
            min=2,
            max=decktet.MAX_DECKS,
            choices=("auto",),
        ),
        Option(
            "wyrm_variant",
            False,
            "R-P16: Sevens are ordinary; 'play lower' follows any play with a Wyrms card.",
            kind=bool,
        ),
        cap_option(DEFAULT_CAP),
    ),
    state_class=PalaceState,
    check_options=_check_options,
)
PalaceState.spec = SPEC
