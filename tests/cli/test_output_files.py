"""Where `arena export -o` and `arena leaderboard` write: a regular file is replaced whole, a
symbolic link is followed, a FIFO or device is written to as it is (never replaced), a failed
write is one line and a non-zero exit, and a filter that matches nothing writes no file."""

from __future__ import annotations

import builtins
import errno
import fcntl
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import invoke, one_line_error

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tournament of two matches of Divers Weights (its results folder)."""
    home = tmp_path_factory.mktemp("played")
    (home / "t.yaml").write_text(
        f"name: outputs\nseed: 1\nbots: [{ROOT}/bots/random_bot.py, {ROOT}/bots/divers_heuristic.py]\n"
        "games: [{id: divers-weights, players: 2, deals: 1}]\n"
        f"workers: 1\ntrust_bots: true\nresults: {home}/results\n"
    )
    res = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(home / "t.yaml")], capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr
    return home / "results"


@pytest.fixture
def results(played: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "results"
    shutil.copytree(played, copy)
    return copy


def _export_lines(results: Path) -> list[str]:
    res = invoke("export", results)
    assert res.exit_code == 0, res.stderr
    return res.stdout.splitlines()


# ---- export -o: what is at the path --------------------------------------------------------


def test_export_into_a_fifo_writes_through_it_and_leaves_the_fifo(results: Path, tmp_path: Path) -> None:
    """It renamed a temporary file over the FIFO: the reader got nothing, the FIFO was gone."""
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    # the read end, open before the export: its open() for writing does not wait, and the pipe
    # holds the whole export (no reader thread racing the writer)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        fcntl.fcntl(reader, fcntl.F_SETPIPE_SZ, 1 << 20)
        res = invoke("export", results, "-o", fifo)
        assert res.exit_code == 0, res.stderr
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
        got = b""
        try:
            while chunk := os.read(reader, 1 << 16):
                got += chunk
        except BlockingIOError:
            pass
    finally:
        os.close(reader)
    assert got.decode().splitlines() == _export_lines(results)


def test_export_through_a_symlink_replaces_its_target_not_the_link(results: Path, tmp_path: Path) -> None:
    target = tmp_path / "kept" / "all.jsonl"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    res = invoke("export", results, "-o", link)
    assert res.exit_code == 0, res.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().splitlines() == _export_lines(results)
    assert sorted(p.name for p in target.parent.iterdir()) == ["all.jsonl"]  # no temporary file left


def _device(tmp_path: Path, name: str, minor: int) -> Path:
    """A node of the memory device ``minor`` (3: null, 7: full) of our own, never /dev's."""
    path = tmp_path / name
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, minor))
        os.close(os.open(path, os.O_WRONLY))
    except OSError as exc:
        pytest.skip(f"cannot make and open a device node here ({exc.strerror})")
    return path


def test_export_into_a_device_writes_to_it_and_a_failed_write_is_one_line(results: Path, tmp_path: Path) -> None:
    """`-o /dev/null` replaced the system's /dev/null with a regular file; `-o /dev/full` said
    it wrote the records."""
    null = _device(tmp_path, "null", 3)
    res = invoke("export", results, "-o", null)
    assert res.exit_code == 0, res.stderr
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    full = _device(tmp_path, "full", 7)
    # a full disk is the machine's trouble (status 1, docs/tournament.md), not the user's input
    one_line_error(invoke("export", results, "-o", full), str(full), "cannot write the export", "No space left", code=1)
    assert stat.S_ISCHR(os.lstat(full).st_mode)


def test_export_into_a_path_that_cannot_be_a_file_is_the_users_to_fix(results: Path, tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("")
    res = invoke("export", results, "-o", tmp_path / "plain" / "out.jsonl")
    one_line_error(res, "out.jsonl", "cannot write the export", "Not a directory", "choose a writable path", code=2)


def test_export_into_a_regular_file_still_replaces_it_whole(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "all.jsonl"
    out.write_text("old\n")
    res = invoke("export", results, "-o", out)
    assert res.exit_code == 0, res.stderr
    assert out.read_text().splitlines() == _export_lines(results)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["all.jsonl", "results"]


def test_a_failed_write_to_a_fifo_is_one_line(results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.report.export as export

    def full(records, out):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(export, "write_records", full)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        one_line_error(invoke("export", results, "-o", fifo), str(fifo), "No space left", "free space", code=1)
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def _without_waiting(fifo: Path, call) -> object:
    """What ``call`` returns; fails if it still waits for a reader of ``fifo`` after 10 s."""
    import threading

    got: list[object] = []
    worker = threading.Thread(target=lambda: got.append(call()))
    worker.start()
    worker.join(10)
    if worker.is_alive():  # stuck in open(): be its reader so that it ends, then fail
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        worker.join(30)
        os.close(reader)
        pytest.fail(f"writing {fifo.name} waited for a reader")
    return got[0]


def test_a_fifo_no_program_reads_is_one_line_not_a_wait(results: Path, tmp_path: Path) -> None:
    """`export -o FIFO` and `--html FIFO` with no reader waited in open() for ever."""
    from arena.errors import ArenaError
    from arena.report.replay_view import write_replay_html
    from arena.tournament.store import ResultStore

    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    res = _without_waiting(fifo, lambda: invoke("export", results, "-o", fifo))
    one_line_error(res, f"{fifo}: cannot write the export (a named pipe no program reads; start its reader first)")
    record = next(iter(ResultStore(results).iter_results())).match_id
    said = _without_waiting(
        fifo,
        lambda: str(pytest.raises(ArenaError, write_replay_html, ResultStore(results).get_record(record), fifo).value),
    )
    assert (
        said
        == f"{fifo}: cannot write the replay (a named pipe no program reads; start its reader first); choose a writable path"
    )
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# ---- export: a filter that matches nothing ---------------------------------------------------


@pytest.mark.parametrize("to_file", [True, False], ids=["file", "stdout"])
def test_an_export_filter_that_matches_nothing_is_an_error_and_writes_nothing(
    results: Path, tmp_path: Path, to_file: bool
) -> None:
    """`--game palace` on a folder of Divers Weights wrote an empty file and exited 0."""
    out = tmp_path / "e.jsonl"
    res = invoke("export", results, "--game", "palace", *(["-o", out] if to_file else []))
    one_line_error(res, "--game 'palace'", "no stored match", "games here: divers-weights", code=2)
    assert not out.exists() and res.stdout == ""
    res = invoke("export", results, "--game", "divers-weights", "--bot", "random_bo", "-o", out)
    one_line_error(res, "--bot 'random_bo'", "did you mean 'random_bot'?", code=2)
    assert not out.exists()


# ---- leaderboard: the report files -------------------------------------------------------------


def _not_writable(monkeypatch: pytest.MonkeyPatch, folder: Path, tmp_path: Path) -> None:
    """``folder`` looks unwritable to os.access, as to a user without write permission (the
    tests may run as root, for whom it never does)."""
    real = os.access

    def access(path, mode, *args, **kw):
        if mode & os.W_OK and Path(path) == folder:
            return False
        return real(path, mode, *args, **kw)

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _reports(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.glob("leaderboard.*")}


def test_leaderboard_in_a_folder_it_cannot_write_says_the_reports_were_not_rewritten(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It printed the leaderboard and exited 0 without a word, leaving the old pages."""
    expected = invoke("leaderboard", results, "--no-write")
    before = _reports(results)
    _not_writable(monkeypatch, results, tmp_path)
    res = invoke("leaderboard", results)
    assert res.exit_code == 0, res.stderr
    assert res.stdout == expected.stdout
    assert res.stderr.strip().splitlines() == [
        f"arena: note: {results} is read-only: its report files were not rewritten and may be out of date"
    ]
    assert _reports(results) == before


def test_leaderboard_write_asked_in_a_folder_it_cannot_write_is_one_line(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--format md --write` skipped the files silently and exited 0."""
    _not_writable(monkeypatch, results, tmp_path)
    real = builtins.open

    def opened(file, mode="r", *args, **kw):  # a file written in the folder: refused, as to its non-owner
        if "w" in mode and Path(file).parent == results:
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real(file, mode, *args, **kw)

    monkeypatch.setattr(builtins, "open", opened)
    res = invoke("leaderboard", results, "--format", "md", "--write")
    one_line_error(res, "cannot write the report", "--no-write", code=2)


def test_a_leaderboard_linked_into_another_folder_stays_a_link(results: Path, tmp_path: Path) -> None:
    """A page linked into a web folder: rewriting it renamed over the link, which became a
    plain file and left the web folder's copy stale."""
    web = tmp_path / "www"
    web.mkdir()
    (web / "board.html").write_text("old")
    (results / "leaderboard.html").unlink(missing_ok=True)
    (results / "leaderboard.html").symlink_to(web / "board.html")
    res = invoke("leaderboard", results)
    assert res.exit_code == 0, res.stderr
    assert (results / "leaderboard.html").is_symlink()
    assert "<html" in (web / "board.html").read_text()


@pytest.mark.parametrize("fmt", ["md", "csv", "json"])
def test_a_printed_leaderboard_is_byte_for_byte_the_file_it_writes(results: Path, fmt: str) -> None:
    """--write keeps the pages on disk showing what is printed: the JSON and CSV printed had an
    extra blank line, the Markdown another title and no 'Written' line."""
    res = invoke("leaderboard", results, "--format", fmt, "--write")
    assert res.exit_code == 0, res.stderr
    assert res.stdout == (results / f"leaderboard.{fmt}").read_text(encoding="utf-8")
