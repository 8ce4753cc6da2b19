"""Thin script; the code is arena/bench/bot_strength.py (package code, so `arena bench` works from an installed
wheel). `python benchmarks/bot_strength.py --help` is `python -m arena.bench.bot_strength --help`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.bench.bot_strength import *  # noqa: E402,F401,F403  (other scripts here import it by its short name)
from arena.bench.bot_strength import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
