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
