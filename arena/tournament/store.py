"""The results store: one SQLite file per results folder (``<results>/results.sqlite``).

What it guarantees, and why:

* One finished match is one transaction (a ``matches`` row, its ``seats`` rows and the
  full record, zlib-compressed JSON). The database runs in WAL mode with
  ``synchronous=FULL``: once ``record_match`` returns, the match survives a kill -9 of
  any process (and an OS crash).
* A match id is stored at most once, even with several processes writing at the same
  time: each insert runs under ``BEGIN IMMEDIATE`` (one writer at a time, waiting up to
  ``busy_timeout_s``) and the match id is the primary key.
* Reads come back in schedule order (``index``, then ``match_id``), never in completion
  order, so ratings computed from them do not depend on the number of workers or on
  interruptions.
* The schema is versioned (``meta.schema_version``); a file written by a newer arena is
  refused with a message instead of being misread, an older one is migrated (``_MIGRATIONS``).
  The luck tables are part of it (schema 4; their shape: ``arena.luck.tables``).
* A stored match cannot be altered unnoticed: each ``matches`` row holds the SHA-256 of
  its record (``record_sha256``) and a digest of its own columns and its ``seats`` rows
  (``digest``), as read back when it was stored; the schedule's digest is in ``meta``.
  Reads check them and raise ``AlteredError`` (one line, naming the file and the match)
  instead of rating a hand-edited row; ``arena run`` drops altered matches and plays them again.

* The folder holds the tournament's deal secret (``deal-secret``, 256 random bits as hex,
  mode 0600), drawn when the folder gets its store and kept by ``reset`` (``--fresh``),
  so secret deals are unpredictable to bots yet replay exactly from this folder.

A ``ResultStore`` may be shared by the threads of one process (calls are serialised).
After a fork it reopens its connection in the child, and it pickles as its folder.

``ResultStore(folder, read_only=True)`` is what the views (`arena leaderboard`, `matches`,
`replay`) open: it writes nothing (no secret drawn, no schema upgraded, no WAL switch), so a
finished results folder on read-only media (or owned by someone else) can be viewed. On a
folder it cannot write, SQLite opens the file ``immutable`` (no -shm file needed) unless a
non-empty ``-wal`` file holds commits not yet in the main file. (An older arena's store is
upgraded first where the folder can be written, as opening it for writing does.)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import sqlite3
import stat
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any, TypedDict

from arena.luck import tables as luck_tables
from arena.records.record import RECORD_SCHEMAS, MatchRecord, RecordJson  # noqa: F401 (RECORD_SCHEMAS re-exported)
from arena.records.record import RecordError as _RecordShapeError

DB_NAME = "results.sqlite"
SECRET_NAME = "deal-secret"
SECRET_BYTES = 32
SCHEMA_VERSION = 4
SANDBOX_FAULT = "sandbox"  # arena.match.faults.FaultKind.SANDBOX.value

_SCHEMA = (
    """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE tournament (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    name       TEXT NOT NULL,
    config     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE bots (
    name     TEXT PRIMARY KEY,
    path     TEXT,
    sha256   TEXT NOT NULL,
    added_at TEXT NOT NULL
);
CREATE TABLE matches (
    match_id          TEXT PRIMARY KEY,
    idx               INTEGER NOT NULL,
    tournament        TEXT,
    game              TEXT NOT NULL,
    rules_version     TEXT,
    players           INTEGER NOT NULL,
    grp               INTEGER,
    deal              INTEGER,
    rotation          INTEGER,
    deal_seed         TEXT,     -- text: seeds are unsigned 64-bit, SQLite integers are signed
    match_seed        TEXT,
    sandbox_level     TEXT,
    started_at        TEXT,
    duration_s        REAL,
    capped            INTEGER NOT NULL,
    has_sandbox_fault INTEGER NOT NULL,
    record            BLOB NOT NULL, -- zlib(JSON of the full record)
    record_sha256     TEXT,     -- of the record blob
    digest            TEXT      -- of this row and its seats rows (see _digest)
);
CREATE INDEX matches_order ON matches (idx, match_id);
CREATE INDEX matches_game ON matches (game, idx);
CREATE TABLE seats (
    match_id     TEXT NOT NULL REFERENCES matches (match_id) ON DELETE CASCADE,
    seat         INTEGER NOT NULL,
    bot          TEXT NOT NULL,
    sha256       TEXT,
    place        INTEGER NOT NULL,
    score,                      -- no affinity: keeps ints as ints and floats as floats
    fault_kind   TEXT,
    fault_detail TEXT,
    PRIMARY KEY (match_id, seat)
);
CREATE INDEX seats_bot ON seats (bot);
CREATE TABLE schedule (
    match_id TEXT PRIMARY KEY,
    idx      INTEGER NOT NULL
);
"""
    + luck_tables.SCHEMA
)  # luck_baselines, luck_aivat: defined beside the code that fills them

# The columns a match's digest covers, in order (the seats rows follow, by seat).
_MATCH_COLUMNS = (
    "match_id",
    "idx",
    "tournament",
    "game",
    "rules_version",
    "players",
    "grp",
    "deal",
    "rotation",
    "deal_seed",
    "match_seed",
    "sandbox_level",
    "started_at",
    "duration_s",
    "capped",
    "has_sandbox_fault",
    "record_sha256",
)
_SEAT_COLUMNS = ("seat", "bot", "sha256", "place", "score", "fault_kind", "fault_detail")
SCHEDULE_DIGEST = "schedule_sha256"  # meta key
REVEALED_DEALS = "revealed_deals"  # meta key: JSON [[game, players, "deal seed"], ...]


# One encoder for every digest: json.dumps with options builds a new one per call, and a
# leaderboard checks every stored match. Tuples encode as lists do.
_DIGEST_JSON = json.JSONEncoder(separators=(",", ":"), default=repr)


def _digest(match: Sequence[Any], seats: Sequence[Sequence[Any]]) -> str:
    """SHA-256 of a match's columns (``_MATCH_COLUMNS``) and its seats rows, as SQLite returns them."""
    text = _DIGEST_JSON.encode([match, seats])
    return hashlib.sha256(text.encode()).hexdigest()


def _schedule_digest(conn: sqlite3.Connection) -> str:
    rows = conn.execute("SELECT match_id, idx FROM schedule ORDER BY match_id").fetchall()
    return hashlib.sha256("".join([f"{mid!r} {idx!r}\n" for mid, idx in rows]).encode()).hexdigest()


def _seal_all(conn: sqlite3.Connection) -> None:
    """Version 2 had no checksums: seal what is stored as it is now."""
    conn.execute("ALTER TABLE matches ADD COLUMN record_sha256 TEXT")
    conn.execute("ALTER TABLE matches ADD COLUMN digest TEXT")
    for (mid,) in conn.execute("SELECT match_id FROM matches").fetchall():
        (blob,) = conn.execute("SELECT record FROM matches WHERE match_id = ?", (mid,)).fetchone()
        conn.execute("UPDATE matches SET record_sha256 = ? WHERE match_id = ?", (hashlib.sha256(blob).hexdigest(), mid))
        _seal(conn, mid)
    _seal_schedule(conn)


def _seal(conn: sqlite3.Connection, match_id: str) -> None:
    conn.execute("UPDATE matches SET digest = ? WHERE match_id = ?", (_read_digest(conn, match_id), match_id))


def _read_digest(conn: sqlite3.Connection, match_id: str) -> str:
    match = conn.execute(f"SELECT {', '.join(_MATCH_COLUMNS)} FROM matches WHERE match_id = ?", (match_id,)).fetchone()
    seats = conn.execute(
        f"SELECT {', '.join(_SEAT_COLUMNS)} FROM seats WHERE match_id = ? ORDER BY seat", (match_id,)
    ).fetchall()
    return _digest(match, seats)


def _seal_schedule(conn: sqlite3.Connection) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (SCHEDULE_DIGEST, _schedule_digest(conn)),
    )


# Version 1 had no schedule table: every stored match counted. Version 2 had no checksums.
# Version 3 had no luck tables in its schema (the arena added them when it computed baselines).
_MIGRATIONS: dict[int, str | Callable[[sqlite3.Connection], None]] = {
    1: "CREATE TABLE schedule (match_id TEXT PRIMARY KEY, idx INTEGER NOT NULL)",
    2: _seal_all,
    3: luck_tables.migrate,
}


class StoredTournament(TypedDict):
    """The ``tournament`` row: the tournament file's validated config (JSON) and when it was stored."""

    name: str
    config: dict[str, Any]
    created_at: str
    updated_at: str


class StoreError(Exception):
    """A results store that cannot be opened or used; the message says what to do."""


class StoreSchemaError(StoreError):
    """The file was written with a schema this arena does not know."""


class AlteredError(StoreError):
    """Stored rows that no longer match the checksums written with them (hand-edited)."""


class RecordError(StoreError, _RecordShapeError):
    """A match record that lacks what the store needs."""


@dataclass(frozen=True, slots=True)
class ResultRow:
    """The compact result of one stored match, what ratings and leaderboards read.

    Tuples are in seat order. ``faults`` holds the fault kind per seat (None if the
    seat did not fault); ``sandbox_fault`` is True when any seat has a ``sandbox``
    fault (the harness failed; the match is not rated).
    """

    match_id: str
    index: int
    game: str
    players: int
    bots: tuple[str, ...]
    places: tuple[int, ...]
    scores: tuple[Any, ...]
    faults: tuple[str | None, ...]
    fault_details: tuple[str | None, ...]
    capped: bool
    sandbox_fault: bool
    # the stored match's checked digest (``iter_results``): it covers every column above but
    # the schedule's index; None for a row made from a record
    digest: str | None = field(default=None, compare=False)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ResultRow:
        """The row a match record gives (what ``iter_results`` yields once it is stored)."""
        row = _record_columns(record)
        seats = row.seats
        return cls(
            match_id=row.match_id,
            index=row.idx,
            game=row.game,
            players=row.players,
            bots=tuple(s.bot for s in seats),
            places=tuple(s.place for s in seats),
            scores=tuple(s.score for s in seats),
            faults=tuple(s.fault_kind for s in seats),
            fault_details=tuple(s.fault_detail for s in seats),
            capped=bool(row.capped),
            sandbox_fault=bool(row.has_sandbox_fault),
        )


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _opt_text(value: object) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True, slots=True)
class SeatColumns:
    """One seat of a match as its ``seats`` row holds it (``_SEAT_COLUMNS``)."""

    seat: int
    bot: str
    sha256: str | None
    place: int
    score: Any  # the game's score as the record holds it (an int or a float)
    fault_kind: str | None
    fault_detail: str | None

    def values(self) -> tuple[int, str, str | None, int, Any, str | None, str | None]:
        return (self.seat, self.bot, self.sha256, self.place, self.score, self.fault_kind, self.fault_detail)


@dataclass(frozen=True, slots=True)
class MatchColumns:
    """The indexed columns of one match as its ``matches`` row holds them (``_MATCH_COLUMNS``
    but the record's checksum), and its seats: what a ``MatchRecord`` gives the store."""

    match_id: str
    idx: int
    tournament: str | None
    game: str
    rules_version: str | None
    players: int
    grp: int | None
    deal: int | None
    rotation: int | None
    deal_seed: str  # as text: a 64-bit seed does not fit SQLite's signed integer
    match_seed: str
    sandbox_level: str | None
    started_at: str | None
    duration_s: float | None
    capped: int
    has_sandbox_fault: int
    seats: tuple[SeatColumns, ...]

    @classmethod
    def of(cls, rec: MatchRecord) -> MatchColumns:
        seats = tuple(
            SeatColumns(
                seat=seat,
                bot=bot.name,
                sha256=bot.sha256,
                place=rec.result.places[seat],
                score=rec.result.scores[seat],
                fault_kind=rec.fault_kind(seat),
                fault_detail=rec.fault_detail(seat),
            )
            for seat, bot in enumerate(rec.bots)
        )
        return cls(
            match_id=rec.match_id,
            idx=rec.index,
            tournament=rec.tournament,
            game=rec.game,
            rules_version=rec.rules_version,
            players=rec.players,
            grp=rec.group,
            deal=rec.deal,
            rotation=rec.rotation,
            deal_seed=str(rec.deal_seed),
            match_seed=str(rec.match_seed),
            sandbox_level=rec.sandbox_level,
            started_at=rec.started_at,
            duration_s=rec.duration_s,
            capped=int(rec.result.capped),
            has_sandbox_fault=int(any(s.fault_kind == SANDBOX_FAULT for s in seats)),
            seats=seats,
        )

    def values(self) -> tuple[object, ...]:
        """The row's values in ``_MATCH_COLUMNS`` order (without ``record_sha256``)."""
        return (
            self.match_id,
            self.idx,
            self.tournament,
            self.game,
            self.rules_version,
            self.players,
            self.grp,
            self.deal,
            self.rotation,
            self.deal_seed,
            self.match_seed,
            self.sandbox_level,
            self.started_at,
            self.duration_s,
            self.capped,
            self.has_sandbox_fault,
        )


def _record_columns(record: Mapping[str, Any]) -> MatchColumns:
    """The indexed columns of a match record, read through its one shape check (``MatchRecord``)."""
    try:
        rec = MatchRecord.from_json(record)
    except _RecordShapeError as exc:
        mid = record.get("match_id") if isinstance(record, Mapping) else None
        raise RecordError(
            f"{mid}: {exc}" if isinstance(mid, str) and mid else f"malformed match record ({exc})"
        ) from None
    except (TypeError, ValueError) as exc:  # a value the reader converts (duration_s) is of the wrong kind
        raise RecordError(f"malformed match record ({type(exc).__name__}: {exc})") from None
    return MatchColumns.of(rec)


def no_space_left(folder: Path, margin: int = 1 << 20) -> bool:
    """Whether the file system of ``folder`` has (almost) no room left for its user."""
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < margin


def lost_store(folder: Path) -> str | None:
    """Why the store of a results folder looks lost (one line with the fix), else None:
    ``results.sqlite`` missing or empty while the folder's run.log shows that an earlier run
    stored its matches there. Replaying them silently would redo hours. (A deal secret alone
    is no sign: it is copied into a new folder on purpose, to play the same deals there.)"""
    db = Path(folder) / DB_NAME
    try:
        if db.stat().st_size > 0:
            return None
        what = "is empty (0 bytes)"
    except FileNotFoundError:
        what = "is missing"
    if not (Path(folder) / "run.log").exists():
        return None
    left = [name for name in (SECRET_NAME, "run.log") if (Path(folder) / name).exists()]
    return (
        f"{db} {what}, yet the folder holds the {' and '.join(left)} of an earlier run: its stored "
        f"matches are lost; restore {DB_NAME} from a copy, or rerun with --fresh to play the whole "
        "tournament again"
    )


class ResultStore:
    """The SQLite results store of one results folder (created if missing)."""

    def __init__(
        self, folder: str | os.PathLike[str], *, busy_timeout_s: float = 60.0, read_only: bool = False
    ) -> None:
        self.folder = Path(folder)
        self.path = self.folder / DB_NAME
        self.busy_timeout_s = busy_timeout_s
        self.read_only = read_only
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._abandoned: list[sqlite3.Connection] = []
        if read_only:
            self._connect()
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        self._connect()
        self._ensure_secret()

    # -- connection -------------------------------------------------------------------

    def _check_file(self) -> None:
        """What SQLite would call 'unable to open database file', said precisely."""
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a folder, not a results database; move it aside and rerun")
        if self.path.exists() and not os.access(self.path, os.R_OK | (0 if self.read_only else os.W_OK)):
            raise StoreError(
                f"{self.path}: permission denied for this user; check the file's owner and permissions (ls -l)"
            )

    def _connect_read_only(self, *, full: bool = False) -> sqlite3.Connection:
        self._check_file()
        if not self.path.is_file():
            raise StoreError(f"{self.folder}: no results yet (no {DB_NAME}); run the tournament first with arena run")
        wal = self.path.with_name(self.path.name + "-wal")
        pending = wal.exists() and wal.stat().st_size > 0
        # A folder we cannot write (or on a full disk: ``full``) has no room for the -shm file
        # WAL readers share: read the file as it is, unless commits wait in the -wal.
        immutable = (full or not os.access(self.folder, os.W_OK)) and not pending
        uri = self.path.resolve().as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")
        try:
            conn = sqlite3.connect(
                uri, uri=True, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False
            )
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
            conn.execute("PRAGMA query_only = ON")
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            row = (
                conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                if "meta" in tables
                else None
            )
        except sqlite3.DatabaseError as exc:
            if "conn" in locals():
                conn.close()
            if isinstance(exc, sqlite3.OperationalError) and not os.access(self.folder, os.W_OK):
                raise StoreError(
                    f"{self.path} cannot be read here ({exc}): its folder {self.folder} is not "
                    "writable and holds commits still in the -wal file; copy the results folder "
                    "somewhere writable and view the copy"
                ) from exc
            if isinstance(exc, sqlite3.OperationalError) and no_space_left(self.folder):
                # SQLite could not make its -shm file: the disk is full, the file is whole (before,
                # this said "not a usable results database ... restore it from a copy")
                if not full and not pending:
                    return self._connect_read_only(full=True)
                raise StoreError(
                    f"{self.path}: no space left on the device to read it (SQLite needs room beside it "
                    "while commits wait in its -wal file); free space and rerun; stored matches are kept"
                ) from exc
            raise StoreError(
                f"{self.path} is not a usable results database ({exc}); restore it from a copy, "
                "or use another results folder"
            ) from exc
        version = row[0] if row else None
        if not tables:
            conn.close()
            raise StoreError(
                f"{self.folder}: no results yet ({DB_NAME} is empty); run the tournament first with arena run"
            )
        if "meta" not in tables:
            conn.close()
            raise StoreSchemaError(
                f"{self.path} is an SQLite file but not an arena results store; use another results folder"
            )
        if version is None or not str(version).isdigit() or int(version) != SCHEMA_VERSION:
            conn.close()
            if version is not None and str(version).isdigit() and int(version) < SCHEMA_VERSION:
                if os.access(self.folder, os.W_OK):  # an older arena's store, where it can be upgraded
                    self.read_only = False
                    conn = self._connect()
                    self._ensure_secret()
                    return conn
                raise StoreError(
                    f"{self.path} was written by an older arena (schema {version}); "
                    "run `arena run` on its tournament once to upgrade it, where it can be written"
                )
            if version is not None and str(version).isdigit():
                raise StoreSchemaError(
                    f"{self.path} has schema version {version}, newer than this arena "
                    f"understands ({SCHEMA_VERSION}); upgrade arena"
                )
            raise StoreSchemaError(f"{self.path}: unknown schema version {version!r}; use another results folder")
        self._conn = conn
        return conn

    def _connect(self) -> sqlite3.Connection:
        if self.read_only:
            return self._connect_read_only()
        self._check_file()
        try:
            conn = sqlite3.connect(
                self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from exc
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
            self._set_wal(conn)
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            self._ensure_schema(conn)
        except sqlite3.DatabaseError as exc:
            conn.close()
            if not os.access(self.folder, os.W_OK):  # WAL needs its -shm file even to read
                raise StoreError(
                    f"{self.path} cannot be opened: its folder {self.folder} is not writable "
                    "(read-only medium or permissions); copy the results folder somewhere "
                    "writable, or fix its permissions"
                ) from exc
            if no_space_left(self.folder):  # SQLite reports a full disk as an I/O error here
                raise StoreError(
                    f"{self.path}: no space left on the device; free space and rerun; stored matches are kept"
                ) from exc
            raise StoreError(
                f"{self.path} is not a usable results database ({exc}); "
                "restore it from a copy, or move it aside and rerun with --fresh to play its matches again, "
                "or use another results folder"
            ) from exc
        except StoreError:
            conn.close()
            raise
        self._conn = conn
        return conn

    def _set_wal(self, conn: sqlite3.Connection) -> None:
        # Switching to WAL needs a moment alone with the file; another process opening
        # the same new file at once can make it report busy, so retry briefly.
        deadline = time.monotonic() + self.busy_timeout_s
        while True:
            try:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() > deadline:
                    raise StoreError(f"{self.path} stays locked: {exc}") from exc
                time.sleep(0.05)
        if str(mode).lower() != "wal":
            raise StoreError(
                f"{self.path}: cannot switch to WAL mode (got {mode!r}); "
                "the results folder must be on a local file system"
            )

    def _ensure_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables:
                for statement in _split_sql(_SCHEMA):
                    conn.execute(statement)
                conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                conn.execute("INSERT INTO meta (key, value) VALUES ('created_at', ?)", (_now(),))
            elif "meta" not in tables:
                raise StoreSchemaError(
                    f"{self.path} is an SQLite file but not an arena results store; use another results folder"
                )
            else:
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                version = row[0] if row else None
                if version is None or not str(version).isdigit():
                    raise StoreSchemaError(
                        f"{self.path}: unknown schema version {version!r}; use another results folder"
                    )
                if int(version) > SCHEMA_VERSION:
                    raise StoreSchemaError(
                        f"{self.path} has schema version {version}, newer than this arena "
                        f"understands ({SCHEMA_VERSION}); upgrade arena or use another "
                        "results folder"
                    )
                for old in range(int(version), SCHEMA_VERSION):
                    step = _MIGRATIONS[old]
                    step(conn) if callable(step) else conn.execute(step)
                if int(version) < SCHEMA_VERSION:
                    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @property
    def conn(self) -> sqlite3.Connection:
        if os.getpid() != self._pid:
            # A connection must not cross a fork: keep the parent's object alive (closing
            # it here could disturb the parent's locks) and open our own.
            if self._conn is not None:
                self._abandoned.append(self._conn)
            self._pid = os.getpid()
            self._conn = None
        if self._conn is None:
            return self._connect()
        return self._conn

    def close(self) -> None:
        """Close the connection (the store reopens it if used again)."""
        with self._lock:
            if self._conn is not None and os.getpid() == self._pid:
                self._conn.close()
            self._conn = None

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "busy_timeout_s": self.busy_timeout_s, "read_only": self.read_only}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(  # type: ignore[misc]
            state["folder"],
            busy_timeout_s=state["busy_timeout_s"],
            read_only=state.get("read_only", False),
        )

    def writing(self) -> _WriteTx:
        """``with store.writing() as conn``: one write transaction (BEGIN IMMEDIATE ... COMMIT,
        ROLLBACK on error), for the tables other modules keep in the store (the luck baselines)."""
        return _WriteTx(self)

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The connection, for queries the methods below do not offer (a ladder's play order, its
        deal sets): no other thread of this process uses it until the block ends, so the reads
        inside see no write of this store object between them."""
        with self._lock:
            yield self.conn

    def last_rowid(self) -> int:
        """The rowid of the last match stored (0: none): the order matches were stored in; O(1), unlike a count."""
        with self._lock:
            return int(self.conn.execute("SELECT MAX(rowid) FROM matches").fetchone()[0] or 0)

    # -- the deal secret ---------------------------------------------------------------

    @property
    def secret_path(self) -> Path:
        return self.folder / SECRET_NAME

    def _ensure_secret(self) -> None:
        """Draw the folder's secret if it has none and no match was played without one."""
        path = self.secret_path
        if path.exists() or path.is_symlink():
            self._check_secret_file()
            if path.stat().st_mode & 0o077:
                os.chmod(path, 0o600)
            return
        if self.match_count():
            return  # a folder from before deal secrets: its matches used other deals
        tmp = self.folder / f".{SECRET_NAME}.{os.getpid()}.{secrets.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, (secrets.token_hex(SECRET_BYTES) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # atomic: a concurrent opener either wins or reads the winner's
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)

    def _check_secret_file(self) -> None:
        """The secret is a small regular file of the folder's own: chmod and read through a link
        changed /dev/zero's mode (as root) and read it without end; a named pipe hung the run."""
        st = os.lstat(self.secret_path)
        if stat.S_ISDIR(st.st_mode):
            return  # reading it fails: "in the way", as before
        if not stat.S_ISREG(st.st_mode) or st.st_size > 4096:
            raise StoreError(
                f"{self.secret_path} is not the deal secret this folder wrote (a link, a pipe, a device or "
                "a large file); restore it from a copy, or move it aside and rerun with --fresh"
            )

    def deal_secret(self) -> str:
        """The folder's deal secret (64 hex digits). Never give it to a bot."""
        if not self.read_only:
            self._ensure_secret()  # checks one already there
        try:
            if self.read_only:
                self._check_secret_file()
            text = self.secret_path.read_text().strip()
        except FileNotFoundError:
            raise StoreError(
                f"{self.folder} has stored matches but no {SECRET_NAME} file (it was deleted, "
                "or the matches predate deal secrets), so its deals cannot be dealt again; "
                f"restore {self.secret_path} from a copy, or rerun with --fresh or use another "
                "results folder"
            ) from None
        if not re.fullmatch(r"[0-9a-f]{64,}", text):
            raise StoreError(
                f"{self.secret_path} is damaged (expected 64 hex digits); "
                "restore it, or rerun with --fresh after deleting it"
            )
        return text

    def revealed_deals(self) -> set[tuple[str, int, int]]:
        """The deals (game, players, deal seed) a replay page of this folder has shown, whole
        hands and all (arena.tournament.fair_play). Kept by ``reset``: ``--fresh`` must not
        deal them again."""
        with self._lock:
            row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (REVEALED_DEALS,)).fetchone()
        return _revealed(row[0] if row else None)

    def reveal_deals(self, deals: Sequence[tuple[str, int, int]]) -> None:
        """Add ``deals`` to ``revealed_deals`` (before the page showing them is written)."""
        with self.writing() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (REVEALED_DEALS,)).fetchone()
            known = _revealed(row[0] if row else None)
            new = known | {(str(g), int(p), int(s)) for g, p, s in deals}
            if new != known:
                text = json.dumps(sorted([g, p, str(s)] for g, p, s in new), separators=(",", ":"))
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (REVEALED_DEALS, text),
                )

    # -- tournament and bots ----------------------------------------------------------

    def claim(self, name: str, fix: str = "") -> None:
        """Raise StoreError if the folder holds another tournament's results (another name: a
        second tournament, a duel or a ladder pointed at this folder would mix into its
        standings and rename it). A folder with no tournament yet is anyone's."""
        stored = self.tournament()
        if stored is not None and stored["name"] != name:
            fix = fix or f"give {name!r} its own results folder, or start this one over with --fresh"
            raise StoreError(f"{self.folder}: holds the results of {stored['name']!r}, not of {name!r}; {fix}")

    def init_tournament(self, name: str, config: Mapping[str, Any], bots: Sequence[Mapping[str, Any]]) -> None:
        """Record the tournament (name, resolved config) and its bots (name, path, sha256).

        Calling it again (a resumed run, maybe of a changed file) replaces the config
        and the registered bots: stored matches are kept, and those that no longer
        belong to the schedule (``set_schedule``) are simply not counted.
        """
        config_json = json.dumps(config, sort_keys=True, default=str)
        now = _now()
        with self.writing() as conn:
            row = conn.execute("SELECT name FROM tournament WHERE id = 1").fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO tournament (id, name, config, created_at, updated_at) VALUES (1, ?, ?, ?, ?)",
                    (name, config_json, now, now),
                )
            else:
                conn.execute(
                    "UPDATE tournament SET name = ?, config = ?, updated_at = ? WHERE id = 1", (name, config_json, now)
                )
            conn.execute("DELETE FROM bots")
            for bot in bots:
                conn.execute(
                    "INSERT INTO bots (name, path, sha256, added_at) VALUES (?, ?, ?, ?)",
                    (str(bot["name"]), _opt_text(bot.get("path")), str(bot["sha256"]), now),
                )

    def set_schedule(self, matches: Sequence[tuple[str, int]]) -> None:
        """Make ``matches`` ((match id, schedule index) pairs) the tournament's schedule:
        the matches that are counted, rated in index order, and not yet complete while
        one of them is missing. Stored matches outside it are kept (a later schedule may
        want them back) but not counted."""
        with self.writing() as conn:
            conn.execute("DELETE FROM schedule")
            conn.executemany(
                "INSERT INTO schedule (match_id, idx) VALUES (?, ?)", [(str(m), int(i)) for m, i in matches]
            )
            _seal_schedule(conn)

    def has_schedule(self) -> bool:
        with self._lock:
            return self.conn.execute("SELECT 1 FROM schedule LIMIT 1").fetchone() is not None

    def progress(self) -> tuple[int, int]:
        """(scheduled, counted): matches in the schedule, and those of them stored as
        played (a harness failure is not played). Without a schedule: every stored match."""
        with self._lock:
            self._check_schedule()
            if not self.has_schedule():
                n = int(self.conn.execute("SELECT COUNT(*) FROM matches WHERE has_sandbox_fault = 0").fetchone()[0])
                return n, n
            scheduled = int(self.conn.execute("SELECT COUNT(*) FROM schedule").fetchone()[0])
            counted = int(
                self.conn.execute(
                    "SELECT COUNT(*) FROM schedule JOIN matches USING (match_id) WHERE has_sandbox_fault = 0"
                ).fetchone()[0]
            )
        return scheduled, counted

    def forget_harness_failures(self) -> int:
        """Delete stored matches the harness failed to play (a ``sandbox`` fault; older
        arenas stored them), so they are played again. Returns how many."""
        with self.writing() as conn:
            return conn.execute("DELETE FROM matches WHERE has_sandbox_fault = 1").rowcount

    def altered(self) -> list[str]:
        """The ids of stored matches whose rows or record no longer match their checksums, in id order."""
        with self._lock:
            bad = {match[0] for match, _, intact in self._checked_matches(False) if not intact}
            for mid, blob, sha in self.conn.execute("SELECT match_id, record, record_sha256 FROM matches"):
                if sha != hashlib.sha256(blob).hexdigest():
                    bad.add(mid)
        return sorted(bad)

    def forget_altered(self) -> list[str]:
        """Delete the altered matches (``altered``), so they are played again; returns their ids."""
        ids = self.altered()
        with self.writing() as conn:
            for mid in ids:
                conn.execute("DELETE FROM seats WHERE match_id = ?", (mid,))
                conn.execute("DELETE FROM matches WHERE match_id = ?", (mid,))
        return ids

    def _check_schedule(self) -> None:
        with self._lock:
            row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (SCHEDULE_DIGEST,)).fetchone()
            if row is None and not self.has_schedule():
                return
            if row is None or row[0] != _schedule_digest(self.conn):
                raise AlteredError(
                    f"{self.path}: the stored schedule was altered after arena wrote it; "
                    "run `arena run` on the tournament file again to rewrite it, "
                    "or restore the file from a copy"
                )

    def tournament(self) -> StoredTournament | None:
        """The recorded tournament: name, config, created_at, updated_at (None if none)."""
        with self._lock:
            row = self.conn.execute(
                "SELECT name, config, created_at, updated_at FROM tournament WHERE id = 1"
            ).fetchone()
        if row is None:
            return None
        return StoredTournament(name=row[0], config=json.loads(row[1]), created_at=row[2], updated_at=row[3])

    def bots(self) -> list[dict[str, Any]]:
        """The registered bots (name, path, sha256), by name."""
        with self._lock:
            rows = self.conn.execute("SELECT name, path, sha256 FROM bots ORDER BY name").fetchall()
        return [{"name": n, "path": p, "sha256": h} for n, p, h in rows]

    def bot_hashes(self) -> dict[str, str]:
        """{bot: sha256} of what was played: the hash in the stored matches, else (for a
        bot with no match yet) the hash registered by ``init_tournament``. If one bot was
        played under several hashes, the one of its latest match in schedule order."""
        with self._lock:
            registered = self.conn.execute("SELECT name, sha256 FROM bots").fetchall()
            played = self.conn.execute(
                "SELECT s.bot, s.sha256 FROM seats s JOIN matches m USING (match_id) "
                "WHERE s.sha256 IS NOT NULL ORDER BY m.idx, m.match_id, s.seat"
            ).fetchall()
        out = dict(registered)
        out.update(played)  # later rows win
        return dict(sorted(out.items()))

    # -- matches ----------------------------------------------------------------------

    def record_match(self, record: Mapping[str, Any]) -> bool:
        """Store one finished match in one transaction. Returns False, changing nothing,
        if its match id is already stored. Raises ``RecordError`` on a malformed record."""
        row = _record_columns(record)
        blob = zlib.compress(json.dumps(record, separators=(",", ":"), default=str).encode("utf-8"), 6)
        with self.writing() as conn:
            cur = conn.execute(
                "INSERT INTO matches (match_id, idx, tournament, game, rules_version, players,"
                " grp, deal, rotation, deal_seed, match_seed, sandbox_level, started_at,"
                " duration_s, capped, has_sandbox_fault, record, record_sha256)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (match_id) DO NOTHING",
                (*row.values(), blob, hashlib.sha256(blob).hexdigest()),
            )
            if cur.rowcount == 0:
                return False
            # seats left behind by a hand-deleted match row (foreign keys off in the sqlite3 shell)
            conn.execute("DELETE FROM seats WHERE match_id = ?", (row.match_id,))
            conn.executemany(
                "INSERT INTO seats (match_id, seat, bot, sha256, place, score, fault_kind,"
                " fault_detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(row.match_id, *s.values()) for s in row.seats],
            )
            _seal(conn, row.match_id)  # from the rows as stored, types as SQLite keeps them
        return True

    def completed_ids(self) -> set[str]:
        """The ids of every stored match the harness did play (no ``sandbox`` fault)."""
        with self._lock:
            return {r[0] for r in self.conn.execute("SELECT match_id FROM matches WHERE has_sandbox_fault = 0")}

    def sandbox_levels(self) -> list[tuple[str, bool]]:
        """Each sandbox level matches ran at, and whether it was safe for untrusted bots."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT sandbox_level, record, record_sha256, match_id FROM matches WHERE rowid IN"
                " (SELECT MIN(rowid) FROM matches GROUP BY sandbox_level) ORDER BY sandbox_level"
            ).fetchall()
        out = []
        for level, blob, sha, mid in rows:
            if sha != hashlib.sha256(blob).hexdigest():  # the leaderboard states whether it was safe
                raise AlteredError(_altered_message(self.path, mid))
            try:
                sandbox = json.loads(zlib.decompress(blob)).get("sandbox") or {}
                safe = bool((sandbox.get("details") or {}).get("safe"))
            except (zlib.error, ValueError, AttributeError):
                safe = False
            out.append((level or "unknown", safe))
        return out

    def match_count(self) -> int:
        """How many matches are stored."""
        with self._lock:
            return int(self.conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0])

    def iter_results(self, game: str | None = None, *, scheduled: bool | None = None) -> Iterator[ResultRow]:
        """Compact result rows in schedule order (index, then match id), of one game or all.

        ``scheduled`` (default: whenever a schedule was set) yields only the matches of
        the current schedule, each with its index there: what was played for an older
        version of the tournament is neither counted nor ordered by when it was played.
        """
        with self._lock:
            if scheduled is None:
                scheduled = self.has_schedule()
            if scheduled:
                self._check_schedule()
        for match, seats, intact in self._checked_matches(scheduled, game):
            if not intact:
                raise AlteredError(_altered_message(self.path, match[0]))
            yield _result_row(match, seats)

    def _checked_matches(
        self, scheduled: bool, game: str | None = None
    ) -> Iterator[tuple[tuple[Any, ...], list[tuple[Any, ...]], bool]]:
        """(a match's columns, then its index and stored digest; its seats rows; whether they
        still match that digest), by index then match id."""
        index = "sc.idx" if scheduled else "m.idx"
        join = " JOIN schedule sc USING (match_id)" if scheduled else ""
        where, args = (" WHERE m.game = ?", (game,)) if game is not None else ("", ())
        # Two queries, not one join: the join repeats a match's columns on each of its
        # seats rows, and reading them is most of a large leaderboard's time.
        with self._lock, _read_snapshot(self.conn):
            matches = self.conn.execute(
                f"SELECT {', '.join('m.' + c for c in _MATCH_COLUMNS)}, {index}, m.digest"
                f" FROM matches m{join}{where} ORDER BY {index}, m.match_id",
                args,
            ).fetchall()
            seats = self.conn.execute(
                f"SELECT s.match_id, {', '.join('s.' + c for c in _SEAT_COLUMNS)} FROM seats s"
                + (f" JOIN matches m USING (match_id){where}" if where else "")
                + " ORDER BY s.match_id, s.seat",
                args,
            ).fetchall()
        yield from _seated(matches, seats)

    def results_after(self, rowid: int) -> list[tuple[int, ResultRow]]:
        """(rowid, ResultRow) of every match stored after ``rowid``, in the order they were
        stored, each checked against its digest as ``iter_results`` checks it (an altered one
        raises ``AlteredError``); ``index`` is the match's index in its own schedule."""
        with self._lock, _read_snapshot(self.conn):
            matches = self.conn.execute(
                f"SELECT rowid, {', '.join(_MATCH_COLUMNS)}, idx, digest FROM matches WHERE rowid > ? ORDER BY rowid",
                (rowid,),
            ).fetchall()
            seats = self.conn.execute(  # IN, not a join: a join scans every seat (0.13 s at 100,000 matches)
                f"SELECT s.match_id, {', '.join('s.' + c for c in _SEAT_COLUMNS)} FROM seats s"
                " WHERE s.match_id IN (SELECT match_id FROM matches WHERE rowid > ?) ORDER BY s.match_id, s.seat",
                (rowid,),
            ).fetchall()
        out = []
        for (rowid, *_), (match, seat_columns, intact) in zip(matches, _seated([m[1:] for m in matches], seats)):
            if not intact:
                raise AlteredError(_altered_message(self.path, match[0]))
            out.append((rowid, _result_row(match, seat_columns)))
        return out

    def get_record(self, match_id: str) -> RecordJson:
        """The full stored record of one match; KeyError if it is not stored."""
        with self._lock:
            row = self.conn.execute(
                "SELECT record, record_sha256, digest FROM matches WHERE match_id = ?", (match_id,)
            ).fetchone()
            if row is None:
                raise KeyError(f"no match {match_id!r} in {self.path}")
            if row[1] != hashlib.sha256(row[0]).hexdigest() or row[2] != _read_digest(self.conn, match_id):
                raise AlteredError(_altered_message(self.path, match_id))
        record: RecordJson = json.loads(zlib.decompress(row[0]).decode("utf-8"))
        return record

    def reset(self) -> None:
        """Delete every match, seat, bot and the tournament (for ``--fresh``); the deal
        secret stays, so the same deals are played again."""
        with self.writing() as conn:
            conn.execute("DELETE FROM seats")
            conn.execute("DELETE FROM matches")
            conn.execute("DELETE FROM bots")
            conn.execute("DELETE FROM tournament")
            conn.execute("DELETE FROM schedule")
            _seal_schedule(conn)


_NM = len(_MATCH_COLUMNS)
_M = {c: i for i, c in enumerate(_MATCH_COLUMNS)}


def _revealed(text: str | None) -> set[tuple[str, int, int]]:
    try:
        return {(str(g), int(p), int(s)) for g, p, s in json.loads(text)} if text else set()
    except (ValueError, TypeError):
        raise StoreError(f"meta {REVEALED_DEALS!r} is damaged; restore results.sqlite from a copy") from None


def _altered_message(path: Path, match_id: str) -> str:
    return (
        f"{path}: match {match_id!r} was altered after it was stored (it no longer matches "
        "its checksums); run `arena run` on the tournament "
        "file to play altered matches again, or restore the file from a copy"
    )


def _seated(
    matches: list[tuple[Any, ...]], seats: list[tuple[Any, ...]]
) -> Iterator[tuple[tuple[Any, ...], list[tuple[Any, ...]], bool]]:
    """Each match's columns (then its index and stored digest) with its seats rows (sorted by
    match id, then seat) and whether they still match that digest. ``seats`` is emptied (its rows
    live on, grouped): a large leaderboard's read holds them once, not twice."""
    by_match = {mid: list(rows) for mid, rows in groupby(seats, itemgetter(0))}
    del seats[:]
    for match in matches:
        seat_columns = [r[1:] for r in by_match.get(match[0], ())]
        yield match, seat_columns, match[-1] == _digest(match[:_NM], seat_columns)


def _result_row(match: tuple[Any, ...], seats: list[tuple[Any, ...]]) -> ResultRow:
    """The ResultRow of a match's columns (then its index) and its seats rows (``_SEAT_COLUMNS``)."""
    if seats:
        _, bots, _, places, scores, faults, details = zip(*seats)
    else:
        bots = places = scores = faults = details = ()
    return ResultRow(
        match_id=match[_M["match_id"]],
        index=match[-2],
        game=match[_M["game"]],
        players=match[_M["players"]],
        bots=bots,
        places=places,
        scores=scores,
        faults=faults,
        fault_details=details,
        capped=bool(match[_M["capped"]]),
        sandbox_fault=bool(match[_M["has_sandbox_fault"]]),
        digest=match[-1],
    )


class _read_snapshot:
    """One read transaction around several queries, so they all see the same commits
    (the connection is in autocommit mode; a caller already in a transaction keeps it)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.began = False

    def __enter__(self) -> None:
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")
            self.began = True

    def __exit__(self, *exc: object) -> None:
        if self.began:
            self.conn.execute("COMMIT")


def _split_sql(script: str) -> list[str]:
    """Statements of a schema script (no semicolons inside statements or comments)."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


class _WriteTx:
    """``with store.writing() as conn``: BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error),
    holding the store's thread lock."""

    def __init__(self, store: ResultStore) -> None:
        self.store = store

    def __enter__(self) -> sqlite3.Connection:
        self.lock = self.store._lock
        self.lock.acquire()
        try:
            conn = self.store.conn
            conn.execute("BEGIN IMMEDIATE")  # waits for other writers (busy timeout)
        except sqlite3.OperationalError as exc:
            self.lock.release()
            raise StoreError(f"{self.store.path}: could not start a write ({exc})") from exc
        except BaseException:
            self.lock.release()
            raise
        self.conn = conn
        return conn

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if exc_type is None:
                self.conn.execute("COMMIT")
            else:
                self.conn.execute("ROLLBACK")
        finally:
            self.lock.release()
