"""The luck tables are part of the store's versioned schema: a new store has them, a schema-3
store (the arena then created them itself, when it first computed baselines) gets them in its
migration, keeps its rows, and reads as before: with baselines if it had the tables, as
"unavailable" if it did not."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.luck import baselines, tables
from arena.tournament.store import DB_NAME, SCHEMA_VERSION, ResultStore
from tests.support.record_factory import make_record

ROW = ("divers-weights", 2, "{}", "dw1", "ref2", "5", "deal", 0, 16, "[0.5, 0.5]", "x")


def _store_of_schema_3(folder: Path, *, luck_tables: str | None) -> None:
    """A store as an arena of schema 3 left it: without the luck tables, or with them
    (``luck_tables``: the DDL those arenas ran) holding a row."""
    store = ResultStore(folder)
    store.init_tournament("t", {"name": "t"}, [])
    store.record_match(make_record(0, ["a", "b"], [0, 1], game="divers-weights", match_id="divers-weights/m0"))
    store.close()
    con = sqlite3.connect(folder / DB_NAME)
    con.execute("DROP TABLE luck_baselines")
    con.execute("DROP TABLE luck_aivat")
    if luck_tables is not None:
        con.execute(luck_tables)
        con.execute(f"INSERT INTO luck_baselines VALUES ({', '.join('?' * len(ROW))})", ROW)
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.commit()
    con.close()


def _read(folder: Path) -> tuple[str, bool, list[str], list[tuple]]:
    store = ResultStore(folder, read_only=True)  # as `arena leaderboard` opens it
    conn = store.conn
    version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    names = sorted(
        r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'luck_%' AND type = 'table'")
    )
    rows = conn.execute("SELECT * FROM luck_baselines").fetchall()
    computed = tables.computed(conn)
    store.close()
    return version, computed, names, rows


def test_a_new_store_has_the_tables_in_its_schema_and_no_baselines_yet(tmp_path):
    store = ResultStore(tmp_path)
    assert SCHEMA_VERSION == 4
    assert _read(tmp_path) == ("4", False, ["luck_aivat", "luck_baselines"], [])
    assert baselines.load(store, []) is None  # nothing computed: the figure is unavailable
    baselines.fill(store, [])  # a run computes (here: nothing to compute) ...
    assert baselines.load(store, []) is not None  # ... and from then on the figure is read


def test_a_schema_3_store_with_baselines_is_migrated_keeping_its_rows(tmp_path):
    _store_of_schema_3(tmp_path, luck_tables=tables.BASELINES_TABLE)
    assert _read(tmp_path) == ("4", True, ["luck_aivat", "luck_baselines"], [ROW])


def test_a_schema_3_store_without_baselines_is_migrated_and_still_has_none(tmp_path):
    _store_of_schema_3(tmp_path, luck_tables=None)
    version, computed, names, rows = _read(tmp_path)
    assert (version, computed, names, rows) == ("4", False, ["luck_aivat", "luck_baselines"], [])
    assert baselines.load(ResultStore(tmp_path, read_only=True), []) is None


def test_a_hand_made_table_of_another_shape_is_replaced_by_the_migration(tmp_path, caplog):
    _store_of_schema_3(tmp_path, luck_tables=None)
    con = sqlite3.connect(tmp_path / DB_NAME)
    con.execute("CREATE TABLE luck_baselines (junk BLOB)")
    con.commit()
    con.close()
    assert _read(tmp_path)[2:] == (["luck_aivat", "luck_baselines"], [])
    assert "luck_baselines table of another shape (junk); replaced" in caplog.text


@pytest.mark.parametrize("ddl", [tables.BASELINES_TABLE, tables.AIVAT_TABLE])
def test_the_schema_text_creates_exactly_the_tables_the_code_reads(ddl):
    con = sqlite3.connect(":memory:")
    con.execute(ddl)
    name = "luck_baselines" if "luck_baselines" in ddl else "luck_aivat"
    columns = tables.BASELINES_COLUMNS if name == "luck_baselines" else tables.AIVAT_COLUMNS
    assert [r[1] for r in con.execute(f"PRAGMA table_info({name})")] == [*columns, "digest"]
