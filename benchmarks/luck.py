"""Thin script; the code is arena/bench/luck.py (package code, so `arena bench` works from an installed
wheel). `python benchmarks/luck.py --help` is `python -m arena.bench.luck --help`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.bench.luck import *  # noqa: E402,F401,F403  (other scripts here import it by its short name)
from arena.bench.luck import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
