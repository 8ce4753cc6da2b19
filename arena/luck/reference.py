"""Fixed reference policies on engine states, and the luck baselines they give.

The luck-adjusted mean place (docs/luck.md) rates a bot on its place minus how a fixed
reference policy fares from the same seat of the same deal. ``seat_baselines`` is that
figure: for each seat ``s`` of a deal, the mean place (0 = best) of the game's reference
policy ``REFERENCE[game]`` sitting in ``s`` with uniformly random players in every other
seat, over ``rollouts`` games of the deal. It is a function of (game, players, options,
deal seed, rollouts, ``REFERENCE_VERSION``) alone: no bot, no clock, no global random
state, so it can be computed once, stored and trusted to be the same everywhere.

The policies are fast rules (a few hundred games a second in CPython), the same ideas as
the search bot's rollout policies (bots/search/search_bot.py), written here on a
``DealRng`` so their draws are fixed forever. Change any of them, or how the games are
seeded, and bump ``REFERENCE_VERSION``: stored baselines of another version are not used.

``LUCK_BETA`` is part of the same definition: the fixed coefficient of the correction per
(game, players), ``adjusted place = p - beta * (h - eta)``. Any beta fixed in advance keeps
the adjusted place unbiased; these were calibrated on deals that no benchmark measures
(``python benchmarks/luck.py --calibrate``, docs/luck.md) for the reference policies of this
version, so a new version needs a new calibration. Beta 0 (every configuration not listed):
no correction, the adjusted place is the plain one, and no baseline is computed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from games import REGISTRY, decktet
from games.core import State
from games.divers_weights import PLAY as DW_PLAY
from games.divers_weights import PRIZE as DW_PRIZE
from games.divers_weights import SYMBOLS
from games.palace import EXCUSE as P_EXCUSE
from games.palace import PLAY as P_PLAY
from games.palace import SWAP
from games.palace_rule import palace_play_choice, palace_swap_choice
from games.rng import DealRng, derive_seed

REFERENCE_VERSION = "ref2"
# games per seat of each tournament deal: the default of the tournament option luck_rollouts
DEFAULT_ROLLOUTS = 16
RANK = decktet.RANK

Policy = Callable[[State, int, DealRng], int]


def random_policy(state: State, seat: int, rng: DealRng) -> int:
    return rng.randbelow(len(state.legal_actions(seat)))


def tightwad_policy(state: State, seat: int, rng: DealRng) -> int:
    """The highest legal card (shed danger while it is still cheap), 10% random."""
    moves = state.moves(seat)
    if len(moves) == 1 or rng.randbelow(10) == 0:
        return rng.randbelow(len(moves))
    return len(moves) - 1


def divers_policy(state: State, seat: int, rng: DealRng) -> int:
    """Play near the threshold's mean rank; take the prize worth most to this seat; bid low."""
    moves = state.moves(seat)
    if len(moves) == 1:
        return 0
    phase = state._phase  # type: ignore[attr-defined]
    if phase == DW_PLAY:
        if rng.randbelow(10) < 3:
            return rng.randbelow(len(moves))
        threshold = state._threshold  # type: ignore[attr-defined]
        aim = sum(RANK[p] for p in threshold) / state.players
        return min(range(len(moves)), key=lambda i: (abs(RANK[moves[i]] - aim), i))
    if phase == DW_PRIZE:
        mine = 0
        for p in state._prizes[seat]:  # type: ignore[attr-defined]
            mine |= decktet.SUITS[p]
        return max(
            range(len(moves)), key=lambda i: (SYMBOLS[moves[i]] + bin(decktet.SUITS[moves[i]] & ~mine).count("1"), -i)
        )
    return (0, 1, 1, 2)[rng.randbelow(4)] if len(moves) > 2 else 0  # a bid


def palace_policy(state: State, seat: int, rng: DealRng) -> int:
    """Strong cards face up; then the lowest ordinary rank, as many as possible, 15% random."""
    moves = state.moves(seat)
    if len(moves) == 1:
        return 0
    first = moves[0][0]
    if first == SWAP:
        return palace_swap_choice(moves)
    if first != P_PLAY:
        return 0 if moves[-1][0] != P_EXCUSE else len(moves) - 1
    if rng.randbelow(20) < 3:
        return rng.randbelow(len(moves))
    return palace_play_choice(state, moves)


REFERENCE: dict[str, Policy] = {"tightwad": tightwad_policy, "divers-weights": divers_policy, "palace": palace_policy}


def play_out(state: State, policies: list[Policy], rng: DealRng) -> State:
    """Finish ``state``, each seat choosing with its own policy (one shared generator)."""
    while not state.is_over():
        for seat in tuple(state.to_move()):
            if seat in state.to_move():
                state.apply(seat, policies[seat](state, seat, rng))
                if state.is_over():
                    break
    return state


def seat_baselines(
    game: str, players: int, options: dict[str, Any] | None, deal_seed: int, rollouts: int
) -> list[float]:
    """h(d, s) for every seat s of the deal: the reference policy's mean place (0 = best) from
    seat s against random players, over ``rollouts`` games (deterministic; see the module)."""
    spec = REGISTRY[game]
    ref = REFERENCE.get(game, random_policy)
    out = []
    for seat in range(players):
        policies = [random_policy] * players
        policies[seat] = ref
        total = 0
        for r in range(rollouts):
            rng = DealRng(derive_seed(REFERENCE_VERSION, deal_seed, seat, r))
            total += play_out(spec.new_game(players, deal_seed, options), policies, rng).result().places[seat]
        out.append(total / rollouts)
    return out


# Calibrated by `python benchmarks/luck.py --calibrate` (deals 500000.., the sample heuristic
# against random bots, luck_rollouts 16): beta = Cov(P, H) / (Var(H) + Var(H1) / K), P the
# heuristic's place averaged over the seats of a deal, H the same average of h, H1 that of a
# reference deal (one game per seat) and K the reference deals per tournament deal; 0 where
# the correction saved less than 2% of the rotated variance there.
LUCK_BETA: dict[tuple[str, int], float] = {
    ("divers-weights", 2): 0.68,  # saved 12.8% of the rotated variance there (beta 1: 10.1%)
    ("divers-weights", 3): 0.47,  # 4.4% (beta 1: -1.4%)
    ("divers-weights", 4): 0.39,  # 2.4% (beta 1: -3.5%)
    # Tightwad 3 and 4 players, Palace 2, 3 and 4: under 1% (beta 1: -10% to -16%): 0
}


def luck_beta(game: str, players: int) -> float:
    """The fixed coefficient of the luck correction for ``game`` with ``players`` (0: none)."""
    return LUCK_BETA.get((game, players), 0.0)


def reference_deal_seed(game: str, players: int, k: int) -> int:
    """The k-th deal of the fixed sample that estimates the population mean of the baselines:
    drawn from its own stream, so no tournament's deals (public or secret) are among them."""
    return derive_seed("luck-reference-deals", REFERENCE_VERSION, game, players, k)
