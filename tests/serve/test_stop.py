"""Stopping a real `arena serve` process (on loopback, started here, signalled by its own pid):
SIGTERM and Ctrl-C end it as they end `arena run`, in one line "arena: interrupted" and exit
130, with its matchmaker and workers stopped; and its console carries no per-request noise."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("starlette")

from tests.own_processes import in_session  # noqa: E402
from tests.serve.ladder_fixtures import (  # noqa: E402
    add_user,
    free_port,
    ladder_file,
    safe_sandbox,
    start_server,
    wait_until,
)


def _serving(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/leaderboard", timeout=10) as r:
            return r.status == 200
    except (OSError, urllib.error.URLError):
        return False


def _started(
    tmp_path, *, ignore_sigint: bool = False, command: list[str] | None = None
) -> tuple[subprocess.Popen, int]:
    safe_sandbox()
    port = free_port()
    old = signal.signal(signal.SIGINT, signal.SIG_IGN) if ignore_sigint else None  # inherited, as `cmd &` does
    try:
        server = start_server(ladder_file(tmp_path), tmp_path / "data", port, tmp_path / "server.out", command=command)
    finally:
        if old is not None:
            signal.signal(signal.SIGINT, old)
    try:
        wait_until(lambda: _serving(port) or server.poll() is not None, what="the server to answer")
        assert server.poll() is None, (tmp_path / "server.out").read_text()
    except BaseException:
        _kill(server)
        raise
    return server, port


def _kill(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)


def _stopped_by(server: subprocess.Popen, sig: int, out) -> None:
    """``sig`` to the server's pid: one line, exit 130, and nothing it started left running."""
    os.kill(server.pid, sig)
    try:
        assert server.wait(60) == 130, out.read_text()
    finally:
        _kill(server)
    text = out.read_text()
    assert text.rstrip().splitlines()[-1] == "arena: interrupted" and "Traceback" not in text, text
    wait_until(lambda: not in_session(server.pid), timeout_s=60, what="the matchmaker and workers to stop")


@pytest.mark.slow
def test_sigterm_stops_the_server_and_its_matchmaker_as_an_interruption(tmp_path):
    server, _ = _started(tmp_path)
    _stopped_by(server, signal.SIGTERM, tmp_path / "server.out")


@pytest.mark.slow
def test_ctrl_c_stops_it_as_an_interruption_even_when_started_in_the_background(tmp_path):
    server, _ = _started(tmp_path, ignore_sigint=True)  # a shell's background job: SIGINT ignored
    _stopped_by(server, signal.SIGINT, tmp_path / "server.out")


def _luck_process_started(sid: int) -> bool:
    """The luck process is a spawned interpreter in the server's session (arena/serve/luck.py)."""
    return any(b"spawn_main" in _cmdline(pid) for pid in in_session(sid))


def _cmdline(pid: int) -> bytes:
    """A process's command line, b"" once it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


@pytest.mark.slow
def test_sigterm_to_its_whole_process_group_says_interrupted_once(tmp_path):
    """systemd's `systemctl stop` (KillMode=control-group) and `timeout` signal every process of
    the server: the spawned luck process, which re-imports the `arena` command, must not say
    "arena: interrupted" a second time on the console. Started as the `arena` command, as an
    organiser does (a spawned child of `python -m arena` does not re-import it)."""
    script = Path(sys.executable).with_name("arena")
    if not script.exists():
        pytest.skip(f"no `arena` command beside {sys.executable}")
    server, _ = _started(tmp_path, command=[str(script)])
    wait_until(
        lambda: _luck_process_started(server.pid) and (tmp_path / "data" / "luck.json").exists(),
        what="the luck process to finish a pass",
    )
    os.killpg(server.pid, signal.SIGTERM)
    try:
        assert server.wait(60) == 130, (tmp_path / "server.out").read_text()
    finally:
        _kill(server)
    text = (tmp_path / "server.out").read_text()
    assert text.count("arena: interrupted") == 1, text
    wait_until(lambda: not in_session(server.pid), timeout_s=60, what="the matchmaker and workers to stop")


@pytest.mark.slow
def test_a_malformed_upload_is_answered_400_without_noise_on_the_console(tmp_path):
    token = add_user(tmp_path / "data", "ann")
    server, port = _started(tmp_path)
    body = b'--WRONG\r\nContent-Disposition: form-data; name="file"; filename="a.py"\r\n\r\nx\r\n--WRONG--\r\n'
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/bots",
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "multipart/form-data; boundary=RIGHT"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 400 and json.loads(refused.value.read())["status"] == 400
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:  # not HTTP at all
        raw.sendall(b"\x16\x03\x01 garbage\r\n\r\n")
        raw.recv(1024)
    _stopped_by(server, signal.SIGTERM, tmp_path / "server.out")
    console = (tmp_path / "server.out").read_text()
    assert "boundary" not in console  # python-multipart's warning stays off it
    assert "Invalid HTTP request" not in console  # uvicorn's too: it is in server.log
    assert "Invalid HTTP request" in (tmp_path / "data" / "server.log").read_text()


def test_a_full_disk_that_stops_the_matchmaker_is_said_in_one_line(tmp_path, monkeypatch):
    """A full disk stopped the matchmaker with 'exit code 3; see run.log', and run.log, on that
    full disk, held only the start of a traceback: the operator never learnt why. The server
    now says it (exit 1, as `arena run` on a full disk)."""
    import sqlite3

    from arena.errors import MachineTrouble
    from arena.serve.ladder import load_ladder
    from arena.serve.matchmaker import Matchmaker, start_matchmaker
    from arena.serve.server import _refusal

    def full(*_args, **_kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Matchmaker, "run", full)
    data = tmp_path / "data"
    data.mkdir()
    matchmaker = start_matchmaker(load_ladder(ladder_file(tmp_path)), data, None)
    matchmaker.join(60)
    assert matchmaker.exitcode == 3
    refusal = _refusal(matchmaker)
    assert isinstance(refusal, MachineTrouble) and refusal.exit_code == 1
    assert str(refusal).startswith("no space left on the device") and "free space" in str(refusal)


def _tree(root: int) -> dict[int, tuple[str, int]]:
    """Every process under ``root`` (pid -> (state, ppid)), zombies included, found by parent."""
    from tests.own_processes import _pids, stat

    table = {pid: (st[0], st[1]) for pid in _pids() if (st := stat(pid))}
    out: dict[int, tuple[str, int]] = {}
    todo = [root]
    while todo:
        parent = todo.pop()
        for pid, (state, ppid) in table.items():
            if ppid == parent and pid not in out:
                out[pid] = (state, ppid)
                todo.append(pid)
    return out


def _zombies(root: int) -> list[int]:
    return [pid for pid, (state, _) in _tree(root).items() if state == "Z"]


def _worker_with_bots(root: int) -> int | None:
    """A worker of the server's matchmaker (a forked `arena serve`) with bot processes running."""
    tree = _tree(root)
    for pid, (state, parent) in tree.items():
        if state != "Z" and tree.get(parent, ("", 0))[1] == root and any(p == pid for _, p in tree.values()):
            if b"serve" in _cmdline(pid):
                return pid
    return None


@pytest.mark.slow
def test_a_worker_killed_leaves_no_zombie_processes_behind(tmp_path):
    """A worker that dies (the OOM killer, kill -9) leaves its bots' sandbox processes, which the
    sandbox kills with it; they were re-parented to the server, which never reaped them (116
    zombies after one worker's death, on the demo ladder), and their scratch folders stayed until
    the next start. The matchmaker reaps them now, and removes the folders."""
    safe_sandbox()
    port = free_port()
    server = start_server(ladder_file(tmp_path, programs=True), tmp_path / "data", port, tmp_path / "server.out")
    try:
        wait_until(lambda: _serving(port), what="the server to answer")
        worker = wait_until(lambda: _worker_with_bots(server.pid), what="a worker playing with bot processes")
        os.kill(worker, signal.SIGKILL)
        wait_until(lambda: _worker_with_bots(server.pid) not in (None, worker), what="a new worker with bots")
        wait_until(lambda: not _zombies(server.pid), timeout_s=30, what="no zombie left under the server")
        scratch = Path(tempfile.gettempdir())
        wait_until(
            lambda: not list(scratch.glob(f"arena-scratch-{worker}-*")),  # the dead worker's bots'
            timeout_s=30,
            what="the dead worker's scratch folders to go",
        )
    except BaseException:
        _kill(server)
        raise
    _stopped_by(server, signal.SIGTERM, tmp_path / "server.out")
