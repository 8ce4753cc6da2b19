"""Without the openspiel extra, ``import arena.openspiel`` says in one line what to install
(runs whether or not the extra is installed: the missing package is blocked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("missing", ["pyspiel", "numpy"])
def test_a_missing_extra_is_one_line_naming_the_install(missing):
    code = f"import sys; sys.modules[{missing!r}] = None; import arena.openspiel"
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 1
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: ") and "pip install -e '.[openspiel]'" in last and missing in last
    assert "During handling" not in res.stderr  # one error, not the import error and then ours
