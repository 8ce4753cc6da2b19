"""The state interface shared by every game, and the game specs.

A game is a ``GameSpec`` (what it is, which options it takes) plus a ``State``
subclass (the rules). The contract, used by the referee, the bots' observations
and the tests alike:

* ``state.to_move()``: the seats that must decide now. One seat usually; several
  for a simultaneous decision (each applies its own action; the step resolves
  when the last one has). Empty once the game is over.
* ``state.legal_actions(seat)``: ``range(k)``; action ids are indexes into the
  decision's canonical list of moves, so the same position always numbers its
  moves the same way. ``state.action_info(seat, id)`` gives a JSON-ready dict
  with ``id``, ``text`` (card names) and the move's structured fields.
* ``state.apply(seat, id)``: plays it; anything illegal raises
  ``IllegalActionError`` naming the seat and the action.
* ``state.observation(seat)``: a JSON-ready dict of what that seat may know
  (ruling C5), with its legal actions inside.
* ``state.result()``: places (0 = best, ties shared), scores, and ``capped``.

What a search needs (the search hooks): a search bot (``bots/search/search_bot.py``) plays
any game through these, with no game of its own in it. Each has a default here that is
right for a game with nothing special to say; a game overrides what it knows better.

* ``state.rollout_action(seat, rng)``: a fast randomised rule move (default: uniformly
  random), for the seats and the stretches of play a search does not search. ``rng`` is a
  ``random.Random``-like generator the caller owns (``SearchRng``).
* ``state.action_keys(seat)``: one hashable key per legal action, in id order, that names
  the move the same way in every state the seat cannot tell apart, so a search tree can
  pool its statistics across sampled deals (default: the engine's internal move). A key
  may carry public context that the choice depends on.
* ``state.horizon()``: which stretch of play this is (a Tightwad round, a Divers Weights
  hand; default: the whole game); a simulation stops when it changes and is scored there.
  ``rollout_decisions`` caps the decisions of one simulation (None: no cap), the standing
  then scoring it.
* ``state.points()``: the public running points that ``returns`` measures gains against
  (taken at the start of a simulation; None if only places count).
* ``state.standing_places()``: places (0 = best) by the result, or by the current standing
  (C4) while the game goes on; ``standing_keys()`` is that order (lower is better).
* ``state.returns(seat, start)``: how well ``seat`` did, in [0, 1] (1 = first), by its
  place and, where the game has points, by what it gained since ``start`` against the
  others (a long lead must not flatten every outcome to the same value).
* ``search_opponents``: True where a search should search the other seats' choices too
  (each by its own statistics, decoupled at a simultaneous decision) rather than play
  them by ``rollout_action``.
* ``State.rule_action(observation)``: a decision the game settles by a fixed rule instead
  of search (Palace's setup swap), as an action id; None elsewhere.

Sampling the hidden cards from one seat's observation (chance and hidden information) is
``games.determinize``: ``SeatBelief`` follows a seat's observations through a match and
draws full states that fit them, with a game's model of the other seat where it has one.

Engines are pure: standard library only, no I/O, no global random state.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar

from games import decktet
from games.rng import DealRng

_T = TypeVar("_T")


class SearchRng(Protocol):
    """What the search hooks draw from: the methods of ``random.Random`` they use (the
    engines themselves never import ``random``)."""

    def random(self) -> float: ...

    def randrange(self, start: int, stop: int | None = ..., step: int = ...) -> int: ...

    def choice(self, seq: Sequence[_T]) -> _T: ...

    def sample(self, population: Sequence[_T], k: int) -> list[_T]: ...

    def shuffle(self, x: list[Any]) -> None: ...

    def gauss(self, mu: float = ..., sigma: float = ...) -> float: ...

    def getrandbits(self, k: int) -> int: ...


class GameError(Exception):
    """Base of the errors the engines raise."""


class IllegalActionError(GameError, ValueError):
    """An action that is not legal for this seat now."""

    def __init__(self, seat: int, action: object, reason: str) -> None:
        self.seat = seat
        self.action = action
        self.reason = reason
        super().__init__(f"illegal action {action!r} for seat {seat}: {reason}")


class OptionError(GameError, ValueError):
    """A bad game option or player count; the message says the fix."""

    def __init__(self, game: str, option: str, message: str) -> None:
        self.game = game
        self.option = option
        super().__init__(f"{game}: option '{option}': {message}")


@dataclass(frozen=True)
class Option:
    """One rule option: its type, default and bounds."""

    name: str
    default: Any
    doc: str
    kind: type = int
    min: int | None = None
    max: int | None = None
    choices: tuple[Any, ...] = ()  # extra accepted literal values, e.g. ("auto",)
    nullable: bool = False

    def validate(self, game: str, value: Any) -> Any:
        if value is None and self.nullable:
            return None
        if value in self.choices and type(value) is not bool:
            return value
        if self.kind is bool:
            if type(value) is not bool:
                raise OptionError(
                    game, self.name, f"expected true or false, got {value!r}; write true or false, unquoted"
                )
            return value
        if self.kind is int:
            extra = "".join(f" or '{c}'" for c in self.choices)
            if type(value) is not int:
                raise OptionError(game, self.name, f"expected an integer{extra}, got {value!r}; {self._use(extra)}")
            if self.min is not None and value < self.min:
                raise OptionError(game, self.name, f"must be at least {self.min}, got {value}; {self._use(extra)}")
            if self.max is not None and value > self.max:
                raise OptionError(game, self.name, f"must be at most {self.max}, got {value}; {self._use(extra)}")
            return value
        raise OptionError(game, self.name, f"unsupported option kind {self.kind}")

    def _use(self, extra: str) -> str:
        """The fix of a bad integer: the range it must lie in."""
        if self.min is not None and self.max is not None:
            return f"use an integer from {self.min} to {self.max}{extra}"
        if self.min is not None:
            return f"use an integer of at least {self.min}{extra}"
        if self.max is not None:
            return f"use an integer of at most {self.max}{extra}"
        return f"use an integer{extra}"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.kind.__name__,
            "default": self.default,
            "min": self.min,
            "max": self.max,
            "choices": list(self.choices),
            "nullable": self.nullable,
            "doc": self.doc,
        }


@dataclass(frozen=True)
class GameSpec:
    """What a game is, declared up front (the registry lists these)."""

    id: str
    title: str
    rules_version: str
    min_players: int
    max_players: int
    simultaneous: bool
    options: tuple[Option, ...]
    state_class: type[State] = field(repr=False, compare=False)
    check_options: Callable[[int, dict[str, Any]], None] | None = field(default=None, repr=False, compare=False)

    def option(self, name: str) -> Option:
        for o in self.options:
            if o.name == name:
                return o
        raise KeyError(name)

    def resolve_options(self, players: int, options: dict[str, Any] | None = None) -> dict[str, Any]:
        """Defaults filled in, every value checked; raises OptionError."""
        if type(players) is not int or not self.min_players <= players <= self.max_players:
            raise OptionError(
                self.id, "players", f"{self.id} takes {self.min_players} to {self.max_players} players, got {players!r}"
            )
        given = dict(options or {})
        known = {o.name for o in self.options}
        for name in given:
            if name not in known:
                raise OptionError(self.id, name, f"unknown option; known: {', '.join(sorted(known))}")
        out = {o.name: o.validate(self.id, given.get(o.name, o.default)) for o in self.options}
        if self.check_options is not None:
            self.check_options(players, out)
        return out

    def new_game(self, players: int, seed: int, options: dict[str, Any] | None = None) -> State:
        """The initial state of a deal: fully fixed by (players, options, seed)."""
        return self.state_class(players, seed, self.resolve_options(players, options))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "rules_version": self.rules_version,
            "min_players": self.min_players,
            "max_players": self.max_players,
            "simultaneous": self.simultaneous,
            "options": [o.to_json() for o in self.options],
        }


@dataclass(frozen=True)
class Result:
    places: tuple[int, ...]
    scores: tuple[float, ...]
    capped: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"places": list(self.places), "scores": list(self.scores), "capped": self.capped}


def places_from_keys(keys: Sequence[Any]) -> tuple[int, ...]:
    """Competition ranking, lower key is better: place = seats strictly better."""
    return tuple(sum(1 for other in keys if other < k) for k in keys)


MAX_DECISION_CAP = 10_000_000  # a cap beyond this is no cap (C4): hours of one match


def cap_option(default: int) -> Option:
    return Option(
        "decision_cap",
        default,
        "Hard cap on decisions (ruling C4); a capped game ends with places by the current standing.",
        min=1,
        max=MAX_DECISION_CAP,
    )


class State:
    """Base of every game's state. Subclasses implement the underscored hooks."""

    spec: ClassVar[GameSpec]
    _rng: DealRng  # each game's own deal generator (C2)

    def __init__(self, players: int, seed: int, options: dict[str, Any]) -> None:
        self.players = players
        self.seed = seed
        self.options = options
        self.decisions = 0
        self.cap: int = options["decision_cap"]
        self.capped = False
        self._over = False
        self._to_move: tuple[int, ...] = ()
        self._move_cache: dict[int, list[Any]] = {}

    # ---- the public interface -------------------------------------------------

    def to_move(self) -> tuple[int, ...]:
        return self._to_move

    def is_over(self) -> bool:
        return self._over

    def moves(self, seat: int) -> list[Any]:
        """The internal moves of a seat now, in canonical (id) order."""
        cached = self._move_cache.get(seat)
        if cached is None:
            cached = self._legal_moves(seat) if seat in self._to_move else []
            self._move_cache[seat] = cached
        return cached

    def legal_actions(self, seat: int) -> range:
        return range(len(self.moves(seat)))

    def action_info(self, seat: int, action: int) -> dict[str, Any]:
        moves = self.moves(seat)
        if type(action) is not int or not 0 <= action < len(moves):
            raise IllegalActionError(seat, action, f"no such action (legal ids 0..{len(moves) - 1})")
        info = {"id": action, "text": self._move_text(seat, moves[action])}
        info.update(self._move_fields(seat, moves[action]))
        return info

    def _action_infos(self, seat: int) -> list[dict[str, Any]]:
        """Every legal action's ``action_info``, in id order (a game may build them in one pass)."""
        return [self.action_info(seat, i) for i in range(len(self.moves(seat)))]

    def action_text(self, seat: int, action: int) -> str:
        return str(self.action_info(seat, action)["text"])

    def apply(self, seat: int, action: int) -> None:
        if self._over:
            raise IllegalActionError(seat, action, "the game is over")
        if seat not in self._to_move:
            raise IllegalActionError(seat, action, f"seat {seat} is not to move (to move: {list(self._to_move)})")
        moves = self.moves(seat)
        if type(action) is not int or not 0 <= action < len(moves):
            raise IllegalActionError(seat, action, f"no such action (legal ids 0..{len(moves) - 1})")
        self._apply(seat, moves[action])
        self._move_cache.clear()
        self.decisions += 1
        if not self._over and self.decisions >= self.cap:
            self.capped = True
            self._over = True
            self._to_move = ()

    def observation(self, seat: int) -> dict[str, Any]:
        """JSON-ready view of one seat (C5), legal actions included."""
        if type(seat) is not int or not 0 <= seat < self.players:
            raise ValueError(f"no seat {seat!r} in a {self.players}-player game")
        obs: dict[str, Any] = {
            "game": self.spec.id,
            "seat": seat,
            "players": self.players,
            "decision": self.decisions,
            "to_move": list(self._to_move),
            "over": self._over,
        }
        obs.update(self._observe(seat))
        obs["legal_actions"] = self._action_infos(seat)
        return obs

    def observation_text(self, seat: int) -> str:
        """A short human-readable view of one seat, for traces."""
        return self._observe_text(seat)

    def result(self) -> Result:
        if not self._over:
            raise GameError("result() asked before the game is over")
        return self._result()

    def _fast_clone(self, nested: tuple[str, ...], flat: tuple[str, ...]) -> State:
        """A copy without deepcopy: lists of lists in ``nested`` and lists in ``flat`` are
        copied, everything else is shared (immutable) or rebuilt (rng, move cache, options)."""
        new = object.__new__(type(self))
        d = self.__dict__.copy()
        for k in nested:
            d[k] = [x.copy() for x in d[k]]
        for k in flat:
            d[k] = d[k].copy()
        d["_rng"] = DealRng(0)
        d["_rng"].setstate(self._rng.getstate())
        d["_move_cache"] = {}
        d["options"] = dict(self.options)
        new.__dict__ = d
        return new

    def clone(self) -> State:
        return copy.deepcopy(self)

    def card_table(self) -> list[dict[str, Any]]:
        """Every physical card of this game, described once (sent to bots at start)."""
        decks = self._decks()
        return [decktet.card_info(p, decks) for p in sorted(self.all_cards())]

    def card_name(self, pid: int) -> str:
        return decktet.card_name(pid, self._decks())

    # ---- what a search needs (see the module doc) ------------------------------

    search_opponents: ClassVar[bool] = False
    rollout_decisions: ClassVar[int | None] = None

    def rollout_action(self, seat: int, rng: SearchRng) -> int:
        """A fast randomised move for ``seat`` now (default: uniformly random)."""
        return rng.randrange(len(self.moves(seat)))

    def action_keys(self, seat: int) -> list[Hashable]:
        """One key per legal action of ``seat``, in id order, the same in every state the
        seat cannot tell apart (default: the engine's internal moves)."""
        return list(self.moves(seat))

    def horizon(self) -> Hashable:
        """The stretch of play a simulation stays in (default: the whole game)."""
        return 0

    def points(self) -> tuple[float, ...] | None:
        """The public running points ``returns`` measures gains against (default: none)."""
        return None

    def standing_keys(self) -> Sequence[Any]:
        """Every seat's order key by the current standing (C4), lower is better."""
        raise NotImplementedError

    def standing_places(self) -> tuple[int, ...]:
        """Places (0 = best): the result's once over, else by the current standing."""
        return self.result().places if self._over else places_from_keys(self.standing_keys())

    def returns(self, seat: int, start: Sequence[float] | None) -> float:
        """How well ``seat`` did, in [0, 1]: 1 first, 0 last (default: by place alone)."""
        return 1.0 - self.standing_places()[seat] / (self.players - 1)

    @staticmethod
    def rule_action(observation: dict[str, Any]) -> int | None:
        """The action id a fixed rule plays at this observation instead of a search, or None."""
        return None

    # ---- hooks for tests ------------------------------------------------------

    def all_cards(self) -> list[int]:
        """Every physical card wherever it is (conservation checks)."""
        raise NotImplementedError

    def with_hidden_shuffled(self, seat: int, rng: DealRng) -> State:
        """A copy where the cards hidden from ``seat`` are permuted among their
        hidden places; ``seat``'s observation must not change (C5)."""
        raise NotImplementedError

    # ---- hooks each game implements -------------------------------------------

    def _decks(self) -> int:
        return 1

    def _legal_moves(self, seat: int) -> list[Any]:
        raise NotImplementedError

    def _move_text(self, seat: int, move: Any) -> str:
        raise NotImplementedError

    def _move_fields(self, seat: int, move: Any) -> dict[str, Any]:
        return {}

    def _apply(self, seat: int, move: Any) -> None:
        raise NotImplementedError

    def _observe(self, seat: int) -> dict[str, Any]:
        raise NotImplementedError

    def _observe_text(self, seat: int) -> str:
        raise NotImplementedError

    def _result(self) -> Result:
        raise NotImplementedError
