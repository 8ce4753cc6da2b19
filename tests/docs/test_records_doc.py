"""docs/records.md's tables name every field of a real match record, and only those: the
record's keys, each decision's, and the keys of its objects (time_control lacked `ponder`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.support.cli import invoke

ROOT = Path(__file__).resolve().parents[2]
_ROW = re.compile(r"^\| `(\w+)` \| ([^|]+) \| (.*) \|$", re.MULTILINE)


def _tables() -> list[dict[str, tuple[str, str]]]:
    """Each table of records.md's record section: field -> (type, meaning)."""
    text = (ROOT / "docs" / "records.md").read_text(encoding="utf-8")
    section = text.split("## The record, schema 1", 1)[1].split("\n## ", 1)[0]
    return [
        {m.group(1): (m.group(2).strip(), m.group(3)) for m in _ROW.finditer(block)}
        for block in re.split(r"\n\s*\n", section)
        if _ROW.search(block)
    ]


def _record() -> dict[str, Any]:
    # the arena's own players: no bot process, no file of bots/
    res = invoke("play", "tightwad", "builtin:random", "builtin:random", "builtin:random", "--seed", "3", "--json")
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)


def test_records_md_names_every_field_of_a_record_and_no_other() -> None:
    record, (fields, decision) = _record(), _tables()
    optional = {"node"}  # written only by the Ray executor (docs/cluster.md)
    assert set(fields) - optional == set(record), "records.md's record table against a real record"
    assert set(decision) == set(record["decisions"][0]), "records.md's decision table against a real record"
    for name in ("bots", "sandbox", "time_control", "result", "seats", "game_result"):
        value = record[name][0] if isinstance(record[name], list) else record[name]
        named = set(re.findall(r"`(\w+)`", fields[name][1]))
        assert set(value) <= named, f"records.md's `{name}` row lacks {sorted(set(value) - named)}"
