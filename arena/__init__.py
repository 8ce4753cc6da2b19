"""decktet-arena: tournaments of bot programs playing Decktet card games."""

__version__ = "0.1.0"
