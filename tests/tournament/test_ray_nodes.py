"""`arena run --executor ray` on a cluster of several Ray nodes on this host, losing them.

The cluster (tests/tournament/ray_cluster.py) is this module's own: a head without CPUs and two
worker nodes of one CPU each, every one with its own raylet and ports, on 127.0.0.1, with
everything Ray writes under the module's own folder (RAY_TMPDIR). A node is lost the way a
machine is: its raylet and every process below it are killed with SIGKILL, by recorded pid.

Each node has its own bot cache (its ``ARENA_BOT_ENVS``), the driver another: a bot folder
with a requirement reaches the nodes by content only, and each node installs the requirement
itself, with pip offline (a wheel of test_bot_folders' tiny package).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import pytest

from arena.match import botfolder
from tests import own_processes as own
from tests.support.bot_folders import tiny_folder, tiny_wheel
from tests.tournament.ray_cluster import running_cluster
from tests.tournament.tournament_fixtures import stored_matches

from .test_runner import ROOT, SLOW, _wait_for_matches, run_file, share_secret, write_tournament

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'decktet-arena[ray]'")
    # short: Ray's socket paths under it must fit in 107 bytes
    folder = Path(tempfile.mkdtemp(prefix="arena-rn-", dir="/tmp"))
    wheels = folder / "wheels"
    wheels.mkdir()
    tiny_wheel(wheels, "1.0")
    pip = {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}  # offline
    env = {
        **os.environ,
        **pip,
        "RAY_TMPDIR": str(folder),
        "ARENA_BOT_ENVS": str(folder / "driver"),  # each node has its own (tests/tournament/ray_cluster.py)
        # keep every address on 127.0.0.1 (Ray otherwise swaps loopback for the host's address)
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    }
    with running_cluster(2, env, folder) as info:
        info["env"] = env
        info["pip"] = pip
        yield info


def _lose_node(node: dict) -> None:
    """What a machine's loss does to its Ray node: the raylet and everything below it die at once.
    The tree is frozen first, until no new process appears: killed one by one from a snapshot, a
    worker could start a sandbox in between, which, orphaned before it armed its death signal,
    outlived the node (a CI run found one running 10 s after)."""
    frozen: set[int] = set()
    while new := {node["raylet"], *own.descendants(node["raylet"])} - frozen:
        for pid in new:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        frozen |= new
    for pid in frozen:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _run_on(cluster: dict, path: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(path), "--executor", "ray", "--ray-address", cluster["address"]],
        cwd=ROOT,
        env=cluster["env"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _wait_for_nodes(results: Path, k: int, proc: subprocess.Popen, limit_s: float) -> set[str]:
    """The ids of the nodes that played the stored matches, once there are ``k`` of them."""
    end = time.monotonic() + limit_s
    while True:
        nodes = {r["node"]["id"] for r in _records(results)}
        if len(nodes) >= k:
            return nodes
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, f"the run played on {len(nodes)} nodes only"
        time.sleep(0.1)


def _records(results: Path) -> list[dict]:
    if not (results / "results.sqlite").exists():
        return []
    con = sqlite3.connect(results / "results.sqlite", timeout=10)
    return [json.loads(zlib.decompress(blob)) for (blob,) in con.execute("SELECT record FROM matches")]


def test_a_tournament_across_nodes_survives_the_loss_of_a_node(tmp_path, cluster, monkeypatch):
    for var, value in cluster["pip"].items():  # the local-pool run installs the folder's requirement too
        monkeypatch.setenv(var, value)
    monkeypatch.setenv("ARENA_BOT_ENVS", cluster["env"]["ARENA_BOT_ENVS"])
    folder = tiny_folder(tmp_path / "mine")  # a bot folder with a pinned requirement
    bots = [ROOT / "bots/random_bot.py", folder, SLOW]
    ref = run_file(write_tournament(tmp_path, "ref", bots=bots, workers=2))  # the local pool
    path = write_tournament(tmp_path, "nodes", bots=bots, workers=3)
    results = tmp_path / "results-nodes"
    share_secret(ref.results, results)
    proc = _run_on(cluster, path)
    _wait_for_matches(results, 4, proc, limit_s=600)
    played_on = _wait_for_nodes(results, 2, proc, limit_s=600)  # both nodes have played
    # shipped: from now on no copy of the folder exists on the driver's side
    shutil.rmtree(folder)
    shutil.rmtree(results / "bots")
    shutil.rmtree(cluster["env"]["ARENA_BOT_ENVS"])
    lost = next(n for n in cluster["nodes"] if n["id"] in played_on)
    _lose_node(lost)
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    records = _records(results)
    assert len(records) == len({r["match_id"] for r in records}) == ref.scheduled  # every match once
    nodes = {r["node"]["id"] for r in records}
    assert len(nodes) >= 2 and nodes <= {n["id"] for n in cluster["nodes"]}  # played across the nodes
    assert (results / "leaderboard.csv").read_bytes() == (ref.results / "leaderboard.csv").read_bytes()
    assert (results / "leaderboard.json").read_bytes() == (ref.results / "leaderboard.json").read_bytes()
    log = (results / "run.log").read_text()
    assert " died: " in log and f"node {lost['id'][:8]}" in log  # the loss was noticed, and where
    # the folder played under the driver's identity, from each node's own copy and environment
    sha = {b["sha256"] for r in records for b in r["bots"] if b["name"] == "tinybot"}
    assert sha == {b["sha256"] for r in _records(ref.results) for b in r["bots"] if b["name"] == "tinybot"}
    env = botfolder.env_key(["tinypkg==1.0"])
    for node in cluster["nodes"]:
        if node["id"] in nodes:
            cache = Path(node["cache"])
            assert (cache / "shipped" / sha.copy().pop() / "tinybot" / "main.py").is_file()
            assert (cache / "envs" / env / "resolved.txt").is_file()


def test_a_run_that_loses_every_node_stops_in_one_line_and_exits_non_zero(tmp_path, cluster):
    bots = [ROOT / "bots/random_bot.py", ROOT / "bots/tightwad_heuristic.py", SLOW]
    path = write_tournament(tmp_path, "gone", bots=bots, workers=2)
    results = tmp_path / "results-gone"
    env = {**cluster["env"], "ARENA_RAY_REPLACE_WAIT_S": "5"}  # no node can come back
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(path), "--executor", "ray", "--ray-address", cluster["address"]],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    _wait_for_matches(results, 2, proc, limit_s=600)
    for node in cluster["nodes"]:
        _lose_node(node)
    out, err = proc.communicate(timeout=900)
    assert proc.returncode != 0
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if "every Ray worker was lost" in ln]
    assert len(lines) == 1 and "run the same command again to resume" in lines[0], err
    kept = stored_matches(results)
    assert kept >= 2  # what finished is stored
    con = sqlite3.connect(results / "results.sqlite")
    assert con.execute("SELECT count(DISTINCT match_id) FROM matches").fetchone()[0] == kept
