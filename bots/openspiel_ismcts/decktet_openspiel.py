"""The three games as OpenSpiel Python games: ``import arena.openspiel`` registers them.

What lives here: the bridge (``games`` wrapped as ``pyspiel.Game`` / ``pyspiel.State``) and
nothing else. It may import only ``games`` (and ``pyspiel``, from the optional ``openspiel``
extra: ``pip install -e '.[openspiel]'``), like ``arena.rl``.

    import pyspiel, arena.openspiel
    game = pyspiel.load_game("decktet_tightwad", {"players": 4})

Registered names: ``decktet_tightwad``, ``decktet_divers_weights``, ``decktet_palace``.
Parameters: ``players``, each game's options (``decision_cap``; Divers Weights ``hands``,
``target``, ``bidding``; Palace ``extended``, ``decks``, ``wyrm_variant``; a null option is
written 0, Palace ``decks: auto`` too), ``deals`` (how many seeded deals the chance node picks
among) and, for the two games with simultaneous decisions, ``simultaneous``.

Choices, and why (docs/openspiel.md says more):

* Imperfect information, zero sum: returns are ``(seats placed below me - seats placed
  above me) / (players - 1)``, in [-1, 1], summing to 0 (ties share a place).
* Chance: one chance node opens the game; its outcome ``o`` in ``range(deals)`` is the deal
  seed, all equally likely. The engines deal (and shuffle later hands and rounds) from that
  seed, so this is the only chance node. A card-by-card chance deal would need the engines to
  deal from outside, which they do not.
* Divers Weights and Palace are SIMULTANEOUS games (the card every seat plays to a trick and
  the Palace setup swap are simultaneous nodes; the rest, a lone trick winner's prize choice
  among them (tied winners take their own cards, R-D5), are ordinary single-player nodes). At a simultaneous node a seat with nothing to decide has one
  action, 0, which does nothing. With ``simultaneous=false`` the same game is SEQUENTIAL
  with hidden moves: the seats of a simultaneous step choose one after the other, and a choice
  stays hidden from the others until the step resolves (the engine's observation already hides
  it, ruling C5). OpenSpiel's ISMCTS needs that form (it asserts sequential dynamics).
* Observation string: the engine's JSON observation of the seat (ruling C5), keys sorted.
  Information state string: the seat, a digest of every observation it has had since the deal
  and every action it took (perfect recall), then its current observation.
* ``resample_from_infostate`` draws a world from the seat's observation with
  ``games.determinize`` (what the reference search bot uses), so ISMCTS can run on them; in
  Palace a world that also fits the seat's public history (``games.palace_history``).
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

try:
    import numpy as np
    import pyspiel
except ImportError as err:  # the optional extra: one line saying how to install it
    raise ModuleNotFoundError(
        f"arena.openspiel needs the openspiel extra ({err}): pip install -e '.[openspiel]'"
    ) from None

from games import REGISTRY
from games.determinize import Determinizer
from games.palace_history import PalaceHistory

DEFAULT_DEALS = 1000
# Bounds on an engine's legal action ids (they index the position's move list); a position with
# more raises instead of handing OpenSpiel an id outside the game's action space.
MAX_ACTIONS = {"tightwad": 128, "divers-weights": 128, "palace": 2048}
DEFAULT_PLAYERS = {"tightwad": 4, "divers-weights": 4, "palace": 4}
NAMES = {"tightwad": "decktet_tightwad", "divers-weights": "decktet_divers_weights", "palace": "decktet_palace"}
# What games.palace_history reads of a Palace observation (and "tableaux", of which only the hand
# sizes): a seat's observations at its decisions are kept that small, for its public history.
HISTORY_KEYS = ("game", "seat", "players", "decision", "phase", "events", "pile_plays", "trump_ace")


def _engine_params(game_id: str) -> dict[str, Any]:
    """The OpenSpiel parameter specification of a game: its options, null and 'auto' as 0."""
    spec = REGISTRY[game_id]
    params: dict[str, Any] = {"players": DEFAULT_PLAYERS[game_id], "deals": DEFAULT_DEALS}
    for o in spec.options:
        d = o.default
        params[o.name] = bool(d) if o.kind is bool else (0 if d is None or isinstance(d, str) else int(d))
    if spec.simultaneous:
        params["simultaneous"] = True
    return params


def _options(game_id: str, params: dict[str, Any]) -> dict[str, Any]:
    spec = REGISTRY[game_id]
    out: dict[str, Any] = {}
    for o in spec.options:
        v = params[o.name]
        if o.kind is bool:
            out[o.name] = bool(v)
        elif v == 0 and o.nullable:
            out[o.name] = None
        elif v == 0 and o.choices:
            out[o.name] = o.choices[0]
        else:
            out[o.name] = int(v)
    return out


def _game_type(game_id: str, simultaneous: bool, players: tuple[int, int]) -> pyspiel.GameType:
    spec = REGISTRY[game_id]
    dyn = pyspiel.GameType.Dynamics
    return pyspiel.GameType(
        short_name=NAMES[game_id],
        long_name=f"Decktet {spec.title}",
        dynamics=dyn.SIMULTANEOUS if simultaneous else dyn.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=players[1],
        min_num_players=players[0],
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=False,
        parameter_specification=_engine_params(game_id),
    )


def _digest(*parts: str) -> str:
    return hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()


class GameConfig:
    """What a state needs of its game."""

    def __init__(self, game_id: str, players: int, deals: int, options: dict[str, Any], simultaneous: bool) -> None:
        self.game_id, self.players, self.deals = game_id, players, deals
        self.options, self.simultaneous = options, simultaneous


class DecktetGame(pyspiel.Game):
    """One of the three games at a player count and option set."""

    game_id = ""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        spec = REGISTRY[self.game_id]
        full = _engine_params(self.game_id)
        full.update(params or {})
        self.players = int(full["players"])
        self.deals = int(full["deals"])
        if self.deals < 1:
            raise ValueError(f"{NAMES[self.game_id]}: parameter 'deals' must be at least 1")
        self.options = spec.resolve_options(self.players, _options(self.game_id, full))
        self.simultaneous = bool(full.get("simultaneous", False))
        cap = self.options["decision_cap"]
        info = pyspiel.GameInfo(
            num_distinct_actions=MAX_ACTIONS[self.game_id],
            max_chance_outcomes=self.deals,
            num_players=self.players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=cap,
        )
        game_type = _game_type(self.game_id, self.simultaneous, (spec.min_players, spec.max_players))
        super().__init__(game_type, info, full)
        self.config = GameConfig(self.game_id, self.players, self.deals, self.options, self.simultaneous)

    def new_initial_state(self) -> DecktetState:
        return DecktetState(self)

    def max_chance_nodes_in_history(self) -> int:
        """The deal is the one chance node (pyspiel's default for a Python game is one per decision)."""
        return 1

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> DecktetObserver:
        """One seat's view, with or without perfect recall. The engines' observations mix public
        and private information, so a public-only observer (or an all-seeing one) is refused
        rather than handed the seat's hand."""
        if iig_obs_type is not None and (
            not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError(
                f"{NAMES[self.game_id]}: observers give one seat's own view only "
                "(public_info=True, private_info=SINGLE_PLAYER)"
            )
        recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return DecktetObserver(recall)


class DecktetState(pyspiel.State):
    """An engine state behind a chance node that picks the deal seed."""

    def __init__(self, game: DecktetGame) -> None:
        super().__init__(game)
        self._g = game.config  # plain data: pyspiel may copy states without their game object
        self.engine: Any = None  # None until the deal
        self._chain = [""] * game.players  # per seat: digest of its observations so far
        self._public: tuple[int, Any] | None = None  # (seat, its Palace public history), see below
        self._samplers: dict[int, Determinizer] = {}  # per seat, while no move is applied
        # Palace, per seat: its observation now, and as JSON those it had at its decisions, cut
        # to what its public history needs (_history_view; resample_from_infostate). Never
        # changed once made, so clones share them; strings, as pickle copies those fast.
        self._views: list[dict[str, Any] | None] = [None] * game.players
        self._decided: list[tuple[str, ...]] = [()] * game.players

    # ---- the deal -------------------------------------------------------------------
    def chance_outcomes(self) -> list[tuple[int, float]]:
        p = 1.0 / self._g.deals
        return [(o, p) for o in range(self._g.deals)]

    def _deal(self, seed: int) -> None:
        self.engine = REGISTRY[self._g.game_id].new_game(self._g.players, seed, self._g.options)
        self._observe_all({})

    # ---- who moves --------------------------------------------------------------------
    def current_player(self) -> int:
        if self.engine is None:
            return pyspiel.PlayerId.CHANCE
        if self.engine.is_over():
            return pyspiel.PlayerId.TERMINAL
        movers = self.engine.to_move()
        if len(movers) > 1 and self._g.simultaneous:
            return pyspiel.PlayerId.SIMULTANEOUS
        return movers[0]

    def _legal_actions(self, player: int) -> list[int]:
        if self.engine is None or self.engine.is_over():
            return []
        if player not in self.engine.to_move():
            return [0] if self._g.simultaneous and len(self.engine.to_move()) > 1 else []
        if not self._g.simultaneous and player != self.engine.to_move()[0]:
            return []
        n = len(self.engine.legal_actions(player))
        if n > MAX_ACTIONS[self._g.game_id]:
            raise ValueError(
                f"{NAMES[self._g.game_id]}: {n} legal actions, above the bound "
                f"{MAX_ACTIONS[self._g.game_id]} (raise MAX_ACTIONS)"
            )
        return list(range(n))

    # ---- moves ------------------------------------------------------------------------
    def _apply_action(self, action: int) -> None:
        self._public, self._samplers = None, {}
        if self.engine is None:
            self._deal(int(action))
            return
        seat = self.current_player()
        self._note_decision(seat)
        self.engine.apply(seat, int(action))
        self._observe_all({seat: int(action)})

    def _apply_actions(self, actions: list[int]) -> None:
        self._public, self._samplers = None, {}
        movers = self.engine.to_move()
        for seat in movers:  # the engine resolves the step when the last of them has chosen
            if self.engine.is_over():
                break  # the decision cap ended the game within the step
            self._note_decision(seat)
            self.engine.apply(seat, int(actions[seat]))
        self._observe_all({s: int(actions[s]) for s in movers})

    def _observe_all(self, acted: dict[int, int]) -> None:
        for s in range(self._g.players):
            own = f"a{acted[s]}" if s in acted else ""
            obs = self.engine.observation(s)
            self._chain[s] = _digest(self._chain[s], own, json.dumps(obs, sort_keys=True, separators=(",", ":")))
            if self._g.game_id == "palace":
                self._views[s] = _history_view(obs)

    def _note_decision(self, seat: int) -> None:
        """Palace: keep what the seat saw as it decided, as a bot keeps it for its history."""
        if self._g.game_id == "palace":
            view = self._views[seat] or _history_view(self.engine.observation(seat))
            self._decided[seat] += (json.dumps(view, separators=(",", ":")),)

    def _public_history(self, player: int) -> PalaceHistory | None:
        """Palace: the seat's public history (games.palace_history) from what it saw at each of
        its decisions and sees now; None before its first decision, in a world resampled for
        another seat (its past is not known there), in the other games, or if it does not fit."""
        if self._g.game_id != "palace" or not self._decided[player]:
            return None
        history = PalaceHistory(self._g.options)
        try:
            for view in self._decided[player]:
                history.update(json.loads(view))
            history.update(self.engine.observation(player))
        except ValueError:
            return None
        return history

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {action}"
        if self.engine is None or player not in self.engine.to_move():
            return f"seat {player}: action {action}"
        return f"seat {player}: {self.engine.action_text(player, action)}"

    # ---- the end ----------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self.engine is not None and self.engine.is_over()

    def returns(self) -> list[float]:
        n = self._g.players
        if not self.is_terminal():
            return [0.0] * n
        places = self.engine.result().places
        return [(sum(q > p for q in places) - sum(q < p for q in places)) / (n - 1) for p in places]

    # ---- what a seat sees -------------------------------------------------------------
    def observation_json(self, player: int) -> str:
        if self.engine is None:
            return json.dumps({"seat": player, "dealt": False})
        return json.dumps(self.engine.observation(player), sort_keys=True, separators=(",", ":"))

    def information_state(self, player: int) -> str:
        """The history digest, then the current observation without Palace's list of recent
        events (the digest holds them already; a resampled world cannot replay them)."""
        if self.engine is None:
            return f"seat {player} history {self._chain[player]}"
        obs = self.engine.observation(player)
        obs.pop("events", None)
        return f"seat {player} history {self._chain[player]}\n" + json.dumps(obs, sort_keys=True, separators=(",", ":"))

    def resample_from_infostate(self, player: int, sampler: Any = None) -> DecktetState:
        """A state drawn from ``player``'s observation (games.determinize), same information
        state; in Palace, a world the seat's public history allows (cards taken into a hand in
        public stay there): the history followed from the deal, or the one a state was built
        with (``state_from_observation``). The sampler is kept until a move is applied (ISMCTS
        resamples its root once per simulation)."""
        if self.engine is None:
            return self.clone()
        seed = int(sampler() * 2**62) if sampler is not None else random.getrandbits(62)
        det = self._samplers.get(player)
        if det is None:
            if self._public and self._public[0] == player:
                public = self._public[1]
            else:
                public = self._public_history(player)
            det = self._samplers[player] = Determinizer(
                self.engine.observation(player), self._g.options, history=public
            )
        world = det.sample(seed)
        new = self.get_game().new_initial_state()
        new.engine = world
        # The others' histories are not known; they start from this seat's (public to it) view.
        new._chain = [
            self._chain[s] if s == player else _digest(self._chain[player], f"seat{s}") for s in range(self._g.players)
        ]
        new._decided[player] = self._decided[player]
        return new

    def clone(self) -> DecktetState:
        """pyspiel's own clone, which alone copies the history (``history()``, ``move_number()``,
        ``serialize()``), but without the engine in it: its deepcopy is the slow part."""
        kept = self.engine, self._samplers, self._public, self._views, self._decided
        try:  # restored even if a timer's exception (bots/openspiel_ismcts) lands in between
            self.engine, self._samplers, self._public, self._views, self._decided = None, {}, None, [], []
            new: DecktetState = super().clone()
        finally:
            self.engine, self._samplers, self._public, self._views, self._decided = kept
        new.engine = None if kept[0] is None else kept[0].clone()
        new._views, new._decided = list(kept[3]), list(kept[4])
        return new

    def __str__(self) -> str:
        if self.engine is None:
            return "before the deal"
        return "\n".join(self.engine.observation_text(s) for s in range(self._g.players))


def state_from_observation(
    game: DecktetGame, observation: dict[str, Any], history: str = "", seed: int = 0, public: Any = None
) -> DecktetState:
    """A state of ``game`` drawn from one seat's JSON observation, as a bot process sees it
    (games.determinize): that seat to move first, ``history`` its information state's digest
    (a bot digests the observations it has had, ``digest(history, json)``). Within a
    simultaneous step the order of choosing does not change the rules, so it goes first.
    Palace: ``public`` is the seat's ``games.palace_history.PalaceHistory``, fed every
    observation so far; this world and the state's resamples for that seat then fit it."""
    seat = observation["seat"]
    world = Determinizer(observation, game.config.options, history=public).sample(seed)
    movers = world.to_move()
    if seat in movers:
        world._to_move = (seat,) + tuple(s for s in movers if s != seat)
        world._move_cache = {}
    state = game.new_initial_state()
    state.engine = world
    state._chain = [history if s == seat else _digest(history, f"seat{s}") for s in range(game.players)]
    state._public = (seat, public) if public is not None else None
    return state


def _history_view(obs: dict[str, Any]) -> dict[str, Any]:
    """A Palace observation cut to what games.palace_history reads of it."""
    view = {k: obs[k] for k in HISTORY_KEYS}
    view["tableaux"] = [{"hand_size": t["hand_size"]} for t in obs["tableaux"]]
    return view


def digest(history: str, observation: dict[str, Any]) -> str:
    """The next history digest after one more observation."""
    return _digest(history, json.dumps(observation, sort_keys=True, separators=(",", ":")))


class DecktetObserver:
    """Observation (or, with perfect recall, information state) strings; no tensor."""

    def __init__(self, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, Any] = {}

    def set_from(self, state: DecktetState, player: int) -> None:
        pass

    def string_from(self, state: DecktetState, player: int) -> str:
        return state.information_state(player) if self.perfect_recall else state.observation_json(player)


def _register() -> None:
    for game_id, name in NAMES.items():
        if name in pyspiel.registered_names():
            continue
        cls = type(f"Decktet{REGISTRY[game_id].title.replace(' ', '')}Game", (DecktetGame,), {"game_id": game_id})
        spec = REGISTRY[game_id]
        pyspiel.register_game(_game_type(game_id, spec.simultaneous, (spec.min_players, spec.max_players)), cls)


_register()
