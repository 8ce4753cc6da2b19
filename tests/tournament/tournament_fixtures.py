"""Fixtures for tournament tests: a folder laid out like a project (bots/ with a few bots, a
helper and an executable), a slow bot a test can gate, and an `arena` the test can interrupt
while it watches the matches being stored."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests import own_processes as own
from tests import support

ROOT = Path(__file__).resolve().parents[2]

SLOW = support.BOTS / "slow_random.py"
PY_BOTS = ("random_bot", "greedy_bot", "cautious_bot", "lucky_bot")


def make_project(root: Path) -> Path:
    """Create bots/ under ``root``: four .py bots, ``_botlib.py`` and executable ``rusty``."""
    bots = root / "bots"
    bots.mkdir(parents=True, exist_ok=True)
    for name in PY_BOTS:
        (bots / f"{name}.py").write_text(f"# {name}\nprint('ready')\n")
    (bots / "_botlib.py").write_text("# helper, not a bot\n")
    rusty = bots / "rusty"
    rusty.write_text("#!/bin/sh\necho ready\n")
    os.chmod(rusty, 0o755)
    (root / "tournaments").mkdir(exist_ok=True)
    return root


def write_gated_bot(path: Path, gate: Path, tag: str = "", think: float = 0.3) -> Path:
    """A slow random bot at ``path`` that thinks ``think`` seconds a decision while ``gate``
    exists: once a test opens the gate, the run is surely still playing when the test acts on
    it, however busy the machine (the bot needs sandbox none to see the gate). ``tag`` makes its
    bytes its own."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        SLOW.read_text()
        .replace("time.sleep(0.004)", f"time.sleep({think} if os.path.exists({str(gate)!r}) else 0.004)")
        .replace("import time", "import os\nimport time")
        + (f"\n# {tag}\n" if tag else "")
    )
    assert str(gate) in path.read_text()
    return path


def start_arena(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``python -m arena ARGS`` from the checkout, in a session of its own and with SIGINT as a
    terminal leaves it, for a test that will interrupt it (``os.killpg``)."""
    return subprocess.Popen(
        [sys.executable, "-m", "arena", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=own.as_from_a_terminal,
    )


def stored_matches(results: Path) -> int:
    """How many matches the store of ``results`` holds now (0 before it exists or while it is busy)."""
    db = results / "results.sqlite"
    if not db.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(db, timeout=5)) as con:
            return int(con.execute("SELECT count(*) FROM matches").fetchone()[0])
    except sqlite3.Error:
        return 0
