"""Bots of known strength, to measure AIVAT (tests/report/test_aivat*.py and, full size,
benchmarks/aivat_known_strength.py): a game's reference rule policy playing a uniformly random
action with probability ``eps`` (each noisier level weaker), against uniformly random seats (what
``{builtin: random}`` plays), in process."""

from __future__ import annotations

import math

from arena.luck.reference import REFERENCE, random_policy
from games import REGISTRY
from games.rng import DealRng, derive_seed


def noisy(game: str, eps: float):
    ref = REFERENCE[game]

    def policy(state, seat, rng):
        return random_policy(state, seat, rng) if rng.randbelow(1000) < eps * 1000 else ref(state, seat, rng)

    return policy


def play(
    game: str, players: int, deal: int, hero_seat: int, hero, match_seed: int, tag: str
) -> tuple[int, list[tuple[int, int]]]:
    """The hero's place and the game's decisions; every seat draws from its own generator."""
    state = REGISTRY[game].new_game(players, deal)
    rngs = [DealRng(derive_seed(tag, match_seed, s)) for s in range(players)]
    decisions = []
    while not state.is_over():
        for seat in tuple(state.to_move()):
            if state.is_over() or seat not in state.to_move():
                break
            action = (hero if seat == hero_seat else random_policy)(state, seat, rngs[seat])
            decisions.append((seat, action))
            state.apply(seat, action)
    return state.result().places[hero_seat], decisions


def mean_ci(xs: list[float], quantile: float = 1.96) -> tuple[float, float]:
    """The mean and the half-width of its 95% interval (normal, or the ``quantile`` given)."""
    m = sum(xs) / len(xs)
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return m, quantile * math.sqrt(var / len(xs))


def random_state(game: str, players: int, deal: int, steps: int):
    """The state after up to ``steps`` uniformly random decisions of deal ``deal``."""
    state = REGISTRY[game].new_game(players, deal)
    rng = DealRng(deal)
    for _ in range(steps):
        if state.is_over():
            break
        seat = state.to_move()[0]
        state.apply(seat, random_policy(state, seat, rng))
    return state


def sibling_terms(state, value) -> list[list[float]]:
    """For the seat to move: per legal action, per seat, V(after it) - mean over the actions of
    V(after them), with ``value(child)`` giving every seat's V. Each seat's terms sum to zero
    exactly when the mean of one AIVAT term under a uniform draw is zero."""
    seat = state.to_move()[0]
    values = []
    for a in range(len(state.legal_actions(seat))):
        child = state.clone()
        child.apply(seat, a)
        values.append(value(child))
    means = [sum(v[s] for v in values) / len(values) for s in range(state.players)]
    return [[v[s] - means[s] for s in range(state.players)] for v in values]
