"""PettingZoo AEC environments for the three games (``pip install -e '.[rl]'``).

One class, ``DecktetEnv``, serves every game; ``env(game, ...)`` wraps it the way
PettingZoo's classic environments are wrapped. ``engine`` is the game's engine state
(``games``; named so as not to shadow PettingZoo's ``state()``), ``deal_seed`` its seed. Agents are ``player_0`` ..
``player_{n-1}`` (seat numbers). Each agent's observation is a dict:

* ``observation``: ``encoding.encode`` of its JSON observation (float64 in [0, 1]);
* ``action_mask``: int8 over the game's fixed action slots (``encoding``).

``infos[agent]["observation"]`` is the JSON observation itself (what a bot would
be sent) for the agent about to act, and for every agent once the game is over;
an agent that is not deciding has an empty info, so a step costs one JSON view,
not one per seat. A simultaneous decision (Divers Weights tricks, the Palace
swap) is asked seat by seat; nobody sees another's choice before it resolves,
as in the engines.

Rewards come once, at the end: ``1 - 2 * place / (players - 1)``, so first is
+1 and last -1 (shared places share the reward). A game ended by its decision
cap (ruling C4) is a truncation, still rewarded by its standing.
"""

from __future__ import annotations

import operator
import random
from typing import Any

try:
    import numpy as np
    from gymnasium import spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ImportError as err:  # the optional extra: one line saying how to install it
    raise ModuleNotFoundError(f"arena.rl.env needs the rl extra ({err}): pip install -e '.[rl]'") from None

from arena.rl import encoding
from games import get_game


class DecktetEnv(AECEnv):
    """An AEC environment for one game, player count and set of rule options."""

    metadata = {"render_modes": ["ansi", "human"], "name": "decktet_v0", "is_parallelizable": False}

    def __init__(
        self,
        game: str = "tightwad",
        players: int | None = None,
        options: dict[str, Any] | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.game_spec = get_game(game)
        self.game = game
        self.players = players if players is not None else self.game_spec.min_players
        self.game_options = self.game_spec.resolve_options(self.players, options)  # OptionError if bad
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}; known: {self.metadata['render_modes']}")
        self.render_mode = render_mode
        self.metadata = dict(self.metadata, name=f"decktet_{game.replace('-', '_')}_v0")
        self.possible_agents = [f"player_{s}" for s in range(self.players)]
        self._seat = {a: s for s, a in enumerate(self.possible_agents)}
        n_obs = encoding.obs_size(game, self.players)
        n_act = encoding.ACTION_SIZE[game]
        self.action_spaces = {a: spaces.Discrete(n_act) for a in self.possible_agents}
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, 1.0, (n_obs,), dtype=np.float64),
                    "action_mask": spaces.Box(0, 1, (n_act,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self._seeds = random.Random()
        self.engine = None
        self._json: dict[int, dict[str, Any]] = {}

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ---- views ----------------------------------------------------------------------

    def json_observation(self, agent: str) -> dict[str, Any]:
        """The engine's JSON observation of ``agent`` now (cached until the next step)."""
        seat = self._seat[agent]
        obs = self._json.get(seat)
        if obs is None:
            obs = self.engine.observation(seat)
            self._json[seat] = obs
        return obs

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.json_observation(agent)
        mask = np.zeros(encoding.ACTION_SIZE[self.game], dtype=np.int8)
        for slot in encoding.action_slots(obs):
            mask[slot] = 1
        return {"observation": np.asarray(encoding.encode(obs), dtype=np.float64), "action_mask": mask}

    # ---- flow -----------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new deal. ``seed`` fixes it (and the deals of later seedless resets)."""
        if seed is not None:
            self._seeds.seed(seed)
        self.deal_seed = self._seeds.getrandbits(63)
        self.engine = self.game_spec.new_game(self.players, self.deal_seed, self.game_options)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._json = {}
        self._select()

    def _select(self) -> None:
        """Point at the next seat to decide and give it its JSON observation."""
        self.infos = {a: {} for a in self.agents}
        seat = self.engine.to_move()[0]
        self.agent_selection = self.possible_agents[seat]
        self.infos[self.agent_selection] = {"observation": self.json_observation(self.agent_selection)}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        obs = self.json_observation(agent)
        slots = encoding.slot_actions(obs)
        try:
            slot = operator.index(action)  # int() would truncate a float and parse a string
        except TypeError:
            raise ValueError(f"{agent}: action {action!r} is not a slot number") from None
        if slot not in slots:
            raise ValueError(f"{agent}: slot {slot} is not legal now (legal: {sorted(slots)})")
        self._cumulative_rewards[agent] = 0.0
        self.engine.apply(self._seat[agent], slots[slot])
        self._json = {}
        if self.engine.is_over():
            self._finish()
        else:
            self._select()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _finish(self) -> None:
        result = self.engine.result()
        n = self.players
        for a in self.agents:
            place = result.places[self._seat[a]]
            self.rewards[a] = 1.0 - 2.0 * place / (n - 1)
            self.terminations[a] = not result.capped
            self.truncations[a] = result.capped
        self.infos = {a: {"observation": self.json_observation(a), "result": result.to_json()} for a in self.agents}

    def render(self) -> str | None:
        if self.render_mode is None or self.engine is None:
            return None
        seat = self._seat[self.agent_selection]
        text = self.engine.observation_text(seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.engine = None
        self._json = {}


def raw_env(
    game: str = "tightwad",
    players: int | None = None,
    options: dict[str, Any] | None = None,
    render_mode: str | None = None,
) -> DecktetEnv:
    return DecktetEnv(game, players, options, render_mode)


def env(
    game: str = "tightwad",
    players: int | None = None,
    options: dict[str, Any] | None = None,
    render_mode: str | None = None,
) -> AECEnv:
    """The environment with PettingZoo's usual checks (bounds, call order)."""
    e: AECEnv = raw_env(game, players, options, render_mode)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)
