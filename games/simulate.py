"""Random playouts: the benchmark's and the property tests' driver."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from games.core import GameSpec, State
from games.rng import DealRng


def play_randomly(
    state: State, rng: DealRng, *, observe: bool = False, on_action: Callable[[int, int], None] | None = None
) -> int:
    """Finish ``state`` with uniformly random legal actions; returns the decisions made.

    With ``observe``, the full observation of every deciding seat is built at
    every decision, as the referee does.
    """
    decisions = 0
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
            decisions += 1
            if on_action is not None:
                on_action(seat, action)
            if state.is_over():
                break
    return decisions


def random_playout(
    spec: GameSpec,
    players: int,
    seed: int,
    options: dict[str, Any] | None = None,
    *,
    policy_seed: int = 0,
    observe: bool = False,
) -> tuple[State, list[tuple[int, int]]]:
    """Play one game with random legal actions; returns the final state and the
    (seat, action) sequence."""
    state = spec.new_game(players, seed, options)
    actions: list[tuple[int, int]] = []
    play_randomly(
        state, DealRng(policy_seed), observe=observe, on_action=lambda seat, action: actions.append((seat, action))
    )
    return state, actions


def replay_actions(
    spec: GameSpec, players: int, seed: int, options: dict[str, Any] | None, actions: list[tuple[int, int]]
) -> State:
    """Re-apply a recorded action sequence; raises IllegalActionError on mismatch."""
    state = spec.new_game(players, seed, options)
    for seat, action in actions:
        state.apply(seat, action)
    return state
