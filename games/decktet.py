"""The Decktet deck (shared/DECKTET.md): names, ranks and suits of every card.

A *physical card* is an int ``pid``. Its face is ``pid % DECK_SIZE`` (an index
into ``CARDS``) and its copy number is ``pid // DECK_SIZE``, so several decks
shuffled together keep every physical card distinct. Per-pid lookup tables
(``RANK``, ``SUITS``, ``NAME``) are precomputed for up to ``MAX_DECKS`` decks,
because the engines' hot paths read them millions of times.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Suits as bits, in the conventional order.
MOONS, SUNS, WAVES, LEAVES, WYRMS, KNOTS = 1, 2, 4, 8, 16, 32
SUIT_NAMES = ("Moons", "Suns", "Waves", "Leaves", "Wyrms", "Knots")
SUIT_BITS = (MOONS, SUNS, WAVES, LEAVES, WYRMS, KNOTS)
ALL_SUITS = 63

# Ranks as ints. Numbers are themselves; the Decktet's own order is
# Ace < 2..9 < Pawn < Court < Crown (see DECKTET_ORDER); games may differ.
ACE, CROWN, PAWN, COURT, EXCUSE = 1, 10, 11, 12, 0
RANK_NAMES = {ACE: "Ace", CROWN: "Crown", PAWN: "Pawn", COURT: "Court", EXCUSE: "Excuse"}
RANK_NAMES.update({n: str(n) for n in range(2, 10)})
DECKTET_ORDER = {ACE: 1, **{n: n for n in range(2, 10)}, PAWN: 10, COURT: 11, CROWN: 12}

BASIC_SIZE = 36
DECK_SIZE = 45  # basic + extended; the stride between copies of a face
MAX_DECKS = 16


@dataclass(frozen=True, slots=True)
class Card:
    """One face of the deck."""

    index: int
    name: str
    rank: int
    suits: int  # bit mask

    @property
    def suit_names(self) -> tuple[str, ...]:
        return tuple(n for n, b in zip(SUIT_NAMES, SUIT_BITS) if self.suits & b)

    @property
    def extended(self) -> bool:
        return self.index >= BASIC_SIZE

    @property
    def symbols(self) -> int:
        """Number of suit symbols printed on the card."""
        return bin(self.suits).count("1")


def _s(*names: str) -> int:
    return sum(SUIT_BITS[SUIT_NAMES.index(n)] for n in names)


_TABLE = [
    *((f"Ace of {s}", ACE, (s,)) for s in SUIT_NAMES),
    ("The Author", 2, ("Moons", "Knots")),
    ("The Desert", 2, ("Suns", "Wyrms")),
    ("The Origin", 2, ("Waves", "Leaves")),
    ("The Journey", 3, ("Moons", "Waves")),
    ("The Painter", 3, ("Suns", "Knots")),
    ("The Savage", 3, ("Leaves", "Wyrms")),
    ("The Mountain", 4, ("Moons", "Suns")),
    ("The Sailor", 4, ("Waves", "Leaves")),
    ("The Battle", 4, ("Wyrms", "Knots")),
    ("The Forest", 5, ("Moons", "Leaves")),
    ("The Discovery", 5, ("Suns", "Waves")),
    ("The Soldier", 5, ("Wyrms", "Knots")),
    ("The Lunatic", 6, ("Moons", "Waves")),
    ("The Penitent", 6, ("Suns", "Wyrms")),
    ("The Market", 6, ("Leaves", "Knots")),
    ("The Chance Meeting", 7, ("Moons", "Leaves")),
    ("The Castle", 7, ("Suns", "Knots")),
    ("The Cave", 7, ("Waves", "Wyrms")),
    ("The Diplomat", 8, ("Moons", "Suns")),
    ("The Mill", 8, ("Waves", "Leaves")),
    ("The Betrayal", 8, ("Wyrms", "Knots")),
    ("The Pact", 9, ("Moons", "Suns")),
    ("The Darkness", 9, ("Waves", "Wyrms")),
    ("The Merchant", 9, ("Leaves", "Knots")),
    ("The Huntress", CROWN, ("Moons",)),
    ("The Bard", CROWN, ("Suns",)),
    ("The Sea", CROWN, ("Waves",)),
    ("The End", CROWN, ("Leaves",)),
    ("The Calamity", CROWN, ("Wyrms",)),
    ("The Windfall", CROWN, ("Knots",)),
    ("The Watchman", PAWN, ("Moons", "Wyrms", "Knots")),
    ("The Light Keeper", PAWN, ("Suns", "Waves", "Knots")),
    ("The Harvest", PAWN, ("Moons", "Suns", "Leaves")),
    ("The Borderland", PAWN, ("Waves", "Leaves", "Wyrms")),
    ("The Consul", COURT, ("Moons", "Waves", "Knots")),
    ("The Rite", COURT, ("Moons", "Leaves", "Wyrms")),
    ("The Window", COURT, ("Suns", "Leaves", "Knots")),
    ("The Island", COURT, ("Suns", "Waves", "Wyrms")),
    ("The Excuse", EXCUSE, ()),
]

CARDS: tuple[Card, ...] = tuple(Card(i, name, rank, _s(*suits)) for i, (name, rank, suits) in enumerate(_TABLE))
assert len(CARDS) == DECK_SIZE
BY_NAME = {c.name: c for c in CARDS}

# Per physical card lookups, indexed by pid.
RANK: tuple[int, ...] = tuple(CARDS[p % DECK_SIZE].rank for p in range(DECK_SIZE * MAX_DECKS))
SUITS: tuple[int, ...] = tuple(CARDS[p % DECK_SIZE].suits for p in range(DECK_SIZE * MAX_DECKS))


def face(pid: int) -> Card:
    return CARDS[pid % DECK_SIZE]


def copy_of(pid: int) -> int:
    return pid // DECK_SIZE


def card_name(pid: int, decks: int = 1) -> str:
    """Readable name; with several decks the copy is shown as ``#2``."""
    name = CARDS[pid % DECK_SIZE].name
    return f"{name}#{pid // DECK_SIZE + 1}" if decks > 1 else name


def pid_of(name: str, copy: int = 0) -> int:
    """The physical card with this face name (``"The Soldier"``) and copy."""
    return BY_NAME[name].index + copy * DECK_SIZE


def make_deck(decks: int = 1, extended: bool = False) -> list[int]:
    """All physical cards of ``decks`` decks, unshuffled, in pid order."""
    if not 1 <= decks <= MAX_DECKS:
        raise ValueError(f"decks must be in 1..{MAX_DECKS}")
    size = DECK_SIZE if extended else BASIC_SIZE
    return [c * DECK_SIZE + i for c in range(decks) for i in range(size)]


def card_info(pid: int, decks: int = 1) -> dict[str, Any]:
    """JSON-ready description of one physical card (sent to bots once per match)."""
    c = CARDS[pid % DECK_SIZE]
    return {
        "id": pid,
        "name": card_name(pid, decks),
        "rank": RANK_NAMES[c.rank],
        "value": c.rank,
        "suits": list(c.suit_names),
    }
