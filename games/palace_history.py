"""Palace's public history as one seat sees it, for ``games.determinize``.

A seat's observation lists only the events since its own previous decision (R-P17),
so the seat's observations, fed to ``PalaceHistory.update`` in order from the first
one, are the whole public history. From it the tracker keeps, for every other seat:

* ``known[s]``: the cards that entered its hand in public and are still there: face-up
  cards swapped into the hand (R-P3, public once every seat has chosen) and eaten piles
  (R-P8, R-P13). A person at the table can follow them (C5).
* ``groups[s]``: its other, hidden hand cards, as groups ``[count, constraints]``
  oldest first (the four dealt cards, then each draw). A forced eat (R-P8: the hand had
  no legal card) tells that every hidden card then in the hand was illegal against the
  pile's reference of that moment; each group in the hand then gets that constraint and
  keeps it while its cards stay. Older groups carry every constraint of newer ones, so
  the sets of cards they allow are nested. A hidden card the seat plays leaves the oldest
  group that allows it: with nested sets that leaves exactly the worlds the history
  allows (any other choice would leave a stricter group behind).

A constraint is ``(mode, reference key, trump suits)`` as the engine keeps them.
"""

from __future__ import annotations

from typing import Any

from games import decktet
from games.palace import HIGHER, ORD, SUITS, TRUMP, TWO

Constraint = tuple[int, int, int]


def illegal(pid: int, c: Constraint) -> bool:
    """Was ``pid`` unplayable against the pile of constraint ``c`` (R-P7; Twos and the
    Excuse are always playable)?"""
    mode, ref, trump = c
    o = ORD[pid]
    if o <= TWO:
        return False
    k = o + TRUMP if SUITS[pid] & trump else o
    return k < ref if mode == HIGHER else k > ref


def allowed(pid: int, constraints: tuple[Constraint, ...]) -> bool:
    return all(illegal(pid, c) for c in constraints)


class PalaceHistory:
    """Feed every observation of one seat, in order, to ``update``; pass the tracker to
    ``Determinizer(..., history=tracker)``. ``complete`` is False when the first
    observation it saw was not of the setup (it then knows only what that one shows)."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = dict(options)
        self.seat = -1
        self.decision = -1
        self.complete = False
        self.known: list[list[int]] = []
        self.groups: list[list[list[Any]]] = []
        self.hand_size: list[int] = []
        self._plays: list[tuple[int, ...]] = []
        self._trump = 0
        self._scratch: Any = None
        self._reveal_eat = -1

    def update(self, obs: dict[str, Any]) -> None:
        """Take the next observation of this seat (its events since the previous one)."""
        if obs.get("game") != "palace":
            raise ValueError("PalaceHistory follows Palace observations only")
        if self.seat < 0:
            self._start(obs)
        else:
            if obs["seat"] != self.seat or obs["decision"] < self.decision:
                raise ValueError("palace history: observations of another seat or out of order")
            for e in obs["events"]:
                self._event(e)
        self.decision = obs["decision"]
        sizes = [t["hand_size"] for t in obs["tableaux"]]
        if sizes != self.hand_size:
            raise ValueError(
                f"palace history: hand sizes {self.hand_size} do not match the "
                f"observation's {sizes} (an observation was missed)"
            )
        # The pile and trump as the observation shows them: the next events start from here.
        self._plays = [tuple(p["cards"]) for p in obs["pile_plays"]]
        tr = obs["trump_ace"]
        self._trump = 0 if tr is None else SUITS[tr]

    def _start(self, obs: dict[str, Any]) -> None:
        from games.palace import SPEC

        n, me = obs["players"], obs["seat"]
        self.seat = me
        self.complete = obs["phase"] == "swap"  # nothing public has happened yet
        self.hand_size = [t["hand_size"] for t in obs["tableaux"]]
        self.known = [[] for _ in range(n)]
        self.groups = [[] if s == me or not self.hand_size[s] else [[self.hand_size[s], ()]] for s in range(n)]
        self._scratch = SPEC.new_game(n, 0, self.options)

    def _reference(self) -> Constraint | None:
        """The constraint a forced eat sets now, or None when any card was playable."""
        st = self._scratch
        st._plays = [(0, c) for c in self._plays]
        st._trump = self._trump
        st._set_reference()
        if st._mode < HIGHER:
            return None
        return (st._mode, st._ref, self._trump)

    def _take_hidden(self, s: int, pid: int) -> None:
        for i, g in enumerate(self.groups[s]):
            if allowed(pid, g[1]):
                g[0] -= 1
                if not g[0]:
                    del self.groups[s][i]
                return
        raise ValueError(
            f"palace history: seat {s} played {decktet.card_name(pid)}, which none of its hidden hand cards could be"
        )

    def _land(self, seat: int, cards: list[int]) -> None:
        if ORD[cards[0]] != 0:  # the Excuse leaves the pile as it was (R-P14)
            self._plays.append(tuple(cards))

    def _event(self, e: dict[str, Any]) -> None:
        t, me = e["type"], self.seat
        s = e.get("seat", -1)
        if t == "swaps":
            for s, h, u in e["swaps"]:
                if s != me:
                    if h in self.known[s]:
                        self.known[s].remove(h)
                    else:
                        self._take_hidden(s, h)
                    self.known[s].append(u)
        elif t == "play":
            ups = e.get("from_face_up", ())
            if self.hand_size[s]:  # R-P5: the hand is the active zone while it holds cards
                for p in e["cards"]:
                    if p in ups:
                        continue
                    self.hand_size[s] -= 1
                    if s != me:
                        if p in self.known[s]:
                            self.known[s].remove(p)
                        else:
                            self._take_hidden(s, p)
            self._land(s, e["cards"])
        elif t == "reveal":
            if e["legal"]:
                self._land(s, [e["card"]])
            else:
                self._reveal_eat = s  # R-P13: this eat tells nothing about a hand
        elif t == "blow_up":
            self._plays = []
            if e["cause"] == "ace":
                self._trump = SUITS[e["trump_ace"]]
        elif t == "draw":
            self.hand_size[s] += e["count"]
            if s != me:
                gs = self.groups[s]
                if gs and not gs[-1][1]:
                    gs[-1][0] += e["count"]
                else:
                    gs.append([e["count"], ()])
        elif t == "eat":
            if s != me:
                c = self._reference() if self._reveal_eat != s else None
                if c is not None:
                    for g in self.groups[s]:
                        g[1] = g[1] + (c,)
                self.known[s].extend(e["cards"])
            self.hand_size[s] += len(e["cards"])
            self._plays = []
            self._reveal_eat = -1
