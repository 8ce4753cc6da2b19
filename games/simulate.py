"""Random playouts: the benchmark's and the property tests' driver."""

from __future__ import annotations

from typing import Any

from games.core import GameSpec, State
from games.rng import DealRng


def random_playout(
    spec: GameSpec,
    players: int,
    seed: int,
    options: dict[str, Any] | None = None,
    *,
    policy_seed: int = 0,
    observe: bool = False,
) -> tuple[State, list[tuple[int, int]]]:
    """Play one game with uniformly random legal actions.

    Returns the final state and the (seat, action) sequence. With ``observe``,
    the full observation of every deciding seat is built at every decision,
    as the referee does.
    """
    state = spec.new_game(players, seed, options)
    rng = DealRng(policy_seed)
    actions: list[tuple[int, int]] = []
    while not state.is_over():
        for seat in tuple(state.to_move()):
            if seat not in state.to_move():
                continue
            if observe:
                n = len(state.observation(seat)["legal_actions"])
            else:
                n = len(state.legal_actions(seat))
            action = rng.randbelow(n)
            state.apply(seat, action)
            actions.append((seat, action))
            if state.is_over():
                break
    return state, actions


def replay_actions(
    spec: GameSpec, players: int, seed: int, options: dict[str, Any] | None,
    actions: list[tuple[int, int]],
) -> State:
    """Re-apply a recorded action sequence; raises IllegalActionError on mismatch."""
    state = spec.new_game(players, seed, options)
    for seat, action in actions:
        state.apply(seat, action)
    return state
