"""No `arena` command ends in a raw traceback: each failure is one line that names the
file or value and says what to do, with a non-zero exit; a bug also leaves a crash log."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import cli
from tests.support.cli import invoke, one_line_error

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "bots" / "random_bot.py"


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small finished tournament: its folder holds t.yaml and results/."""
    home = tmp_path_factory.mktemp("played")
    for name in ("a", "b", "c"):
        shutil.copy(RANDOM, home / f"{name}.py")
    (home / "t.yaml").write_text(
        f"name: small\nseed: 1\nbots: [{home}/a.py, {home}/b.py, {home}/c.py]\n"
        "games: [{id: divers-weights, players: 2, deals: 1}]\n"
        f"workers: 1\nresults: {home}/results\n"
    )
    res = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(home / "t.yaml")], capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr
    return home


@pytest.fixture
def results(played: Path, tmp_path: Path) -> Path:
    """A private copy of the finished results folder."""
    copy = tmp_path / "results"
    shutil.copytree(played / "results", copy)
    return copy


def _scalar(folder: Path, sql: str):
    """The first column of the first row of ``sql`` on the folder's store."""
    con = sqlite3.connect(folder / "results.sqlite")
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def a_match_id(folder: Path) -> str:
    return _scalar(folder, "SELECT match_id FROM matches ORDER BY match_id")


def tournament_for(results: Path, played: Path) -> Path:
    text = (played / "t.yaml").read_text().replace(f"results: {played}/results", f"results: {results}")
    path = results.parent / "t.yaml"
    path.write_text(text)
    return path


# ---- the results database ---------------------------------------------------------------


def _corrupt(db: Path) -> None:
    db.write_bytes(os.urandom(4096))


def _truncate(db: Path) -> None:
    os.truncate(db, db.stat().st_size // 2)


def _foreign(db: Path) -> None:
    db.unlink()
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE photos (id INTEGER, data BLOB)")
    con.commit()
    con.close()


@pytest.mark.parametrize(
    "damage,expect",
    [
        (_corrupt, "not a usable results database"),
        (_truncate, "not a usable results database"),
        (_foreign, "not an arena results store"),
    ],
)
def test_a_damaged_results_database_is_one_line(results: Path, played: Path, damage, expect: str) -> None:
    for extra in results.glob("results.sqlite-*"):
        extra.unlink()
    damage(results / "results.sqlite")
    for args in (
        ["leaderboard", results],
        ["replay", results, "x/p2/g0000/d00/r0"],
        ["run", tournament_for(results, played)],
    ):
        line = one_line_error(invoke(*args), expect, str(results / "results.sqlite"))
        assert "use another results folder" in line


def test_an_emptied_results_database_is_no_results_not_a_complete_leaderboard(results: Path) -> None:
    """A results.sqlite cut to 0 bytes read as "Complete: all 0 scheduled matches counted"."""
    for extra in results.glob("results.sqlite-*"):
        extra.unlink()
    (results / "results.sqlite").write_bytes(b"")
    line = one_line_error(invoke("leaderboard", results), str(results), "no results yet", "arena run")
    assert line.count(str(results)) == 1


@pytest.mark.parametrize("loss", ["emptied", "deleted"])
def test_a_lost_results_database_is_refused_not_replayed(results: Path, played: Path, loss: str) -> None:
    """A 0-byte or deleted results.sqlite beside the folder's deal-secret and run.log made
    `arena run` replay the whole tournament and exit 0."""
    for extra in results.glob("results.sqlite-*"):
        extra.unlink()
    db = results / "results.sqlite"
    db.write_bytes(b"") if loss == "emptied" else db.unlink()
    path = tournament_for(results, played)
    for args in (["run", path], ["run", path, "--dry-run"]):
        line = one_line_error(
            invoke(*args),
            str(db),
            "is empty" if loss == "emptied" else "is missing",
            "deal-secret and run.log",
            "restore results.sqlite",
            "--fresh",
        )
        assert invoke(*args).exit_code == 2, line
    assert (db.stat().st_size == 0) if loss == "emptied" else not db.exists()  # nothing replayed


@pytest.mark.slow
def test_a_lost_results_database_is_replayed_with_fresh(results: Path, played: Path) -> None:
    for extra in results.glob("results.sqlite-*"):
        extra.unlink()
    (results / "results.sqlite").unlink()
    res = invoke("run", tournament_for(results, played), "--fresh")
    assert res.exit_code == 0, res.stderr
    assert _scalar(results, "SELECT COUNT(*) FROM matches") == 6


def test_a_database_damaged_in_the_middle_exits_2(results: Path, played: Path) -> None:
    """Its pages readable at the start, garbage in the middle: exit 1 ("the machine failed"),
    where the docs say 2 (a damaged database is bad input)."""
    for extra in results.glob("results.sqlite-*"):
        extra.unlink()
    db = results / "results.sqlite"
    page = _scalar(results, "PRAGMA page_size")
    root = _scalar(results, "SELECT rootpage FROM sqlite_master WHERE name = 'seats'")
    with open(db, "r+b") as f:
        f.seek((root - 1) * page)
        f.write(b"\xff" * page)
    for args in (["leaderboard", results], ["matches", results]):
        res = invoke(*args)
        line = one_line_error(res, str(db), "is damaged", "restore a copy", "--fresh")
        assert res.exit_code == 2, line


def _rewrite_record(folder: Path, change) -> str:
    mid = a_match_id(folder)
    con = sqlite3.connect(folder / "results.sqlite")
    (blob,) = con.execute("SELECT record FROM matches WHERE match_id = ?", (mid,)).fetchone()
    con.execute("UPDATE matches SET record = ? WHERE match_id = ?", (change(blob), mid))
    con.commit()
    con.close()
    return mid


ALTERED = "was altered after it was stored"
RERUN = "run `arena run` on the tournament file to play altered matches again, or restore the file from a copy"


def test_a_tampered_stored_record_is_one_line(results: Path) -> None:
    import json

    def drop_decisions(blob: bytes) -> bytes:
        record = json.loads(zlib.decompress(blob))
        del record["decisions"]
        return zlib.compress(json.dumps(record).encode())

    db = str(results / "results.sqlite")
    mid = _rewrite_record(results, drop_decisions)
    one_line_error(invoke("replay", results, mid), db, mid, ALTERED, RERUN)
    mid = _rewrite_record(results, lambda blob: b"not a record at all")
    one_line_error(invoke("replay", results, mid), db, mid, ALTERED, RERUN)


def _edit(folder: Path, sql: str) -> None:
    """A hand edit with the sqlite3 shell's defaults (foreign keys off)."""
    con = sqlite3.connect(folder / "results.sqlite")
    con.execute(sql)
    con.commit()
    con.close()


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE seats SET place = 1 - place WHERE match_id = (SELECT MIN(match_id) FROM matches)",
        "UPDATE seats SET bot = 'someone' WHERE seat = 0 AND match_id = (SELECT MIN(match_id) FROM matches)",
        "UPDATE seats SET fault_kind = 'crash' WHERE seat = 0 AND match_id = (SELECT MIN(match_id) FROM matches)",
        "DELETE FROM seats WHERE seat = 1 AND match_id = (SELECT MIN(match_id) FROM matches)",
        "DELETE FROM seats WHERE match_id = (SELECT MIN(match_id) FROM matches)",
        "INSERT INTO seats SELECT match_id, 2, 'ghost', sha256, 2, 0, NULL, NULL FROM seats WHERE seat = 0",
        "UPDATE matches SET game = 'palace' WHERE match_id = (SELECT MIN(match_id) FROM matches)",
        "UPDATE matches SET has_sandbox_fault = 1 WHERE match_id = (SELECT MIN(match_id) FROM matches)",
        "UPDATE matches SET digest = NULL WHERE match_id = (SELECT MIN(match_id) FROM matches)",
    ],
)
def test_a_hand_edited_seat_or_match_row_is_one_line_and_the_next_run_plays_it_again(
    results: Path, played: Path, sql: str
) -> None:
    """Hand-edited rows of a stored match gave a silently wrong leaderboard with exit 0."""
    mid = a_match_id(results)
    _edit(results, sql)
    db = str(results / "results.sqlite")
    for args in (["leaderboard", results], ["matches", results], ["replay", results, mid]):
        one_line_error(invoke(*args), db, ALTERED, RERUN)
    path = tournament_for(results, played)
    plan = invoke("run", path, "--dry-run")
    assert plan.exit_code == 0 and plan.output.startswith("6 matches scheduled: ")
    assert "to play" in plan.output and mid in plan.output.split("keep (")[0]
    res = invoke("run", path)
    assert res.exit_code == 0, res.output
    assert "stored matches were altered after they were stored" in res.stderr and mid in res.stderr
    board = invoke("leaderboard", results, "--format", "json")
    assert board.exit_code == 0, board.output
    data = json.loads(board.stdout)
    assert data["complete"] and data["counted"] == 6
    assert {s["bot"] for s in data["scopes"][0]["standings"]} == {"a", "b", "c"}


@pytest.mark.parametrize(
    "sql", ["UPDATE schedule SET idx = idx + 1", "DELETE FROM schedule WHERE idx = 0", "DELETE FROM schedule"]
)
def test_a_hand_edited_schedule_is_one_line_until_the_next_run(results: Path, played: Path, sql: str) -> None:
    _edit(results, sql)
    one_line_error(
        invoke("leaderboard", results),
        str(results / "results.sqlite"),
        "schedule was altered",
        "run `arena run` on the tournament file again",
    )
    assert invoke("run", tournament_for(results, played)).exit_code == 0
    assert invoke("leaderboard", results).exit_code == 0


def test_a_record_file_with_wrong_types_is_one_line(results: Path, tmp_path: Path) -> None:
    import json

    con = sqlite3.connect(results / "results.sqlite")
    (blob,) = con.execute("SELECT record FROM matches LIMIT 1").fetchone()
    con.close()
    record = json.loads(zlib.decompress(blob))
    record["decisions"][3]["action"] = {"evil": True}
    record["players"] = "two"
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(record))
    one_line_error(invoke("replay", path), str(path), "'players' is not a int")
    record["players"] = 2
    path.write_text(json.dumps(record))
    one_line_error(invoke("replay", path), "decision 3")


# ---- a full disk ------------------------------------------------------------------------

FULL = "free space and rerun; stored matches are kept"


def test_full_disk_while_writing_reports(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.report.standings as standings

    def full(report, folder, **_):
        raise OSError(errno.ENOSPC, "No space left on device", str(folder / "leaderboard.html"))

    monkeypatch.setattr(standings, "write_reports", full)
    line = one_line_error(invoke("leaderboard", results, "--write"), FULL, str(results / "leaderboard.html"))
    assert "delete" not in line


def test_full_disk_while_storing(results: Path, played: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.tournament.store import ResultStore

    def full(self, *args, **kw):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(ResultStore, "init_tournament", full)
    one_line_error(invoke("run", tournament_for(results, played)), FULL, str(results))


def _store_fails_after_two(monkeypatch: pytest.MonkeyPatch, error: str) -> Any:
    """Storing a match raises SQLite's ``error`` once the store holds two (the workers are
    forked: they inherit the patch). Returns the real ``record_match``."""
    from arena.tournament.store import ResultStore

    real = ResultStore.record_match

    def fails(self, record):
        if self.match_count() >= 2:
            raise sqlite3.OperationalError(error)
        return real(self, record)

    monkeypatch.setattr(ResultStore, "record_match", fails)
    return real


def test_a_disk_that_fills_during_a_run_stops_it_in_one_line(
    results: Path, played: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It used to play every remaining match three times, printing two lines each, and
    store none of them."""
    from arena.tournament.store import ResultStore

    real = _store_fails_after_two(monkeypatch, "database or disk is full")
    con = sqlite3.connect(results / "results.sqlite")
    con.execute("DELETE FROM seats")
    con.execute("DELETE FROM matches")
    con.commit()
    con.close()
    path = tournament_for(results, played)
    res = invoke("run", path)
    assert res.exit_code == 1 and "Traceback" not in res.output + res.stderr
    lines = [
        ln
        for ln in res.stderr.strip().splitlines()  # progress, why auto fell back, fair-play policy
        if " matches · " not in ln
        and "unavailable" not in ln
        and not ln.startswith(("arena: bot processes:", "arena: replay pages:"))
    ]
    assert lines[-1] == f"arena: error: no space left on the device writing {results}; {FULL}", lines
    assert len(lines) == 2 and "sandbox level" in lines[0]  # nothing retried, nothing given up
    assert a_match_count(results) == 2
    monkeypatch.setattr(ResultStore, "record_match", real)
    again = invoke("run", path)
    assert again.exit_code == 0 and "resuming: 2 of 6 matches" in again.stderr


def test_a_results_folder_that_turns_read_only_during_a_run_stops_it_in_one_line(
    results: Path, played: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ext4 remounted read-only after an error (errors=remount-ro; the mount may still say rw):
    SQLite says only "disk I/O error". Every remaining match was played three times, two lines
    each, all given up, then the run ended with exit 2 and a thread's traceback."""
    import arena.tournament.runner as runner

    real = _store_fails_after_two(monkeypatch, "disk I/O error")
    monkeypatch.setattr(runner, "unwritable", lambda folder: "Read-only file system", raising=False)
    _keep_only_no_matches(results)
    res = invoke("run", tournament_for(results, played))
    assert res.exit_code == 1 and "Traceback" not in res.output + res.stderr
    lines = [ln for ln in res.stderr.strip().splitlines() if ln.startswith("arena: match") or "error" in ln]
    assert len(lines) == 1, lines  # no match retried or given up
    assert lines[0].startswith(f"arena: error: {results} can no longer be written during the run (Read-only")
    assert "stored matches are kept" in lines[0]
    assert a_match_count(results) == 2


def _keep_only_no_matches(results: Path) -> None:
    con = sqlite3.connect(results / "results.sqlite")
    con.execute("DELETE FROM seats")
    con.execute("DELETE FROM matches")
    con.commit()
    con.close()


def a_match_count(folder: Path) -> int:
    return _scalar(folder, "SELECT COUNT(*) FROM matches")


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A real 1 MiB tmpfs under the test's folder (root only), unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path) -> None:
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:  # fill the disk to the last byte
        for size in (65536, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)


def test_a_really_full_disk(results: Path, tiny_disk: Path) -> None:
    folder = tiny_disk / "results"
    shutil.copytree(results, folder, ignore=shutil.ignore_patterns("leaderboard.*", "logs", "run.log"))
    _fill(tiny_disk)
    res = subprocess.run(
        [sys.executable, "-m", "arena", "leaderboard", str(folder), "--write"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode != 0 and "Traceback" not in res.stderr + res.stdout
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and FULL in lines[0] and str(folder) in lines[0], res.stderr


def test_a_folder_on_a_full_disk_can_still_be_viewed(results: Path, tiny_disk: Path, tmp_path: Path) -> None:
    """An operator looks at a run or ladder that stopped on a full disk: the views said "not a
    usable results database (disk I/O error); restore it from a copy" (SQLite could not make
    its -shm file), and leaderboard stopped on its report files instead of printing."""
    mid = a_match_id(results)
    expected = invoke("leaderboard", results, "--no-write").output
    folder = tiny_disk / "results"  # as a clean stop leaves it: no -wal, no -shm
    shutil.copytree(results, folder, ignore=shutil.ignore_patterns("leaderboard.*", "logs", "results.sqlite-*"))
    _fill(tiny_disk)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    view = CliRunner().invoke(cli, ["leaderboard", str(folder)], env=env)
    assert view.exit_code == 0, view.stderr
    assert view.stdout == expected.replace(str(results), str(folder))
    assert "no space left on the device" in view.stderr and "not rewritten" in view.stderr
    for command in (["matches", str(folder)], ["export", str(folder)]):
        res = CliRunner().invoke(cli, command, env=env)
        assert res.exit_code == 0 and mid in res.stdout, res.stderr
    assert not list(folder.glob("leaderboard.*"))


def test_a_results_folder_that_cannot_be_created_is_one_line(tmp_path: Path) -> None:
    """/proc refuses new folders whoever asks: this ended as an 'unexpected' bug."""
    path = tmp_path / "t.yaml"
    for name in ("a", "b"):
        shutil.copy(RANDOM, tmp_path / f"{name}.py")
    path.write_text(
        f"name: t\nseed: 1\nbots: [{tmp_path}/a.py, {tmp_path}/b.py]\n"
        "games: [{id: divers-weights, players: 2, deals: 1}]\nresults: /proc/no-such/res\n"
    )
    one_line_error(
        invoke("run", path), str(path), "cannot create the folder /proc/no-such/res", "give a folder you can write"
    )


@contextlib.contextmanager
def read_only_copy(results: Path, tmp_path: Path, keep_wal: bool):
    """A copy of the results folder that nobody can write, root included (tests run as root:
    a read-only tmpfs there, plain permissions otherwise)."""
    skip = None if keep_wal else shutil.ignore_patterns("results.sqlite-*")
    if os.geteuid() != 0:
        copy = tmp_path / "ro" / "results"
        shutil.copytree(results, copy, ignore=skip)
        for path in [copy, *copy.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
        try:
            yield copy
        finally:
            for path in [copy, *copy.rglob("*")]:
                path.chmod(path.stat().st_mode | 0o200)
        return
    mount = tmp_path / "ro"
    mount.mkdir()
    if (
        shutil.which("mount") is None
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], capture_output=True
        ).returncode
    ):
        pytest.skip("cannot mount a tmpfs here")
    try:
        shutil.copytree(results, mount / "results", ignore=skip)
        assert subprocess.run(["mount", "-o", "remount,ro", str(mount)], capture_output=True).returncode == 0
        yield mount / "results"
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


@pytest.mark.parametrize("keep_wal", [False, True], ids=["checkpointed", "with-wal"])
def test_a_finished_folder_on_a_read_only_medium_can_be_viewed(results: Path, tmp_path: Path, keep_wal: bool) -> None:
    """leaderboard, matches and replay refused it ("its folder is not writable"): they read it
    and write nothing; the rating cache goes to the user's cache folder."""
    mid = a_match_id(results)
    expected = invoke("leaderboard", results).output
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    with read_only_copy(results, tmp_path, keep_wal) as folder:
        assert (folder / "results.sqlite-wal").exists() == keep_wal
        before = _listing(folder)
        for _ in range(2):  # the second from the cache kept elsewhere
            view = CliRunner().invoke(cli, ["leaderboard", str(folder)], env=env)
            assert view.exit_code == 0, view.stderr
            assert view.stdout == expected.replace(str(results), str(folder))
            assert "report files were not rewritten" in view.stderr  # the pages there may be old
        assert list((tmp_path / "cache" / "decktet-arena").glob("*ratings-cache.json.z"))
        found = CliRunner().invoke(cli, ["matches", str(folder)], env=env)
        assert found.exit_code == 0 and mid in found.output, found.stderr
        again = CliRunner().invoke(cli, ["replay", str(folder), mid, "--quiet"], env=env)
        assert again.exit_code == 0 and "replay ok" in again.output, again.stderr
        exported = CliRunner().invoke(cli, ["export", str(folder)], env=env)
        assert exported.exit_code == 0 and mid in exported.output, exported.stderr
        one_line_error(
            CliRunner().invoke(cli, ["leaderboard", str(folder), "--format", "html"], env=env),
            "cannot write the report",
            "--format md",
        )
        assert _listing(folder) == before


@pytest.mark.parametrize(
    "obstacle,kind,command",
    [
        ("leaderboard.html", "dir", "leaderboard"),
        ("run.lock", "dir", "run"),
        ("run.log", "dir", "run"),
        ("logs", "file", "run"),
    ],
)
def test_something_in_the_way_in_the_results_folder_is_one_line(
    results: Path, played: Path, obstacle: str, kind: str, command: str
) -> None:
    """A folder where arena writes a file (or the reverse) ended as an 'unexpected' bug."""
    path = results / obstacle
    shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    path.mkdir() if kind == "dir" else path.write_text("in the way\n")
    args = ["leaderboard", results, "--write"] if command == "leaderboard" else ["run", tournament_for(results, played)]
    res = invoke(*args)
    assert res.exit_code == 1 and "Traceback" not in res.output + res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith(f"arena: error: {path}: ") and last.endswith("move it aside and rerun"), last
    assert "bug" not in last and not list(results.glob("crash-*.log"))


# ---- bad values on the command line -----------------------------------------------------


@pytest.mark.parametrize(
    "args,pieces",
    [
        (["play", "divers-weights", RANDOM, RANDOM, "--move-s", "nan"], ["--move-s", "'nan'", "0.001 to 3600"]),
        (["play", "divers-weights", RANDOM, RANDOM, "--move-s", "inf"], ["--move-s", "'inf'"]),
        (["play", "divers-weights", RANDOM, RANDOM, "--startup-s", "1e-9"], ["--startup-s", "0.1 to 600"]),
        (["check", RANDOM, "--move-s", "nan"], ["--move-s", "'nan'"]),
        (["replay", RANDOM, "--move-s", "-1"], ["--move-s", "'-1'"]),
        (
            ["play", "divers-weights", RANDOM, RANDOM, "--option", "bidding=[1"],
            ["--option 'bidding=[1'", "plain value"],
        ),
        (["play", "divers-weights", RANDOM, RANDOM, "--option", "bidding={a: 1}"], ["plain value"]),
        (["play", "divers-weights", RANDOM, RANDOM, "--option", "bidding"], ["expected key=value"]),
        (["play", "divers-weights", RANDOM, RANDOM, "--option", "=3"], ["expected key=value"]),
        (
            ["play", "divers-weights", RANDOM, RANDOM, "--option", "bidding=maybe"],
            ["'bidding'", "fix the --option value"],
        ),
        (
            ["play", "divers-weights", RANDOM, RANDOM, "--option", "decision_cap=" + "9" * 23],
            ["'decision_cap'", "at most 10000000", "fix the --option value"],
        ),
        (
            ["play", "tightwod", RANDOM, RANDOM, RANDOM],
            ["unknown game 'tightwod'", "did you mean 'tightwad'?", "games: tightwad, divers-weights, palace"],
        ),
        (["play", "palace", RANDOM], ["palace takes 2 to 10 players, got 1", "give 2 to 10 seats"]),
        (["play", "tightwad", RANDOM, RANDOM], ["tightwad takes 3 to 10 players, got 2 (bots + --human seats)"]),
        (
            ["play", "divers-weights", RANDOM, RANDOM, RANDOM, RANDOM, RANDOM],
            ["takes 2 to 4 players, got 5", "give 2 to 4 seats"],
        ),
        (
            ["play", "palace", RANDOM, RANDOM, "--option", "extendd=true"],
            ["--option extendd", "did you mean 'extended'?", "options: decision_cap, decks, extended, wyrm_variant"],
        ),
        (["play", "divers-weights", RANDOM, RANDOM, "--seed", "-1"], ["--seed", "0<=x<=9223372036854775807"]),
        (["play", "divers-weights", RANDOM, RANDOM, "--seed", str(2**63)], ["--seed"]),
        (["bench", "protocol", "--rounds", "0"], ["--rounds", "1<=x"]),
        (["bench", "games", "--seconds", "0"], ["--seconds"]),
        (["bench", "games", "--seconds", "nan"], ["--seconds"]),
        (["run", "nowhere.yaml", "--workers", "100000"], ["--workers", "1<=x<=256"]),
        (["nosuchcommand"], ["No such command"]),
    ],
)
def test_bad_values_are_one_line(args: list, pieces: list[str]) -> None:
    one_line_error(invoke(*args), *pieces)


def test_a_bad_tournament_file_value_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        f"name: t\nseed: 1\nbots: [{RANDOM}, {RANDOM}]\ngames: [{{id: tightwad, players: 3, deals: 1}}]\n"
        "time_control: {move_s: .inf}\n"
    )
    one_line_error(invoke("run", path), str(path), "time_control.move_s", "finite")


# ---- anything unexpected: one line and a crash log --------------------------------------


def test_an_unexpected_error_leaves_a_crash_log_in_the_results_folder(
    results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import arena.report.ratings as ratings

    def broken(*args, **kw):
        raise RuntimeError("a bug\nwith two lines")

    monkeypatch.setattr(ratings, "compute_ratings", broken)
    line = one_line_error(
        invoke("leaderboard", results),
        "unexpected RuntimeError: a bug with two lines",
        "this is a bug in arena",
        str(results),
    )
    logs = list(results.glob("crash-*.log"))
    assert len(logs) == 1 and str(logs[0]) in line
    text = logs[0].read_text()
    assert "Traceback" in text and "RuntimeError: a bug" in text and "compute_ratings" not in line


def test_an_unexpected_error_without_a_results_folder_names_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import arena.bench.measures as bench

    def broken(*args, **kw):
        raise KeyError("surprise")

    monkeypatch.setattr(bench, "bench_games", broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    line = one_line_error(invoke("bench", "games", "--seconds", "0.1"), "unexpected KeyError", str(tmp_path))
    (log,) = tmp_path.glob("arena-crash-*.log")
    assert str(log) in line and "Traceback" in log.read_text()


def test_the_installed_command_never_prints_a_traceback(tmp_path: Path) -> None:
    """The real entry point (python -m arena), with a damaged database."""
    (tmp_path / "results.sqlite").write_bytes(b"\x00" * 100)
    res = subprocess.run(
        [sys.executable, "-m", "arena", "leaderboard", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and str(tmp_path / "results.sqlite") in res.stderr


def test_a_results_folder_is_never_taken_over_by_another_tournament_or_a_duel(played, tmp_path):
    """A second tournament, a duel or --dry-run pointed at a finished tournament's folder is
    refused in one line naming the folder's tournament; its store keeps its name and results."""
    from arena.tournament.store import ResultStore

    res = tmp_path / "results"
    shutil.copytree(played / "results", res)
    other = tmp_path / "other.yaml"
    other.write_text(
        (played / "t.yaml").read_text().replace("name: small", "name: other").replace(str(played / "results"), str(res))
    )
    before = ResultStore(res).completed_ids()
    for args in (("run", other), ("run", other, "--dry-run")):
        one_line_error(invoke(*args), str(res), "holds the results of 'small', not of 'other'", "--fresh")
    duel = invoke("duel", "divers-weights", played / "a.py", played / "b.py", "--results", res, "--max-matches", "2")
    assert duel.exit_code == 2 and "Traceback" not in duel.stderr  # its first line describes the duel
    assert duel.stderr.strip().splitlines()[-1].startswith(f"arena: error: {res}: holds the results of 'small'")
    store = ResultStore(res)
    assert store.tournament()["name"] == "small" and store.completed_ids() == before
    assert invoke("run", other, "--fresh").exit_code == 0  # the fix it names works
    assert ResultStore(res).tournament()["name"] == "other"


LONG = "a" * 300


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("results", '"a\\0b"', "results: the path holds a NUL byte"),
        ("root", "~nouser-of-this-machine/x", "root: ~nouser-of-this-machine is no user of this machine"),
        ("results", LONG, "results: a name in the path (aaaa"),
        ("bots", f"[{RANDOM}, {LONG}.py]", "bots[1]: a name in the path"),
        ("bots", f"[{RANDOM}, {{path: {LONG}.py}}]", "bots[1].path: a name in the path"),
    ],
)
def test_impossible_paths_in_a_tournament_file_are_named_by_field(tmp_path, field, value, says):
    lines = {
        "name": "t",
        "seed": "1",
        "bots": f"[{RANDOM}, {{builtin: random}}]",
        "games": "[{id: divers-weights, players: 2, deals: 1}]",
        field: value,
    }
    path = tmp_path / "t.yaml"
    path.write_text("".join(f"{k}: {v}\n" for k, v in lines.items()))
    one_line_error(invoke("run", path), f"t.yaml: {says}")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("play", "divers-weights", RANDOM, f"{LONG}.py"), "longer than this file system allows (255 bytes)"),
        (("check", "~nouser-of-this-machine/x.py"), "~user for a user this machine does not have"),
    ],
)
def test_impossible_paths_on_the_command_line_are_bad_input_not_bugs(args, says):
    result = invoke(*args)
    one_line_error(result, says)
    assert result.exit_code == 2


def test_a_store_missing_a_table_or_made_a_folder_is_bad_input_with_its_fix(played, tmp_path):
    dropped = tmp_path / "dropped"
    shutil.copytree(played / "results", dropped)
    with contextlib.closing(sqlite3.connect(dropped / "results.sqlite")) as conn:
        conn.execute("DROP TABLE seats")
        conn.commit()
    result = invoke("leaderboard", dropped)
    one_line_error(result, "results.sqlite: the results database is damaged (no such table: seats)", "restore a copy")
    assert result.exit_code == 2
    folder = tmp_path / "folder"
    (folder / "results.sqlite").mkdir(parents=True)
    for args in (("leaderboard", folder), ("matches", folder)):
        result = invoke(*args)
        one_line_error(result, "results.sqlite is a folder, not a results database; move it aside")
        assert result.exit_code == 2
