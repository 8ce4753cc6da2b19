"""Records stored before the redesign (issue 28) still read, replay and store as they were.

tests/support/records_before_redesign.jsonl.gz: `arena export` of a small tournament (the sample
bots, one deal of Tightwad 3p, Divers Weights 2p and Palace 4p: 28 matches) played and stored by
commit 1bd9efc, before the typed record vocabulary and the one supervisor.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.records.record import MatchRecord
from arena.report.replay import verify_record
from arena.tournament.store import ResultRow
from tests.support import SUPPORT

OLD = SUPPORT / "records_before_redesign.jsonl.gz"


def _records() -> list[dict]:
    with gzip.open(OLD, "rt") as f:
        return [json.loads(line) for line in f]


RECORDS = _records()


def test_the_fixture_holds_every_game() -> None:
    assert len(RECORDS) == 28
    assert {r["game"] for r in RECORDS} == {"tightwad", "divers-weights", "palace"}


@pytest.mark.parametrize("record", RECORDS, ids=[r["match_id"] for r in RECORDS])
def test_an_old_record_reads_key_for_key_and_replays_to_its_result(record: dict) -> None:
    assert MatchRecord.from_json(record).to_json() == record
    state = verify_record(record)
    assert state.is_over()
    result = state.result()
    assert list(result.places) == record["result"]["places"]
    assert [float(s) for s in result.scores] == record["result"]["scores"]
    row = ResultRow.from_record(record)
    assert (row.match_id, list(row.places)) == (record["match_id"], record["result"]["places"])


def test_arena_replay_plays_an_old_export(tmp_path: Path) -> None:
    plain = tmp_path / "old.jsonl"
    plain.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    for match_id in (RECORDS[0]["match_id"], RECORDS[-1]["match_id"]):
        res = CliRunner().invoke(cli, ["replay", str(plain), match_id])
        assert res.exit_code == 0, res.output
