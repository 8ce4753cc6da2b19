"""docs/openspiel.md works as written: its Python example runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "openspiel.md").read_text(encoding="utf-8")

pytest.importorskip("pyspiel", reason="open_spiel not installed: pip install -e '.[openspiel]'")


def test_the_example_runs():
    block = re.search(r"```python\n(.*?)```", DOC, re.S).group(1)
    exec(compile(block, "docs/openspiel.md", "exec"), {})
