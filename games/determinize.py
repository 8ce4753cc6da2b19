"""Determinization: complete game states that fit one seat's observation, for search bots.

A bot sees only its observation (ruling C5). ``Determinizer(observation, options)``
reads the public facts from that JSON observation and nothing else (no engine state,
no seed), and each ``sample(rng)`` returns a full ``State`` of the game with every
hidden card placed, drawn uniformly among the placements that fit what the seat has
seen. The bot can then clone it and play moves forward with the real rules::

    det = Determinizer(observation, match.options)
    state = det.sample(rng)           # rng: an int seed, random.Random or DealRng
    state.apply(seat, action_id)      # ids are those of the observation's legal_actions

What "fits" means per game:

* Tightwad: the other hands and the set-aside cards are the unseen cards. A seat that
  played under the controlling rank this round played its lowest rank (R-T3), so it
  holds nothing lower now; samples respect that.
* Divers Weights: the other hands, the deck and the others' unrevealed choices.
* Palace: the other hands, every face-down card not yet revealed (the seat's own too)
  and the draw pile. The observation lists only the events since the seat's previous
  decision, so the public history comes from a ``games.palace_history.PalaceHistory``
  fed every observation of the seat (``history=``): face-up cards swapped into a hand
  (R-P3/R-P17) and eaten piles (R-P8) stay in the hand that took them, and a seat forced
  to eat (R-P8) holds, of the hidden cards it had then, none it could have played.
  Without a history, swapped-in cards the observation does not show are still placed
  in another seat's hand (whose, only the history tells), and eats constrain nothing.
  Where forced eats constrain hands, the constrained cards are mixed by a short Markov
  chain whose stationary law is uniform over the placements that fit (close to
  uniform, not exact). Others' secret setup swaps are sampled as "none". A sample
  reproduces the observation exactly, its recent events included.

Future shuffles of the sampled state (Tightwad's next rounds, Divers Weights' next
hands) come from the sampler's rng too, never from the real game's seed.

For a search bot, ``SeatBelief(game, options)`` does the bookkeeping of a whole match:
``update`` it with every observation of the seat, in order (Palace: the public history
above), and ``sampler(observation, rng)`` gives the draws for one decision: ``sample(rng)``
a state, and ``model_action(state, seat, rng)`` the other seat's choice where the game has
a model of it (two-player Divers Weights without bidding, at the trick being decided:
``games.divers_model``, whose hands are also drawn weighted by what that seat has played),
else None::

    belief = SeatBelief(observation["game"], match.options)   # once a match
    belief.update(observation)                                 # every observation
    sampler = belief.sampler(observation, rng)                 # every decision
    state = sampler.sample(rng)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

from games import decktet
from games.core import SearchRng, State
from games.divers_model import other_seat
from games.palace_history import PalaceHistory
from games.rng import DealRng

if TYPE_CHECKING:
    from games.palace import PalaceState

HIDDEN = -2  # placeholder of a hidden card in the base state


def as_rng(rng: int | DealRng | SearchRng) -> DealRng:
    """An int seed, a ``random.Random`` (its own stream, advanced) or a ``DealRng``."""
    if isinstance(rng, DealRng):
        return rng
    if isinstance(rng, int) and not isinstance(rng, bool):
        return DealRng(rng)
    return DealRng(cast(SearchRng, rng).getrandbits(63))  # a random.Random


class Determinizer:
    """Samples complete states consistent with one JSON observation (see module doc)."""

    def __init__(
        self,
        observation: dict[str, Any],
        options: dict[str, Any],
        known_hands: dict[int, list[int]] | None = None,
        history: PalaceHistory | None = None,
    ) -> None:
        from games import get_game

        self.game = observation["game"]
        self.seat: int = observation["seat"]
        self.spec = get_game(self.game)
        players = observation["players"]
        base = self.spec.new_game(players, 0, options)
        build = {"tightwad": _Tightwad, "divers-weights": _Divers, "palace": _Palace}[self.game]
        if self.game == "palace":
            self._impl = _Palace(cast("PalaceState", base), observation, known_hands or {}, history)
        else:
            self._impl = build(base, observation, known_hands or {})
        self.pool: tuple[int, ...] = tuple(sorted(self._impl.pool))  # the unseen cards

    def sample(self, rng: int | DealRng | SearchRng) -> State:
        """A complete state, hidden cards placed uniformly among those that fit."""
        r = as_rng(rng)
        return self._impl.sample(r)


class SeatModel(Protocol):
    """A game's model of another seat: it reweights each sample and makes that seat's choices
    where it applies (``action`` None elsewhere)."""

    def deal(self, state: State, rng: SearchRng) -> None: ...

    def action(self, state: State, seat: int, rng: SearchRng) -> int | None: ...


class Sampler:
    """The draws for one decision: states that fit the observation, and the model's choices."""

    def __init__(self, determinizer: Determinizer, model: SeatModel | None) -> None:
        self.determinizer = determinizer
        self.model = model

    def sample(self, rng: SearchRng) -> State:
        state = self.determinizer.sample(rng)
        if self.model is not None:
            self.model.deal(state, rng)
        return state

    def model_action(self, state: State, seat: int, rng: SearchRng) -> int | None:
        """The modelled choice of ``seat`` in ``state``, or None where no model decides."""
        return None if self.model is None else self.model.action(state, seat, rng)


class SeatBelief:
    """One seat's view of the hidden cards through a match (see the module doc)."""

    def __init__(self, game: str, options: dict[str, Any]) -> None:
        self.game = game
        self.options = dict(options)
        self.history: PalaceHistory | None = PalaceHistory(options) if game == "palace" else None
        self.memory: dict[str, Any] = {}  # a model's cache across decisions

    def update(self, observation: dict[str, Any]) -> None:
        """Feed every observation of the seat, in order. A history that stops fitting is
        dropped, and the samples then fit the observation alone."""
        if self.history is not None:
            try:
                self.history.update(observation)
            except ValueError:
                self.history = None

    def sampler(self, observation: dict[str, Any], rng: SearchRng) -> Sampler:
        det = Determinizer(observation, self.options, history=self.history)
        model = None
        if self.game == "divers-weights":
            model = other_seat(observation, det.pool, self.memory, rng)
        return Sampler(det, model)


def determinize(
    observation: dict[str, Any],
    options: dict[str, Any],
    rng: int | DealRng | SearchRng,
    known_hands: dict[int, list[int]] | None = None,
    history: PalaceHistory | None = None,
) -> State:
    """One sampled state (``Determinizer(...).sample(rng)``)."""
    return Determinizer(observation, options, known_hands, history).sample(rng)


def _without(cards: list[int], seen: list[int]) -> list[int]:
    gone = set(seen)
    if len(gone) != len(seen):
        raise ValueError("the observation shows a card twice")
    out = [p for p in cards if p not in gone]
    if len(out) != len(cards) - len(gone):
        raise ValueError("the observation shows a card that is not in this game")
    return out


def _common(base: State, obs: dict[str, Any]) -> None:
    base.decisions = obs["decision"]
    base._to_move = tuple(obs["to_move"])
    base._over = obs["over"]
    base._move_cache = {}


# ---- Tightwad ----------------------------------------------------------------------


class _Tightwad:
    def __init__(self, st: Any, obs: dict[str, Any], known: dict[int, list[int]]) -> None:
        from games.tightwad import _sort_key

        rank, suits = decktet.RANK, decktet.SUITS
        n, me = st.players, obs["seat"]
        _common(st, obs)
        st._round, st._dealer, st._hand_size = obs["round"], obs["dealer"], obs["tricks_in_round"]
        st._pen = [list(p) for p in obs["penalty_cards"]]
        st._points = list(obs["penalty_points"])
        plays = obs["trick"]["plays"]
        st._tseats = [p["seat"] for p in plays]
        st._tcards = [p["card"] for p in plays]
        st._ctl = obs["trick"]["control"] if plays else -1
        if plays:
            st._crank, st._csuits = rank[st._tcards[st._ctl]], suits[st._tcards[st._ctl]]
        st._done = [
            (tuple(p["seat"] for p in t["plays"]), tuple(p["card"] for p in t["plays"]), t["control"])
            for t in obs["tricks"]
        ]
        end = obs.get("last_round_end")
        st._last_end = (
            None
            if end is None
            else (
                end["round"],
                tuple(p["seat"] for p in end["last_trick"]["plays"]),
                tuple(p["card"] for p in end["last_trick"]["plays"]),
                end["last_trick"]["control"],
                end["penalty"]["card"],
            )
        )
        st._loser = -1
        st._hands = [[] for _ in range(n)]
        st._hands[me] = sorted(obs["hand"], key=_sort_key)
        seen = list(obs["hand"]) + st._tcards + [p for _, c, _ in st._done for p in c]
        seen += [p for pen in st._pen for p in pen]
        self.pool = _without(decktet.make_deck(st.ndecks), seen)
        self.sizes = [0 if s == me else obs["hand_sizes"][s] for s in range(n)]
        if sum(self.sizes) + obs["set_aside"] != len(self.pool):
            raise ValueError("hand sizes and set-aside count do not match the unseen cards")
        # R-T3: a card under the controlling rank was its player's lowest, so nothing lower is left.
        low = [0] * n
        for seats, cards in [(s, c) for s, c, _ in st._done] + [(st._tseats, st._tcards)]:
            crank, csuits = -1, 0
            for i, (s, p) in enumerate(zip(seats, cards)):
                r = rank[p]
                if i and r < crank:
                    low[s] = max(low[s], r)
                if not i or (suits[p] & csuits and (r > crank or r == decktet.ACE)):
                    crank, csuits = r, suits[p]
        # Most constrained first: with nested eligible sets this stays uniform.
        self.order = sorted((s for s in range(n) if self.sizes[s]), key=lambda s: -low[s])
        self.low = low
        self.key = _sort_key
        self.base = st

    def sample(self, rng: DealRng) -> State:
        st = self.base.clone()
        pool = list(self.pool)
        rng.shuffle(pool)
        rank, low, key = decktet.RANK, self.low, self.key
        for s in self.order:
            k, m = self.sizes[s], low[s]
            if m:
                got = [p for p in pool if rank[p] >= m][:k]
                if len(got) < k:
                    raise ValueError(f"no deal fits: seat {s} cannot hold {k} cards of rank >= {m}")
                taken = set(got)
                pool = [p for p in pool if p not in taken]
            else:
                got, pool = pool[:k], pool[k:]
            st._hands[s] = sorted(got, key=key)
        st._aside = pool
        st._rng = DealRng(rng.next64())
        return cast(State, st)


# ---- Divers Weights ------------------------------------------------------------------


class _Divers:
    def __init__(self, st: Any, obs: dict[str, Any], known: dict[int, list[int]]) -> None:
        from games.divers_weights import PHASE_NAMES, PRIZE

        n, me = st.players, obs["seat"]
        _common(st, obs)
        st.dealer, st.hand_no, st.trick_no = obs["dealer"], obs["hand_number"], obs["trick_number"]
        st._totals = list(obs["scores"])
        st._hand_scores = [tuple(h) for h in obs["hand_scores"]]
        st._threshold = list(obs["threshold"])
        st._prizes = [list(p) for p in obs["prizes"]]
        st._discard = list(obs["discarded"])
        st._tricks = [self._trick(t) for t in obs["tricks"]]
        st._tricks_won = list(obs["tricks_won"])
        st._bids = list(obs["bids"])
        st._phase = PHASE_NAMES.index(obs["phase"])
        prev = obs.get("previous_hand")
        st._last_hand = (
            None
            if prev is None
            else (
                prev["hand_number"],
                prev["dealer"],
                tuple(self._trick(t) for t in prev["tricks"]),
                tuple(tuple(p) for p in prev["prizes"]),
                tuple(prev["tricks_won"]),
                tuple(prev["bids"]),
                tuple(prev["points"]),
            )
        )
        self.hidden_choice: list[int] = []
        if st._phase == PRIZE:
            st._played = list(obs["played"])
            rev = obs["reveal"]
            st._total, st._rule, st._winners = rev["total"], rev["rule"], tuple(rev["winners"])
        else:
            st._played = [None] * n
            st._played[me] = obs["played"][me]
            self.hidden_choice = [s for s in range(n) if s != me and obs["chosen"][s]]
            st._winners = ()
        st._hands = [[] for _ in range(n)]
        st._hands[me] = sorted(obs["hand"])
        seen = list(obs["hand"]) + st._threshold + [p for p in st._played if p is not None]
        seen += [p for pr in st._prizes for p in pr] + st._discard
        self.pool = _without(list(range(decktet.BASIC_SIZE)), seen)
        self.sizes = [0 if s == me else obs["hand_sizes"][s] for s in range(n)]
        self.deck_count = obs["deck_count"]
        if self.deck_count + sum(self.sizes) + len(self.hidden_choice) != len(self.pool):
            raise ValueError("hand sizes and deck count do not match the unseen cards")
        self.base = st

    @staticmethod
    def _trick(t: dict[str, Any]) -> tuple[Any, ...]:
        return (
            tuple(t["threshold"]),
            tuple(t["played"]),
            t["total"],
            tuple(t["winners"]),
            tuple((p["seat"], p["card"]) for p in t["prizes"]),
            t["rule"],
        )

    def sample(self, rng: DealRng) -> State:
        st = self.base.clone()
        pool = list(self.pool)
        rng.shuffle(pool)
        i = self.deck_count
        st._deck = pool[:i]
        for s, k in enumerate(self.sizes):
            if k:
                st._hands[s] = sorted(pool[i : i + k])
                i += k
        for s in self.hidden_choice:
            st._played[s] = pool[i]
            i += 1
        st._rng = DealRng(rng.next64())
        return cast(State, st)


# ---- Palace --------------------------------------------------------------------------


class _Palace:
    def __init__(
        self, st: PalaceState, obs: dict[str, Any], known: dict[int, list[int]], history: PalaceHistory | None
    ) -> None:
        n, me = st.players, obs["seat"]
        _common(st, obs)
        st._dealer = obs["dealer"]
        st._turn = -1 if obs["turn"] is None else obs["turn"]
        st._phase = obs["phase"]
        seen = list(obs["hand"])
        self.slots: list[tuple[int, int]] = []  # hidden face-down (seat, position)
        st._hands = [[] for _ in range(n)]
        st._hands[me] = list(obs["hand"])
        groups: list[list[Any]] = [[] for _ in range(n)]
        if history is not None and history.complete:
            if history.seat != me or history.decision != obs["decision"]:
                raise ValueError("history: update it with this very observation first")
            known = {s: history.known[s] + list(known.get(s, ())) for s in range(n)}
            groups = [[list(g) for g in history.groups[s]] for s in range(n)]
        self.known = {s: list(v) for s, v in known.items() if s != me and v}
        self.sizes = [0] * n
        for s, t in enumerate(obs["tableaux"]):
            st._up[s] = list(t["face_up"])
            seen += t["face_up"]
            kfd = {i: p for i, p in t["known_face_down"]}
            seen += list(kfd.values())
            st._down[s] = [-1] * 4
            st._known[s] = [False] * 4
            for i in t["face_down_positions"]:
                if i in kfd:
                    st._down[s][i] = kfd[i]
                    st._known[s][i] = True
                else:
                    st._down[s][i] = HIDDEN
                    self.slots.append((s, i))
            st._ndown[s] = t["face_down"]
            st._out[s] = t["out"]
            if s != me:
                k = self.known.get(s, [])
                if len(k) > t["hand_size"]:
                    raise ValueError(f"known_hands: seat {s} holds only {t['hand_size']} cards")
                self.sizes[s] = t["hand_size"] - len(k)
                seen += k
        st._out_order = list(obs["out_order"])
        st._pile = list(obs["pile"])
        st._plays = [(p["seat"], tuple(p["cards"])) for p in obs["pile_plays"]]
        tr = obs["trump_ace"]
        st._trump_ace = -1 if tr is None else tr
        st._trump = 0 if tr is None else decktet.SUITS[tr]
        st._removed = list(obs["removed"])
        seen += st._pile + st._removed + ([tr] if tr is not None else [])
        st._set_reference()
        st._swaps = None if obs["swaps"] is None else tuple(tuple(x) for x in obs["swaps"])
        st._pending = {}
        if st._phase == "swap":
            for s in range(n):
                if s not in st._to_move:
                    st._pending[s] = ()  # another seat's secret choice: sampled as no swap
            if obs.get("my_swap"):
                st._pending[me] = tuple((h, u) for h, u in obs["my_swap"])
        # The events since this seat's previous decision, so that the sample's observation
        # is the real one, events included.
        st._log = [_palace_event(e) for e in obs.get("events", ())]
        st._seen, st._last_dec = [0] * n, 0
        self.draw = obs["draw_pile"]
        self.pool = _without(decktet.make_deck(st.ndecks, st.extended), seen)
        if sum(self.sizes) + len(self.slots) + self.draw != len(self.pool):
            raise ValueError("hand sizes, face-down counts and draw pile do not match the unseen cards")
        # A face-up card swapped into a hand (R-P3/R-P17) is public: unless the observation
        # shows it again, it is in some other seat's hand (whose, only the history knows).
        placed = set(seen)
        self.floating: list[int] = []
        if history is None or not history.complete:
            self.floating = sorted({u for s, _, u in (obs["swaps"] or ()) if s != me and u not in placed})
        hidden_hands = sum(self.sizes)
        if len(self.floating) > hidden_hands:
            raise ValueError("the swapped face-up cards do not fit in the other hands")
        self._constrained_setup(groups, me)
        self.base = st

    def _constrained_setup(self, groups: list[list[Any]], me: int) -> None:
        """Hand slots that a forced eat constrains (R-P8): their allowed cards, most
        constrained first."""
        from games.palace_history import allowed

        self.cgroups: list[tuple[int, int, frozenset[int]]] = []  # (seat, count, allowed cards)
        self.free = list(self.sizes)  # hand slots without constraint, per seat
        for s, gs in enumerate(groups):
            if s == me:
                continue
            total = sum(c for c, _ in gs)
            if gs and total != self.sizes[s]:  # no groups: no history
                raise ValueError(f"history: seat {s} has {total} hidden hand cards, the observation {self.sizes[s]}")
            for count, cons in gs:
                if cons:
                    ok = frozenset(p for p in self.pool if allowed(p, cons))
                    if len(ok) < count:
                        raise ValueError(f"history: no deal fits seat {s}'s forced eats")
                    self.cgroups.append((s, count, ok))
                    self.free[s] -= count
        self.cgroups.sort(key=lambda g: len(g[2]))

    def sample(self, rng: DealRng) -> State:
        st = self.base.clone()
        if self.cgroups:
            hands, rest = self._constrained_hands(rng)
        else:
            hands, rest = self._free_hands(rng)
        for s, h in enumerate(hands):
            if h or s in self.known:
                st._hands[s] = self.known.get(s, []) + h
        i = 0
        for s, pos in self.slots:
            st._down[s][pos] = rest[i]
            i += 1
        st._draw = rest[i:]
        st._rng = DealRng(rng.next64())
        return cast(State, st)

    def _free_hands(self, rng: DealRng) -> tuple[list[list[int]], list[int]]:
        """No constraint but the swapped cards: those take uniform places among the hands'
        hidden cards, every other card is uniform among the rest."""
        fl = set(self.floating)
        pool = [p for p in self.pool if p not in fl] if fl else list(self.pool)
        rng.shuffle(pool)
        k = sum(self.sizes) - len(fl)
        in_hands = self.floating + pool[:k]
        if fl:
            rng.shuffle(in_hands)
        hands, i = [], 0
        for size in self.sizes:
            hands.append(in_hands[i : i + size])
            i += size
        return hands, pool[k:]

    def _constrained_hands(self, rng: DealRng) -> tuple[list[list[int]], list[int]]:
        """Forced eats constrain some hand slots: fill those first (most constrained first),
        then mix every constrained slot with random swaps that keep all constraints (a
        symmetric proposal: its stationary law is uniform over the placements that fit)."""
        for _ in range(100):
            pool = list(self.pool)
            rng.shuffle(pool)
            cards: list[int] = []
            oks: list[frozenset[int]] = []
            owner: list[int] = []
            taken: set[int] = set()
            for s, count, ok in self.cgroups:
                got = [p for p in pool if p in ok and p not in taken][:count]
                if len(got) < count:
                    break
                taken.update(got)
                cards += got
                oks += [ok] * count
                owner += [s] * count
            else:
                break
        else:
            raise ValueError("no deal fits the forced eats of the history")
        c = len(cards)
        rest = [p for p in pool if p not in taken]
        everything = cards + rest  # positions >= c are free (any card fits)
        m = len(everything)
        for _ in range(8 * c):
            i = rng.randbelow(c)
            j = rng.randbelow(m - 1)
            if j >= i:
                j += 1
            a, b = everything[i], everything[j]
            if b in oks[i] and (j >= c or a in oks[j]):
                everything[i], everything[j] = b, a
        hands: list[list[int]] = [[] for _ in self.sizes]
        for k in range(c):
            hands[owner[k]].append(everything[k])
        free = everything[c:]
        rng.shuffle(free)
        i = 0
        for s, k in enumerate(self.free):
            hands[s] += free[i : i + k]
            i += k
        return hands, free[i:]


def _palace_event(e: dict[str, Any]) -> tuple[Any, ...]:
    """The engine's log entry of one observed event (inverse of ``PalaceState._event_json``)."""
    t = e["type"]
    if t == "play":
        return ("play", e["seat"], tuple(e["cards"]), tuple(e.get("from_face_up", ())))
    if t == "draw":
        return ("draw", e["seat"], e["count"])
    if t == "reveal":
        return ("reveal", e["seat"], e["position"], e["card"], e["legal"])
    if t == "blow_up":
        tr = e["trump_ace"]
        return ("blow_up", e["seat"], e["cause"], tuple(e["removed"]), -1 if tr is None else tr)
    if t == "eat":
        return ("eat", e["seat"], tuple(e["cards"]))
    if t == "out":
        return ("out", e["seat"], e["place"])
    if t == "loser":
        return ("loser", e["seat"])
    return ("swaps", tuple(tuple(x) for x in e["swaps"]))
