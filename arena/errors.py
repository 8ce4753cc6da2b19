"""The base of every error the arena reports to a user.

Library code raises subclasses of ``ArenaError`` whose ``str`` is one line that
says what is wrong and how to fix it; only the CLI turns them into exit codes.
"""

from __future__ import annotations


class ArenaError(Exception):
    """An error meant for the user: ``str(err)`` is one line with the fix."""
