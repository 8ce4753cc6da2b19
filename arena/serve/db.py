"""The ladder's own database, ``<data>/ladder.sqlite`` (WAL mode): accounts, API tokens,
sessions, bots, their versions, and the deal sets handed to the workers.

Match results live in the tournament's results store beside it (``<data>/results.sqlite``,
arena/tournament/store.py), which is what keeps every finished match exactly once.
Every connection is short-lived or per thread; SQLite's busy timeout serialises writers.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arena.errors import ArenaError, one_line

INDEX_STRIDE = 16  # schedule index of a deal set's match: set id * stride + rotation (at most 10 seats)

DB_NAME = "ladder.sqlite"
_SHA256 = re.compile(r"[0-9a-f]{64}")  # bots/<sha256>/: where every version's code is kept

_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, pw_hash TEXT NOT NULL,
    organiser INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
    hash TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    hash TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS invites (
    hash TEXT PRIMARY KEY, organiser INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL,
    used_by INTEGER REFERENCES users(id));
CREATE TABLE IF NOT EXISTS bots (
    id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, owner_id INTEGER REFERENCES users(id),
    retired INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY, bot_id INTEGER NOT NULL REFERENCES bots(id), n INTEGER NOT NULL,
    sha256 TEXT NOT NULL, path TEXT NOT NULL, kind TEXT NOT NULL,
    status TEXT NOT NULL,            -- checking, ok, failed
    report TEXT NOT NULL DEFAULT '', created REAL NOT NULL, UNIQUE (bot_id, n));
    -- upload_sha256 (added by _migrate): the SHA-256 of the file as uploaded (an archive's sha256
    -- and path become its unpacked folder's once checked)
CREATE TABLE IF NOT EXISTS keys (name TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS deal_sets (
    id INTEGER PRIMARY KEY, entry INTEGER NOT NULL, players INTEGER NOT NULL,
    bots TEXT NOT NULL, created REAL NOT NULL);
"""

# ladder.sqlite's PRAGMA user_version: 0 before it was kept (the same tables); one a newer arena
# raised is refused, not altered or misread (as results.sqlite's meta.schema_version is)
SCHEMA_VERSION = 1

# columns added since the first schema, as (table, column, declaration): LadderDB._migrate
_ADDED = (
    ("versions", "upload_sha256", "TEXT"),
    ("users", "disabled", "INTEGER NOT NULL DEFAULT 0"),  # serve-admin users --disable: no login, upload or play
)


def data_folder(data: Path) -> Path:
    """Make the ladder's data folder (and its parents); one line naming ``--data`` if it cannot be
    made (a read-only file system, a parent in /proc), never a traceback."""
    try:
        data.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArenaError(
            f"--data {data}: cannot create the folder ({exc.strerror or exc}); give a writable folder"
        ) from None
    return data


class LadderDBError(ArenaError):
    """ladder.sqlite cannot be used: one line naming it (not the results store beside it)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@contextlib.contextmanager
def reported(data: Path) -> Iterator[None]:
    """SQLite's errors on ladder.sqlite as a ``LadderDBError`` naming the file and the fix (the
    guard would otherwise blame results.sqlite). The cause is kept: a full disk is still said so."""
    path = Path(data) / DB_NAME
    try:
        yield
    except sqlite3.OperationalError as exc:  # locked, I/O, not a file: the machine, not the file's content
        raise LadderDBError(
            f"{path}: the ladder's database of accounts and bots cannot be opened ({one_line(exc, 120)}); "
            "check that it is a file you may write and that no other program holds it, then rerun",
            1,
        ) from exc
    except sqlite3.DatabaseError as exc:
        raise LadderDBError(
            f"{path}: the ladder's database of accounts and bots is damaged ({one_line(exc, 120)}); restore it "
            "from a backup (docs/ladder.md, Backups); moving it aside instead starts with no accounts or bots",
            2,
        ) from exc


def connect(data: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(Path(data) / DB_NAME, timeout=30, check_same_thread=False, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


class LadderDB:
    """Thread-safe access to ladder.sqlite (one connection per thread)."""

    def __init__(self, data: Path) -> None:
        self.data = Path(data)
        self.local = threading.local()
        with reported(self.data):
            version = self.one("PRAGMA user_version")[0]
            if version > SCHEMA_VERSION:
                raise LadderDBError(
                    f"{self.data / DB_NAME}: written by a newer arena (ladder database version {version}, "
                    f"this arena knows {SCHEMA_VERSION}); upgrade arena, or restore a backup this version made",
                    2,
                )
            self.conn.executescript(_SCHEMA)
            self._migrate()
            if version < SCHEMA_VERSION:
                self.run(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _migrate(self) -> None:
        """Columns added since the first schema (a ladder.sqlite made before keeps its rows)."""
        for table, column, decl in _ADDED:
            if column not in {r["name"] for r in self.all(f"PRAGMA table_info({table})")}:
                try:
                    self.run(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")
                except sqlite3.OperationalError as exc:  # another process added it meanwhile
                    if "duplicate column" not in str(exc):
                        raise

    @property
    def conn(self) -> sqlite3.Connection:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.local.conn = connect(self.data)
        return conn

    def one(self, sql: str, *args: Any) -> sqlite3.Row | None:
        return self.conn.execute(sql, args).fetchone()

    def all(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        return self.conn.execute(sql, args).fetchall()

    def run(self, sql: str, *args: Any) -> int:
        return self.conn.execute(sql, args).lastrowid or 0

    def key(self, name: str) -> bytes:
        """The server's secret ``name`` (32 random bytes, made once, kept with the accounts)."""
        self.run("INSERT OR IGNORE INTO keys (name, value) VALUES (?, ?)", name, secrets.token_bytes(32))
        return bytes(self.one("SELECT value FROM keys WHERE name = ?", name)["value"])

    # ---- bots ------------------------------------------------------------------

    def version_name(self, row: sqlite3.Row) -> str:
        """The name a version plays and is rated under: ``<bot>.v<n>`` (old versions keep theirs)."""
        return f"{row['name']}.v{row['n']}"

    def playing_versions(self) -> list[sqlite3.Row]:
        """The current (latest passed) version of every bot not retired whose owner's account is
        not disabled, by name: what the matchmaker deals new sets to and the leaderboard lists."""
        return self.all(
            "SELECT b.id AS bot_id, b.name, b.owner_id, v.n, v.sha256, v.path, v.kind FROM bots b"
            " JOIN versions v ON v.bot_id = b.id AND v.status = 'ok'"
            " WHERE b.retired = 0 AND v.n = (SELECT MAX(n) FROM versions WHERE bot_id = b.id AND status = 'ok')"
            " AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = b.owner_id AND u.disabled)"
            " ORDER BY b.name"
        )

    def all_versions(self) -> list[sqlite3.Row]:
        return self.all(
            "SELECT b.id AS bot_id, b.name, b.owner_id, b.retired, v.n, v.sha256, v.path, v.kind,"
            " v.status FROM versions v JOIN bots b ON b.id = v.bot_id ORDER BY b.name, v.n"
        )

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction on this thread's connection (BEGIN IMMEDIATE: other writers
        wait), so a read and the write it decides are one step however many requests race.
        The connection autocommits otherwise (``isolation_level=None``): ``with conn:`` alone
        opens no transaction."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def add_version(
        self, bot_id: int, sha256: str, path: Path, kind: str, status: str, upload_sha256: str | None = None
    ) -> tuple[int, int]:
        """A bot's next version, numbered in the same statement that stores it (two uploads at
        once get two numbers); returns (version id, number)."""
        vid = self.run(
            "INSERT INTO versions (bot_id, n, sha256, path, kind, status, created, upload_sha256)"
            " SELECT ?, COALESCE(MAX(n), 0) + 1, ?, ?, ?, ?, ?, ? FROM versions WHERE bot_id = ?",
            bot_id,
            sha256,
            str(path),
            kind,
            status,
            time.time(),
            upload_sha256,
            bot_id,
        )
        return vid, self.one("SELECT n FROM versions WHERE id = ?", vid)["n"]

    def rehome_versions(self) -> int:
        """Point every version whose code lies in another folder's ``bots/<sha256>/`` at this
        data folder's copy, when it has one: the folder was moved, or a backup restored
        elsewhere. Versions store absolute paths, so without this a moved ladder played no
        match at all, without a word (every version's code looked gone). Returns how many."""
        moved = 0
        for row in self.all("SELECT id, path FROM versions"):
            here = self._here(str(row["path"]))
            if here is not None:
                self.run("UPDATE versions SET path = ? WHERE id = ?", str(here), row["id"])
                moved += 1
        return moved

    def _here(self, stored: str) -> Path | None:
        """This folder's copy of a version's code stored at ``stored`` in another data folder."""
        parts = Path(stored).parts
        for i in range(len(parts) - 3, -1, -1):
            if parts[i] == "bots" and _SHA256.fullmatch(parts[i + 1]):
                here = self.data.resolve().joinpath(*parts[i:])
                if str(here) != stored and os.path.lexists(here):
                    return here
                return None
        return None

    # ---- deal sets -------------------------------------------------------------

    def add_deal_set(self, entry: int, players: int, bots: list[str], first: int = 1) -> int:
        """A new deal set's id: past every set stored here and at least ``first`` (the first set
        id the results store holds no match of: a ladder.sqlite older than results.sqlite, restored
        from a backup, would otherwise deal its sets' ids, and so their deals, a second time)."""
        return self.run(
            "INSERT INTO deal_sets (id, entry, players, bots, created)"
            " SELECT MAX(COALESCE(MAX(id), 0) + 1, ?), ?, ?, ?, ? FROM deal_sets",
            first,
            entry,
            players,
            json.dumps(bots),
            time.time(),
        )

    def deal_sets_since(self, first: int) -> list[sqlite3.Row]:
        return self.all("SELECT * FROM deal_sets WHERE id >= ? ORDER BY id", first)
