"""Every game with every player count and each rule option exercised at least once."""

from __future__ import annotations

VARIANTS: list[tuple[str, int, dict]] = (
    [("tightwad", n, {}) for n in range(3, 11)]
    + [("divers-weights", n, {}) for n in (2, 3, 4)]
    + [
        ("divers-weights", 2, {"bidding": True}),
        ("divers-weights", 4, {"bidding": True, "hands": 2}),
        ("divers-weights", 3, {"hands": 1}),
        ("divers-weights", 3, {"target": 12}),
    ]
    + [("palace", n, {}) for n in range(2, 11)]
    + [
        ("palace", 4, {"extended": True}),
        ("palace", 7, {"extended": True}),
        ("palace", 3, {"wyrm_variant": True}),
        ("palace", 4, {"decks": 3}),
        ("palace", 5, {"extended": True, "wyrm_variant": True}),
    ]
)
