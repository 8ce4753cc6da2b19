"""The SQLite results store: idempotence, concurrency, durability, order, bot hashes."""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from arena.tournament.store import (
    DB_NAME,
    SCHEMA_VERSION,
    RecordError,
    ResultRow,
    ResultStore,
    StoreError,
    StoreSchemaError,
)
from tests.support.record_factory import make_record, sha

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path: Path) -> ResultStore:
    with ResultStore(tmp_path / "results") as s:
        yield s


def _db(store: ResultStore) -> sqlite3.Connection:
    return sqlite3.connect(store.path)


def test_creates_versioned_wal_database(store: ResultStore) -> None:
    assert store.path.name == DB_NAME and store.path.exists()
    con = _db(store)
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_newer_schema_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    ResultStore(tmp_path).close()
    con = sqlite3.connect(tmp_path / DB_NAME)
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    con.commit()
    con.close()
    with pytest.raises(StoreSchemaError, match="newer than this arena"):
        ResultStore(tmp_path)


def test_foreign_sqlite_and_garbage_files_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    con = sqlite3.connect(other / DB_NAME)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(StoreSchemaError, match="not an arena results store"):
        ResultStore(other)
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / DB_NAME).write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError):
        ResultStore(junk)


def test_record_match_is_idempotent(store: ResultStore) -> None:
    rec = make_record(3, ["a", "b", "c"], [1, 0, 2])
    assert store.record_match(rec) is True
    changed = make_record(3, ["a", "b", "c"], [0, 1, 2], match_id=rec["match_id"])
    assert store.record_match(changed) is False
    assert store.record_match(rec) is False
    assert store.match_count() == 1
    assert store.get_record(rec["match_id"]) == rec  # the first one, untouched
    assert _db(store).execute("SELECT COUNT(*) FROM seats").fetchone()[0] == 3


def test_record_round_trips_and_columns(store: ResultStore) -> None:
    rec = make_record(
        5,
        ["a", "b", "c"],
        [2, 0, 1],
        scores=[-12, -3, -5.5],
        faults=[{"kind": "timeout", "detail": "no answer within 1.0 s", "decision": 12}, None, None],
    )
    store.record_match(rec)
    assert store.get_record(rec["match_id"]) == rec  # decisions and unsigned 64-bit seeds too
    con = _db(store)
    row = con.execute(
        "SELECT idx, game, rules_version, players, grp, deal, rotation, deal_seed,"
        " match_seed, sandbox_level, capped, has_sandbox_fault FROM matches"
    ).fetchone()
    assert row == (5, "tightwad", "1", 3, 1, 1, 2, str(2**64 - 2), "1005", "none", 0, 0)
    seats = con.execute("SELECT seat, bot, place, score, fault_kind, fault_detail FROM seats ORDER BY seat").fetchall()
    assert seats == [
        (0, "a", 2, -12, "timeout", "no answer within 1.0 s"),
        (1, "b", 0, -3, None, None),
        (2, "c", 1, -5.5, None, None),
    ]
    with pytest.raises(KeyError):
        store.get_record("no/such/match")


def test_malformed_record_is_refused_and_stores_nothing(store: ResultStore) -> None:
    rec = make_record(0, ["a", "b", "c"], [0, 1, 2])
    rec["result"]["places"] = [0, 1]
    with pytest.raises(RecordError, match="2 places for 3 players"):
        store.record_match(rec)
    bad = make_record(1, ["a", "b"], [0, 1])
    del bad["index"]
    with pytest.raises(RecordError):
        store.record_match(bad)
    assert store.match_count() == 0


def test_iter_results_in_index_order_whatever_the_insert_order(store: ResultStore) -> None:
    recs = [
        make_record(i, ["a", "b", "c"], [i % 3, (i + 1) % 3, (i + 2) % 3], game="palace" if i % 2 else "tightwad")
        for i in range(12)
    ]
    for i in (7, 0, 11, 3, 5, 1, 10, 2, 9, 4, 8, 6):
        assert store.record_match(recs[i])
    rows = list(store.iter_results())
    assert [r.index for r in rows] == list(range(12))
    assert [r.index for r in store.iter_results("palace")] == [1, 3, 5, 7, 9, 11]
    assert rows[4] == ResultRow.from_record(recs[4])
    assert rows[4].bots == ("a", "b", "c") and rows[4].places == (1, 2, 0)
    assert store.completed_ids() == {r["match_id"] for r in recs}
    assert store.match_count() == 12


def test_result_row_flags_sandbox_faults_and_capped(store: ResultStore) -> None:
    store.record_match(make_record(0, ["a", "b"], [1, 0], faults=[{"kind": "sandbox", "detail": "bwrap failed"}, None]))
    store.record_match(make_record(1, ["a", "b"], [0, 1], capped=True))
    first, second = store.iter_results()
    assert first.sandbox_fault and first.faults == ("sandbox", None)
    assert first.fault_details == ("bwrap failed", None)
    assert not first.capped and second.capped and not second.sandbox_fault


def test_bot_hashes_and_a_renamed_or_changed_tournament(store: ResultStore) -> None:
    store.init_tournament(
        "spring",
        {"seed": 1, "games": ["tightwad"]},
        [{"name": n, "path": f"bots/{n}.py", "sha256": sha(n)} for n in ("a", "b", "c", "idle")],
    )
    store.record_match(make_record(0, ["a", "b", "c"], [0, 1, 2]))
    assert store.bot_hashes() == {n: sha(n) for n in ("a", "b", "c", "idle")}
    assert store.tournament()["config"] == {"seed": 1, "games": ["tightwad"]}
    # a changed tournament file: config and roster replaced, stored matches kept
    store.init_tournament("autumn", {"seed": 2}, [{"name": "a", "path": "a.py", "sha256": sha("a")}])
    assert store.tournament()["name"] == "autumn" and [b["name"] for b in store.bots()] == ["a"]
    assert store.match_count() == 1


def test_bot_hashes_prefer_what_was_played(store: ResultStore) -> None:
    store.init_tournament("t", {}, [{"name": "a", "path": "a.py", "sha256": sha("a", 2)}])
    store.record_match(make_record(0, ["a", "b"], [0, 1]))  # played with version 1
    assert store.bot_hashes()["a"] == sha("a")


def test_the_schedule_decides_what_counts_and_in_which_order(store: ResultStore) -> None:
    for i, mid in enumerate(["m0", "m1", "m2"]):
        rec = make_record(i, ["a", "b"], [0, 1])
        rec["match_id"] = mid
        store.record_match(rec)
    assert store.progress() == (3, 3)  # no schedule yet: every stored match
    store.set_schedule([("m2", 0), ("m0", 1), ("m9", 2)])
    assert store.progress() == (3, 2)
    assert [(r.match_id, r.index) for r in store.iter_results()] == [("m2", 0), ("m0", 1)]
    assert len(list(store.iter_results(scheduled=False))) == 3


def test_harness_failures_are_not_done_and_are_forgotten(store: ResultStore) -> None:
    store.record_match(make_record(0, ["a", "b"], [0, 1], faults=[{"kind": "sandbox", "detail": "x"}, None]))
    store.record_match(make_record(1, ["a", "b"], [0, 1]))
    assert store.completed_ids() == {make_record(1, ["a", "b"], [0, 1])["match_id"]}
    assert store.forget_harness_failures() == 1 and store.match_count() == 1


def test_reset_deletes_matches_bots_and_tournament(store: ResultStore) -> None:
    store.init_tournament("t", {}, [{"name": "a", "path": "a.py", "sha256": sha("a")}])
    store.record_match(make_record(0, ["a", "b"], [0, 1]))
    store.reset()
    assert store.match_count() == 0 and store.completed_ids() == set()
    assert store.bot_hashes() == {} and store.tournament() is None and store.bots() == []
    assert _db(store).execute("SELECT COUNT(*) FROM seats").fetchone()[0] == 0
    store.init_tournament("other", {}, [])  # a fresh start may be another tournament
    assert not store.has_schedule()


def test_store_pickles_and_survives_reopen(store: ResultStore) -> None:
    store.record_match(make_record(0, ["a", "b"], [0, 1]))
    clone = pickle.loads(pickle.dumps(store))
    assert clone.match_count() == 1
    clone.close()
    store.close()
    assert ResultStore(store.folder).match_count() == 1


def test_threads_share_one_store(store: ResultStore) -> None:
    recs = [make_record(i, ["a", "b"], [i % 2, 1 - i % 2]) for i in range(40)]
    results: list[bool] = []
    lock = threading.Lock()

    def work(chunk: list[dict]) -> None:
        for r in chunk:
            ok = store.record_match(r)
            with lock:
                results.append(ok)

    threads = [threading.Thread(target=work, args=(recs[k::2] + recs,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(results) == 40 and store.match_count() == 40


def _insert_all(folder: str, records: list[dict], barrier, out) -> None:
    store = ResultStore(folder)
    barrier.wait()
    out.put(sum(store.record_match(r) for r in records))
    store.close()


def test_concurrent_processes_never_duplicate(tmp_path: Path) -> None:
    folder = str(tmp_path / "results")
    ResultStore(folder).close()
    recs = [make_record(i, ["a", "b", "c"], [0, 1, 2]) for i in range(60)]
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_insert_all, args=(folder, order, barrier, out)) for order in (recs, recs[::-1])]
    for p in procs:
        p.start()
    inserted = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert sum(inserted) == 60  # each id won by exactly one process
    store = ResultStore(folder)
    assert store.match_count() == 60
    con = sqlite3.connect(store.path)
    assert con.execute("SELECT COUNT(*) FROM seats").fetchone()[0] == 180
    assert con.execute("SELECT COUNT(DISTINCT match_id) FROM seats").fetchone()[0] == 60


_WRITER = """
import json, sys, time
from arena.tournament.store import ResultStore
store = ResultStore(sys.argv[1])
for line in sys.stdin:
    rec = json.loads(line)
    store.record_match(rec)
    print(rec["match_id"], flush=True)   # only after record_match returned
time.sleep(60)
"""


def test_match_survives_sigkill_right_after_record_match(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    recs = [make_record(i, ["a", "b", "c"], [2, 1, 0]) for i in range(8)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(folder)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(r) + "\n" for r in recs))
        proc.stdin.flush()
        acknowledged = [proc.stdout.readline().strip() for _ in range(5)]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    store = ResultStore(folder)
    done = store.completed_ids()
    assert set(acknowledged) <= done
    for match_id in acknowledged:
        assert store.get_record(match_id)["match_id"] == match_id
    # whatever else made it is whole: every stored match has all its seats
    con = sqlite3.connect(store.path)
    assert con.execute("SELECT COUNT(*) FROM seats").fetchone()[0] == 3 * len(done)


# -- the deal secret ------------------------------------------------------------------


def test_a_new_folder_draws_a_private_256_bit_deal_secret(tmp_path: Path) -> None:
    a, b = ResultStore(tmp_path / "a"), ResultStore(tmp_path / "b")
    secret = a.deal_secret()
    assert len(secret) == 64 and int(secret, 16) >= 0
    assert (a.folder / "deal-secret").stat().st_mode & 0o777 == 0o600
    assert b.deal_secret() != secret  # a new folder, a new secret
    assert ResultStore(tmp_path / "a").deal_secret() == secret  # reopening keeps it
    a.record_match(make_record(0, ["x", "y"], [0, 1]))
    a.reset()  # --fresh
    assert a.deal_secret() == secret


@pytest.mark.parametrize("kind", ["link", "fifo", "large"])
def test_a_deal_secret_that_is_not_a_small_regular_file_is_refused_untouched(tmp_path: Path, kind: str) -> None:
    """A link was followed: chmod 0600 reached its target (as root, /dev/zero lost its mode) and
    /dev/zero was read without end; a named pipe hung the run in open()."""
    from tests.support.named_pipe import error_within

    store = ResultStore(tmp_path / "r")
    secret = store.secret_path
    store.deal_secret()
    secret.unlink()
    target = tmp_path / "elsewhere"
    target.write_text("0" * 64 + "\n")
    target.chmod(0o644)
    if kind == "link":
        secret.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(secret)
    else:
        secret.write_text("0" * 5000)
    said = error_within(10, secret, StoreError, lambda: ResultStore(tmp_path / "r").deal_secret())
    assert said == (
        f"{secret} is not the deal secret this folder wrote (a link, a pipe, a device or a large file); "
        "restore it from a copy, or move it aside and rerun with --fresh"
    )
    assert target.stat().st_mode & 0o777 == 0o644  # nothing changed through the link


def test_concurrent_openers_agree_on_one_secret(tmp_path: Path) -> None:
    folder = tmp_path / "race"
    got: list[str] = []
    threads = [threading.Thread(target=lambda: got.append(ResultStore(folder).deal_secret())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got)) == 1 and len(got) == 8
    assert sorted(p.name for p in folder.iterdir() if "secret" in p.name) == ["deal-secret"]


def test_a_folder_with_matches_but_no_secret_is_refused_until_fresh(tmp_path: Path) -> None:
    s = ResultStore(tmp_path / "old")
    s.record_match(make_record(0, ["x", "y"], [0, 1]))
    (s.folder / "deal-secret").unlink()  # as written before deal secrets
    again = ResultStore(tmp_path / "old")
    assert not (again.folder / "deal-secret").exists()  # never invented for old matches
    with pytest.raises(StoreError, match="--fresh") as refused:
        again.deal_secret()
    assert "no deal-secret file (it was deleted" in str(refused.value) and "restore" in str(refused.value)
    again.reset()
    assert len(again.deal_secret()) == 64


def test_a_hand_edited_row_is_altered_and_forgotten_so_it_is_played_again(store: ResultStore) -> None:
    from arena.tournament.store import AlteredError

    recs = [make_record(i, ["a", "b"], [i % 2, 1 - i % 2], scores=[1.5, 2]) for i in range(3)]
    for rec in recs:
        store.record_match(rec)
    assert store.altered() == [] and len(list(store.iter_results())) == 3
    victim = recs[1]["match_id"]
    con = _db(store)
    con.execute("UPDATE seats SET score = 2.0 WHERE match_id = ? AND seat = 1", (victim,))  # 2 -> 2.0 is an edit
    con.commit()
    with pytest.raises(AlteredError, match="was altered after it was stored"):
        list(store.iter_results())
    with pytest.raises(AlteredError):
        store.get_record(victim)
    assert store.altered() == [victim] and store.forget_altered() == [victim]
    assert store.completed_ids() == {recs[0]["match_id"], recs[2]["match_id"]}
    con.execute("DELETE FROM matches WHERE match_id = ?", (recs[0]["match_id"],))  # shell: foreign keys off
    con.commit()
    assert store.record_match(recs[0]) and store.record_match(recs[1])  # orphan seats do not block it
    assert [r.match_id for r in store.iter_results()] == [r["match_id"] for r in recs]


def test_a_version_2_store_is_sealed_as_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    with ResultStore(folder) as s:
        for i in range(2):
            s.record_match(make_record(i, ["a", "b"], [0, 1]))
        s.set_schedule([(make_record(i, ["a", "b"], [0, 1])["match_id"], i) for i in range(2)])
    con = sqlite3.connect(folder / DB_NAME)
    con.execute("ALTER TABLE matches DROP COLUMN digest")
    con.execute("ALTER TABLE matches DROP COLUMN record_sha256")
    con.execute("DELETE FROM meta WHERE key = 'schedule_sha256'")
    con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    with ResultStore(folder) as s:
        assert len(list(s.iter_results())) == 2 and s.altered() == [] and s.progress() == (2, 2)
    assert sqlite3.connect(folder / DB_NAME).execute(
        "SELECT value FROM meta WHERE key = 'schema_version'"
    ).fetchone() == (str(SCHEMA_VERSION),)


def test_an_altered_record_cannot_claim_a_safe_sandbox(store: ResultStore) -> None:
    import zlib

    from arena.tournament.store import AlteredError

    rec = make_record(0, ["a", "b"], [0, 1])
    rec["sandbox"] = {"level": "none", "details": {"safe": False}}
    store.record_match(rec)
    assert store.sandbox_levels() == [("none", False)]
    rec["sandbox"]["details"]["safe"] = True
    con = _db(store)
    con.execute("UPDATE matches SET record = ?", (zlib.compress(json.dumps(rec).encode()),))
    con.commit()
    with pytest.raises(AlteredError, match=rec["match_id"]):
        store.sandbox_levels()
