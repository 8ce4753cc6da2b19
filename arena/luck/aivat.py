"""AIVAT: the luck of seats whose policy is known, and of chance events with known odds.

At a decision of a seat whose policy is known to be uniform over its legal actions (the
arena's built-in random player), the term V(after the action taken) - mean over the legal
actions a of V(after a) has expectation zero, whatever the value estimate V is, as long as V
does not depend on which action the seat will draw. Summed over such decisions, it is a
correction of every seat's place with mean zero (AIVAT, Burch et al. 2018): subtracting it
keeps every mean place unbiased and removes the part of the luck that the known seats'
draws caused, as far as V sees it. Chance events whose odds are known get the same kind of
term, in every match whoever plays: in Palace, a face-down card nobody has seen revealed
(``arena.luck.palace_value.reveal_term``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.luck import palace_value
from arena.luck.reference import REFERENCE, random_policy
from games import REGISTRY
from games.core import State
from games.rng import DealRng, derive_seed

# aivat1: Tightwad's playouts only; aivat2: Palace's learned value too; aivat3: Palace's reveals;
# aivat4: Palace's value one rule move ahead, and the coefficients (AIVAT_SCALE)
AIVAT_VERSION = "aivat4"
# the label of the playouts' seeds: aivat3's, so that a version that changes Palace alone leaves
# Tightwad's corrections as they were
AIVAT_PLAYOUT_SEEDS = "aivat3"


def _aivat_when_tightwad(state: State, seat: int) -> bool:
    # the last three tricks of a round decide who takes the penalty; a playout is sharp there
    return len(state._hands[seat]) <= 3  # type: ignore[attr-defined]


def _aivat_when_palace(state: State, seat: int) -> bool:
    return True  # every decision: the learned value costs no playouts


AIVAT_WHEN: dict[str, Callable[[State, int], bool]] = {"tightwad": _aivat_when_tightwad, "palace": _aivat_when_palace}
# V by playouts: how many per estimate, part of the definition (AIVAT_VERSION) like the selection.
# Tightwad, heuristic against random, rotated, matches saved by the correction on the same
# matches: 16 playouts -18% and 41% (deals 90000.., 130000..), 32: 30% and 53%, 64: 41% and
# 54%, at 0.04, 0.08 and 0.15 s of CPU per match: 16 is too noisy, 64 costs twice 32's.
# 0: the game's V is a learned function of the state (AIVAT_VALUE), no playouts.
AIVAT_ROLLOUTS: dict[str, int] = {"tightwad": 32, "palace": 0}
# V as a learned function of the state: Palace's playouts are long and scattered, and a few
# of them per state added more noise than they removed (docs/luck.md)
AIVAT_VALUE: dict[str, Callable[[State, frozenset[int], int | None], list[float]]] = {"palace": palace_value.value}
# the numbers of players a learned value has weights for
AIVAT_VALUE_PLAYERS: dict[str, Callable[[int], bool]] = {"palace": palace_value.has_value}


# chance events with an AIVAT term: (state before, seat, action, known seats, only seat or None)
# -> every seat's term, or None where the action has no such event; and the numbers of players
# it has weights for
AIVAT_CHANCE: dict[str, Callable[[State, int, int, frozenset[int], int | None], list[float] | None]] = {
    "palace": palace_value.reveal_term
}
AIVAT_CHANCE_PLAYERS: dict[str, Callable[[int], bool]] = {"palace": palace_value.has_reveal_value}
# The fixed coefficients of the two sums (the known seats' draws, the chance events): any fixed
# multiple of a term of mean zero has mean zero, so they only decide how much luck is removed.
# Palace's were fitted on deals no measurement uses (arena/luck/palace_value.py); elsewhere 1.
AIVAT_SCALE: dict[str, tuple[float, float]] = {"palace": (palace_value.DRAWS_SCALE, palace_value.REVEALS_SCALE)}


def has_aivat(game: str, players: int) -> bool:
    """Whether AIVAT corrects the builtin random players' draws in this configuration."""
    if game in AIVAT_VALUE:
        return AIVAT_VALUE_PLAYERS[game](players)
    return AIVAT_ROLLOUTS.get(game, 0) > 0


def has_chance_aivat(game: str, players: int) -> bool:
    """Whether AIVAT corrects chance events in this configuration: in every match, whoever plays."""
    return game in AIVAT_CHANCE and AIVAT_CHANCE_PLAYERS[game](players)


_MASK = (1 << 64) - 1


def aivat_value(state: State, known: frozenset[int], rollouts: int, seed: int) -> list[float]:
    """V(state) for every seat: the mean place (0 = best) over ``rollouts`` playouts, the
    reference policy in the seats not in ``known`` and uniform random in ``known``. Each
    decision of a playout draws from its own generator, seeded by (seed, playout, decision
    number): sibling states share their random numbers (common random numbers), so their
    values differ by the actions' effect rather than by playout noise."""
    ref = REFERENCE.get(state.spec.id, random_policy)
    totals = [0.0] * state.players
    for r in range(rollouts):
        st = state.clone()
        base = (seed * 0x9E3779B97F4A7C15 + r * 0xBF58476D1CE4E5B9) & _MASK
        while not st.is_over():
            for seat in tuple(st.to_move()):
                if st.is_over() or seat not in st.to_move():
                    break
                rng = DealRng((base + st.decisions * 0x94D049BB133111EB) & _MASK)
                st.apply(seat, (random_policy if seat in known else ref)(st, seat, rng))
        for s, p in enumerate(st.result().places):
            totals[s] += p
    return [t / rollouts for t in totals]


def aivat_parts(
    game: str,
    players: int,
    options: dict[str, Any] | None,
    deal_seed: int,
    decisions: list[tuple[int, int]],
    known: frozenset[int],
    rollouts: int,
    seed: int,
    only: int | None = None,
) -> tuple[list[float], list[float]]:
    """Replay a finished game (``decisions``: (seat, action) in the order applied) and return,
    per seat, two sums, unscaled: over the decisions of the ``known`` seats that ``AIVAT_WHEN``
    selects (a test of the state alone) of V(after the action taken) - mean over actions of
    V(after it), V being the game's learned value (``AIVAT_VALUE``) or else ``rollouts``
    playouts (none: no terms); and of the terms of the chance events of any seat's decisions
    (``AIVAT_CHANCE``, where ``has_chance_aivat``). Every term has mean zero. A game that ended
    early (a fault) has the terms of the decisions it had: a sum stopped at a time that does
    not look ahead still has mean zero. Deterministic in its arguments; raises ``ValueError``
    if the decisions do not replay (an illegal action or a seat not to move). With ``only``,
    seat ``only``'s sums alone are computed where that is cheaper (a learned value), identical
    to its entries in the full lists; the others may then be 0."""
    learned = AIVAT_VALUE.get(game)
    usable = AIVAT_VALUE_PLAYERS[game](players) if learned is not None else rollouts > 0
    when = AIVAT_WHEN.get(game) if usable else None
    chance = AIVAT_CHANCE[game] if has_chance_aivat(game, players) else None
    state = REGISTRY[game].new_game(players, deal_seed, options)
    draws = [0.0] * players
    events = [0.0] * players
    for n, (seat, action) in enumerate(decisions):
        if state.is_over() or seat not in state.to_move():
            raise ValueError(f"decision {n}: seat {seat} is not to move")
        k = len(state.legal_actions(seat))
        if not 0 <= action < k:
            raise ValueError(f"decision {n}: action {action} of seat {seat} is not legal")
        if when is not None and seat in known and k > 1 and when(state, seat):
            step_seed = derive_seed(AIVAT_PLAYOUT_SEEDS, seed, n)
            values = []
            moves = state.moves(seat)
            for a in range(k):
                child = state.clone()
                child._move_cache[seat] = moves  # immutable moves: not generated again per child
                child.apply(seat, a)
                values.append(
                    learned(child, known, only)
                    if learned is not None
                    else aivat_value(child, known, rollouts, step_seed)
                )
            for s in range(players):
                draws[s] += values[action][s] - sum(v[s] for v in values) / k
        if chance is not None:
            terms = chance(state, seat, action, known, only)
            if terms is not None:
                for s in range(players):
                    events[s] += terms[s]
        state.apply(seat, action)
    return draws, events


def aivat_corrections(
    game: str,
    players: int,
    options: dict[str, Any] | None,
    deal_seed: int,
    decisions: list[tuple[int, int]],
    known: frozenset[int],
    rollouts: int,
    seed: int,
    only: int | None = None,
) -> list[float]:
    """Each seat's AIVAT correction, to subtract from its place: the two sums of ``aivat_parts``
    (the known seats' draws, the chance events), each times the game's fixed coefficient
    (``AIVAT_SCALE``). Same arguments, errors and ``only`` as ``aivat_parts``."""
    draws, events = aivat_parts(game, players, options, deal_seed, decisions, known, rollouts, seed, only)
    c_draws, c_events = AIVAT_SCALE.get(game, (1.0, 1.0))
    return [c_draws * a + c_events * b for a, b in zip(draws, events)]
