"""`arena serve` and `arena serve-admin` from the command line: one-line refusals, no traceback.

In process (click's runner): each refusal comes before anything is forked or served. The
real `python -m arena serve` runs in tests/serve/test_server.py."""

from __future__ import annotations

import socket

import pytest

pytest.importorskip("starlette")

from click.testing import CliRunner  # noqa: E402

from arena.cli import cli  # noqa: E402
from tests.serve.ladder_fixtures import ladder_file  # noqa: E402


def arena(*args: str, stdin: str = ""):
    return CliRunner().invoke(cli, list(args), input=stdin)


def one_line_error(r, *words: str) -> None:
    assert r.exit_code == 2, (r.output, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("arena: error: ") and "Traceback" not in r.output + r.stderr
    for w in words:
        assert w in lines[-1]


def test_a_sandbox_level_unsafe_for_untrusted_bots_is_refused(tmp_path):
    path = ladder_file(tmp_path)
    path.write_text(path.read_text() + "sandbox: none\n")
    one_line_error(arena("serve", str(path), "--data", str(tmp_path / "data")), "not safe for untrusted bots")


def test_an_address_in_use_is_refused_before_anything_starts(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = arena("serve", str(ladder_file(tmp_path)), "--port", str(port), "--data", str(tmp_path / "data"))
    one_line_error(r, f"--port {port}", "cannot listen")
    assert not (tmp_path / "data" / "results.sqlite").exists()


def test_a_host_that_is_not_this_machines_says_so_not_to_change_the_port(tmp_path):
    r = arena("serve", str(ladder_file(tmp_path)), "--host", "192.0.2.1", "--data", str(tmp_path / "data"))
    one_line_error(r, "--host 192.0.2.1: not an address of this machine")
    assert "--port" not in r.stderr


def test_a_ladder_file_given_to_arena_run_says_to_serve_it(tmp_path):
    r = arena("run", str(ladder_file(tmp_path)), "--dry-run")
    one_line_error(r, "ladder: unknown key; a ladder file is served, not run: arena serve FILE --data DIR")


def test_ray_address_without_the_ray_executor_is_refused(tmp_path):
    one_line_error(
        arena("serve", str(ladder_file(tmp_path)), "--data", str(tmp_path / "data"), "--ray-address", "10.0.0.1:6379"),
        "--executor ray",
    )


def test_add_user_prints_a_token_once_and_refuses_bad_accounts(tmp_path):
    data = str(tmp_path / "data")
    r = arena("serve-admin", "add-user", "--data", data, "ann", "--password-stdin", stdin="long enough\n")
    assert r.exit_code == 0 and "API token (shown once): arena_" in r.stdout
    token = r.stdout.split(": ")[-1].strip()
    assert token not in (tmp_path / "data" / "ladder.sqlite").read_bytes().decode("latin-1")  # only its hash
    one_line_error(
        arena("serve-admin", "add-user", "--data", data, "ann", "--password-stdin", stdin="long enough\n"),
        "exists already",
    )
    one_line_error(
        arena("serve-admin", "add-user", "--data", data, "bob", "--password-stdin", stdin="short\n"), "shorter than 8"
    )
    one_line_error(
        arena("serve-admin", "add-user", "--data", data, "b b", "--password-stdin", stdin="long enough\n"),
        "not allowed",
    )
    # a second "ann" that differs by a final newline, which a ^...$ name check let through
    r = arena("serve-admin", "add-user", "--data", data, "ann\n", "--password-stdin", stdin="long enough\n")
    assert r.exit_code != 0 and "not allowed" in r.output, r.output


def test_invite_prints_a_one_time_link(tmp_path):
    from arena.serve.accounts import invite_valid
    from arena.serve.db import LadderDB

    r = arena("serve-admin", "invite", "--data", str(tmp_path / "data"), "--url", "https://ladder.example.org/")
    assert r.exit_code == 0
    link = r.stdout.strip()
    assert link.startswith("https://ladder.example.org/invite/")
    token = link.rsplit("/", 1)[1]
    db = LadderDB(tmp_path / "data")
    assert invite_valid(db, token) and not invite_valid(db, token + "x")
    assert token not in (tmp_path / "data" / "ladder.sqlite").read_bytes().decode("latin-1")  # only its hash


def test_a_data_folder_that_cannot_be_made_is_one_line_for_the_admin_commands(tmp_path, monkeypatch):
    """A read-only file system, a parent that is not a real folder (EROFS, ENOENT): one line
    naming --data, as `arena serve` says it, not "unexpected OSError ... a bug in arena"."""
    import errno
    from pathlib import Path

    real_mkdir = Path.mkdir
    data = tmp_path / "readonly" / "data"

    def mkdir(self, *args, **kwargs):
        if self == data:
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    one_line_error(
        arena("serve-admin", "add-user", "--data", str(data), "ann", "--password-stdin", stdin="long enough\n"),
        f"--data {data}: cannot create the folder (Read-only file system)",
    )
    one_line_error(arena("serve-admin", "invite", "--data", str(data)), f"--data {data}", "cannot create")
    one_line_error(arena("serve", str(ladder_file(tmp_path)), "--data", str(data)), f"--data {data}", "cannot create")


def _damaged_ladder_db(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "ladder.sqlite").write_bytes(b"not a database, just garbage\n" * 200)
    return data


def _names_the_ladder_db(r, data, code: int, *words: str) -> None:
    assert r.exit_code == code, (r.output, r.stderr)
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith(f"arena: error: {data / 'ladder.sqlite'}: ") and "Traceback" not in r.output + r.stderr
    assert "results" not in line and "--fresh" not in line  # not the results store, no option it lacks
    for w in words:
        assert w in line


def test_a_damaged_ladder_db_is_named_with_a_fix_by_the_admin_commands(tmp_path):
    data = _damaged_ladder_db(tmp_path)
    add = arena("serve-admin", "add-user", "--data", str(data), "ann", "--password-stdin", stdin="long enough\n")
    _names_the_ladder_db(add, data, 2, "damaged", "restore it from a backup")
    _names_the_ladder_db(arena("serve-admin", "invite", "--data", str(data)), data, 2, "damaged", "backup")


def test_a_ladder_db_that_cannot_be_opened_is_named_too(tmp_path):
    data = tmp_path / "data"
    (data / "ladder.sqlite").mkdir(parents=True)  # a folder where the file belongs
    _names_the_ladder_db(arena("serve-admin", "invite", "--data", str(data)), data, 1, "cannot be opened")


def test_serve_names_a_damaged_ladder_db_not_the_results_store(tmp_path):
    from tests.serve.ladder_fixtures import free_port, safe_sandbox

    safe_sandbox()  # else the sandbox refusal comes first
    data = _damaged_ladder_db(tmp_path)
    r = arena("serve", str(ladder_file(tmp_path)), "--port", str(free_port()), "--data", str(data))
    _names_the_ladder_db(r, data.resolve(), 2, "damaged", "backup")


def test_a_ladder_db_of_a_newer_arena_is_refused_unchanged(tmp_path):
    """ladder.sqlite had no version: a newer arena's was used as it was, its new columns
    migrated into whatever this arena thought they were."""
    import sqlite3

    from arena.serve.db import LadderDB

    data = tmp_path / "data"
    data.mkdir()
    LadderDB(data)
    db = data / "ladder.sqlite"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] >= 1  # stamped when made
        conn.execute("PRAGMA user_version = 1000")
        conn.execute("ALTER TABLE users DROP COLUMN disabled")  # as if a newer arena had changed it
    before = db.read_bytes()
    for r in (arena("serve-admin", "users", "--data", str(data)), arena("serve-admin", "invite", "--data", str(data))):
        _names_the_ladder_db(r, data, 2, "newer arena", "upgrade arena")
    assert db.read_bytes() == before


def test_serve_on_a_data_folder_that_cannot_be_written_is_one_line(tmp_path):
    """A ladder folder on a disk remounted read-only: its run.lock could not be opened and
    `arena serve` ended as "unexpected OSError ... a bug in arena" (exit 70)."""
    import os
    import shutil
    import subprocess

    from arena.serve.db import LadderDB
    from tests.serve.ladder_fixtures import free_port, safe_sandbox

    safe_sandbox()  # else the sandbox refusal comes first
    mount = tmp_path / "ro"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a read-only file system needs a tmpfs mount (root)")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        (mount / "data").mkdir()
        LadderDB(mount / "data").conn.close()  # a ladder made before the disk went read-only
        assert subprocess.run(["mount", "-o", "remount,ro", str(mount)], capture_output=True).returncode == 0
        r = arena("serve", str(ladder_file(tmp_path)), "--port", str(free_port()), "--data", str(mount / "data"))
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
    assert r.exit_code == 1, (r.output, r.stderr)
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith(f"arena: error: {mount / 'data'}") and "cannot be written" in line, line
    assert "bug" not in line and "Traceback" not in r.output + r.stderr


def _admin(*args: str, stdin: bytes | None = None):
    """The real command in a session of its own: no controlling terminal, as under cron or CI."""
    import subprocess
    import sys

    from tests.serve.ladder_fixtures import ROOT

    return subprocess.run(
        [sys.executable, "-m", "arena", "serve-admin", *args],
        cwd=ROOT,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        start_new_session=True,
        timeout=120,
    )


def test_add_user_without_a_terminal_says_to_use_password_stdin(tmp_path):
    r = _admin("add-user", "--data", str(tmp_path / "data"), "bob")
    err = r.stderr.decode()
    assert r.returncode == 2 and err.count("\n") == 1 and "--password-stdin" in err, err


def test_a_password_that_is_not_utf8_is_refused_in_one_line(tmp_path):
    r = _admin("add-user", "--data", str(tmp_path / "data"), "u", "--password-stdin", stdin=b"ab\xff\xfecdefgh\n")
    err = r.stderr.decode()
    assert r.returncode == 2 and err.count("\n") == 1 and "--password-stdin" in err and "UTF-8" in err, err


def test_password_stdin_reads_a_bounded_line(tmp_path):
    """Standard input from /dev/zero (no newline, no end) was read into memory without end."""
    import subprocess
    import sys

    from tests.serve.ladder_fixtures import ROOT

    with open("/dev/zero", "rb") as zero:
        r = subprocess.run(
            [sys.executable, "-m", "arena", "serve-admin", "add-user", "--data", str(tmp_path / "d"), "u"]
            + ["--password-stdin"],
            cwd=ROOT,
            stdin=zero,
            capture_output=True,
            start_new_session=True,
            timeout=120,
        )
    err = r.stderr.decode()
    assert r.returncode == 2 and err == (
        "arena: error: --password-stdin: the first line is longer than 4096 bytes; give the password alone on "
        "the first line, at most 4096 bytes\n"
    ), err
    r = _admin("add-user", "--data", str(tmp_path / "d"), "u", "--password-stdin", stdin=b"p" * 4096 + b"\n")
    assert r.returncode == 0 and "API token" in r.stdout.decode(), r.stderr  # the longest still works


def test_an_unsafe_sandbox_is_refused_with_fixes_a_ladder_accepts(tmp_path):
    from arena.serve.ladder import load_ladder

    path = ladder_file(tmp_path)
    path.write_text(path.read_text() + "sandbox: rlimits\n")
    r = arena("serve", str(path), "--data", str(tmp_path / "data"))
    one_line_error(r, f"{path}: sandbox: ", "not safe for untrusted bots", "sandbox: auto")
    assert "trust_bots" not in r.stderr  # a ladder refuses it
    path.write_text(path.read_text().replace("sandbox: rlimits", "sandbox: auto"))
    assert load_ladder(path).tournament.sandbox == "auto"  # the fix it names is accepted


def test_an_unreachable_ray_address_is_refused_before_the_server_serves(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    with socket.socket() as dead:
        dead.bind(("127.0.0.1", 0))  # bound, never listening: refused
        port = dead.getsockname()[1]
        args = ("serve", str(ladder_file(tmp_path)), "--data", str(tmp_path / "data"), "--executor", "ray")
        r = arena(*args, "--ray-address", f"127.0.0.1:{port}")
        one_line_error(r, f"cannot reach Ray at 127.0.0.1:{port} (--ray-address)", "check --ray-address")
        assert "http://" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
        monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
        one_line_error(arena(*args), f"cannot reach Ray at 127.0.0.1:{port} (RAY_ADDRESS)", "check RAY_ADDRESS")
    assert not (tmp_path / "data" / "results.sqlite").exists()


def test_reset_gives_a_new_password_and_token_and_revokes_the_old_ones(tmp_path):
    from arena.serve.accounts import check_password, new_session, user_for_session, user_for_token
    from arena.serve.db import LadderDB

    data = str(tmp_path / "data")
    old = arena("serve-admin", "add-user", "--data", data, "ann", "--password-stdin", stdin="long enough\n")
    old_token = old.stdout.split(": ")[-1].strip()
    db = LadderDB(tmp_path / "data")
    sid = new_session(db, user_for_token(db, old_token).id)  # logged in somewhere

    r = arena("serve-admin", "reset", "--data", data, "ANN", "--password-stdin", stdin="another one\n")
    assert r.exit_code == 0, r.output
    assert "user ann: new password set" in r.stdout and "API token (shown once): arena_" in r.stdout
    new_token = r.stdout.split(": ")[-1].strip()
    assert user_for_token(db, new_token).name == "ann"
    assert user_for_token(db, old_token) is None and user_for_session(db, sid) is None  # revoked, logged out
    assert check_password(db, "ann", "another one") and not check_password(db, "ann", "long enough")

    one_line_error(
        arena("serve-admin", "reset", "--data", data, "nobody", "--password-stdin", stdin="long enough\n"),
        "no user 'nobody'; its users: ann",
    )
    one_line_error(
        arena("serve-admin", "reset", "--data", data, "ann", "--password-stdin", stdin="short\n"), "shorter than 8"
    )
    # an unknown name is said before the password is judged (or, at a terminal, asked for)
    one_line_error(
        arena("serve-admin", "reset", "--data", data, "nobody", "--password-stdin", stdin="short\n"),
        "no user 'nobody'",
    )
    empty = str(tmp_path / "empty")
    one_line_error(arena("serve-admin", "reset", "--data", empty, "ann", "--password-stdin"), "no ladder here")
    assert not (tmp_path / "empty").exists()  # reading accounts makes no ladder


def test_a_ladder_file_that_is_missing_or_a_folder_is_called_a_ladder_file(tmp_path):
    data = str(tmp_path / "data")
    one_line_error(arena("serve", str(tmp_path / "nosuch.yaml"), "--data", data), "check the path of the ladder file")
    one_line_error(arena("serve", str(tmp_path), "--data", data), "is a folder; give the ladder file (.yaml)")


def test_expired_sessions_go_as_new_ones_are_made(tmp_path):
    """Every login stored a session row that stayed for good, expired or not: the accounts
    database of a ladder that runs for months grew with every login."""
    from arena.serve import accounts
    from arena.serve.db import LadderDB

    data = tmp_path / "data"
    data.mkdir()
    accounts.add_user(data, "ann", "a password of ann's")
    db = LadderDB(data)
    ann = db.one("SELECT id FROM users WHERE name = 'ann'")["id"]
    old = accounts.new_session(db, ann)
    db.run("UPDATE sessions SET created = created - 15 * 86400")  # past the cookie's 14 days
    kept = accounts.new_session(db, ann)
    assert db.one("SELECT COUNT(*) AS n FROM sessions")["n"] == 1
    assert accounts.user_for_session(db, kept) is not None and accounts.user_for_session(db, old) is None


def test_users_lists_the_accounts_and_disables_and_enables_one(tmp_path):
    data = str(tmp_path / "data")
    for name, more in (("ann", ()), ("Org", ("--organiser",))):
        assert (
            arena(
                "serve-admin", "add-user", "--data", data, name, *more, "--password-stdin", stdin="long enough\n"
            ).exit_code
            == 0
        )
    r = arena("serve-admin", "users", "--data", data)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].split()[:4] == ["name", "role", "state", "bots"]
    assert lines[1].split()[:4] == ["ann", "entrant", "active", "0/0"]
    assert lines[2].split()[:4] == ["Org", "organiser", "active", "0/0"]
    r = arena("serve-admin", "users", "--data", data, "--disable", "ANN")
    assert r.exit_code == 0 and r.stdout.startswith("user ann: disabled\n"), r.output
    assert r.stdout.splitlines()[2].split()[:3] == ["ann", "entrant", "disabled"]
    r = arena("serve-admin", "users", "--data", data, "--enable", "ann")
    assert r.exit_code == 0 and r.stdout.splitlines()[2].split()[:3] == ["ann", "entrant", "active"]
    one_line_error(
        arena("serve-admin", "users", "--data", data, "--disable", "nobody"), "no user 'nobody'; its users: ann, Org"
    )
    one_line_error(arena("serve-admin", "users", "--data", data, "--disable", "a", "--enable", "b"), "not both")
    one_line_error(arena("serve-admin", "users", "--data", str(tmp_path / "empty")), "no ladder here")
    assert not (tmp_path / "empty").exists()


def test_serve_and_run_describe_the_same_ray_address_default():
    """Both pass the address to one `connect` (RAY_ADDRESS is honoured, as the test above
    shows); serve's help said a new local Ray instance was the default."""
    helps = {cmd: arena(cmd, "--help").output for cmd in ("run", "serve")}
    for cmd, text in helps.items():
        assert "RAY_ADDRESS" in " ".join(text.split()), f"arena {cmd} --help: {text}"
