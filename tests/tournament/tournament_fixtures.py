"""Fixtures for tournament tests: a folder laid out like a project (bots/ with a few bots, a
helper and an executable), and a slow bot a test can gate."""

from __future__ import annotations

import os
from pathlib import Path

from tests import support

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
