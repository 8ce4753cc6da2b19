"""One version source: arena.__version__ feeds the package metadata, `arena --version`
and the harness_version every hello and match record carries."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

import arena
from arena.cli import cli
from arena.match.agents import ARENA_VERSION

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_is_written_once():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project = pyproject.split("[project]", 1)[1].split("\n[", 1)[0]
    assert not re.search(r"^version\s*=", project, re.M), "pyproject.toml must take the version from arena.__version__"
    assert 'version = { attr = "arena.__version__" }' in pyproject
    assert ARENA_VERSION == arena.__version__
    out = CliRunner().invoke(cli, ["--version"]).output
    assert out.strip() == f"arena, version {arena.__version__}"
