"""Pure rules engines for the Decktet games the arena runs.

``REGISTRY`` maps each game id to its ``GameSpec``; ``get_game(id)`` looks one up.
"""

from __future__ import annotations

from games.core import GameError, GameSpec, IllegalActionError, OptionError, Result, State

__all__ = ["REGISTRY", "get_game", "GameError", "GameSpec", "IllegalActionError", "OptionError", "Result", "State"]


def _build_registry() -> dict[str, GameSpec]:
    from games import divers_weights, palace, tightwad

    specs = (tightwad.SPEC, divers_weights.SPEC, palace.SPEC)
    return {s.id: s for s in specs}


REGISTRY: dict[str, GameSpec] = _build_registry()


def get_game(game_id: str) -> GameSpec:
    try:
        return REGISTRY[game_id]
    except KeyError:
        raise OptionError(game_id, "game", f"unknown game; known: {', '.join(REGISTRY)}") from None
