"""Thin script; the code is arena/bench/make_store.py (package code, so `arena bench` works from an installed
wheel). `python benchmarks/make_store.py --help` is `python -m arena.bench.make_store --help`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.bench.make_store import *  # noqa: E402,F401,F403  (other scripts here import it by its short name)
from arena.bench.make_store import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
