"""The base of every error the arena reports to a user.

Library code raises subclasses of ``ArenaError`` whose ``str`` is one line that
says what is wrong and how to fix it; only the CLI turns them into exit codes.
"""

from __future__ import annotations


class ArenaError(Exception):
    """An error meant for the user: ``str(err)`` is one line with the fix."""


class MachineTrouble(ArenaError):
    """The machine failed the command (a full disk, an I/O error), not its input: exit status 1."""

    exit_code = 1


class WorkersLost(ArenaError):
    """No worker is left to play the remaining matches (they keep dying, or a Ray
    cluster lost them): the run stops, incomplete, with what it finished stored."""


def one_line(text: object, limit: int = 300) -> str:
    """``text`` on one line (whitespace runs become one space), cut to ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
