"""Reaching Ray (``ray_executor.connect``, ``check_address``), in a module of its own: these tests
stop or fake the Ray of this process, which other modules keep running.

Ray's token auth (Ray 2.60): `arena run --executor ray --ray-address` says in one line, before
anything is written or reset, what this machine lacks to join a head that wants its token.

A driver sends a token only with ``RAY_AUTH_MODE=token`` (the head's token in ``~/.ray/auth_token``
alone is not enough), and with that mode but no token Ray's client aborts the process (a failed
check) rather than raise: the address probe took that for a probe that failed, let the run go on,
and ``--fresh`` had emptied the results folder before ``ray.init`` refused.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from arena.errors import ArenaError
from tests import own_processes as own

from .ray_cluster import running_cluster
from .test_runner import run_file, stored, write_tournament


def _driver(monkeypatch: pytest.MonkeyPatch, home: Path, *, mode: str | None, token: str | None) -> None:
    """This process (and the probe it starts) as a driver whose home is ``home``."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(home / ".ray", ignore_errors=True)
    if token is not None:
        (home / ".ray").mkdir()
        (home / ".ray" / "auth_token").write_text(token)
    monkeypatch.setenv("HOME", str(home))
    for var in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS"):
        monkeypatch.delenv(var, raising=False)
    if mode is None:
        monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    else:
        monkeypatch.setenv("RAY_AUTH_MODE", mode)


def test_token_mode_without_a_token_is_refused_before_fresh_empties_the_results(tmp_path, monkeypatch):
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'decktet-arena[ray]'")
    from arena.tournament.ray_executor import check_address

    path = write_tournament(tmp_path, "tok", deals=1, games=("tightwad",))
    run_file(path)
    results = tmp_path / "results-tok"
    before = stored(results)
    assert before
    _driver(monkeypatch, tmp_path / "home", mode="token", token=None)
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)  # the probe's client aborts before it would send anything
        address = f"127.0.0.1:{srv.getsockname()[1]}"
        with pytest.raises(ArenaError, match="^RAY_AUTH_MODE=token is set on this machine but Ray finds no token"):
            check_address(address)
        with pytest.raises(ArenaError, match="finds no token"):
            run_file(path, fresh=True, executor="ray", ray_address=address)
    assert stored(results) == before


@pytest.mark.slow
def test_a_head_with_token_auth_is_joined_only_with_the_mode_and_its_token(tmp_path, monkeypatch):
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'decktet-arena[ray]'")
    from arena.tournament.ray_executor import check_address

    folder = Path(tempfile.mkdtemp(prefix="arena-ra-", dir="/tmp"))  # short: Ray's socket paths
    token = uuid.uuid4().hex
    (folder / "home" / ".ray").mkdir(parents=True)
    (folder / "home" / ".ray" / "auth_token").write_text(token)
    env = {
        **os.environ,
        "HOME": str(folder / "home"),
        "RAY_TMPDIR": str(folder),
        "RAY_AUTH_MODE": "token",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # every address on 127.0.0.1
    }
    for var in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS"):
        env.pop(var, None)
    with running_cluster(0, env, folder) as info:  # a head alone
        address = info["address"]
        home = tmp_path / "driver"
        _driver(monkeypatch, home, mode=None, token=None)
        with pytest.raises(ArenaError, match="requires its token.*; set RAY_AUTH_MODE=token on this machine"):
            check_address(address)
        _driver(monkeypatch, home, mode=None, token=token)  # the token alone: Ray sends none
        with pytest.raises(ArenaError, match="requires its token.*; set RAY_AUTH_MODE=token on this machine"):
            check_address(address)
        _driver(monkeypatch, home, mode="token", token=None)
        with pytest.raises(ArenaError, match="finds no token"):
            check_address(address)
        _driver(monkeypatch, home, mode="token", token=uuid.uuid4().hex)
        with pytest.raises(ArenaError, match="this machine's token is not the head's"):
            check_address(address)
        _driver(monkeypatch, home, mode="token", token=token)
        assert check_address(address) == (address, "--ray-address")


def test_processes_an_interrupted_ray_init_started_are_stopped(monkeypatch):
    """A SIGTERM while ray.init started a local instance (Ray's handler raises SystemExit inside
    it, before Ray knows its node): the run stopped, and Ray's dashboard and runtime-env agents ran
    on for a minute. Here ray.init starts a child with a grandchild of its own, as the raylet
    starts its agents, and is interrupted."""
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'decktet-arena[ray]'")
    from arena.tournament import ray_executor

    started: dict[int, int] = {}

    def half_started_init(**_: object) -> None:
        child = subprocess.Popen(["sh", "-c", "sleep 600 & sleep 600"], start_new_session=True)
        deadline = time.monotonic() + 10
        while len(own.descendants(child.pid)) < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        started.update({child.pid: own.stat(child.pid)[3], **own.descendants(child.pid)})
        raise SystemExit(signal.SIGTERM)

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(ray, "init", half_started_init)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    with pytest.raises(KeyboardInterrupt):
        ray_executor.connect(None)
    assert len(started) >= 2
    assert own.still_running(started) == []


def test_ray_s_own_warnings_go_to_run_log_not_to_the_console(tmp_path, monkeypatch, capfd):
    """ray.init's warning that it turned token auth on came out on stderr amid the arena's lines
    on every `--executor ray` run without `--ray-address` (Ray's own handler printed it), where
    docs/cluster.md says Ray's own notices go to run.log and the console gets the arena's lines."""
    import io
    import logging

    pytest.importorskip("ray", reason="Ray is not installed: pip install 'decktet-arena[ray]'")
    from ray._private import worker as ray_worker

    from arena.tournament.ray_executor import _notices_to_run_log
    from arena.tournament.runner import close_run_logging, flush_log_queues, setup_logging

    ray_logger = logging.getLogger("ray")
    monkeypatch.setattr(ray_logger, "handlers", list(ray_logger.handlers))  # put back after
    monkeypatch.setattr(ray_logger, "propagate", ray_logger.propagate)
    monkeypatch.setattr(ray_worker, "print_to_stdstream", ray_worker.print_to_stdstream)
    console = io.StringIO()
    (tmp_path / "res").mkdir()
    setup_logging(tmp_path / "res", console)
    try:
        _notices_to_run_log()
        logging.getLogger("ray._private.authentication.authentication_token_setup").warning(
            "Token authentication is enabled for this Ray cluster."
        )
        logging.getLogger("arena.ray").warning("ray: no worker ready after 60 s")
        flush_log_queues()
    finally:
        close_run_logging()
    out, err = capfd.readouterr()
    assert "Token authentication" not in console.getvalue() + out + err
    assert "no worker ready after 60 s" in console.getvalue()
    assert "Token authentication is enabled" in (tmp_path / "res" / "run.log").read_text()
