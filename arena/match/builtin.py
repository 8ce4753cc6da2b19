"""Players built into the arena, whose policy the arena knows because it plays them itself.

``{builtin: random}`` in a tournament's ``bots`` seats a player that picks uniformly among
the legal actions, drawn in process from ``games.rng.DealRng`` seeded with the seat's start
seed (the seed a bot's start message carries), so every match replays exactly. No process,
no sandbox, no time used. Because its policy is known, the leaderboards can remove the luck
of its draws from everybody's luck-adjusted place (AIVAT, docs/luck.md), which they cannot
do for a bot program that merely calls itself random.

A builtin's identity (the ``sha256`` its seats are stored with) is the hash of its policy's
definition in ``BUILTINS``, under a prefix with a NUL byte (a file with exactly those bytes is
neither Python nor a runnable program). Change how it draws and bump the definition: it is
then another player, as an edited bot file is another bot.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from arena.match.agents import Agent, RandomAgent

BUILTINS = {"random": "random/1: uniform, DealRng(start seed).randbelow(len(legal_actions)) per decision"}
_PREFIX = b"decktet-arena builtin player\0"


def builtin_sha256(policy: str) -> str:
    """The identity of a builtin player (see the module)."""
    if policy not in BUILTINS:
        raise ValueError(f"no builtin player {policy!r} (known: {', '.join(BUILTINS)})")
    return hashlib.sha256(_PREFIX + BUILTINS[policy].encode()).hexdigest()


def builtin_path() -> Path:
    return Path(__file__).resolve()


class BuiltinRandomAgent(RandomAgent):
    """The seat of a ``{builtin: random}`` roster entry: uniform over the legal actions."""

    def __init__(self, name: str, sha256: str) -> None:
        super().__init__(name=name)
        self.path = str(builtin_path())
        self.sha256 = sha256

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "builtin": "random"}


def builtin_agent(entry: Any) -> BuiltinRandomAgent:
    """The in-process agent of a builtin roster entry (``BotEntry.kind == "builtin"``)."""
    if entry.builtin != "random":
        raise ValueError(f"no builtin player {entry.builtin!r}")
    return BuiltinRandomAgent(entry.name, entry.sha256)


def agent_for(entry: Any, **process_options: Any) -> Agent:
    """The seat's agent for a roster entry: in process for a builtin player, else the bot's
    program in the sandbox (``ProcessAgent(entry, **process_options)``)."""
    if entry.kind == "builtin":
        return builtin_agent(entry)
    from arena.match.agents import ProcessAgent

    return ProcessAgent(entry, **process_options)
