"""The three games as OpenSpiel Python games (``pip install -e '.[openspiel]'``).

``import arena.openspiel`` registers ``decktet_tightwad``, ``decktet_divers_weights`` and
``decktet_palace``; then ``pyspiel.load_game("decktet_palace", {"players": 4})`` works as
for any OpenSpiel game. What they declare and why:

* Imperfect information. Tightwad is turn-based. Divers Weights (every trick's card,
  R-D3) and Palace (the setup swap, R-P3) have simultaneous decisions, so both are
  ``SIMULTANEOUS`` games; their other decisions are nodes of one player (OpenSpiel allows
  both in one game). At a simultaneous node a seat that does not choose has one action, 0.
* Chance is explicit: the first node is a chance node that draws the deal's seed among
  ``DEALS`` equally likely ones; every later shuffle (Tightwad's rounds, Divers Weights'
  hands) follows from that seed, as in the arena (C2).
* A player's action ids are the indices of the engine's legal actions at that node (the
  ids of ``observation["legal_actions"]``), so ``num_distinct_actions`` is the longest such
  list a game can offer (Palace: a bound; exceeding it raises).
* The observation string of a player is the engine's JSON observation of that seat (C5).
  The information state string is perfect recall: the seat's observation at each of its
  decisions, each followed by its action, then its current observation.
* Returns: ``(n - 1 - place) / (n - 1)``, from 1 (first place) to 0 (last), ties shared.
  ``decision_cap`` (a parameter) ends a game as the arena's cap does (C4).

shimmy's OpenSpiel-to-PettingZoo wrapper is not tested here (docs/rl.md).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyspiel

from games import REGISTRY

DEALS = 1 << 12            # seeds the chance node draws from
_PALACE_ACTIONS = 1 << 14  # a bound on Palace's legal actions at one node


def _params(extra: dict[str, Any]) -> dict[str, Any]:
    return {"players": 0, "decision_cap": 2000, **extra}


_SPECS = {
    # short name: (engine id, long name, dynamics, distinct actions, extra parameters)
    "decktet_tightwad": ("tightwad", "Decktet Tightwad", pyspiel.GameType.Dynamics.SEQUENTIAL, 7, {}),
    "decktet_divers_weights": ("divers-weights", "Decktet Divers Weights",
                               pyspiel.GameType.Dynamics.SIMULTANEOUS, 7, {"bidding": False}),
    "decktet_palace": ("palace", "Decktet Palace", pyspiel.GameType.Dynamics.SIMULTANEOUS, _PALACE_ACTIONS,
                       {"extended": False, "wyrm_variant": False}),
}


def _game_type(short: str) -> pyspiel.GameType:
    engine, long_name, dynamics, _, extra = _SPECS[short]
    spec = REGISTRY[engine]
    return pyspiel.GameType(
        short_name=short, long_name=long_name, dynamics=dynamics,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=spec.max_players, min_num_players=spec.min_players,
        provides_information_state_string=True, provides_information_state_tensor=False,
        provides_observation_string=True, provides_observation_tensor=False,
        parameter_specification=_params(extra))


class DecktetGame(pyspiel.Game):
    """One of the three games; ``players`` 0 means the engine's smallest table."""

    short_name = ""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        engine, _, _, actions, extra = _SPECS[self.short_name]
        p = {**_params(extra), **(params or {})}
        spec = REGISTRY[engine]
        players = int(p["players"]) or spec.min_players
        options = spec.resolve_options(players, {**{k: p[k] for k in extra}, "decision_cap": int(p["decision_cap"])})
        super().__init__(_game_type(self.short_name), pyspiel.GameInfo(
            num_distinct_actions=actions, max_chance_outcomes=DEALS, num_players=players,
            min_utility=0.0, max_utility=1.0, utility_sum=None,
            max_game_length=int(p["decision_cap"]) + 1), p)
        self.engine, self.players, self.options = spec, players, options

    def new_initial_state(self) -> "DecktetState":
        return DecktetState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> "DecktetObserver":
        return DecktetObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False))


class DecktetState(pyspiel.State):
    def __init__(self, game: DecktetGame) -> None:
        super().__init__(game)
        # plain values, not the game object: OpenSpiel's clones copy the state alone
        self._engine, self._players, self._options = game.engine.id, game.players, dict(game.options)
        self._max_actions = game.num_distinct_actions()
        self._st: Any = None          # the engine's state, once the chance node dealt
        self._history: list[list[str]] = [[] for _ in range(game.players)]  # per seat, perfect recall

    # ---- whose turn ----
    def _movers(self) -> tuple[int, ...]:
        return tuple(self._st.to_move())

    def current_player(self) -> int:
        if self._st is None:
            return pyspiel.PlayerId.CHANCE
        if self._st.is_over():
            return pyspiel.PlayerId.TERMINAL
        movers = self._movers()
        if len(movers) > 1:
            return pyspiel.PlayerId.SIMULTANEOUS
        return movers[0]

    def _legal_actions(self, player: int) -> list[int]:
        if self._st is None or self._st.is_over():
            return []
        if player not in self._movers():
            return [0]   # a seat that does not choose at this simultaneous node
        n = len(self._st.legal_actions(player))
        if n > self._max_actions:
            raise ValueError(f"{n} legal actions exceed the declared {self._max_actions}")
        return list(range(n))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(seed, 1.0 / DEALS) for seed in range(DEALS)]

    # ---- moves ----
    def _record(self, seat: int, action: int) -> None:
        self._history[seat].append(self._obs(seat) + f"\n> {action}")

    def _apply_action(self, action: int) -> None:
        if self._st is None:
            self._st = REGISTRY[self._engine].new_game(self._players, int(action), self._options)
            return
        seat = self._movers()[0]
        self._record(seat, action)
        self._st.apply(seat, int(action))

    def _apply_actions(self, actions: list[int]) -> None:
        for seat in self._movers():
            if self._st.is_over() or seat not in self._st.to_move():
                continue
            self._record(seat, actions[seat])
            self._st.apply(seat, int(actions[seat]))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE or self._st is None:
            return f"deal {action}"
        if player not in self._movers():
            return "pass"
        return self._st.action_info(player, int(action))["text"]

    # ---- the end ----
    def is_terminal(self) -> bool:
        return self._st is not None and self._st.is_over()

    def returns(self) -> list[float]:
        n = self._players
        if not self.is_terminal():
            return [0.0] * n
        return [(n - 1 - p) / (n - 1) for p in self._st.result().places]

    # ---- what a seat sees ----
    def _obs(self, seat: int) -> str:
        if self._st is None:
            return "the deal is not made yet"
        return json.dumps(self._st.observation(seat), sort_keys=True, separators=(",", ":"))

    def information_state(self, seat: int) -> str:
        return "\n".join(self._history[seat] + [self._obs(seat)])

    def __str__(self) -> str:
        if self._st is None:
            return "chance: the deal"
        return "\n".join(self._st.observation_text(s) for s in range(self._players))


class DecktetObserver:
    """Strings only (no tensors): the seat's observation, or its perfect-recall history."""

    def __init__(self, iig_obs_type: Any) -> None:
        self.iig_obs_type = iig_obs_type
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, Any] = {}

    def set_from(self, state: DecktetState, player: int) -> None:
        pass

    def string_from(self, state: DecktetState, player: int) -> str:
        if self.iig_obs_type.perfect_recall:
            return state.information_state(player)
        return state._obs(player)


def _register() -> None:
    for short in _SPECS:
        cls = type(f"Game_{short}", (DecktetGame,), {"short_name": short})
        if short not in pyspiel.registered_names():
            pyspiel.register_game(_game_type(short), cls)


_register()
