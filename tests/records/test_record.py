"""The typed match record: one shape check, a lossless round trip, the status enum."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.match.agents import RandomAgent
from arena.match.referee import play_match
from arena.records import Decision, DecisionStatus, MatchRecord, MatchSpec, RecordError
from arena.report.replay import verify_record
from arena.tournament.store import RecordError as StoreRecordError
from arena.tournament.store import ResultRow
from games import REGISTRY
from tests.support.record_factory import make_record


def _played(game: str = "palace", players: int = 3, seed: int = 4) -> dict:
    spec = MatchSpec(
        match_id=f"r/{game}/{seed}",
        index=7,
        game=game,
        players=players,
        options=REGISTRY[game].resolve_options(players, {}),
        deal=1,
        rotation=2,
        group=3,
        deal_seed=seed,
        match_seed=seed + 1,
    )
    return play_match(spec, [RandomAgent(seed=s, name=f"b{s}") for s in range(players)])


@pytest.mark.parametrize("game,players", [("tightwad", 4), ("divers-weights", 2), ("palace", 3)])
def test_a_played_record_round_trips_key_for_key(game: str, players: int) -> None:
    record = _played(game, players)
    rec = MatchRecord.from_json(record)
    assert rec.to_json() == record
    assert json.dumps(rec.to_json()) == json.dumps(record)  # same keys in the same order: same stored bytes
    assert rec.index == 7 and (rec.deal, rec.rotation, rec.group) == (1, 2, 3)
    assert all(isinstance(d, Decision) and d.status is DecisionStatus.OK for d in rec.decisions)
    verify_record(record)


def test_unknown_keys_are_kept_after_the_known_ones() -> None:
    record = _played()
    record["comment"] = {"by": "a later arena"}
    out = MatchRecord.from_json(record).to_json()
    assert out == record and list(out)[-1] == "comment"


@pytest.mark.parametrize(
    "change,why",
    [
        (lambda r: r.pop("decisions"), "no 'decisions'"),
        (lambda r: r.update(players=True), "'players' is not a int"),
        (lambda r: r["result"].update(places=[0]), "1 places for 3 players"),
        (lambda r: r["decisions"][0].update(status="pondered"), "unknown status 'pondered'"),
        (lambda r: r["decisions"][1].pop("seat"), "decision 1 has no seat and action"),
        (lambda r: r["bots"][0].update(seat=5), "bots must name seats 0..2"),
        (lambda r: r.update(schema=2), "schema 2 is not supported"),
    ],
)
def test_one_shape_check_for_the_store_and_replay(change, why: str) -> None:
    record = _played()
    change(record)
    with pytest.raises(RecordError, match=why):
        MatchRecord.from_json(record)
    with pytest.raises(StoreRecordError, match=why):  # the store refuses it with the same words
        ResultRow.from_record(record)


def test_decision_status_is_the_stored_text() -> None:
    assert [s.value for s in DecisionStatus] == ["ok", "fallback", "replayed"]
    d = Decision.from_json({"seat": 0, "action": 2}, 5)  # an old record's decision: n and status implied
    assert (d.n, d.status, d.ms, d.text) == (5, DecisionStatus.OK, None, "")


@settings(max_examples=40)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=6), st.integers(0, 10**6))
def test_factory_records_give_the_rows_the_store_indexes(places: list[int], index: int) -> None:
    bots = [f"bot{i}" for i in range(len(places))]
    record = make_record(index, bots, places)
    row = ResultRow.from_record(copy.deepcopy(record))
    assert row.places == tuple(places) and row.bots == tuple(bots) and row.index == index
    assert MatchRecord.from_json(record).to_json() == record


def test_a_minimal_record_round_trips_without_gaining_keys() -> None:
    record = make_record(3, ["a", "b"], [1, 0])
    for key in ("tournament", "sandbox", "time_control", "started_at", "harness_version", "schema"):
        del record[key]
    assert MatchRecord.from_json(record).to_json() == record


def test_the_python_example_of_docs_records_md_runs() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "records.md").read_text()
    code = doc.split("## Reading records in Python")[1].split("```python\n")[1].split("```")[0]
    exec(compile(code, "docs/records.md", "exec"), {"r": _played()})
