"""Read a file a user names, bounded in size and in time.

A path on the command line or in a file may name anything: a named pipe nothing writes to
(``open`` would wait for a writer for ever), ``/dev/zero`` (``read`` would fill the memory),
a terminal, or ``/dev/stdin`` fed by a pipe (which should keep working). So the file is
opened without waiting, and read only while it gives data within ``wait_s`` and up to
``limit`` bytes; each refusal is a ``UserFileError`` whose text the caller prefixes with
the path and its own fix.
"""

from __future__ import annotations

import errno
import os
import select
import stat
import time
from typing import TextIO

from arena.errors import ArenaError

WAIT_S = 30.0  # a pipe that has given no end of file by then is not a file being read


class UserFileError(ArenaError):
    """Why the file was not read: one clause, without the path (the caller names it)."""


class TooLarge(UserFileError):
    """The file holds more than the limit (``/dev/zero`` too)."""


def read_bounded(path: str | os.PathLike[str], limit: int, wait_s: float = WAIT_S) -> bytes:
    """At most ``limit`` bytes of ``path``; raises ``TooLarge`` past it, ``UserFileError``
    for a pipe with no writer or one that gives no end of file within ``wait_s``, and
    ``OSError`` as ``open`` would (missing, a folder, permissions)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        chunks: list[bytes] = []
        size = 0
        deadline = time.monotonic() + wait_s
        while True:
            try:  # read first: a pipe with no writer reads as the end, but select would wait
                chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            except BlockingIOError:  # a writer, but no data yet
                left = deadline - time.monotonic()
                poller = select.poll()  # not select(): it fails on descriptors above 1023
                poller.register(fd, select.POLLIN)
                if left <= 0 or not poller.poll(left * 1000):
                    raise UserFileError(
                        f"gave no end of file within {wait_s:g} s (a pipe or device kept open)"
                    ) from None
                continue
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise TooLarge(f"is larger than {_size(limit)}")
        if not chunks and stat.S_ISFIFO(mode):  # a named pipe opened before anyone writes reads as empty
            raise UserFileError("is a pipe (FIFO) that nothing wrote to")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _size(n: int) -> str:
    return f"{n // 1048576} MiB" if n >= 1048576 and n % 1048576 == 0 else f"{n // 1024} KiB"


def open_output(path: str | os.PathLike[str]) -> TextIO:
    """``open(path, "w", encoding="utf-8")``, but a named pipe that no program reads is an
    ``OSError`` at once (``open`` would wait for a reader for ever); one with a reader is
    written through, as before."""
    try:
        is_pipe = stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        is_pipe = False  # a new file: open() creates it (or says why not)
    if not is_pipe:
        return open(path, "w", encoding="utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        if err.errno != errno.ENXIO:
            raise
        raise OSError(errno.ENXIO, "a named pipe no program reads; start its reader first", str(path)) from None
    os.set_blocking(fd, True)  # a reader is there: write at its pace
    return os.fdopen(fd, "w", encoding="utf-8")
