"""The one guard around every `arena` command: whatever goes wrong ends in one line.

Click's usage errors print their message and a pointer to the command's --help; every other
exception is explained by ``arena.tournament.failure`` (a message and an exit code, a crash
log for a bug), with the results folder of the command when it has one.
"""

from __future__ import annotations

from pathlib import Path

import click

from arena.errors import one_line
from arena.inert import visible

_folder: Path | None = None  # where the current command keeps its results, once known


def results_folder(path: Path | str | None) -> None:
    """Tell the guard where this command's results are (for the crash log and messages)."""
    global _folder
    _folder = Path(path) if path is not None else None


def say(message: str) -> None:
    click.echo(f"arena: error: {visible(one_line(message, 1000))}", err=True)


def handle(exc: BaseException) -> int:
    """Print one line about ``exc`` (and log a bug's traceback); returns the exit code."""
    from arena.tournament import failure

    full = failure.disk_full(exc, _folder)
    if full is not None:
        say(full)
        return failure.EXIT_TROUBLE
    if isinstance(exc, click.ClickException):
        ctx = getattr(exc, "ctx", None)
        hint = f"; see `{ctx.command_path} --help`" if ctx is not None else ""
        say(exc.format_message().rstrip(".") + hint)
        return exc.exit_code
    message, code = failure.explain(exc, _folder)
    say(message)
    return code
