"""A Ray cluster of several nodes on this host, for the node tests (`python -m tests.tournament.ray_cluster N`).

A head with no CPU (so every match runs on a worker node) and N worker nodes of one CPU
each, every one its own raylet with its own ports, all on 127.0.0.1. Everything Ray writes
stays under ``RAY_TMPDIR``, which the test sets to its own folder, so no other process's
``ray.init()`` can find this cluster. Each worker node has its own bot cache,
``$RAY_TMPDIR/node-<i>`` (its ``ARENA_BOT_ENVS``), as separate machines would. It prints one
JSON line (the address, and per worker node its id, raylet pid and cache), then holds the
cluster until its standard input closes.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

START_LIMIT_S = 300  # a busy 2-core machine takes tens of seconds to start a head, 30 s for four raylets


def main() -> None:
    if not os.environ.get("RAY_TMPDIR"):
        sys.exit("ray_cluster: set RAY_TMPDIR to the test's own folder")
    from ray.cluster_utils import Cluster

    n = int(sys.argv[1])
    common = {"node_ip_address": "127.0.0.1", "include_dashboard": False}
    cluster = Cluster(initialize_head=True, connect=False, head_node_args={"num_cpus": 0, **common})
    caches = [os.path.join(os.environ["RAY_TMPDIR"], f"node-{i}") for i in range(n)]
    nodes = [cluster.add_node(num_cpus=1, env_vars={"ARENA_BOT_ENVS": cache}, **common) for cache in caches]
    cluster.wait_for_nodes()
    print(
        json.dumps(
            {
                "address": cluster.address,
                "nodes": [
                    {"id": node.node_id, "raylet": node.all_processes["raylet"][0].process.pid, "cache": cache}
                    for node, cache in zip(nodes, caches)
                ],
            }
        ),
        flush=True,
    )
    try:
        sys.stdin.read()  # the test closes it when done (or dies)
    finally:
        cluster.shutdown()


@contextmanager
def running_cluster(nodes: int, env: dict[str, str], folder: Path) -> Iterator[dict]:
    """This script's cluster of ``nodes`` worker nodes (0: a head alone) started in a session of
    its own with ``env``; yields its JSON line. On the way out the cluster is shut down, anything
    of its session left is killed, and ``folder`` (its RAY_TMPDIR) is removed."""
    import pytest

    from tests import own_processes as own

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.tournament.ray_cluster", str(nodes)],
        cwd=root,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        ready, _, _ = select.select([proc.stdout], [], [], START_LIMIT_S)
        line = proc.stdout.readline() if ready else ""
        if not line:
            pytest.fail(f"the test cluster did not start (exit {proc.poll()})")
        yield json.loads(line)
    finally:
        proc.stdin.close()  # the cluster script shuts Ray down
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
        for pid in own.in_session(proc.pid):  # anything of this cluster left behind
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
