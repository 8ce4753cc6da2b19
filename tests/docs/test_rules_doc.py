"""docs/rules.md: the rules a bot author reads, in the repository. It copies RULINGS.md, which
lives beside the repository (../shared/RULINGS.md in the project's workspace): every ruling is
there, says what RULINGS.md says where that file is present, and every ruling the docs and the
engines cite exists in it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.games.test_rulings_coverage import RULING_IDS, RULINGS

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "rules.md"
COMMON_IDS = [f"C{i}" for i in range(1, 7)]
_RULING = re.compile(r"^- ((?:R-[A-Z]+|C)\d+)\. (.*?)(?=^- |^#|\Z)", re.MULTILINE | re.DOTALL)
_CITED = re.compile(r"\bR-[A-Z]\d+\b")


def rulings(text: str) -> dict[str, str]:
    """Each ruling's id and its text, whitespace folded (line breaks may differ)."""
    return {m.group(1): " ".join(m.group(2).split()) for m in _RULING.finditer(text)}


def test_rules_md_holds_every_ruling() -> None:
    assert RULES.is_file(), "docs/rules.md is missing: bot authors have no rules in the repository"
    assert sorted(rulings(RULES.read_text(encoding="utf-8"))) == sorted(RULING_IDS + COMMON_IDS)


def test_rules_md_says_what_rulings_md_says_when_present() -> None:
    if not RULINGS.is_file():
        pytest.skip(f"{RULINGS} is not beside this checkout")
    ours = rulings(RULES.read_text(encoding="utf-8"))
    theirs = rulings(RULINGS.read_text(encoding="utf-8"))
    differ = sorted(k for k in theirs.keys() | ours.keys() if ours.get(k) != theirs.get(k))
    assert not differ, f"docs/rules.md differs from {RULINGS} in {differ}: copy the rulings again"


def test_rulings_the_docs_and_engines_cite_exist() -> None:
    known = set(rulings(RULES.read_text(encoding="utf-8")))
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "games").glob("*.py"))]
    unknown = [
        f"{p.relative_to(ROOT)}: {r}" for p in pages for r in _CITED.findall(p.read_text("utf-8")) if r not in known
    ]
    assert not unknown, "rulings cited that docs/rules.md does not hold: " + "; ".join(unknown)


def test_protocol_md_points_each_game_at_its_rules() -> None:
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    assert "RULINGS.md" not in text, "protocol.md names RULINGS.md, which is not in the repository"
    for anchor in ("tightwad-tightwad", "divers-weights-divers-weights", "palace-palace"):
        assert f"(rules.md#{anchor})" in text
