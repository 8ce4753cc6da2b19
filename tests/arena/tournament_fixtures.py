"""A folder laid out like a project: bots/ with a few bots, a helper and an executable."""

from __future__ import annotations

import os
from pathlib import Path

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
