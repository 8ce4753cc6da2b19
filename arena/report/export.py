"""`arena export`: every stored match record of a results folder as JSON Lines.

The bulk format for other tools (as cutechess's PGN is): one match record per line, in
schedule order, exactly as ``arena play --json`` and the store keep it (docs/records.md
lists its fields; ``schema`` is its version). Each record is read through the store's
checksums, so an altered match stops the export with one line instead of leaving a
silently wrong file. ``arena replay FILE.jsonl <match id>`` replays a line of it.
"""

from __future__ import annotations

import difflib
import errno
import itertools
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from arena import user_file
from arena.errors import ArenaError, MachineTrouble
from arena.inert import inert_json
from arena.records import RecordJson
from arena.records.record import MAX_RECORD_BYTES
from arena.report.files import replacing
from arena.report.matches import find_matches
from arena.report.standings import results_folder
from arena.tournament.store import ResultStore, StoreError
from games import REGISTRY


def iter_records(source: Path, *, game: str | None = None, bot: str | None = None) -> Iterator[RecordJson]:
    """The stored records of the folder's current schedule (of one game, where ``bot`` sat)."""
    folder = results_folder(source)
    if not (folder / "results.sqlite").exists():
        raise ArenaError(f"{folder}: no results yet (no results.sqlite); run the tournament first with arena run")
    if game is not None and game not in REGISTRY:
        close = difflib.get_close_matches(game, list(REGISTRY), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ArenaError(f"--game {game!r}: no such game; {hint}use one of {', '.join(REGISTRY)}")
    try:
        store = ResultStore(folder, read_only=True)  # an export writes nothing to the store
        rows = list(store.iter_results(game))
        if not rows:  # an empty export would look like a successful one
            if game is None:
                raise ArenaError(f"{folder}: no stored matches yet; run the tournament first with arena run")
            games = sorted({r.game for r in store.iter_results()})
            raise ArenaError(f"--game {game!r}: no stored match of that game in {folder}; {_here('games', games)}")
        if bot is not None:
            names = sorted({b for r in rows for b in r.bots})
            if bot not in names:
                close = difflib.get_close_matches(bot, names, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                where = f"{game} match" if game is not None else "match"
                raise ArenaError(
                    f"--bot {bot!r}: no stored {where} of that bot in {folder}; {hint}"
                    f"{_here('bots' if game is None else f'{game} bots', names)}"
                )
        for row in find_matches(rows, bot=bot, game=game):
            yield store.get_record(row.match_id)
    except StoreError as err:
        text = str(err)
        raise ArenaError(text if str(folder) in text else f"{folder}: {text}") from None


def _here(what: str, names: list[str]) -> str:
    return f"{what} here: {', '.join(names[:20]) or 'none'}"


def write_records(records: Iterator[RecordJson], out: TextIO) -> int:
    """One compact JSON object per line; returns how many were written."""
    n = 0
    for record in records:
        out.write(inert_json(json.dumps(record, separators=(",", ":"), ensure_ascii=False)) + "\n")
        n += 1
    return n


def export_to_file(source: Path, path: Path, **filters: Any) -> int:
    """Write the export to ``path``. A regular file (or a new one) is written whole or not at
    all: a temporary file renamed over it at the end (over a symbolic link's target, never the
    link). Anything else there (a FIFO, a device) is opened and written, never replaced."""
    records: Iterator[RecordJson] = iter_records(source, **filters)
    first = list(itertools.islice(records, 1))  # a bad source or filter fails here, before any file is touched
    records = itertools.chain(first, records)
    try:
        with replacing(path) as out:
            n = write_records(records, out)
    except OSError as err:
        if err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
            raise MachineTrouble(
                f"{path}: cannot write the export ({err.strerror or err}); free space or check the disk, and rerun"
            ) from None
        raise ArenaError(f"{path}: cannot write the export ({err.strerror or err}); choose a writable path") from None
    return n


def _lines(path: Path) -> Iterator[bytes]:
    """The lines of an export, each at most ``MAX_RECORD_BYTES``: a regular file streamed (an
    export may be large), anything else (a named pipe, /dev/zero) read bounded, never waited on."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        yield from user_file.read_bounded(path, MAX_RECORD_BYTES).splitlines()
        return
    with open(path, "rb") as f:
        while line := f.readline(MAX_RECORD_BYTES + 1):
            if len(line) > MAX_RECORD_BYTES:
                raise user_file.TooLarge(f"a line is longer than {MAX_RECORD_BYTES // 1048576} MiB")
            yield line


def find_in_jsonl(path: Path, match_id: str | None) -> RecordJson:
    """The record of ``match_id`` in an export (or its only record when no id is given)."""
    found: RecordJson | None = None
    count = 0
    try:
        for number, line in enumerate(_lines(path), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                raise ArenaError(f"{path}: line {number} is not JSON; export again with arena export") from None
            count += 1
            if not isinstance(record, dict):
                raise ArenaError(f"{path}: line {number} is not a match record; export again with arena export")
            if match_id is None or record.get("match_id") == match_id:
                found = record
                if match_id is not None:
                    break
    except (OSError, UnicodeDecodeError, user_file.UserFileError) as err:
        raise ArenaError(f"{path}: cannot read the export ({err}); give a file `arena export -o` wrote") from None
    if match_id is None and count != 1:
        raise ArenaError(f"{path}: {count} records here; give a match id: arena replay {path} <match id>")
    if found is None:
        raise ArenaError(f"{path}: no match with id {match_id!r} in this export")
    return found
