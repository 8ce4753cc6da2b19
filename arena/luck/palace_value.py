"""A learned value of Palace states, for AIVAT (arena.luck.aivat.aivat_corrections).

Palace's playouts are long and their results scattered, so a few of them per state give a
value too noisy for AIVAT (docs/luck.md). This value is instead a linear function of
features of the state one rule move ahead (``after_rule_move``), one weight vector per
(players, players still in), learned offline by ``benchmarks/palace_value.py``: at the random
seats' decisions of heuristic-against-random games, from each child state's features one move
ahead and its playout results, least squares on the differences between sibling children
(what an AIVAT term uses), not on their levels. The AIVAT sums are scaled by fixed
coefficients (``DRAWS_SCALE``, ``REVEALS_SCALE``).

A seat already out has its place, exactly. Configurations without weights get no value
(``has_value``). It reads the whole state, hidden cards included: it runs after the match.
Change a feature or a weight and bump ``arena.luck.aivat.AIVAT_VERSION``.

The module also gives the AIVAT term of a chance event: revealing a face-down card nobody has
seen (R-P13, ``reveal_term``), valued with its own weights (``REVEAL_WEIGHTS``).
"""

from __future__ import annotations

import json
from importlib import resources
from operator import mul
from typing import Any

from games.palace import ACE_ORD, ANY, LOWER, ORD, PLAY, REVEAL, SEVEN, TWO, PalaceState
from games.palace_rule import palace_play_choice

_SPECIAL = (0, TWO, SEVEN, ACE_ORD)  # the Excuse, Twos, Sevens, Aces


def _zones(state: PalaceState, seat: int) -> tuple[list[int], list[int]]:
    """Hand and face-up cards, with the seat's chosen but not yet revealed swaps done."""
    hand, up = list(state._hands[seat]), list(state._up[seat])
    for h, u in state._pending.get(seat, ()):
        hand[hand.index(h)] = u
        up[up.index(u)] = h
    return hand, up


def _quality(cards: list[int]) -> tuple[int, float]:
    """(special cards, mean order of the ordinary ones; 8 if none)."""
    spec = sum(1 for p in cards if ORD[p] in _SPECIAL)
    ordinary = [ORD[p] for p in cards if ORD[p] not in _SPECIAL]
    return spec, (sum(ordinary) / len(ordinary) if ordinary else 8.0)


class _Table:
    """What every seat's features share: computed once per state, not once per seat."""

    def __init__(self, state: PalaceState) -> None:
        n = state.players
        self.active = [q for q in range(n) if not state._out[q]]
        self.cards = {q: state.cards_left(q) for q in self.active}
        self.zones = {q: _zones(state, q) for q in self.active}
        self.quality = {q: _quality(h + u) for q, (h, u) in self.zones.items()}


def features(state: PalaceState, seat: int, known: frozenset[int], table: _Table | None = None) -> list[float]:
    """The 35 features of an active seat (not out) in ``state``."""
    t = table or _Table(state)
    n = state.players
    out = state._out
    hand, up = t.zones[seat]
    mine = t.cards[seat]
    others = [t.cards[q] for q in t.active if q != seat]
    mean_other = sum(others) / len(others) if others else 0.0
    fewer = sum(1 for x in others if x < mine) + 0.5 * sum(1 for x in others if x == mine)
    spec, mean_ord = t.quality[seat]
    low = sum(1 for p in hand + up if ORD[p] not in _SPECIAL and ORD[p] <= 5)
    turn = state._turn
    dist = 0  # active seats between the one to move and this one
    if turn >= 0:
        q = turn
        while q != seat:
            q = (q + 1) % n
            if not out[q]:
                dist += 1
    pile = len(state._pile)
    known_down = sum(1 for i in range(4) if state._known[seat][i] and state._down[seat][i] >= 0)
    r = 1.0 if seat in known else 0.0
    active = hand or up
    legal = sum(1 for p in active if state.is_legal(p)) if state._phase == "play" else len(active)
    o_quality = [t.quality[q] for q in t.active if q != seat]
    return [
        float(len(state._out_order)),
        1.0,
        float(mine),
        mine - mean_other,
        float(min(others) if others else 0) - mine,
        fewer,
        float(len(t.active)),
        float(len(hand)),
        float(len(up)),
        float(state._ndown[seat]),
        float(spec),
        float(low),
        mean_ord,
        float(pile) * (dist == 0),
        float(pile) * (dist == 1),
        float(dist),
        float(len(state._draw)),
        float(known_down),
        r,
        r * mine,
        r * (mine - mean_other),
        r * fewer,
        r * spec,
        float(legal),
        float(legal == 0 and bool(active)),
        float(state._mode == LOWER),
        float(state._mode <= ANY),
        state._ref / 16.0,
        float(dist == 0) * legal,
        float(dist == 0) * pile * float(legal <= 1),
        float(not active),
        sum(s for s, _ in o_quality) / len(o_quality) if o_quality else 0.0,
        sum(m for _, m in o_quality) / len(o_quality) if o_quality else 8.0,
        float(state._phase == "swap"),
        float(len(active)),
    ]


NFEATURES = 35

# The weights and coefficients are data (arena/luck/data/palace_weights.json), the output of
# ``python benchmarks/palace_value.py``: the value's weights per players, then per players still
# in, read one rule move ahead (60 deals from 610000, 2 playouts per child, 417,228 sibling rows,
# 2.9% of their playout differences explained, against 0.25% without the move ahead; 9 minutes on
# 2 cores); ``--reveal``: the reveal terms' weights (300 deals from 610000, 4 playouts per sibling
# with the sample heuristic in its own seat, 232,360 sibling rows; 5 minutes on 2 cores);
# ``--scales``: the fixed coefficients of the two sums of AIVAT terms (arena.luck.aivat.AIVAT_SCALE;
# 400 deals from 700000, which no measurement uses). The draws' value is learned against playouts
# in which the reference rule policy plays the heuristic's seat, and its one move ahead is that
# policy's choice: it tracks those playouts more closely than a real bot's game, so its terms are
# best shrunk (docs/luck.md).
WEIGHTS_FILE = "palace_weights.json"

Weights = dict[int, dict[int, tuple[float, ...]]]


def load_weights(text: str) -> tuple[Weights, Weights, float, float]:
    """(value weights, reveal weights, draws scale, reveals scale) from the weights file's text;
    ``ValueError`` naming the field if it is not what this module reads."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("format") != 1 or data.get("features") != NFEATURES:
        raise ValueError(f"{WEIGHTS_FILE}: format 1 with {NFEATURES} features expected")

    def table(field: str) -> Weights:
        raw = data.get(field)
        if not isinstance(raw, dict):
            raise ValueError(f"{WEIGHTS_FILE}: {field} must map players to players still in to weights")
        out: Weights = {}
        for players, by_in in raw.items():
            out[int(players)] = {}
            for still_in, w in by_in.items():
                if not isinstance(w, list) or len(w) != NFEATURES:
                    raise ValueError(f"{WEIGHTS_FILE}: {field}.{players}.{still_in} must be {NFEATURES} numbers")
                out[int(players)][int(still_in)] = tuple(float(x) for x in w)
        return out

    return (table("value_weights"), table("reveal_weights"), float(data["draws_scale"]), float(data["reveals_scale"]))


def dump_weights(data: dict[str, Any]) -> str:
    """The weights file's text for ``data`` (its JSON object): one weight vector a line, so a
    change of the weights reads as a short diff."""

    def table(t: dict[Any, Any]) -> str:
        return (
            "{\n"
            + ",\n".join(
                f'  "{players}": {{\n'
                + ",\n".join(f'    "{still_in}": {json.dumps([float(x) for x in w])}' for still_in, w in by_in.items())
                + "\n  }"
                for players, by_in in t.items()
            )
            + "\n }"
        )

    fields = [f' "{k}": {table(v) if k.endswith("_weights") else json.dumps(v)}' for k, v in data.items()]
    return "{\n" + ",\n".join(fields) + "\n}\n"


def weights_text() -> str:
    """The shipped weights file's text."""
    return resources.files("arena.luck").joinpath("data").joinpath(WEIGHTS_FILE).read_text(encoding="utf-8")


WEIGHTS, REVEAL_WEIGHTS, DRAWS_SCALE, REVEALS_SCALE = load_weights(weights_text())


def has_value(players: int) -> bool:
    return players in WEIGHTS


def _value(
    state: PalaceState, known: frozenset[int], table: dict[int, dict[int, tuple[float, ...]]], only: int | None
) -> list[float]:
    if state.is_over():
        return [float(p) for p in state.result().places]
    out = state._out
    order = state._out_order
    w = table[state.players].get(state.players - len(order))
    shared = _Table(state)
    vals = []
    for s in range(state.players):
        if only is not None and s != only:
            vals.append(0.0)  # not asked for
        elif out[s]:
            vals.append(float(order.index(s)))
        elif w is None:
            vals.append(0.0)  # no weights for this many players still in: no information
        else:
            vals.append(sum(map(mul, w, features(state, s, known, shared))))
    return vals


def after_rule_move(state: PalaceState) -> PalaceState:
    """``state`` after the one seat to move plays the reference rule's choice (the lowest
    ordinary rank; its first move where it has no play to choose), or ``state`` itself where
    the game is over or in the setup's simultaneous swaps. A function of the state alone, so
    a value computed on it keeps every AIVAT term's mean zero."""
    if state.is_over() or state._phase != "play":
        return state
    movers = tuple(state.to_move())
    if len(movers) != 1:
        return state
    seat = movers[0]
    child = state.clone()
    moves = child.moves(seat)
    child.apply(seat, 0 if len(moves) == 1 or moves[0][0] != PLAY else palace_play_choice(child, moves))
    return child


def value(state: PalaceState, known: frozenset[int], only: int | None = None) -> list[float]:
    """V(state) for every seat (or for seat ``only``, the others 0): the learned estimate
    one rule move ahead (``after_rule_move``), where a seat out has its place (0 = best).
    Looking one move ahead matters: a random seat's card sets what the next seat must
    answer, and the features see that answer's outcome (its pick-up of the pile, its cards
    left) far better than its prospects (docs/luck.md)."""
    return _value(after_rule_move(state), known, WEIGHTS, only)


# -- chance: a face-down card revealed ----------------------------------------------------
#
# Nobody has seen the draw pile or a face-down card that was never revealed (R-P13, R-P17), and
# no decision depends on them, so given everything that happened, those cards lie in a uniformly
# random arrangement of their places. When a seat reveals such a card at slot p, exchanging it
# with the card in any hidden place q gives an arrangement exactly as likely as the real one
# (the exchange is a bijection of arrangements), so the mean over q of V(after the reveal, with p
# and q exchanged) has the same expectation as V(after the reveal). Their difference is an AIVAT
# term of mean zero, whoever the players are. Draws from the pile have the same form, but their
# terms removed nothing measurable (docs/luck.md), so only reveals are corrected.


def has_reveal_value(players: int) -> bool:
    return players in REVEAL_WEIGHTS


def reveal_value(state: PalaceState, known: frozenset[int], only: int | None = None) -> list[float]:
    """V(state) for the reveal terms: like ``value``, with ``REVEAL_WEIGHTS``."""
    return _value(state, known, REVEAL_WEIGHTS, only)


def hidden_places(state: PalaceState) -> list[tuple[int, int]]:
    """Where the cards nobody has seen lie: (-1, i) for the draw pile's i-th card, (seat, i) for
    a seat's face-down slot i that was never revealed."""
    places = [(-1, i) for i in range(len(state._draw))]
    for s in range(state.players):
        down, seen = state._down[s], state._known[s]
        places.extend((s, i) for i in range(4) if down[i] >= 0 and not seen[i])
    return places


def exchanged(state: PalaceState, a: tuple[int, int], b: tuple[int, int]) -> PalaceState:
    """A copy of ``state`` with the cards in hidden places ``a`` and ``b`` exchanged."""
    new = state.clone()
    za = new._draw if a[0] < 0 else new._down[a[0]]
    zb = new._draw if b[0] < 0 else new._down[b[0]]
    za[a[1]], zb[b[1]] = zb[b[1]], za[a[1]]
    return new


def revealed_place(state: PalaceState, seat: int, action: int) -> tuple[int, int] | None:
    """The face-down slot whose unseen card ``action`` reveals, if it does."""
    move = state.moves(seat)[action]
    if move[0] == REVEAL and not state._known[seat][move[1]]:
        return seat, move[1]
    return None


def reveal_term(
    state: PalaceState, seat: int, action: int, known: frozenset[int], only: int | None = None
) -> list[float] | None:
    """Every seat's AIVAT term (or seat ``only``'s, the others 0) for ``seat`` revealing an
    unseen face-down card by ``action`` in ``state`` (before it is applied): V(after) - mean
    over the hidden places q of V(after, the revealed card exchanged with q's). None if the
    action reveals no unseen card (or nothing else is hidden: the card is then certain)."""
    slot = revealed_place(state, seat, action)
    if slot is None:
        return None
    places = hidden_places(state)
    if len(places) < 2:
        return None
    total = [0.0] * state.players
    actual: list[float] = []
    for q in places:
        child = state.clone() if q == slot else exchanged(state, slot, q)
        child.apply(seat, action)
        v = reveal_value(child, known, only)
        if q == slot:
            actual = v
        for s, x in enumerate(v):
            total[s] += x
    return [a - t / len(places) for a, t in zip(actual, total)]
