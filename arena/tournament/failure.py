"""What went wrong, in one line: the message and exit code of any exception that ends a command.

Errors meant for the user (``ArenaError``, the store's own errors) say their message. Known
troubles of the environment (a full disk, a damaged results database, a permission) say what
to do. Anything else is a bug: one line naming the crash log, which holds the traceback, in the
command's results folder when it has one, else in the temporary folder. The faces print the
line (``arena.cli.guard`` adds click's usage errors).
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

from arena.errors import ArenaError, one_line
from arena.tournament.store import StoreError, no_space_left

EXIT_USAGE = 2  # the user's input is wrong (as click's usage errors)
EXIT_TROUBLE = 1  # the environment failed: disk, database, permissions
EXIT_BUG = 70  # EX_SOFTWARE: an error the arena did not expect


def _where(exc: BaseException, folder: Path | None) -> str:
    name = getattr(exc, "filename", None)
    if name:
        return str(name)
    return str(folder) if folder is not None else "the results folder"


def _disk_full(exc: BaseException, folder: Path | None) -> bool:
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    # SQLite says SQLITE_FULL this way, also when the store wrapped it in its own error
    if "database or disk is full" in str(exc) or "no space left on the device" in str(exc):
        return True
    # ... but reports a file it cannot create on a full disk as an I/O error
    if isinstance(exc, sqlite3.Error) and folder is not None:
        return no_space_left(folder)
    return False


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in out:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def disk_full(exc: BaseException, folder: Path | None) -> str | None:
    """The line to say when ``exc`` (or what caused it) is a full disk, else None."""
    chain = _chain(exc)
    if not any(_disk_full(e, folder) for e in chain):
        return None
    where = next((_where(e, folder) for e in chain if getattr(e, "filename", None)), _where(exc, folder))
    return f"no space left on the device writing {where}; free space and rerun; stored matches are kept"


def explain(exc: BaseException, folder: Path | None) -> tuple[str, int]:
    """The line to say about ``exc`` and the exit code (a bug's traceback goes to a crash log)."""
    if isinstance(exc, (ArenaError, StoreError)):
        return str(exc), getattr(exc, "exit_code", EXIT_USAGE)  # e.g. a database that cannot be opened: 1
    if isinstance(exc, sqlite3.DatabaseError):
        db = folder / "results.sqlite" if folder is not None else "the results database"
        missing = str(exc).startswith(("no such table", "no such column"))  # a store edited by hand
        if isinstance(exc, sqlite3.OperationalError) and not missing:  # locked, I/O: the machine, not the file
            return (
                f"{db}: the results database cannot be used ({one_line(exc, 120)}); check the disk and "
                "that no other program holds the file, then rerun"
            ), EXIT_TROUBLE
        # damaged (malformed, not a database): bad input, as the docs say (status 2)
        return (
            f"{db}: the results database is damaged ({one_line(exc, 120)}); restore a copy, or move the file "
            "aside and rerun with --fresh to play its matches again"
        ), EXIT_USAGE
    if isinstance(exc, PermissionError):
        return f"permission denied: {_where(exc, folder)}; check the file's owner and permissions", EXIT_TROUBLE
    if isinstance(exc, (IsADirectoryError, NotADirectoryError, FileExistsError)) and getattr(exc, "filename", None):
        # a folder where arena writes a file, or a file where it makes a folder
        path = getattr(exc, "filename2", None) or exc.filename
        return (
            f"{path}: {(exc.strerror or 'in the way').lower()}: something else is in the way there; "
            "move it aside and rerun"
        ), EXIT_TROUBLE
    bad_path = _bad_path(exc)
    if bad_path:
        return bad_path, EXIT_USAGE
    log = write_crash_log(exc, folder)
    where = f"the traceback is in {log}" if log else "the traceback could not be written anywhere"
    return (
        f"unexpected {type(exc).__name__}: {one_line(exc, 200) or '(no message)'}; this is a bug in arena, "
        f"{where}; please report it"
    ), EXIT_BUG


def _bad_path(exc: BaseException) -> str | None:
    """A path given on the command line (or in an option) that this machine cannot have: bad
    input, whichever command met it first. The tournament file's own fields are checked by
    name when it is read (config.path_problem)."""
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        name = str(exc.filename or "a path")
        return f"{name[:80]}...: a name in the path is longer than this file system allows (255 bytes); shorten it"
    if isinstance(exc, ValueError) and "null byte" in str(exc):
        return "a path holds a NUL byte (\\0); remove it from the argument or option that gives it"
    if isinstance(exc, RuntimeError) and "home directory" in str(exc):
        return "a path starts with ~user for a user this machine does not have; write the path out in full"
    if isinstance(exc, UnicodeEncodeError) and "surrogates" in str(exc):
        return "an argument or input is not valid UTF-8 (a path, a name or a password); give it as UTF-8"
    return None


def write_crash_log(exc: BaseException, folder: Path | None) -> Path | None:
    """Write the traceback to a crash log; returns its path (None if nothing could be written)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    text = (
        f"arena {' '.join(sys.argv[1:])}\n{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} "
        f"pid {os.getpid()}\n\n" + "".join(traceback.format_exception(exc))
    )
    places = []
    if folder is not None and folder.is_dir():
        places.append(folder / f"crash-{stamp}-{os.getpid()}.log")
    places.append(Path(tempfile.gettempdir()) / f"arena-crash-{stamp}-{os.getpid()}.log")
    places.append(Path.cwd() / f"arena-crash-{stamp}-{os.getpid()}.log")
    for path in places:
        try:
            path.write_text(text)
            return path
        except OSError:
            continue
    return None
