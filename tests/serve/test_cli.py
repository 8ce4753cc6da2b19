"""`arena serve` and `arena serve-admin` from the command line: one-line refusals, no traceback."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

pytest.importorskip("starlette")

from tests.serve.ladder_fixtures import ROOT, ladder_file  # noqa: E402


def arena(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], cwd=ROOT, input=stdin, capture_output=True,
                          text=True, timeout=120)


def one_line_error(r: subprocess.CompletedProcess, *words: str) -> None:
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("arena: error: ") and "Traceback" not in r.stderr
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


def test_add_user_prints_a_token_once_and_refuses_bad_accounts(tmp_path):
    data = str(tmp_path / "data")
    r = arena("serve-admin", "add-user", "--data", data, "ann", "--password-stdin", stdin="long enough\n")
    assert r.returncode == 0 and "API token (shown once): arena_" in r.stdout
    token = r.stdout.split(": ")[-1].strip()
    assert token not in (tmp_path / "data" / "ladder.sqlite").read_bytes().decode("latin-1")  # only its hash
    one_line_error(arena("serve-admin", "add-user", "--data", data, "ann", "--password-stdin", stdin="long enough\n"),
                   "exists already")
    one_line_error(arena("serve-admin", "add-user", "--data", data, "bob", "--password-stdin", stdin="short\n"),
                   "shorter than 8")
    one_line_error(arena("serve-admin", "add-user", "--data", data, "b b", "--password-stdin", stdin="long enough\n"),
                   "not allowed")


@pytest.mark.slow
def test_the_server_stops_in_one_line_when_its_matchmaker_dies(tmp_path):
    import os
    import signal

    from tests.serve.ladder_fixtures import free_port, safe_sandbox, start_server, wait_until

    safe_sandbox()
    log = tmp_path / "server.out"
    server = start_server(ladder_file(tmp_path), tmp_path / "data", free_port(), log)
    try:
        children = f"/proc/{server.pid}/task/{server.pid}/children"
        matchmaker = wait_until(lambda: (tmp_path / "data" / "results.sqlite").exists() and os.path.exists(children)
                                and open(children).read().split(), what="the matchmaker")
        os.kill(int(matchmaker[0]), signal.SIGKILL)
        assert server.wait(60) == 2
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)
    text = log.read_text()
    assert "arena: error: the matchmaker stopped" in text and "Traceback" not in text
