"""schedule: adaptive end to end with real bot processes (fixture bots of known strength): it
stops early with a decided order, an interrupted run resumes to the same stored results, and
the leaderboards say which pairs are decided."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.tournament.load import load_tournament
from tests import support
from tests.tournament.test_runner import run_file, share_secret, stored
from tests.tournament.tournament_fixtures import start_arena, stored_matches, write_gated_bot

ROOT = Path(__file__).resolve().parents[2]
BOTS = support.BOTS


def write_file(tmp: Path, name: str, bots: list[str], *, deals: int = 20) -> Path:
    text = f"""
name: {name}
seed: 3
bots: [{", ".join(bots)}]
games:
  - {{id: tightwad, players: 3, deals: {deals}, schedule: adaptive, adaptive: {{top: 1, confidence: 0.8}}}}
time_control: {{startup_s: 20, move_s: 5.0}}
workers: 2
sandbox: none
trust_bots: true
luck_rollouts: 0
allow_deal_memory: true   # the schedule is under test here, not fair play: fewer process starts
results: {tmp / ("results-" + name)}
"""
    path = tmp / f"{name}.yaml"
    path.write_text(text)
    return path


def field(tmp: Path, gate: Path) -> list[str]:
    """One strong bot and three random ones (one of them slowed while ``gate`` exists)."""
    slow = write_gated_bot(tmp / "bots" / "gated_random.py", gate, think=0.1)
    return [
        str(BOTS / "tightwad_high.py"),
        str(BOTS / "plain_random.py"),
        f"{{path: {BOTS / 'plain_random.py'}, name: random_b}}",
        str(slow),
    ]


@pytest.mark.slow
def test_adaptive_run_stops_early_decided_and_resumes_to_the_same_results(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    bots = field(tmp_path, gate)
    ref = run_file(write_file(tmp_path, "ref", bots))
    assert ref.complete
    state = json.loads((ref.results / "adaptive.json").read_text())
    (entry,) = state["entries"]
    assert entry["status"] == "decided"
    cap = 4 * 3 * 20
    assert ref.scheduled == entry["matches"] < cap / 2  # stopped early, far below the round robin
    assert entry["standings"][0]["bot"] == "tightwad_high" and entry["standings"][0]["ranks"] == [1, 1]
    assert all(
        ["tightwad_high", other] in entry["decided_pairs"] for other in ("plain_random", "random_b", "gated_random")
    )
    board = json.loads((ref.results / "leaderboard.json").read_text())
    assert board["complete"] and board["adaptive"][0]["decided_pairs"] == entry["decided_pairs"]
    assert (
        "Adaptive schedule tightwad (3 players): the top 1 in order at confidence 0.8 (bots closer than 0.05 in share either way round): decided"
        in (ref.results / "leaderboard.md").read_text()
    )
    assert "Adaptive schedule" in (ref.results / "leaderboard.html").read_text()
    # every format names the pairs decided: the leader's row lists the bots it is decided ahead of
    ahead = ", ".join(b for a, b in entry["decided_pairs"] if a == "tightwad_high")
    assert ahead and all(b in ahead for b in ("plain_random", "random_b", "gated_random"))
    md_row = next(
        line
        for line in (ref.results / "leaderboard.md").read_text().splitlines()
        if line.startswith("|") and "| tightwad_high " in line and "yes" in line
    )
    assert ahead in md_row
    assert f'<td class="num">{ahead}</td>' in (ref.results / "leaderboard.html").read_text()
    shown = subprocess.run(
        [sys.executable, "-m", "arena", "leaderboard", str(ref.results)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0 and "decided ahead of" in shown.stdout
    assert any("tightwad_high" in line and line.rstrip().endswith(ahead) for line in shown.stdout.splitlines())

    # The same tournament in another folder with the same deal secret, interrupted after its
    # first round (the gated bot is slow while the gate exists), then resumed.
    path = write_file(tmp_path, "cut", bots)
    results = tmp_path / "results-cut"
    share_secret(ref.results, results)
    proc = start_arena("run", str(path))
    first_round = 4 * 3  # more than the first round (two groups: the leader meets each other bot)
    end = time.monotonic() + 240
    while stored_matches(results) < first_round - 4:  # then slow the run, so that it is surely interrupted midway
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the run made no progress"
        time.sleep(0.02)
    gate.write_text("")
    while stored_matches(results) < first_round + 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the run made no progress"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    gate.unlink()
    partial = stored_matches(results)
    assert proc.returncode != 0 and "resume with" in err
    assert first_round < partial < ref.scheduled
    again = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert again.returncode == 0, again.stderr
    assert "resuming" in again.stderr
    assert stored(results) == stored(ref.results)
    assert json.loads((results / "adaptive.json").read_text()) == state


@pytest.mark.slow
def test_a_stopped_adaptive_run_records_the_race_as_its_stored_results_stand(tmp_path: Path) -> None:
    """A stop between rounds (in the planning of the next) left the last plan, made before the
    round just stored: the leaderboards showed the race one round behind until a resume. The
    stopped run plans once more from what is stored."""
    from arena.tournament.adaptive import read_state
    from arena.tournament.roster import resolve_bots
    from arena.tournament.runner import _NextRound
    from arena.tournament.store import ResultStore

    path = write_file(tmp_path, "stop", field(tmp_path, tmp_path / "no-gate"))
    ref = run_file(path)
    state = json.loads((ref.results / "adaptive.json").read_text())
    tournament = load_tournament(str(path))
    store = ResultStore(ref.results)
    (ref.results / "adaptive.json").unlink()
    stale: list = []  # the plans as a stop inside the first planning leaves them: none yet
    race = _NextRound(tournament, resolve_bots(tournament), store.deal_secret(), store, stale, [], ())
    race.finish(ref.results)  # a finished run: its last plan already read every result
    assert read_state(ref.results) == []
    race.finish(ref.results, replan=True)  # a stopped one
    assert json.loads((ref.results / "adaptive.json").read_text()) == state


def test_a_finished_adaptive_run_has_the_luck_baselines_of_every_round(tmp_path: Path) -> None:
    """The baselines were computed for the first round's deals only: every luck-adjusted place
    read n/a until the file was run again."""
    path = tmp_path / "lk.yaml"
    path.write_text(
        "name: lk\nseed: 5\n"
        "bots: [{builtin: random, name: r1}, {builtin: random, name: r2}, {builtin: random, name: r3},"
        " {builtin: random, name: r4}]\n"
        "games:\n  - {id: tightwad, players: 3, deals: 3, schedule: adaptive}\n"
        f"workers: 1\nluck_rollouts: 1\nresults: {tmp_path / 'res'}\n"
    )

    def arena(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "arena", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
        )

    first = arena("run", str(path))
    assert first.returncode in (0, 3), first.stderr  # decided, or stopped at its cap
    state = json.loads((tmp_path / "res" / "adaptive.json").read_text())
    assert state["entries"][0]["rounds"] > 1
    board = json.loads(arena("leaderboard", str(tmp_path / "res"), "--format", "json").stdout)
    places = [row["adjusted_place"] for row in board["scopes"][0]["standings"]]
    assert len(places) == 4 and None not in places
    assert "luck baselines: 0 of" not in arena("run", str(path)).stderr  # nothing was left to compute


def write_builtin_file(tmp: Path, name: str, schedule: str = "adaptive") -> Path:
    """Four builtin random players (no bot process): a cheap adaptive entry of several rounds."""
    path = tmp / f"{name}.yaml"
    path.write_text(
        f"name: {name}\nseed: 5\n"
        "bots: [{builtin: random, name: r1}, {builtin: random, name: r2}, {builtin: random, name: r3},"
        " {builtin: random, name: r4}]\n"
        f"games:\n  - {{id: tightwad, players: 3, deals: 3, schedule: {schedule}}}\n"
        f"workers: 1\nluck_rollouts: 0\nresults: {tmp / ('results-' + name)}\n"
    )
    return path


@pytest.mark.parametrize("stops", [(3,), (3, 4)], ids=["one-ctrl-c", "again-in-the-replanning"])
def test_a_run_stopped_between_rounds_is_incomplete_in_every_leaderboard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stops: tuple[int, ...]
) -> None:
    """Interrupted while it planned its next round, an adaptive run had every match planned so
    far stored: the leaderboards said 'Complete' (JSON complete: true, CSV status complete),
    and the adaptive table was gone (the plans were cleared before the planning that stopped).
    The stopped run plans once more, so the table shows the round just stored; a second Ctrl-C
    there leaves the last plan, and the leaderboards say the race has rounds still to play."""
    from arena.tournament import schedule as schedule_module

    real = schedule_module.build_schedule
    calls = {"planned": 0}

    def planning(*args: object, **kw: object) -> list:
        if kw.get("plans") is not None and kw.get("results") is not None:
            calls["planned"] += 1
            if calls["planned"] in stops:  # the run's first plan, round 1, then Ctrl-C while planning round 2
                raise KeyboardInterrupt
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(schedule_module, "build_schedule", planning)
    summary = run_file(write_builtin_file(tmp_path, "cut"))
    assert summary.interrupted and calls["planned"] == 4
    assert summary.counted == 12  # rounds 0 and 1 (two groups each) were stored
    board = json.loads((summary.results / "leaderboard.json").read_text())
    assert board["complete"] is False and board["counted"] == 12 and board["scheduled"] == summary.scheduled
    md = (summary.results / "leaderboard.md").read_text()
    assert "Complete:" not in md
    csv_rows = (summary.results / "leaderboard.csv").read_text().splitlines()
    assert all(f",INCOMPLETE,{summary.scheduled},12," in row for row in csv_rows[1:])
    if stops == (3,):  # planned from the 12 stored: round 2 scheduled and unplayed
        assert summary.scheduled > 12
        assert [(a["status"], a["matches_rated"]) for a in board["adaptive"]] == [("playing", 12)]
        assert f"INCOMPLETE: 12 of {summary.scheduled} scheduled matches counted" in md
    else:  # the plan of round 1 kept: every scheduled match stored, the race still open
        assert summary.scheduled == 12
        assert [(a["status"], a["matches_rated"]) for a in board["adaptive"]] == [("playing", 6)]
        # with its player count: two adaptive entries of one game share a key
        assert (
            "INCOMPLETE: 12 of 12 scheduled matches counted, and the adaptive schedule tightwad (3 players) has" in md
        )

    monkeypatch.setattr(schedule_module, "build_schedule", real)
    again = run_file(write_builtin_file(tmp_path, "cut"))  # resumed: it plans on and finishes
    assert again.complete and json.loads((again.results / "leaderboard.json").read_text())["complete"]


def test_a_run_that_leaves_its_race_open_does_not_exit_0(tmp_path: Path) -> None:
    import io

    from arena.report.run import print_outcome
    from arena.tournament.runner import RunSummary

    summary = RunSummary(results=tmp_path, scheduled=12, already_done=0, counted=12, adaptive_open=["tightwad"])
    err = io.StringIO()
    assert not summary.complete and print_outcome(summary, io.StringIO(), err) == 1
    assert "adaptive schedule tightwad has rounds still to play" in err.getvalue()


def test_an_entry_no_longer_adaptive_leaves_no_race_on_the_leaderboards(tmp_path: Path) -> None:
    """adaptive.json of an earlier run was read by every later leaderboard, even after the entry
    became a round robin (and after --fresh): its table, 'stopped at its cap, NOT decided', stayed."""
    first = run_file(write_builtin_file(tmp_path, "sw"))
    assert first.complete and "adaptive" in json.loads((first.results / "leaderboard.json").read_text())
    second = run_file(write_builtin_file(tmp_path, "sw", schedule="round-robin"))
    assert second.complete
    assert not (second.results / "adaptive.json").exists()
    assert "adaptive" not in json.loads((second.results / "leaderboard.json").read_text())
    assert "Adaptive schedule" not in (second.results / "leaderboard.md").read_text()


def test_dry_run_says_an_adaptive_entry_plays_more_rounds_than_it_lists(tmp_path: Path) -> None:
    """`--dry-run` said '6 matches scheduled: 6 to play' for an adaptive entry that goes on
    to play up to its cap: only its first round can be listed, and now it says so."""
    import io

    from arena.report.run import render_plan
    from arena.tournament.runner import plan_run

    path = write_builtin_file(tmp_path, "dry")
    out = io.StringIO()
    render_plan(plan_run(load_tournament(path)), out)
    assert out.getvalue().startswith("6 matches scheduled: 6 to play")
    assert (
        "adaptive schedule tightwad (3 players): 1 round planned so far (6 matches, listed here); each further "
        "round is planned from the results of the one before, until the ranking is decided or 36 matches"
    ) in out.getvalue()
    done = run_file(path)
    out = io.StringIO()
    render_plan(plan_run(load_tournament(path)), out)
    status = json.loads((done.results / "adaptive.json").read_text())["entries"][0]["status"]
    word = "decided" if status == "decided" else "at its cap"
    assert f"adaptive schedule tightwad (3 players): {word} after {done.scheduled} matches: no more rounds" in (
        out.getvalue()
    )
