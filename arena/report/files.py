"""A page or leaderboard written whole or not at all.

Written to a temporary file beside its target, then renamed over it: a reader (a web server
serving the results folder, a browser) sees the old file or the new one, and a writer killed
mid-write leaves at most its temporary file, never half a page. The temporary name is the
writer's own (its process and a random part): two writers of the same file at once (`arena
leaderboard` while `arena run` publishes) each rename a whole file of their own, and neither
finds its temporary file gone. A temporary file left by a writer killed mid-write (kill -9) is
removed by the next write of the same file, once its process is gone.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from arena import user_file


def temporary_name(target: Path) -> Path:
    """A name beside ``target`` for this writer alone (its process and a random part), hidden."""
    return target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[TextIO]:
    """``with replacing(path) as out``: what is written to ``out`` (UTF-8) lands at ``path`` whole,
    or not at all if the block raises. A symbolic link stays a link and its target is rewritten
    (renaming over the link would replace the link itself); anything else there but a regular
    file (``--html /dev/stdout``, a FIFO) is written through, never replaced. Raises OSError as
    writing and ``os.replace`` do."""
    target = Path(os.path.realpath(path))
    if target.exists() and not target.is_file():
        with user_file.open_output(target) as out:  # a named pipe with no reader must not hang it
            yield out
        return
    tmp = temporary_name(target)
    try:
        with open(tmp, "w", encoding="utf-8") as out:
            yield out
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    remove_orphans(target)


def replace_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (``replacing``)."""
    with replacing(path) as out:
        out.write(text)


def remove_orphans(target: Path) -> None:
    """Remove the temporary files ``.<name>.<pid>...tmp`` of ``target`` whose writer no longer
    runs (best effort)."""
    prefix = f".{target.name}."
    try:
        names = [n for n in os.listdir(target.parent) if n.startswith(prefix) and n.endswith(".tmp")]
    except OSError:
        return
    for name in names:
        pid = name[len(prefix) :].split(".", 1)[0]
        if not pid.isdigit() or _running(int(pid)):
            continue
        try:
            (target.parent / name).unlink()
        except OSError:
            pass


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: running
        return True
    return True
