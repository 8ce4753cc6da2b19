"""The engines are pure: standard library only, and no I/O modules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

FORBIDDEN = [
    "subprocess",
    "socket",
    "asyncio",
    "threading",
    "multiprocessing",
    "random",
    "pydantic",
    "click",
    "yaml",
    "trueskill",
    "tabulate",
    "arena",
    "logging",
]


def test_games_import_only_the_standard_library_in_a_fresh_interpreter():
    code = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        "import games, games.core, games.decktet, games.rng, games.simulate\n"
        "import games.tightwad, games.divers_weights, games.palace, games.determinize\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    out = subprocess.run([sys.executable, "-E", "-s", "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    stdlib = sys.stdlib_module_names
    for name in loaded:
        top = name.split(".")[0]
        assert top == "games" or top in stdlib or top.startswith("_"), f"games imported {name}"
        assert top not in FORBIDDEN, f"games imported {name}"


def test_engine_sources_never_use_the_random_module_or_io():
    for path in (ROOT / "games").glob("*.py"):
        text = path.read_text()
        assert "import random" not in text, path
        assert "open(" not in text and "print(" not in text, path
