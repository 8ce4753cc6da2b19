"""Decisions per second of pure-Python random play, in process, on one core.

    python benchmarks/bench_games.py [--seconds 3]      (same as: arena bench games)

Targets: 100,000/s for Tightwad and Divers Weights and 30,000/s for Palace
without observations; 30,000/s for every game with the full observation built
at every decision.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tabulate import tabulate  # noqa: E402

from arena.bench.measures import bench_games  # noqa: E402

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="engine decisions per second")
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    print(tabulate(bench_games(args.seconds), headers="keys", intfmt=","))
