"""The defaults the docs' tables quote are the code's: every table with a `default` column whose
row names a field of the time control, the limits, the tournament file or the ladder file
(protocol.md, sandbox.md, tournament.md, ladder.md), where the cell is a value, not prose."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from pydantic_core import PydanticUndefined

from arena.records.controls import Limits, TimeControl
from arena.tournament import config

ROOT = Path(__file__).resolve().parents[2]
_WORDS = {"null": None, "none": None, "false": False, "true": True}


def _code_defaults() -> dict[str, list[Any]]:
    from arena.serve.ladder import LadderSettings

    found: dict[str, list[Any]] = {}
    for model in (config.Tournament, config.GameEntry, config.Adaptive, LadderSettings):
        for name, info in model.model_fields.items():
            if info.default is not PydanticUndefined:
                found.setdefault(name, []).append(info.default)
    for cls in (TimeControl, Limits):
        for f in dataclasses.fields(cls):
            found.setdefault(f.name, []).append(f.default)
    return found


def _value(cell: str) -> tuple[bool, Any]:
    """(True, value) for a cell that is a value: a number, null/none, true/false, a `word`."""
    text = cell.strip().replace(",", "")
    if re.fullmatch(r"-?\d+(\.\d+)?", text):
        return True, float(text)
    if text.strip("`").lower() in _WORDS:
        return True, _WORDS[text.strip("`").lower()]
    if re.fullmatch(r"`[\w-]+`", text):
        return True, text.strip("`")
    return False, None


def _same(doc: Any, code: Any) -> bool:
    if isinstance(doc, float) and isinstance(code, int | float) and not isinstance(code, bool):
        return doc == float(code)
    return type(doc) is type(code) and doc == code


def _rows() -> list[tuple[str, int, str, str]]:
    """(page, line, field, default cell) of every table row under a header with `default`."""
    rows = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        col = None
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else None
            if cells is None:
                col = None
            elif col is None:
                col = cells.index("default") if "default" in cells else None
            elif (m := re.fullmatch(r"`(\w+)`", cells[0])) and col < len(cells):
                rows.append((page.name, n, m.group(1), cells[col]))
    return rows


def test_the_defaults_the_docs_tables_give_are_the_codes() -> None:
    defaults, checked, wrong = _code_defaults(), 0, []
    for page, line, name, cell in _rows():
        is_value, doc = _value(cell)
        if name not in defaults or not is_value:
            continue
        checked += 1
        if not any(_same(doc, code) for code in defaults[name]):
            wrong.append(f"{page}:{line}: {name} default {cell}, the code's {defaults[name]}")
    assert not wrong, "; ".join(wrong)
    assert checked >= 50  # the tables of protocol.md, sandbox.md, tournament.md and ladder.md
