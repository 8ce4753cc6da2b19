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
import sys


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


if __name__ == "__main__":
    main()
