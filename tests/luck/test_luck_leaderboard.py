"""The luck-adjusted mean place in the leaderboards: every format, stores without baselines,
interrupted and failing baseline computations, resume, damaged baseline rows."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.luck import baselines as luck
from arena.luck import helper as luck_helper
from arena.luck import pool as luck_pool
from arena.luck.reference import luck_beta
from tests.tournament.test_runner import run_file, share_secret, stored, write_tournament

# write_tournament's configurations: (game, players, deals)
SETUP = (("tightwad", 3, 2), ("divers-weights", 2, 2), ("palace", 3, 1))
# those with a correction (beta > 0) have baselines; the others' adjusted place is the plain one
REFERENCE_SETUP = tuple(c for c in SETUP if luck_beta(c[0], c[1]) > 0)
REFERENCE_ROWS = sum(luck.reference_target(g, n) for g, _, n in REFERENCE_SETUP)
DEAL_ROWS = sum(n for _, _, n in REFERENCE_SETUP)
CORRECTED = {g for g, _, _ in REFERENCE_SETUP} | {"overall"}  # scopes with a correction


def test_the_setup_has_scopes_with_and_without_a_correction():
    # what the tests below rely on (arena.luck.reference.LUCK_BETA, calibrated)
    assert ("divers-weights", 2, 2) in REFERENCE_SETUP and len(REFERENCE_SETUP) < len(SETUP)


def _tournament(tmp: Path, name: str, extra: str = "") -> Path:
    # two deals of Tightwad and Divers Weights, one of Palace (write_tournament's games)
    return write_tournament(tmp, name, deals=2, extra=extra)


def _json(results: Path) -> dict:
    return json.loads((results / "leaderboard.json").read_text())


def _adjusted(data: dict) -> dict[tuple[str, str], tuple]:
    return {
        (s["scope"], b["bot"]): (b["adjusted_place"], b["adjusted_place_ci95"])
        for s in data["scopes"]
        for b in s["standings"]
    }


def _rows(results: Path, kind: str | None = None) -> int:
    con = sqlite3.connect(results / "results.sqlite")
    sql = "SELECT COUNT(*) FROM luck_baselines" + (" WHERE kind = ?" if kind else "")
    n = con.execute(sql, (kind,) if kind else ()).fetchone()[0]
    con.close()
    return n


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("luck")
    summary = run_file(_tournament(tmp, "lucky"))
    assert summary.complete
    return summary


def test_every_format_shows_the_adjusted_place_beside_the_plain_one(run):
    results = run.results
    data = _json(results)
    assert data["luck"]["available"] is True and data["luck"]["rollouts"] == luck.DEFAULT_ROLLOUTS
    deals = {(r["game"], r["players"]): r["deals"] for r in data["luck"]["reference_deals"]}
    assert deals == {(g, p): luck.reference_target(g, n) for g, p, n in REFERENCE_SETUP}
    assert data["luck"]["beta"] == [{"game": g, "players": p, "beta": luck_beta(g, p)} for g, p, _ in sorted(SETUP)]
    for scope in data["scopes"]:
        if scope["scope"] in CORRECTED:
            # every bot of this round robin sat every seat of every deal equally often, so the
            # deals' correction is the same for all (it can be exactly 0: h and eta are
            # fractions of few games; tests/report/test_luck.py recomputes it by hand)
            moved = [b["adjusted_place"] - b["mean_place"] for b in scope["standings"]]
            assert max(moved) - min(moved) < 3e-6, scope
        for b in scope["standings"]:
            assert b["adjusted_place"] is not None, (scope["scope"], b)
            # an interval wherever the plain mean place has one (not from Palace's single deal)
            assert (b["adjusted_place_ci95"] is None) == (b["mean_place_ci95"] is None)
            assert abs(b["adjusted_place"] - b["mean_place"]) < 1.0
            if scope["scope"] not in CORRECTED:  # beta 0: the plain figure, to the bit
                assert (b["adjusted_place"], b["adjusted_place_ci95"]) == (b["mean_place"], b["mean_place_ci95"])
    rows = list(csv.DictReader(io.StringIO((results / "leaderboard.csv").read_text())))
    for row in rows:
        want = _adjusted(data)[(row["scope"], row["bot"])]
        assert float(row["adjusted_place"]) == pytest.approx(want[0], abs=1e-6)
        assert row["adjusted_place_ci95"] == ("" if want[1] is None else f"{want[1]:.6f}")
    first = data["scopes"][0]["standings"][0]
    if first["adjusted_place_interval"] is None:  # under 5 deals: no interval is claimed
        assert first["deals"] < 5 and first["adjusted_place_ci95"] is not None
        cells = [f"{first['adjusted_place']:.2f} (too few deals)"]
    else:
        adj, half, (low, high) = first["adjusted_place"], first["adjusted_place_ci95"], first["adjusted_place_interval"]
        # clipped past place 1 or the last place: [low, high]; else ± half. The JSON rounds each
        # figure to 6 decimals, so within 1e-5 of no clip (three roundings: up to 1.5e-6) it may
        # read either way: either form is right there (a tolerance of 1e-6 once failed under load)
        clipped = f"{adj:.2f} [{low:.2f}, {high:.2f}]"
        far = abs(low - (adj - half)) > 1e-5 or abs(high - (adj + half)) > 1e-5
        cells = [clipped] if far else [f"{adj:.2f} ± {half:.2f}", clipped]
    for text in (run.leaderboard, (results / "leaderboard.md").read_text(), (results / "leaderboard.html").read_text()):
        assert "luck-adjusted" in text and "n/a" not in text
        assert any(cell in text for cell in cells), (cells, text)
        assert "beta 0: no correction, the plain mean place" in text


def test_baselines_are_stored_once_and_never_recomputed(run, tmp_path, monkeypatch):
    # one row per scheduled deal of a corrected configuration, and the reference deals
    assert _rows(run.results, "deal") == DEAL_ROWS and _rows(run.results, "reference") == REFERENCE_ROWS
    copy = tmp_path / "copy"
    shutil.copytree(run.results, copy)
    before = _json(copy)

    def refuse(*a, **k):
        raise AssertionError("a baseline was computed again")

    monkeypatch.setattr(luck_helper, "seat_baselines", refuse)
    result = CliRunner().invoke(cli, ["leaderboard", str(copy), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert _adjusted(json.loads(result.output)) == _adjusted(before)


def test_a_store_without_baselines_shows_the_figure_as_unavailable(tmp_path):
    summary = run_file(_tournament(tmp_path, "plain", extra="luck_rollouts: 0"))
    assert summary.complete
    data = _json(summary.results)
    assert data["luck"] is None
    assert all(v == (None, None) for v in _adjusted(data).values())
    rows = list(csv.DictReader(io.StringIO((summary.results / "leaderboard.csv").read_text())))
    assert rows and all(r["adjusted_place"] == "" and r["adjusted_place_ci95"] == "" for r in rows)
    for text in (
        summary.leaderboard,
        (summary.results / "leaderboard.md").read_text(),
        (summary.results / "leaderboard.html").read_text(),
    ):
        # the file turned them off: running it again will not compute them, so the note says why
        assert "n/a: the tournament file computes no luck baselines (luck_rollouts: 0)" in text
    # no table at all (a store from before this feature): the same
    con = sqlite3.connect(summary.results / "results.sqlite")
    con.execute("DROP TABLE IF EXISTS luck_baselines")
    con.commit()
    con.close()
    for fmt in ("terminal", "md", "csv", "json"):
        result = CliRunner().invoke(
            cli, ["leaderboard", str(summary.results), "--format", fmt if fmt != "terminal" else "table"]
        )
        assert result.exit_code == 0 and "Traceback" not in result.output, result.output


def test_an_interrupted_computation_keeps_every_result_and_the_next_run_finishes_it(tmp_path, monkeypatch):
    path = _tournament(tmp_path, "cut")
    real = luck_helper.seat_baselines
    calls = []

    def cut_after_four(*a, **k):
        calls.append(a)
        if len(calls) > 4:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(luck_helper, "seat_baselines", cut_after_four)
    first = run_file(path)
    assert first.interrupted and first.counted == first.scheduled  # every match is kept
    assert _rows(first.results) == 4  # and the finished baselines
    matches = stored(first.results)

    counted = []
    monkeypatch.setattr(luck_helper, "seat_baselines", lambda *a, **k: counted.append(a) or real(*a, **k))
    second = run_file(path)
    assert second.complete and stored(second.results) == matches
    assert len(counted) == DEAL_ROWS + REFERENCE_ROWS - 4  # only what was missing
    assert _json(second.results)["luck"]["available"] is True

    counted.clear()
    third = run_file(path)
    assert third.complete and counted == []


def _unavailable_where_corrected(data: dict) -> None:
    """No baseline was computed: n/a wherever a correction applies, the plain figure elsewhere."""
    for scope in data["scopes"]:
        for b in scope["standings"]:
            got = (b["adjusted_place"], b["adjusted_place_ci95"])
            want = (None, None) if scope["scope"] in CORRECTED else (b["mean_place"], b["mean_place_ci95"])
            assert got == want, (scope["scope"], b)


def test_a_failing_computation_still_publishes_the_results(tmp_path, monkeypatch):
    def broken(*a, **k):
        raise RuntimeError("engine exploded")

    monkeypatch.setattr(luck_helper, "seat_baselines", broken)
    summary = run_file(_tournament(tmp_path, "broken"))
    assert summary.complete and (summary.results / "leaderboard.json").exists()
    _unavailable_where_corrected(_json(summary.results))
    assert "luck baselines not computed (RuntimeError: engine exploded)" in (summary.results / "run.log").read_text()


def test_a_failure_in_a_helper_process_is_reported_not_lost(tmp_path, monkeypatch):
    """With two workers the baselines are shared among two helper processes; one that fails
    (here: every helper, as a broken install would) reaches the run as a warning naming the
    helper's own error, and the results are published."""
    monkeypatch.setattr(luck_pool, "HELPER_MODULE", "tests.luck.broken_luck_helper")
    summary = run_file(write_tournament(tmp_path, "broken2", deals=2, workers=2))
    assert summary.complete and (summary.results / "leaderboard.json").exists()
    _unavailable_where_corrected(_json(summary.results))
    log = (summary.results / "run.log").read_text()
    assert "luck baselines not computed (RuntimeError: a luck baseline helper stopped" in log
    assert "engine exploded in a helper" in log


def test_helper_processes_compute_exactly_what_this_process_does(tmp_path):
    """Two workers share the baselines among helper processes (fresh interpreters: a fork
    would copy other threads' held locks, and after a Ray run that hung the computation);
    they store exactly the rows one process computes."""
    from arena.tournament.load import load_tournament
    from arena.tournament.roster import resolve_bots
    from arena.tournament.schedule import build_schedule
    from arena.tournament.store import ResultStore

    t = load_tournament(_tournament(tmp_path, "helpers"))
    stores = {w: ResultStore(tmp_path / f"w{w}") for w in (1, 2)}
    schedule = build_schedule(t, resolve_bots(t), deal_secret=stores[1].deal_secret())
    rows = {}
    for workers, store in stores.items():
        assert luck.fill(store, schedule, 4, workers=workers) == DEAL_ROWS + REFERENCE_ROWS
        rows[workers] = sorted(store.conn.execute("SELECT * FROM luck_baselines").fetchall())
        store.close()
    assert rows[1] == rows[2]


def test_an_altered_baseline_row_is_left_out_not_trusted(run, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(run.results, copy)
    con = sqlite3.connect(copy / "results.sqlite")
    con.execute(
        "UPDATE luck_baselines SET places = '[0, 0]' WHERE kind = 'deal' AND game = 'divers-weights'"
        " AND rowid = (SELECT MIN(rowid) FROM luck_baselines WHERE kind = 'deal' AND game = 'divers-weights')"
    )
    con.commit()
    con.close()
    result = CliRunner().invoke(cli, ["leaderboard", str(copy), "--format", "json"])
    assert result.exit_code == 0, result.output
    adjusted = _adjusted(json.loads(result.output))
    assert all(v == (None, None) for (scope, _), v in adjusted.items() if scope in ("overall", "divers-weights"))
    assert all(v[0] is not None for (scope, _), v in adjusted.items() if scope not in ("overall", "divers-weights"))
    assert "n/a: baselines missing for some matches" in CliRunner().invoke(cli, ["leaderboard", str(copy)]).output


def test_an_unreadable_baseline_table_never_breaks_the_leaderboard(run, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(run.results, copy)
    con = sqlite3.connect(copy / "results.sqlite")
    con.execute("DROP TABLE luck_baselines")
    con.execute("CREATE TABLE luck_baselines (junk BLOB)")
    con.execute("INSERT INTO luck_baselines VALUES (x'00ff')")
    con.commit()
    con.close()
    for fmt in ("terminal", "md", "csv", "json", "html"):
        result = CliRunner().invoke(cli, ["leaderboard", str(copy), "--format", fmt if fmt != "terminal" else "table"])
        assert result.exit_code == 0 and "Traceback" not in result.output, result.output


def test_a_damaged_or_missing_summary_is_recomputed_from_the_reference_deals(run, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(run.results, copy)
    before = _adjusted(_json(run.results))
    con = sqlite3.connect(copy / "results.sqlite")
    assert con.execute("SELECT COUNT(*) FROM luck_baselines WHERE kind = 'summary'").fetchone()[0] == len(
        REFERENCE_SETUP
    )
    # a hand-edited summary (its checksum fails): recomputed, same figures
    con.execute(
        'UPDATE luck_baselines SET places = \'{"mean": [9, 9], "cov": [[0,0],[0,0]]}\''
        " WHERE kind = 'summary' AND game = 'divers-weights'"
    )
    con.commit()
    result = CliRunner().invoke(cli, ["leaderboard", str(copy), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert _adjusted(json.loads(result.output)) == before
    # a deleted one: the same
    con.execute("DELETE FROM luck_baselines WHERE kind = 'summary' AND game = 'divers-weights'")
    con.commit()
    result = CliRunner().invoke(cli, ["leaderboard", str(copy), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert _adjusted(json.loads(result.output)) == before
    # without its summary, a configuration missing one reference deal has no estimate: n/a
    con.execute("DELETE FROM luck_baselines WHERE kind = 'reference' AND game = 'divers-weights' AND ordinal = 7")
    con.commit()
    con.close()
    result = CliRunner().invoke(cli, ["leaderboard", str(copy), "--format", "json"])
    assert result.exit_code == 0, result.output
    after = _adjusted(json.loads(result.output))
    for (scope, bot), value in after.items():
        assert value == (before[(scope, bot)] if scope in ("tightwad", "palace") else (None, None))


def test_the_figures_depend_on_the_final_file_not_on_the_folders_history(tmp_path):
    """More deals, then fewer, leave extra reference deals and deal rows behind; the leaderboard
    uses what a fresh run of the final file uses, so it is the same as a fresh folder's."""
    path = _tournament(tmp_path, "hist")
    text = path.read_text()
    path.write_text(text.replace("deals: 2", "deals: 3"))
    assert run_file(path).complete
    path.write_text(text)
    again = run_file(path)
    assert again.complete
    fresh_dir = tmp_path / "results-fresh"
    share_secret(again.results, fresh_dir)
    assert run_file(write_tournament(tmp_path, "fresh", deals=2)).complete
    assert (fresh_dir / "leaderboard.json").read_bytes() == (again.results / "leaderboard.json").read_bytes()
