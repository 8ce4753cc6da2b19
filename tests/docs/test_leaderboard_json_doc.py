"""docs/leaderboard-json.md's tables name exactly the keys leaderboard.json has, in its order:
the page is the schema a program reads the file by, so a key added, renamed or moved in
``RatingReport.to_json`` without the page (or the other way round) fails here."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from arena.report.leaderboard import render_json
from arena.report.ratings import compute_ratings
from tests.support.record_factory import make_record

DOC = Path(__file__).resolve().parents[2] / "docs" / "leaderboard-json.md"
ROW = re.compile(r"^\| ((?:`[^`]+`(?:, )?)+) \|", re.MULTILINE)
CONDITIONAL = {"adaptive"}  # only in tournaments with an adaptive entry (the page says so)


def _tables() -> dict[str, list[str]]:
    """Each section's documented keys, in the order of its table (``mu``, ``sigma`` is two)."""
    keys: dict[str, list[str]] = {}
    for section in re.split(r"^#+ ", DOC.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]:
        title, _, body = section.partition("\n")
        found = [k for m in ROW.finditer(body) for k in re.findall(r"`([^`]+)`", m.group(1))]
        if found:
            keys[title.strip()] = [k for k in found if "." not in k]  # rating.params: a sub-key
    return keys


def _leaderboard() -> dict:
    records = [
        make_record(i, ["alpha", "bravo", "charlie"][i % 3 :] + ["alpha", "bravo", "charlie"][: i % 3], [0, 1, 2])
        for i in range(12)
    ]
    records.append(
        make_record(12, ["alpha", "bravo", "charlie"], [2, 0, 1], faults=[{"kind": "crash", "detail": "x"}, None, None])
    )
    report = compute_ratings(records)
    report = dataclasses.replace(report, adaptive=({"key": "tightwad"},))  # the conditional key is there too
    return json.loads(render_json(report))


def test_the_pages_tables_are_the_keys_of_leaderboard_json_in_order() -> None:
    doc, data = _tables(), _leaderboard()
    scope = data["scopes"][0]
    assert scope["head_to_head"] and data["notable"]
    for section, obj in (
        ("Top level", data),
        ("A scope", scope),
        ("A standing", scope["standings"][0]),
        ("A head-to-head entry", scope["head_to_head"][0]),
        ("A notable match", data["notable"][0]),
    ):
        assert list(obj) == doc[section], section
    assert CONDITIONAL <= set(doc["Top level"])
    bare = dataclasses.replace(compute_ratings([make_record(0, ["alpha", "bravo"], [0, 1])]), adaptive=())
    assert list(json.loads(render_json(bare))) == [k for k in doc["Top level"] if k not in CONDITIONAL]
