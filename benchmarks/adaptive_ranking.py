"""Thin script; the code is arena/bench/adaptive_ranking.py (package code, so `arena bench` works from an installed
wheel). `python benchmarks/adaptive_ranking.py --help` is `python -m arena.bench.adaptive_ranking --help`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.bench.adaptive_ranking import *  # noqa: E402,F401,F403  (other scripts here import it by its short name)
from arena.bench.adaptive_ranking import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
