"""What a worker answers for each match it was sent (any backend: local processes, Ray).

Typed, so the supervisor dispatches on the class, not on a string in a tuple. Each names the
match by id; the worker sends exactly one per match, after the match is stored (``Played``)
or known not to be (the others)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Played:
    """Played and stored. ``faults``: (bot, fault kind) of each seat that faulted; ``reasons``:
    what each of those faults was, in a line (its detail and the end of the bot's stderr)."""

    match_id: str
    faults: tuple[tuple[str, str], ...] = ()
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class HarnessFailed:
    """The harness could not play it (a sandbox fault); not stored: the next run plays it."""

    match_id: str
    why: str


@dataclass(frozen=True)
class NoSpace:
    """Played, but the disk is full: nothing more can be stored."""

    match_id: str
    why: str


@dataclass(frozen=True)
class Raised:
    """The harness raised while playing or storing it (traceback in run.log): played again."""

    match_id: str
    why: str


Reply = Played | HarnessFailed | NoSpace | Raised
