"""Palace's reference rule: the deterministic choices of the reference policy
(``arena.luck.reference.palace_policy``, which adds its random moves) and of the engine's
``rollout_action`` (the search hook). They live in games/palace.py, beside the engine whose
hook uses them; this module keeps their old import path."""

from __future__ import annotations

from games.palace import palace_cost, palace_play_choice, palace_swap_choice

__all__ = ["palace_cost", "palace_play_choice", "palace_swap_choice"]
