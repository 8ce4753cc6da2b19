"""arena.tournament.failure: any exception that ends a command as one line and an exit code,
for any face (the CLI's guard prints it; click's usage errors are the guard's own)."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from arena.errors import ArenaError
from arena.tournament import failure
from arena.tournament.store import StoreError


def test_errors_meant_for_the_user_say_their_message_with_the_usage_status():
    assert failure.explain(ArenaError("t.yaml: games[0].id: no such game"), None) == (
        "t.yaml: games[0].id: no such game",
        failure.EXIT_USAGE,
    )
    assert failure.explain(StoreError("restore a copy"), None) == ("restore a copy", failure.EXIT_USAGE)


def test_a_locked_database_is_trouble_and_a_damaged_one_is_bad_input(tmp_path: Path):
    line, code = failure.explain(sqlite3.OperationalError("database is locked"), tmp_path)
    assert code == failure.EXIT_TROUBLE and str(tmp_path / "results.sqlite") in line and "rerun" in line
    line, code = failure.explain(sqlite3.DatabaseError("file is not a database"), tmp_path)
    assert code == failure.EXIT_USAGE and "damaged" in line and "--fresh" in line


def test_a_full_disk_is_found_anywhere_in_the_chain_and_names_the_file(tmp_path: Path):
    full = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "run.log"))
    try:
        try:
            raise full
        except OSError as exc:
            raise RuntimeError("while writing the log") from exc
    except RuntimeError as wrapped:
        line = failure.disk_full(wrapped, tmp_path)
    assert line is not None and str(tmp_path / "run.log") in line and "free space" in line
    assert failure.disk_full(ValueError("no"), tmp_path) is None


def test_a_permission_names_the_path_and_a_bug_writes_its_traceback_to_the_folder(tmp_path: Path):
    line, code = failure.explain(PermissionError(errno.EACCES, "Permission denied", "/srv/res"), tmp_path)
    assert code == failure.EXIT_TROUBLE and "/srv/res" in line
    try:
        {}["missing"]
    except KeyError as bug:
        line, code = failure.explain(bug, tmp_path)
    assert code == failure.EXIT_BUG and "unexpected KeyError" in line and "please report it" in line
    (log,) = tmp_path.glob("crash-*.log")
    assert str(log) in line and "KeyError" in log.read_text()
