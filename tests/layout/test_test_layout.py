"""Tests mirror the packages: each package of arena/ has its tests in tests/<package>/
(CONTRIBUTING.md, "Where tests live"), and no flat folder of everything comes back."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def _packages() -> list[str]:
    """arena's subpackages that hold code: a folder with __init__.py and Python files."""
    return sorted(d.name for d in (ROOT / "arena").iterdir() if (d / "__init__.py").is_file() and any(d.rglob("*.py")))


def test_every_package_of_arena_has_its_test_folder() -> None:
    packages = _packages()
    assert {"tournament", "match", "report", "records", "cli"} <= set(packages)  # the scan sees them
    missing = [p for p in packages if not any((TESTS / p).glob("test_*.py"))]
    assert not missing, f"no tests/<package>/test_*.py for arena/{missing}: put a package's tests in tests/<package>/"


def test_no_flat_tests_arena_folder() -> None:
    assert not (TESTS / "arena").exists(), "tests/arena/ is gone: tests go to tests/<package>/ (CONTRIBUTING.md)"


def test_every_test_folder_is_a_package() -> None:
    # Two folders hold files of one name (tests/cli/test_cli.py, tests/serve/test_cli.py): without an
    # __init__.py each, pytest would import both as the same module.
    folders = {p.parent for p in TESTS.rglob("test_*.py") if "bots" not in p.relative_to(TESTS).parts}
    bare = sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").is_file())
    assert not bare, f"{bare} need an __init__.py"
