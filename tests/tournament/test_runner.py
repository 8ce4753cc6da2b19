"""`arena run`: parallel runs, resume after kill -9 and Ctrl-C, and bot-change detection."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.report.run import run_and_publish
from arena.tournament.load import load_tournament
from tests import own_processes as own
from tests import support
from tests.tournament.tournament_fixtures import start_arena, stored_matches, write_gated_bot

ROOT = Path(__file__).resolve().parents[2]
SLOW = support.BOTS / "slow_random.py"


# Only against a hang: a run's length is never asserted (on a machine at load 30 a resumed
# run took over 300 s), so this is far beyond any plausible run of these small files.
HANG_GUARD_S = 1800


GAMES = ("tightwad", "divers-weights", "palace")


def write_tournament(tmp: Path, name: str, *, deals: int = 2, bots=None, workers=1, extra="", games=GAMES) -> Path:
    """Three bots (three sample bots unless ``bots``) in ``games``: Tightwad for 3 and Divers Weights
    for 2 with ``deals`` deals each, Palace for 3 with 1 (a test that needs one game only keeps it)."""
    bots = bots or [ROOT / "bots/random_bot.py", ROOT / "bots/tightwad_heuristic.py", ROOT / "bots/divers_heuristic.py"]
    entries = {"tightwad": (3, deals), "divers-weights": (2, deals), "palace": (3, 1)}
    listed = "".join(f"  - id: {g}\n    players: [{entries[g][0]}]\n    deals: {entries[g][1]}\n" for g in games)
    text = f"""
name: {name}
seed: 7
bots: [{", ".join(str(b) for b in bots)}]
games:
{listed}time_control: {{startup_s: 20, move_s: 5.0}}
workers: {workers}
results: {tmp / ("results-" + name)}
{extra}"""
    path = tmp / f"{name}.yaml"
    path.write_text(text)
    return path


def run_file(path: Path, **kw):
    devnull = open(os.devnull, "w")
    return run_and_publish(load_tournament(path), out=devnull, err=devnull, **kw)


def stored(results: Path) -> dict[str, list[int]]:
    con = sqlite3.connect(results / "results.sqlite")
    rows = con.execute("SELECT match_id, seat, place FROM seats ORDER BY match_id, seat").fetchall()
    out: dict[str, list[int]] = {}
    for mid, _seat, place in rows:
        out.setdefault(mid, []).append(place)
    return out


def leaderboard_json(results: Path) -> dict:
    return json.loads((results / "leaderboard.json").read_text())


def share_secret(src: Path, dst: Path) -> None:
    """Give folder ``dst`` the deal secret of ``src``: the same deals, as if it were the same folder."""
    dst.mkdir(parents=True, exist_ok=True)
    (dst / "deal-secret").write_bytes((src / "deal-secret").read_bytes())
    os.chmod(dst / "deal-secret", 0o600)


def test_one_worker_and_two_workers_give_the_identical_leaderboard(tmp_path):
    one = run_file(write_tournament(tmp_path, "one", workers=1, deals=1))
    share_secret(one.results, tmp_path / "results-two")
    two = run_file(write_tournament(tmp_path, "two", workers=2, deals=1))
    assert one.played == two.played == one.scheduled == 12  # 3 games: 3 + 6 + 3
    assert stored(one.results) == stored(two.results)
    a, b = leaderboard_json(one.results), leaderboard_json(two.results)
    assert a == b
    # the luck baselines were computed on two processes in the second run: the same figures
    assert all(row["adjusted_place"] is not None for scope in b["scopes"] for row in scope["standings"])
    assert (one.results / "leaderboard.json").read_bytes() == (two.results / "leaderboard.json").read_bytes()


def _wait_for_matches(results: Path, k: int, proc: subprocess.Popen, limit_s: float = 120) -> None:
    end = time.monotonic() + limit_s
    while stored_matches(results) < k:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the run made no progress"
        time.sleep(0.05)


def _wait_gone(find, what: str, limit_s: float = 15.0) -> None:
    """``find()`` must come back empty: a killed tree may take a while to go on a busy machine."""
    end = time.monotonic() + limit_s
    while (left := find()) and time.monotonic() < end:
        time.sleep(0.05)
    assert not left, f"{what}: {left}"


def own_bots(tmp: Path, *files: Path) -> list[Path]:
    """Copies of ``files`` under ``tmp``: their paths, in every bot's argv, mark this test's bots."""
    (tmp / "bots").mkdir(exist_ok=True)
    out = []
    for f in files:
        out.append(tmp / "bots" / f.name)
        shutil.copy(f, out[-1])
    return out


@pytest.mark.slow
def test_kill_9_midway_then_resume_equals_an_uninterrupted_run(tmp_path):
    bots = own_bots(tmp_path, ROOT / "bots/random_bot.py", ROOT / "bots/tightwad_heuristic.py", SLOW)
    ref = run_file(write_tournament(tmp_path, "ref", bots=bots, workers=2))
    path = write_tournament(tmp_path, "killed", bots=bots, workers=2)
    results = tmp_path / "results-killed"
    share_secret(ref.results, results)
    proc = start_arena("run", str(path))
    with own.TreeRecorder(proc.pid) as tree:  # workers and bots, even those in their own sessions
        _wait_for_matches(results, 8, proc)
        tree.record()
        # the checks below can see what they look for: the workers and the running bots
        assert len(own.in_session(proc.pid)) >= 3, "the arena and its two workers"
        snapshots = str(tmp_path / "results-killed" / "bots")  # bots run from their copies in the results
        assert own.with_marker(snapshots), "no bot of this test is running"
        os.kill(proc.pid, signal.SIGKILL)  # the arena itself, not its process group
    proc.communicate()
    partial = stored_matches(results)
    assert 8 <= partial < ref.scheduled
    _wait_gone(lambda: own.in_session(proc.pid), "workers outlived the arena")
    _wait_gone(lambda: own.still_running(tree.seen), "processes of the arena outlived it")
    _wait_gone(lambda: own.with_marker(snapshots), "bots outlived the arena")
    again = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert again.returncode == 0, again.stderr
    assert "resuming" in again.stderr
    assert stored(results) == stored(ref.results)  # every match exactly once, same outcomes
    assert leaderboard_json(results) == leaderboard_json(ref.results)


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_prints_the_resume_command(tmp_path):
    # The run must still be playing when the signal comes, however busy the machine: once
    # the test has seen its first matches it opens a gate that makes one bot think 0.3 s a
    # decision, so the rest of the run takes far longer than the test needs to interrupt it.
    # (Without the gate, a starved test could find the run alive in its exit handlers.)
    gate = tmp_path / "gate"
    gated = write_gated_bot(tmp_path / "bots" / "gated_random.py", gate)
    bots = [ROOT / "bots/random_bot.py", gated, ROOT / "bots/divers_heuristic.py"]
    path = write_tournament(
        tmp_path, "intr", bots=bots, deals=1, extra="sandbox: none  # the bot must see the gate\ntrust_bots: true"
    )
    results = tmp_path / "results-intr"
    proc = start_arena("run", str(path))
    _wait_for_matches(results, 3, proc)
    gate.touch()
    time.sleep(0.5)  # matches finishing now were nearly done at the gate; the rest are slowed
    assert proc.poll() is None, "the run ended before the test could interrupt it"
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    out, err = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode == 130, err
    assert f"resume with: arena run {path}" in err
    kept = stored_matches(results)
    assert kept >= 3
    gate.unlink()
    done = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert done.returncode == 0, done.stderr
    assert f"resuming: {kept} of" in done.stderr
    assert "Overall" in done.stdout


def test_a_changed_bot_file_replays_only_its_matches_without_fresh(tmp_path):
    bot = tmp_path / "mybot.py"
    bot.write_text((ROOT / "bots/random_bot.py").read_text())
    bots = [ROOT / "bots/random_bot.py", bot, ROOT / "bots/tightwad_heuristic.py"]
    path = write_tournament(tmp_path, "chg", bots=bots, deals=1)
    first = run_file(path)
    assert first.played == first.scheduled == first.counted
    with_mybot = sum("mybot" in m for m in stored(first.results))  # ids do not name bots: count seats
    con = sqlite3.connect(first.results / "results.sqlite")
    mine = con.execute("SELECT COUNT(DISTINCT match_id) FROM seats WHERE bot = 'mybot'").fetchone()[0]
    assert 0 < mine < first.scheduled and with_mybot == 0
    bot.write_text(bot.read_text() + "\n# changed\n")
    res = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    assert f"resuming: {first.scheduled - mine} of {first.scheduled}" in res.stderr
    assert f"{mine} matches played now" in res.stdout
    data = leaderboard_json(first.results)
    assert (data["complete"], data["scheduled"], data["counted"]) == (True, first.scheduled, first.scheduled)
    new_sha = __import__("hashlib").sha256(bot.read_bytes()).hexdigest()
    shas = {
        r[0] for r in con.execute("SELECT s.sha256 FROM seats s JOIN schedule USING (match_id) WHERE s.bot = 'mybot'")
    }
    assert shas == {new_sha}


def test_a_bad_tournament_file_is_one_line_exit_2_and_writes_nothing(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: x\nseed: 1\nbots: [bots/*.py]\ngames:\n  - id: tightwad\n    players: [2]\n"
        "    deals: 1\nresults: " + str(tmp_path / "out") + "\n"
    )
    res = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad.yaml" in lines[0] and "players" in lines[0]
    assert not (tmp_path / "out").exists()


def test_a_bot_that_never_starts_faults_every_match_and_stops_costing_start_up_time(tmp_path):
    silent = support.BOTS / "silent.py"
    bots = [ROOT / "bots/random_bot.py", ROOT / "bots/tightwad_heuristic.py", silent]
    path = write_tournament(tmp_path, "silent", bots=bots, deals=2)
    path.write_text(path.read_text().replace("startup_s: 20", "startup_s: 1"))
    summary = run_file(path)
    assert summary.played == summary.scheduled  # the tournament went on to the end
    rows = stored(summary.results)
    import sqlite3

    con = sqlite3.connect(summary.results / "results.sqlite")
    kinds = con.execute("SELECT fault_kind, fault_detail FROM seats WHERE bot = 'silent'").fetchall()
    assert kinds and all(k == "timeout" for k, _ in kinds)
    assert sum("not restarted" in d for _, d in kinds) == len(kinds) - 3
    assert con.execute("SELECT count(*) FROM seats WHERE bot != 'silent' AND fault_kind IS NOT NULL").fetchone()[0] == 0
    assert all(len(places) in (2, 3) for places in rows.values())
    # three start-up waits, not one per match: each launch writes a header to the bot's log
    launches = sum(
        log.read_text().count("[arena: silent: new process at ")
        for log in (summary.results / "logs").rglob("silent.stderr.log")
    )
    # (plus at most SPARES started ahead of a match before the first failure was known: they are
    # discarded unused, never waited for; one launch per match would be 14 here)
    from arena.tournament.match_player import SPARES

    assert 3 <= launches <= 3 + SPARES, launches


def _deal_seeds(results: Path) -> dict[tuple, str]:
    """Deal seed per schedule position (ids name content, seeds included, so they differ too)."""
    con = sqlite3.connect(results / "results.sqlite")
    return {
        tuple(row[:-1]): row[-1]
        for row in con.execute("SELECT game, players, grp, deal, rotation, deal_seed FROM matches").fetchall()
    }


def test_fresh_replays_the_same_secret_deals_and_a_new_folder_gets_new_ones(tmp_path):
    path = write_tournament(tmp_path, "sec", deals=1, games=GAMES[:2])
    first = run_file(path)
    seeds = _deal_seeds(first.results)
    secret = (first.results / "deal-secret").read_text()
    stale = first.results / "logs" / "worker-9" / "gone.stderr.log"  # a bot of an earlier run
    stale.parent.mkdir(parents=True)
    stale.write_text("old\n")
    again = run_file(path, fresh=True)
    assert again.played == first.scheduled
    assert not stale.exists() and not stale.parent.exists()  # --fresh forgets the old logs too
    assert list((again.results / "logs").rglob("*.stderr.log"))  # only this run's are there
    assert (again.results / "deal-secret").read_text() == secret
    assert _deal_seeds(again.results) == seeds  # --fresh: same deals
    other = run_file(write_tournament(tmp_path, "sec2", deals=1, games=GAMES[:2]))
    new = _deal_seeds(other.results)
    assert set(new) == set(seeds) and all(new[m] != seeds[m] for m in seeds)


def test_run_log_places_count_from_1_as_the_leaderboard_does(tmp_path):
    summary = run_file(write_tournament(tmp_path, "places", deals=1, games=GAMES[:2]))
    done = [ln for ln in (summary.results / "run.log").read_text().splitlines() if " done (" in ln]
    assert len(done) == summary.scheduled
    every = stored(summary.results)  # 0-based in the store, as in the match record
    for ln in done:
        mid = ln.split("match ", 1)[1].split(" ", 1)[0]
        shown = json.loads(ln.split(": places ", 1)[1])
        assert shown == [p + 1 for p in every[mid]] and min(shown) == 1, ln  # 1 = first, as the leaderboard


def test_switching_between_secret_and_public_deals_replays_every_match(tmp_path):
    first = run_file(write_tournament(tmp_path, "mode", deals=1, games=GAMES[:1]))
    public = run_file(write_tournament(tmp_path, "mode", deals=1, extra="deals: public", games=GAMES[:1]))
    assert (public.already_done, public.played, public.counted) == (0, first.scheduled, first.scheduled)
    back = run_file(write_tournament(tmp_path, "mode", deals=1, games=GAMES[:1]))  # the secret matches are still stored
    assert (back.already_done, back.played) == (first.scheduled, 0)


def test_runs_in_one_process_do_not_pile_up_logging_threads(tmp_path):
    # Each run wraps its log handlers for the workers; the wrappers of earlier runs (and any
    # handler that is not the arena's) must not be wrapped again and left running.
    import logging
    import threading

    foreign = logging.StreamHandler(open(os.devnull, "w"))  # e.g. pytest's own capture handlers
    logging.getLogger().addHandler(foreign)
    try:
        path = write_tournament(tmp_path, "threads", deals=1, extra="sandbox: none\ntrust_bots: true", games=GAMES[:1])
        run_file(path)
        before = threading.active_count()
        for _ in range(2):
            run_file(path, fresh=True)
        assert threading.active_count() <= before, "threads left behind by earlier runs"
        assert foreign in logging.getLogger().handlers, "a handler that is not the arena's was replaced"
        assert "tournament threads" in (tmp_path / "results-threads" / "run.log").read_text()
    finally:
        logging.getLogger().removeHandler(foreign)


def test_a_gauntlet_runs_end_to_end_with_only_the_gauntlet_bots_matches(tmp_path):
    player = ROOT / "tests" / "report" / "bots" / "random_player.py"
    results = tmp_path / "results-gauntlet"
    path = tmp_path / "gauntlet.yaml"
    path.write_text(f"""
name: gauntlet
seed: 11
bots:
  - {{path: {player}, name: challenger}}
  - {{path: {player}, name: field_a}}
  - {{path: {player}, name: field_b}}
  - {{builtin: random, name: field_c}}
games:
  - {{id: tightwad, players: 3, deals: 1, schedule: gauntlet, gauntlet: [challenger]}}
sandbox: none
trust_bots: true
luck_rollouts: 0
results: {results}
""")
    res = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr
    con = sqlite3.connect(results / "results.sqlite")
    seats = con.execute("SELECT match_id, bot FROM seats").fetchall()
    by_match: dict[str, set[str]] = {}
    for mid, bot in seats:
        by_match.setdefault(mid, set()).add(bot)
    assert len(by_match) == 1 * 3 * 1 * 3  # C(field 3, 2) groups, 1 deal, 3 rotations
    assert all("challenger" in bots for bots in by_match.values())
    assert {frozenset(b) for b in by_match.values()} == {
        frozenset({"challenger", "field_a", "field_b"}),
        frozenset({"challenger", "field_a", "field_c"}),
        frozenset({"challenger", "field_b", "field_c"}),
    }
    board = leaderboard_json(results)
    text = json.dumps(board)
    for name in ("challenger", "field_a", "field_b", "field_c"):
        assert name in text


def test_two_changed_bots_are_named_in_the_plural():
    """Two bots swapping names said 'bots a, b changed (its matches are played again)'."""
    from types import SimpleNamespace

    from arena.tournament.runner import roster_changes

    before = [{"name": "a", "sha256": "1"}, {"name": "b", "sha256": "2"}, {"name": "c", "sha256": "3"}]
    swapped = [SimpleNamespace(name="a", sha256="2"), SimpleNamespace(name="b", sha256="1")]
    assert roster_changes(before, swapped + [SimpleNamespace(name="c", sha256="3")]) == (
        "bots a, b changed (their matches are played again)"
    )
    one = [SimpleNamespace(name="a", sha256="9"), SimpleNamespace(name="b", sha256="2")]
    assert roster_changes(before, one) == "bot c left (no longer counted); bot a changed (its matches are played again)"
