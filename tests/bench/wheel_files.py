"""The files a wheel of this checkout holds, read from pyproject.toml's setuptools rules (the
packages found by [tool.setuptools.packages.find], their modules, and [tool.setuptools.package-data]),
without building one: the tests copy them to stand in for an installed wheel."""

from __future__ import annotations

import fnmatch
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _pyproject() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import pytest

        pytest.skip("reading pyproject.toml needs tomllib (Python 3.11+)")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def source_files() -> list[Path]:
    """Every file under the top-level packages' folders but caches (paths relative to ROOT)."""
    include = _pyproject()["packages"]["find"]["include"]
    tops = sorted({pattern.rstrip("*") for pattern in include})
    return sorted(
        p.relative_to(ROOT)
        for top in tops
        for p in (ROOT / top).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def packages() -> list[str]:
    """Dotted names of the packages setuptools finds: folders with __init__.py all the way up."""
    include = _pyproject()["packages"]["find"]["include"]
    found = []
    for init in sorted(ROOT.rglob("__init__.py")):
        parts = init.parent.relative_to(ROOT).parts
        name = ".".join(parts)
        if not parts or not any(fnmatch.fnmatchcase(name, p) for p in include):
            continue
        if all((ROOT.joinpath(*parts[:i]) / "__init__.py").is_file() for i in range(1, len(parts) + 1)):
            found.append(name)
    return found


def wheel_files() -> list[Path]:
    """The source files a wheel holds: each package's modules and the package data (relative to ROOT)."""
    data = _pyproject().get("package-data", {})
    pkgs = set(packages())
    chosen = []
    for path in source_files():
        if path.suffix == ".py" and ".".join(path.parent.parts) in pkgs:
            chosen.append(path)
            continue
        for pkg, globs in data.items():
            base = Path(*pkg.split("."))
            if pkg in pkgs and base in path.parents:
                inside = path.relative_to(base).as_posix()
                if any(fnmatch.fnmatchcase(inside, g) for g in globs):
                    chosen.append(path)
                    break
    return chosen


def install_copy(target: Path) -> Path:
    """Copy what a wheel holds into ``target`` (a stand-in for site-packages); returns it."""
    for path in wheel_files():
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / path, target / path)
    return target
