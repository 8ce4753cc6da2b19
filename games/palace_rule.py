"""Palace's reference rule: the deterministic choices of the reference policy
(``arena.luck.reference.palace_policy``, which adds its random moves) and of the search bot's
rollouts. Here, not in arena/luck/reference.py, so that the learned value
(arena/luck/palace_value.py) can look one rule move ahead without a circular import."""

from __future__ import annotations

from typing import Any

from games.core import State
from games.palace import ORD, PLAY as P_PLAY, TWO

_KEPT = {0: 14, 7: 15, TWO: 16, 13: 17}  # Palace: Excuse, Sevens, Twos, Aces are kept back


def palace_cost(p: int) -> int:
    o = ORD[p]
    return _KEPT.get(o, o)


def palace_swap_choice(moves: list[Any]) -> int:
    """Setup: the swap that leaves the strongest face-up cards (Twos, Sevens, Aces, high ranks)."""
    return max(range(len(moves)), key=lambda i: (
        sum(palace_cost(h) - palace_cost(u) for h, u in moves[i][1]), -len(moves[i][1]), -i))


def palace_play_choice(state: State, moves: list[Any]) -> int:
    """The lowest ordinary rank, as many cards as possible; a four of a kind first; Sevens,
    Twos, Aces and the Excuse kept for when nothing else goes."""
    pile = state._pile  # type: ignore[attr-defined]
    top = ORD[pile[-1]] if pile else -1
    run_len = 0
    for p in reversed(pile):
        if ORD[p] != top:
            break
        run_len += 1
    best, best_k = 0, None
    for i, m in enumerate(moves):
        cards = m[1] if m[0] == P_PLAY else (m[1],)
        k = (0 if ORD[cards[0]] == top and run_len + len(cards) >= 4 else 1, palace_cost(cards[0]), -len(cards))
        if best_k is None or k < best_k:
            best, best_k = i, k
    return best
