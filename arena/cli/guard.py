"""The one guard around every `arena` command: whatever goes wrong ends in one line.

Errors meant for the user (``ArenaError``, the store's own errors, click's usage
errors) print their message. Known troubles of the environment (a full disk, a
damaged results database, a permission) print what to do. Anything else is a bug:
one line naming the crash log, which holds the traceback, in the results folder of
the command when it has one, else in the temporary folder.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import click

from arena.errors import ArenaError
from arena.inert import visible

EXIT_USAGE = 2  # the user's input is wrong (as click's usage errors)
EXIT_TROUBLE = 1  # the environment failed: disk, database, permissions
EXIT_BUG = 70  # EX_SOFTWARE: an error the arena did not expect

_folder: Path | None = None  # where the current command keeps its results, once known


def results_folder(path: Path | str | None) -> None:
    """Tell the guard where this command's results are (for the crash log and messages)."""
    global _folder
    _folder = Path(path) if path is not None else None


def one_line(text: object, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def say(message: str) -> None:
    click.echo(f"arena: error: {visible(one_line(message, 1000))}", err=True)


class InertStream:
    """A text stream that shows control characters as escapes (``arena.inert.visible``):
    what any command prints about a hostile file name, bot or record stays inert."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # bytes would pass unseen (and click probes with b"")
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.raw.write(visible(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, ...
        if name == "buffer":  # no way around the escaping
            raise AttributeError(name)
        return getattr(self.raw, name)


def raw(stream: Any) -> Any:
    """The stream under an ``InertStream`` (for a display that writes its own control codes)."""
    return stream.raw if isinstance(stream, InertStream) else stream


class inert_output:
    """``with inert_output():`` sys.stdout and sys.stderr are ``InertStream``s, then restored."""

    def __enter__(self) -> None:
        self.saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = (s if s is None or isinstance(s, InertStream) else InertStream(s) for s in self.saved)

    def __exit__(self, *exc: Any) -> None:
        sys.stdout, sys.stderr = self.saved


def _where(exc: BaseException) -> str:
    name = getattr(exc, "filename", None)
    if name:
        return str(name)
    return str(_folder) if _folder is not None else "the results folder"


def _disk_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    # SQLite says SQLITE_FULL this way, also when the store wrapped it in its own error
    if "database or disk is full" in str(exc) or "no space left on the device" in str(exc):
        return True
    # ... but reports a file it cannot create on a full disk as an I/O error
    if isinstance(exc, sqlite3.Error) and _folder is not None:
        from arena.tournament.store import no_space_left

        return no_space_left(_folder)
    return False


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    while exc is not None and exc not in out:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return out


def handle(exc: BaseException) -> int:
    """Print one line about ``exc`` (and log a bug's traceback); returns the exit code."""
    from arena.tournament.store import StoreError

    chain = _chain(exc)
    if any(_disk_full(e) for e in chain):
        where = next((_where(e) for e in chain if getattr(e, "filename", None)), _where(exc))
        say(f"no space left on the device writing {where}; free space and rerun; stored matches are kept")
        return EXIT_TROUBLE
    if isinstance(exc, click.ClickException):
        ctx = getattr(exc, "ctx", None)
        hint = f"; see `{ctx.command_path} --help`" if ctx is not None else ""
        say(exc.format_message().rstrip(".") + hint)
        return exc.exit_code
    if isinstance(exc, (ArenaError, StoreError)):
        say(str(exc))
        return EXIT_USAGE
    if isinstance(exc, sqlite3.DatabaseError):
        db = _folder / "results.sqlite" if _folder is not None else "the results database"
        if isinstance(exc, sqlite3.OperationalError):  # locked, I/O: the machine, not the file
            say(
                f"{db}: the results database cannot be used ({one_line(exc, 120)}); check the disk and "
                "that no other program holds the file, then rerun"
            )
            return EXIT_TROUBLE
        # damaged (malformed, not a database): bad input, as the docs say (status 2)
        say(
            f"{db}: the results database is damaged ({one_line(exc, 120)}); restore a copy, or move the file "
            "aside and rerun with --fresh to play its matches again"
        )
        return EXIT_USAGE
    if isinstance(exc, PermissionError):
        say(f"permission denied: {_where(exc)}; check the file's owner and permissions")
        return EXIT_TROUBLE
    if isinstance(exc, (IsADirectoryError, NotADirectoryError, FileExistsError)) and getattr(exc, "filename", None):
        # a folder where arena writes a file, or a file where it makes a folder
        path = getattr(exc, "filename2", None) or exc.filename
        say(
            f"{path}: {(exc.strerror or 'in the way').lower()}: something else is in the way there; "
            "move it aside and rerun"
        )
        return EXIT_TROUBLE
    log = write_crash_log(exc)
    where = f"the traceback is in {log}" if log else "the traceback could not be written anywhere"
    say(
        f"unexpected {type(exc).__name__}: {one_line(exc, 200) or '(no message)'}; this is a bug in arena, "
        f"{where}; please report it"
    )
    return EXIT_BUG


def write_crash_log(exc: BaseException) -> Path | None:
    """Write the traceback to a crash log; returns its path (None if nothing could be written)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    text = (
        f"arena {' '.join(sys.argv[1:])}\n{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} "
        f"pid {os.getpid()}\n\n" + "".join(traceback.format_exception(exc))
    )
    places = []
    if _folder is not None and _folder.is_dir():
        places.append(_folder / f"crash-{stamp}-{os.getpid()}.log")
    places.append(Path(tempfile.gettempdir()) / f"arena-crash-{stamp}-{os.getpid()}.log")
    places.append(Path.cwd() / f"arena-crash-{stamp}-{os.getpid()}.log")
    for path in places:
        try:
            path.write_text(text)
            return path
        except OSError:
            continue
    return None
