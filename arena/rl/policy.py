"""A linear policy over the fixed encoding: one weight row per action slot (numpy).

``logits = weights @ encode(observation) + bias``; the policy plays the legal slot
with the highest logit (the lowest slot on a tie), or samples the softmax over
the legal slots while it learns. ``to_json`` gives the plain-JSON form that
``arena.rl.bridge`` embeds in a bot file, whose pure-Python copy of this
arithmetic makes the same choices.
"""

from __future__ import annotations

import math
from typing import Any

try:
    import numpy as np
except ImportError as err:  # the optional extra: one line saying how to install it
    raise ModuleNotFoundError(f"arena.rl.policy needs the rl extra ({err}): pip install -e '.[rl]'") from None

from arena.rl import encoding
from arena.rl.bridge import FORMAT
from games import get_game


class LinearPolicy:
    """Linear scores over action slots for one game and player count."""

    def __init__(self, game: str, players: int, weights: Any = None, bias: Any = None) -> None:
        spec = get_game(game)
        spec.resolve_options(players, {})  # OptionError on a bad player count
        self.game = game
        self.players = players
        self.obs_size = encoding.obs_size(game, players)
        self.action_size = encoding.ACTION_SIZE[game]
        shape = (self.action_size, self.obs_size)
        self.weights = np.zeros(shape) if weights is None else np.array(weights, dtype=np.float64)
        self.bias = np.zeros(self.action_size) if bias is None else np.array(bias, dtype=np.float64)
        if self.weights.shape != shape or self.bias.shape != (self.action_size,):
            raise ValueError(
                f"{game} with {players} players needs weights {shape} and bias "
                f"({self.action_size},); got {self.weights.shape} and {self.bias.shape}"
            )

    # ---- acting -----------------------------------------------------------------------

    def logits(self, x: np.ndarray) -> np.ndarray:
        return self.weights @ x + self.bias

    def best_slot(self, x: np.ndarray, mask: np.ndarray) -> int:
        """The legal slot with the highest logit; the lowest such slot on a tie."""
        return int(np.argmax(np.where(mask.astype(bool), self.logits(x), -np.inf)))

    def probabilities(self, x: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """Softmax of the logits of the ``legal`` slots (an index array)."""
        z = self.weights[legal] @ x + self.bias[legal]
        z = np.exp(z - z.max())
        return z / z.sum()

    def choose(self, observation: dict[str, Any]) -> int:
        """The engine action id this policy plays for a JSON observation (what a bot gets)."""
        x = np.asarray(encoding.encode(observation), dtype=np.float64)
        slots = encoding.slot_actions(observation)
        mask = np.zeros(self.action_size, dtype=np.int8)
        mask[list(slots)] = 1
        return slots[self.best_slot(x, mask)]

    # ---- plain JSON -------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": 1,
            "game": self.game,
            "players": self.players,
            "obs_size": self.obs_size,
            "action_size": self.action_size,
            "weights": self.weights.tolist(),
            "bias": self.bias.tolist(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LinearPolicy:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f'not a linear policy: expected "format": "{FORMAT}"')
        weights = np.array(data["weights"], dtype=np.float64)
        if not all(math.isfinite(v) for v in weights.ravel()):
            raise ValueError("weights must be finite numbers")
        return cls(data["game"], data["players"], weights, data["bias"])
