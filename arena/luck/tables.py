"""The luck tables of the results store: their shape, and the store migration that adds them.

The store (``arena.tournament.store``) owns the schema and its version: a new store is created
with these tables, and an older one (schema 3 and before) gets them in its migration to schema 4.
They are defined here, beside the code that fills and reads them (``arena.luck.baselines``).

Before schema 4 the arena created the tables itself when it first computed luck baselines; the
meta key ``COMPUTED`` keeps that distinction: set once baselines were computed for the store (by
``fill``, or by the migration of a store that had the tables), and without it the leaderboards
show the luck-adjusted figure as unavailable, as they did for a store without the tables. Rows
are never needed: all of them can be computed again, so a table of another shape (hand-made, or
from a development version) is replaced (``repair``).
"""

from __future__ import annotations

import logging
import sqlite3

log = logging.getLogger(__name__)

BASELINES_COLUMNS = (
    "game",
    "players",
    "options",
    "rules_version",
    "reference",
    "deal_seed",
    "kind",
    "ordinal",
    "rollouts",
    "places",
)
AIVAT_COLUMNS = ("match_id", "record_sha256", "version", "rollouts", "corrections")

BASELINES_TABLE = """
CREATE TABLE IF NOT EXISTS luck_baselines (
    game          TEXT NOT NULL,
    players       INTEGER NOT NULL,
    options       TEXT NOT NULL,      -- canonical JSON of the resolved options
    rules_version TEXT NOT NULL,
    reference     TEXT NOT NULL,      -- arena.luck.reference.REFERENCE_VERSION
    deal_seed     TEXT NOT NULL,      -- text: seeds are unsigned 64-bit
    kind          TEXT NOT NULL,      -- 'deal' (a tournament deal), 'reference' or 'summary'
    ordinal       INTEGER NOT NULL,   -- reference deals: k (the k-th of the stream); a summary:
                                      -- how many it covers; deals: 0
    rollouts      INTEGER NOT NULL,
    places        TEXT NOT NULL,      -- JSON list: mean place (0 = best) per seat; for a
                                      -- summary: {"mean", "cov", "deals"} of the reference rows
    digest        TEXT NOT NULL,      -- SHA-256 of the columns above
    PRIMARY KEY (game, players, options, rules_version, reference, deal_seed, kind)
)
"""

AIVAT_TABLE = """
CREATE TABLE IF NOT EXISTS luck_aivat (
    match_id      TEXT NOT NULL,
    record_sha256 TEXT NOT NULL,      -- of the match record the decisions came from
    version       TEXT NOT NULL,      -- arena.luck.aivat.AIVAT_VERSION
    rollouts      INTEGER NOT NULL,
    corrections   TEXT NOT NULL,      -- JSON list per seat, or null: the record does not replay
    digest        TEXT NOT NULL,      -- SHA-256 of the columns above
    PRIMARY KEY (match_id, version)
)
"""

# the store's schema text for these tables (statements separated by ";")
SCHEMA = BASELINES_TABLE.strip() + ";\n" + AIVAT_TABLE.strip() + ";\n"

COMPUTED = "luck_computed"  # meta key: luck baselines were computed for this store

_SHAPES = {
    "luck_baselines": ([*BASELINES_COLUMNS, "digest"], BASELINES_TABLE),
    "luck_aivat": ([*AIVAT_COLUMNS, "digest"], AIVAT_TABLE),
}


def exists(conn: sqlite3.Connection, table: str) -> bool:
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is not None
    )


def repair(conn: sqlite3.Connection) -> None:
    """Create a missing table; replace one of another shape (its rows can be computed again)."""
    for table, (columns, ddl) in _SHAPES.items():
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        if cols and cols != columns:
            log.warning("%s table of another shape (%s); replaced", table, ", ".join(cols))
            conn.execute(f"DROP TABLE {table}")
        conn.execute(ddl)


def migrate(conn: sqlite3.Connection) -> None:
    """Schema 3 to 4: the tables become part of the schema. A store that had them (an arena of
    schema 3 computed baselines for it) keeps its rows and is marked ``COMPUTED``."""
    had = exists(conn, "luck_baselines")
    repair(conn)
    if had:
        mark_computed(conn)


def mark_computed(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key) DO NOTHING", (COMPUTED,))


def computed(conn: sqlite3.Connection) -> bool:
    """Whether luck baselines were computed for the store (and its tables are still there)."""
    return conn.execute("SELECT 1 FROM meta WHERE key = ?", (COMPUTED,)).fetchone() is not None and exists(
        conn, "luck_baselines"
    )
