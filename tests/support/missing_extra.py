"""Importing an arena module with one of its optional packages blocked (``sys.modules[name] = None``),
in a fresh interpreter: it runs whether or not the extra is installed (without it, the message
may name another of the extra's packages, the first the import meets)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def assert_one_line_naming_the_install(module: str, missing: str, extra: str) -> None:
    code = f"import sys; sys.modules[{missing!r}] = None; import {module}"
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 1, res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: ") and f"pip install -e '.[{extra}]'" in last, last
    # the package blocked, or one of the extra that is not installed here (met first: `.[test]` alone)
    named = re.search(r"No module named '([^']+)'|import of (\S+) halted", last)
    assert named is not None, last
    name = named.group(1) or named.group(2)
    assert name == missing or importlib.util.find_spec(name.split(".")[0]) is None, last
    assert "During handling" not in res.stderr  # one error, not the import error and then ours
