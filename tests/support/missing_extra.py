"""Importing an arena module with one of its optional packages blocked (``sys.modules[name] = None``),
in a fresh interpreter: it runs whether or not the extra is installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def assert_one_line_naming_the_install(module: str, missing: str, extra: str) -> None:
    code = f"import sys; sys.modules[{missing!r}] = None; import {module}"
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 1, res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: ") and f"pip install -e '.[{extra}]'" in last and missing in last
    assert "During handling" not in res.stderr  # one error, not the import error and then ours
