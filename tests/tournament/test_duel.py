"""arena duel: its layout and samples, its one-line errors, and whole duels with real bot
processes (fixture bots under tests/support/bots): a clearly better bot gets H1, an identical
copy gets H0 or the cap, and an interrupted duel resumes to the same result."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.errors import ArenaError
from arena.tournament.duel import (
    EXIT_CAPPED,
    deal_sample,
    difference_to_elo,
    elo_to_difference,
    hypotheses,
    layout,
    make_duel,
)
from tests import support
from tests.tournament.tournament_fixtures import start_arena, stored_matches, write_gated_bot

ROOT = Path(__file__).resolve().parents[2]
BOTS = support.BOTS
SIMPLE, RANDOM = BOTS / "duel_simple.py", BOTS / "duel_random.py"


def test_new_and_old_sit_in_the_same_seats_against_the_same_field():
    rows = layout(4, head_to_head=False)
    assert len(rows) == 8
    new = {r: roles for g, r, roles in rows if g == 0}
    old = {r: roles for g, r, roles in rows if g == 1}
    for r in range(4):
        assert [x if x != "new" else "X" for x in new[r]] == [x if x != "old" else "X" for x in old[r]]
    assert sorted(roles.index("new") for roles in new.values()) == [0, 1, 2, 3]  # every seat once
    assert layout(2, head_to_head=True) == [(0, 0, ("new", "old")), (0, 1, ("old", "new"))]


def test_the_sample_is_the_mean_place_of_old_minus_new_per_rotation():
    # head to head: NEW wins one seat order, draws... (places 0 = best)
    assert deal_sample([(("new", "old"), (0, 1)), (("old", "new"), (0, 1))]) == 0.0
    assert deal_sample([(("new", "old"), (0, 1)), (("old", "new"), (1, 0))]) == 1.0
    field = [
        (("new", "f1", "f2"), (0, 1, 2)),
        (("f2", "new", "f1"), (2, 1, 0)),
        (("f1", "f2", "new"), (0, 1, 2)),
        (("old", "f1", "f2"), (2, 1, 0)),
        (("f2", "old", "f1"), (0, 1, 2)),
        (("f1", "f2", "old"), (0, 1, 2)),
    ]
    assert deal_sample(field) == pytest.approx(((2 + 1 + 2) - (0 + 1 + 2)) / 3)


def test_elo_bounds_map_to_place_differences_and_back():
    assert elo_to_difference(0, 4) == 0
    assert difference_to_elo(elo_to_difference(35.0, 4), 4) == pytest.approx(35.0)
    h = hypotheses(2, elo0=0, elo1=40)  # head to head: NEW's score minus OLD's, in [-1, 1]
    assert h.mu0 == 0 and h.mu1 == pytest.approx(2 / (1 + 10 ** (-0.1)) - 1) and h.elo == (0, 40)
    assert hypotheses(4).mu1 == 0.2 and hypotheses(3, margin=0.5).mu1 == 0.5


@pytest.mark.parametrize(
    "kw, piece",
    [
        ({"elo0": 10, "elo1": 5}, "--elo0 10 is not below --elo1 5"),
        ({"elo0": 5, "elo1": 5}, "is not below"),
        ({"elo0": 0}, "--elo0 and --elo1 go together"),
        ({"margin": 0.1, "elo0": 0, "elo1": 5}, "give one of them"),
        ({"margin": 0}, "--margin 0: give a mean place difference above 0 and below 3"),
        ({"margin": 3}, "below 3"),
        ({"elo0": float("inf"), "elo1": 5}, "finite"),
    ],
)
def test_bad_hypotheses_are_one_line_errors(kw, piece):
    with pytest.raises(ArenaError, match=piece.replace("(", r"\(").replace(")", r"\)")):
        hypotheses(4, **kw)


def test_names_stay_apart_and_the_field_fills_every_other_seat():
    d = make_duel("tightwad", str(RANDOM), str(RANDOM), players=4)
    assert (d.new.name, d.old.name) == ("duel_random-new", "duel_random-old")
    assert [e.name for e in d.field] == ["random-1", "random-2", "random-3"]
    assert all(e.kind == "builtin" for e in d.field) and d.matches_per_deal == 8
    h2h = make_duel("divers-weights", str(SIMPLE), str(RANDOM))
    assert h2h.head_to_head and h2h.players == 2 and h2h.matches_per_deal == 2
    fielded = make_duel("divers-weights", str(SIMPLE), str(RANDOM), players=3, field=(str(RANDOM),))
    assert [e.name for e in fielded.field] == ["duel_random-1", "duel_random-2"]  # apart from OLD's name
    assert not fielded.head_to_head and fielded.matches_per_deal == 6


def test_new_and_old_meet_the_fields_seeds_as_they_meet_its_cards():
    """In one seat rotation NEW's and OLD's matches share the match seed, so every seat's bot
    seed: a field player seeded by it makes the same choices in the same positions for both."""
    d = make_duel("tightwad", str(SIMPLE), str(RANDOM), players=4)
    matches = d.deal_matches(12345, 0) + d.deal_matches(12345, 1)
    by = {(m.deal, m.rotation, m.group): m for m in matches}
    for deal in (0, 1):
        for r in range(4):
            new, old = by[(deal, r, 0)], by[(deal, r, 1)]
            assert new.match_seed == old.match_seed and new.deal_seed == old.deal_seed
            assert new.match_id != old.match_id
    seeds = {(m.deal, m.rotation): m.match_seed for m in matches}
    assert len(set(seeds.values())) == 8  # apart between rotations and deals
    assert (
        make_duel("tightwad", str(SIMPLE), str(RANDOM), players=4).deal_matches(54321, 0)[0].match_seed != seeds[(0, 0)]
    )


@pytest.mark.slow
def test_two_copies_of_a_seeded_bot_play_the_same_games_against_a_random_field(tmp_path):
    """Duplicate play of the field's luck too: a copy of a bot that draws its moves from the seed
    botkit gives it plays exactly what the original plays, deal after deal (every sample 0), where
    the field's own random choices used to make them differ."""
    copy = tmp_path / "copy_of_random.py"
    shutil.copy(RANDOM, copy)
    results = _fixed_deals(tmp_path / "copies")
    done = _duel(results, "tightwad", str(RANDOM), str(copy), "--players", "4", "--max-matches", "32")
    assert done.returncode in (0, EXIT_CAPPED), done.stderr
    with sqlite3.connect(results / "results.sqlite") as con:
        rows = con.execute("SELECT match_id, bot, seat, place FROM seats").fetchall()
    places: dict[tuple[str, int], dict[str, int]] = {}
    for mid, bot, seat, place in rows:
        key = (re.search(r"/d(\d+)/r(\d+)/", mid).group(0), seat)
        places.setdefault(key, {})[bot] = place
    pairs = [
        (v["duel_random"], v["copy_of_random"]) for v in places.values() if {"duel_random", "copy_of_random"} <= set(v)
    ]
    assert len(pairs) == 16 and all(a == b for a, b in pairs), pairs
    assert "deals W-L-D 0-0-4" in done.stdout, done.stdout


def _one_line(args: list[str], *pieces: str) -> None:
    result = CliRunner().invoke(cli, ["duel", *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), result.stderr
    for piece in pieces:
        assert piece in lines[0], lines[0]


@pytest.mark.parametrize(
    "args, piece",
    [
        (["--elo0", "5", "--elo1", "0"], "--elo0 5 is not below --elo1 0"),
        (["--alpha", "0.5"], "--alpha 0.5 is outside (0, 0.5)"),
        (["--alpha", "0"], "--alpha 0 is outside (0, 0.5)"),
        (["--beta", "0.9"], "--beta 0.9 is outside (0, 0.5)"),
        (["--margin", "-1"], "--margin -1"),
        (["--max-matches", "0"], "--max-matches 0"),
        (["--max-matches", "1"], "one deal of this duel is 2 matches (NEW and OLD in every seat); give at least 2"),
        (["--players", "3", "--max-matches", "5"], "one deal of this duel is 6 matches"),
        (["--players", "5"], "--players 5: divers-weights takes 2 to 4 players"),
        (["--field", "builtin:random", "--field", "builtin:random"], "give at most 1"),
        (["--sandbox", "bogus"], "--sandbox: unknown sandbox level 'bogus'; use one of auto,"),
        # distinct bounds that map to one place difference: it was "unexpected ValueError ... a bug in arena"
        (["--elo0", "0", "--elo1", "1e-300"], "--elo0 0.0 and --elo1 1e-300 are too close"),
        (["--elo0", "1999.9999999999", "--elo1", "2000"], "are too close: both are a mean place difference of"),
    ],
)
def test_bad_command_lines_get_one_line_errors(args, piece, tmp_path):
    _one_line(["divers-weights", str(SIMPLE), str(RANDOM), "--results", str(tmp_path / "r"), *args], piece)


def test_a_results_folder_that_cannot_be_made_names_the_option(tmp_path):
    # it said "arena duel: results: ...; e.g. results: results/duel-..." (a tournament file's field)
    (tmp_path / "taken").write_text("a file\n")
    result = CliRunner().invoke(
        cli, ["duel", "divers-weights", str(SIMPLE), str(RANDOM), "--results", str(tmp_path / "taken")]
    )
    assert result.exit_code == 2, result.output
    last = result.stderr.strip().splitlines()[-1]  # after the duel's opening line
    assert last.startswith(f"arena: error: --results: cannot create the folder {tmp_path / 'taken'} ("), last
    assert "e.g. --results results/duel-" in last and "Traceback" not in result.stderr


def test_unknown_game_and_missing_bot_are_one_line_errors(tmp_path):
    _one_line(["tightwod", str(SIMPLE), str(RANDOM)], "unknown game 'tightwod'", "tightwad")
    _one_line(["tightwad", str(tmp_path / "nope.py"), str(RANDOM)], "nope.py")


def _fixed_deals(results: Path, secret: str = "d0e1" * 16) -> Path:
    """The folder with a deal secret of the test's choosing: the same deals on every run (the
    bots are seeded by their matches), so the duel's outcome is the same on every run too."""
    results.mkdir(parents=True, exist_ok=True)
    (results / "deal-secret").write_text(secret + "\n")
    os.chmod(results / "deal-secret", 0o600)
    return results


def _duel(results: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", "duel", *args, "--results", str(results)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_a_clearly_better_bot_gets_h1_and_the_folder_is_a_normal_results_folder(tmp_path):
    results = _fixed_deals(tmp_path / "better")
    done = _duel(results, "divers-weights", str(SIMPLE), str(RANDOM), "--workers", "2")
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()
    assert last[-1].startswith("H1: duel_simple is better than duel_random"), done.stdout
    assert "LLR" in last[-2] and "95%" in last[-2]
    ptnml = re.search(r"Ptnml\(0-2\) \[(\d+), (\d+), (\d+), (\d+), (\d+)\]", last[-2])
    deals = re.search(r"\((\d+) deals\)", last[-2])
    assert ptnml and deals and sum(map(int, ptnml.groups())) == int(deals.group(1)), last[-2]
    matches = int(last[-2].split("duel: ")[1].split(" matches")[0])
    con = sqlite3.connect(results / "results.sqlite")
    assert con.execute("SELECT count(*) FROM schedule").fetchone()[0] == matches  # the deals the test used
    board = subprocess.run(
        [sys.executable, "-m", "arena", "leaderboard", str(results), "--format", "csv"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert board.returncode == 0 and "duel_simple" in board.stdout, board.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "arena", "matches", str(results)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert f"{matches} matches" in listed.stdout


def test_a_crashing_bot_is_counted_in_the_live_line_and_the_closing_fault_summary(tmp_path):
    """The first fault said 'repeats are counted below', and nothing counted them."""
    crash = tmp_path / "crash_at_start.py"
    crash.write_text("import sys\nsys.exit('weights.bin is missing')\n")
    results = _fixed_deals(tmp_path / "crash")
    done = _duel(results, "divers-weights", str(crash), str(RANDOM), "--max-matches", "8")
    assert done.returncode in (0, EXIT_CAPPED), done.stderr
    assert "crash_at_start faulted (crash)" in done.stderr
    assert "its stderr ends: weights.bin is missing" in done.stderr  # why, at the first fault
    # a bot that faulted in every match is named: the verdict measured its faults, not its play
    assert re.search(r"crash_at_start faulted in all \d+ of its matches: the verdict", done.stderr), done.stderr
    summary = [line for line in done.stderr.splitlines() if line.startswith("arena: faults by bot and kind: ")]
    assert summary and "crash_at_start: crash x" in summary[-1], done.stderr
    # head to head, the pentanomial of deals: a bot that never starts scores 0 of 2 in every one
    deals = re.search(r"\((\d+) deals\)", done.stdout.strip().splitlines()[-2])
    assert deals and f"pairs Ptnml(0-2) [{deals.group(1)}, 0, 0, 0, 0]" in done.stdout, done.stdout
    # the live line counts them once the test has read their deals (here it may print before any)
    # it faults in every match it plays (head to head: all of them), and only the matches the
    # test read count: one played beyond the stop had made the summary one more than the list
    counted = re.search(r"after (\d+) matches", done.stdout.strip().splitlines()[-1])
    assert counted and summary[-1].endswith(f"crash_at_start: crash x{counted.group(1)}"), done.stdout + done.stderr


def test_a_bots_limits_on_the_command_line_reach_its_matches(tmp_path):
    """An ML bot holding 300 MB against random, head to head in Divers Weights: under --limit
    memory_mb=160 it faults (resource) in every match, and the folder records the limit."""
    results = _fixed_deals(tmp_path / "limited")
    heavy = str(support.BOTS / "holds_memory.py")
    done = _duel(results, "divers-weights", heavy, str(RANDOM), "--limit", "memory_mb=160", "--max-matches", "4")
    assert re.search(r"holds_memory faulted in all \d+ of its matches", done.stderr), done.stderr
    con = sqlite3.connect(results / "results.sqlite")
    config = json.loads(con.execute("SELECT config FROM tournament").fetchone()[0])
    assert config["limits"]["memory_mb"] == 160, config["limits"]
    _one_line(
        ["divers-weights", heavy, str(RANDOM), "--limit", "memory_mb"], "--limit 'memory_mb': expected KEY=INTEGER"
    )


@pytest.mark.slow
def test_an_identical_copy_gets_h0_or_the_cap(tmp_path):
    copy = tmp_path / "copy_of_random.py"
    shutil.copy(RANDOM, copy)
    # alpha 0.01: even on other deals, H1 would come once in a hundred runs at most
    done = _duel(
        _fixed_deals(tmp_path / "same"),
        "divers-weights",
        str(copy),
        str(RANDOM),
        "--margin",
        "0.6",
        "--alpha",
        "0.01",
        "--max-matches",
        "40",
        "--workers",
        "2",
        "--sandbox",
        "none",
        "--trust-bots",
    )
    verdict = done.stdout.strip().splitlines()[-1]
    assert (done.returncode, verdict[:3]) == (0, "H0:") or (
        done.returncode == EXIT_CAPPED and verdict.startswith("no decision")
    ), done
    assert not verdict.startswith("H1")


@pytest.mark.slow
def test_an_interrupted_duel_resumes_to_the_same_result(tmp_path):
    gate = tmp_path / "gate"
    gated = write_gated_bot(tmp_path / "bots" / "gated_random.py", gate)
    args = ["divers-weights", str(SIMPLE), str(gated), "--sandbox", "none", "--trust-bots", "--workers", "2"]
    whole = _duel(_fixed_deals(tmp_path / "whole"), *args)
    assert whole.returncode == 0, whole.stderr
    cut = _fixed_deals(tmp_path / "cut")  # the same deals in another folder
    proc = start_arena("duel", *args, "--results", str(cut))
    end = time.monotonic() + 120
    while stored_matches(cut) < 3:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the duel made no progress"
        time.sleep(0.05)
    gate.touch()
    time.sleep(0.5)
    assert proc.poll() is None, "the duel ended before the test could interrupt it"
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "resume with: arena duel divers-weights" in err
    kept = stored_matches(cut)
    gate.unlink()
    resumed = _duel(cut, *args)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stderr and kept >= 3
    assert resumed.stdout == whole.stdout  # the same status line and verdict


@pytest.mark.parametrize(
    "elo0, elo1, h0, h1",
    [
        (0, 5, "new is not better than old", "new is better than old by at least 5 Elo"),
        (5, 10, "new is at most 5 Elo better than old", "new is better than old by at least 10 Elo"),
        (-20, 0, "new is worse than old by at least 20 Elo", "new is at least as good as old"),
        (-60, -20, "new is worse than old by at least 60 Elo", "new is at most 20 Elo worse than old"),
    ],
)
def test_the_verdict_says_what_the_accepted_hypothesis_says_whatever_the_signs(elo0, elo1, h0, h1):
    """--elo0 -60 --elo1 -20 ended "H1: new is better than old (at least -20 Elo better ...)"."""
    from types import SimpleNamespace

    from arena.stats.sequential import Status
    from arena.tournament.duel import DuelOutcome, hypotheses_text, verdict_line

    duel = SimpleNamespace(
        new=SimpleNamespace(name="new"), old=SimpleNamespace(name="old"), hyp=hypotheses(3, elo0=elo0, elo1=elo1)
    )

    def verdict(decision):
        status = Status(n=10, mean=0.1, var=0.2, llr=3.1, lower=-3.0, upper=3.0, decision=decision)
        return verdict_line(duel, DuelOutcome(status=status, matches=30))  # type: ignore[arg-type]

    assert verdict("H1").startswith(f"H1: {h1} (difference ")
    assert verdict("H0").startswith(f"H0: {h0} (mean place difference ")
    assert [t.split(" (")[0] for t in hypotheses_text(duel)] == [h0, h1]  # type: ignore[arg-type]


def test_the_fault_summary_counts_the_deals_the_test_read_only():
    """A match played beyond the stop (or ahead of the deals read) made the summary one fault
    more than the faulted matches listed: 'protocol x22' beside 21."""
    import io
    from types import SimpleNamespace

    from arena.tournament.duel import _DuelProgress

    duel = make_duel("tightwad", "builtin:random", "builtin:random", players=3)
    feeder = SimpleNamespace(tested=1, key=7, on_stored=lambda mid: None)
    out = io.StringIO()
    progress = _DuelProgress(duel, feeder, out)  # type: ignore[arg-type]
    progress.line = lambda: ""  # type: ignore[method-assign]  (the status line is not under test)
    deal0, deal1 = duel.deal_matches(7, 0), duel.deal_matches(7, 1)
    progress.update(deal0[0].match_id, [("new", "protocol")])
    progress.update(deal0[1].match_id, [("new", "protocol")])
    progress.update(deal1[0].match_id, [("new", "protocol")])  # deal 1: played, never read
    progress.close()
    assert out.getvalue().splitlines()[-1] == "arena: faults by bot and kind: new: protocol x2"


def test_a_bot_changed_between_runs_is_said_when_its_stored_matches_stop_counting(tmp_path):
    """Rerunning the same command after NEW's file changed (new weights, say) started the test
    over from deal 0 without a word: the stored deals no longer counted and nothing said why."""
    new = tmp_path / "mine.py"
    shutil.copy(RANDOM, new)
    results = _fixed_deals(tmp_path / "folder")
    args = ["divers-weights", str(new), str(RANDOM), "--max-matches", "4", "--sandbox", "none", "--trust-bots"]
    first = _duel(results, *args)
    assert first.returncode in (0, EXIT_CAPPED), first.stderr
    again = _duel(results, *args)
    assert "resuming: 2 deals (4 matches) already played" in again.stderr and "since the last run" not in again.stderr
    new.write_text(new.read_text() + "\n# new weights\n")
    changed = _duel(results, *args)
    assert changed.returncode in (0, EXIT_CAPPED), changed.stderr
    assert "arena: since the last run: bot mine changed (its matches are played again)" in changed.stderr
    assert "resuming" not in changed.stderr


def test_a_bot_slow_to_load_gets_the_start_up_time_it_needs(tmp_path):
    """A bot loading a model before its hello timed out in every match of a duel, which had no
    --startup-s to give it more (arena check and tournament files have one): the duel then
    concluded "NEW is not better" from forfeits."""
    slow = tmp_path / "slow_loader.py"
    slow.write_text("import time\ntime.sleep(1.5)  # loading the weights\n" + RANDOM.read_text())
    args = ["divers-weights", str(slow), str(RANDOM), "--max-matches", "2", "--sandbox", "none", "--trust-bots"]
    short = _duel(_fixed_deals(tmp_path / "short"), *args, "--startup-s", "0.5")
    assert short.returncode in (0, EXIT_CAPPED), short.stderr
    assert "slow_loader: timeout x2" in short.stderr
    enough = _duel(_fixed_deals(tmp_path / "enough"), *args, "--startup-s", "20")
    assert enough.returncode in (0, EXIT_CAPPED), enough.stderr
    assert "faulted" not in enough.stderr and "faults by bot" not in enough.stderr, enough.stderr


def test_an_unsafe_level_is_refused_with_the_duels_own_fix(tmp_path):
    """A duel has no tournament file: the refusal told the user to add 'trust_bots: true' to one."""
    args = ["duel", "divers-weights", str(SIMPLE), str(RANDOM), "--sandbox", "rlimits", "--results", str(tmp_path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "Traceback" not in result.output + result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("arena: error: ") and "sandbox level rlimits is not safe for untrusted bots" in last
    assert last.endswith("or add --trust-bots if you wrote or trust every bot of the duel"), last
    assert "tournament file" not in last


def test_a_changed_time_control_says_the_stored_deals_still_count(tmp_path):
    """Rerun with a longer --startup-s after NEW timed out at hello: its stored forfeits still
    counted, and nothing said so (the duel could decide again from them at once)."""
    results = _fixed_deals(tmp_path / "folder")
    args = ["divers-weights", str(SIMPLE), str(RANDOM), "--max-matches", "2", "--sandbox", "none", "--trust-bots"]
    first = _duel(results, *args)
    assert first.returncode in (0, EXIT_CAPPED), first.stderr
    longer = _duel(results, *args, "--startup-s", "20")
    assert (
        "arena: since the last run: time control changed (startup_s 10 -> 20): the matches stored under "
        "the old settings still count; --fresh plays them all again"
    ) in longer.stderr.splitlines(), longer.stderr
    # new versions of both bots and the time control changed again: no stored deal counts now
    (tmp_path / "v2").mkdir()
    new, old = tmp_path / "v2" / SIMPLE.name, tmp_path / "v2" / RANDOM.name
    new.write_bytes(SIMPLE.read_bytes() + b"# v2\n")
    old.write_bytes(RANDOM.read_bytes() + b"# v2\n")
    other = _duel(results, "divers-weights", str(new), str(old), *args[3:], "--startup-s", "30")
    assert other.returncode in (0, EXIT_CAPPED), other.stderr
    assert "changed" in other.stderr and "still count" not in other.stderr, other.stderr


def test_changed_bounds_on_a_folder_are_said_before_its_deals_are_tested_again(tmp_path):
    """Rerun with another --margin, --elo0/--elo1, --alpha or --beta: the stored deals were
    tested again under the new bounds without a word, though bounds chosen after seeing the
    results void the test's error rates."""
    results = _fixed_deals(tmp_path / "folder")
    args = ["divers-weights", str(SIMPLE), str(RANDOM), "--max-matches", "2", "--sandbox", "none", "--trust-bots"]
    first = _duel(results, *args)
    assert first.returncode in (0, EXIT_CAPPED), first.stderr
    same = _duel(results, *args, "--max-matches", "4")  # a higher cap is how a duel goes on: no news
    assert same.returncode in (0, EXIT_CAPPED), same.stderr
    assert "since the last run" not in same.stderr, same.stderr
    changed = _duel(results, *args, "--elo0", "0", "--elo1", "30", "--alpha", "0.01")
    assert changed.returncode in (0, EXIT_CAPPED), changed.stderr
    assert (
        "arena: since the last run: the test's bounds changed (--margin 0.2 -> --elo0 0 --elo1 30, "
        "--alpha 0.05 -> 0.01): the stored deals are tested again from the first under the new ones "
        "(the error rates hold only if the bounds were not chosen from the results)"
    ) in changed.stderr.splitlines(), changed.stderr


def test_the_elo_shown_has_no_minus_zero_and_keeps_the_finite_end_of_its_interval():
    """The live line began '-0 Elo', and an interval with one end past the range of Elo (a
    mean place difference near its bound) showed no interval at all."""
    from arena.stats.sequential import Status
    from arena.tournament.duel import status_line

    duel = make_duel("divers-weights", "builtin:random", "builtin:random", players=2, elo0=0, elo1=20)
    start = status_line(duel, Status(0, 0.0, 0.0, 0.0, -3.0, 3.0, None), 0)
    assert "· +0 Elo [95%: n/a]" in start, start
    near_top = status_line(duel, Status(8, 0.75, 0.2, 3.4, -3.0, 3.0, "H1"), 16)
    assert re.search(r"· \+338 Elo \[\+\d+, \+inf\] 95%", near_top), near_top


def test_a_resumed_duel_counts_the_faults_of_its_stored_deals_too(tmp_path):
    """A duel capped (or interrupted) and run again counted only the faults of the matches the
    new run played: a NEW that crashed in all 10 of its matches ended 'crash x6', without the
    warning that the verdict is about its faults, and a rerun of a decided duel said nothing."""
    broken = tmp_path / "broken.py"
    broken.write_text("import no_such_module_here\n")
    results = _fixed_deals(tmp_path / "folder")
    args = ["divers-weights", str(broken), str(RANDOM), "--sandbox", "none", "--trust-bots", "--workers", "1"]
    capped = _duel(results, *args, "--max-matches", "4")
    assert capped.returncode == EXIT_CAPPED, capped.stderr
    assert "broken faulted in all 4 of its matches" in capped.stderr, capped.stderr
    for run in ("resumed", "decided already"):
        done = _duel(results, *args, "--max-matches", "200")
        assert done.returncode == 0 and done.stdout.splitlines()[-1].startswith("H0: "), (run, done.stdout)
        assert "after 10 matches" in done.stdout, (run, done.stdout)  # H0 after 5 deals lost in full
        assert "arena: faults by bot and kind: broken: crash x10" in done.stderr.splitlines(), (run, done.stderr)
        assert "broken faulted in all 10 of its matches" in done.stderr, (run, done.stderr)


def test_an_elo_just_below_zero_reads_plus_zero():
    """'+ 0.0' only turned an exact -0.0 into 0.0: a mean of -0.001 places still read '-0 Elo'."""
    from arena.stats.sequential import Status
    from arena.tournament.duel import status_line

    duel = make_duel("divers-weights", "builtin:random", "builtin:random", players=2, elo0=0, elo1=20)
    line = status_line(duel, Status(10, -0.001, 0.2, -0.1, -3.0, 3.0, None), 20)
    assert "· +0 Elo [" in line and "-0 " not in line, line


AGAIN_AT_EXIT = """
import atexit, os, signal, sys, time

_pid = os.getpid()


def _again():  # registered first, so it runs last: a Ctrl-C (or SIGTERM) while the command exits
    if os.getpid() == _pid and "arena.cli" in sys.modules:
        os.kill(_pid, getattr(signal, os.environ["ARENA_TEST_AGAIN_SIGNAL"]))
        time.sleep(0.5)


atexit.register(_again)
"""


@pytest.mark.parametrize("again", ["SIGINT", "SIGTERM"])
def test_a_second_interrupt_while_an_interrupted_duel_exits_is_not_a_traceback(tmp_path, again):
    # it printed "Exception ignored in atexit callback ... KeyboardInterrupt" with a traceback
    # (or died of the signal, exit -2, saying nothing) when Ctrl-C came twice
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(AGAIN_AT_EXIT)
    gate = tmp_path / "gate"
    gate.touch()
    slow = write_gated_bot(tmp_path / "bots" / "slow_random.py", gate, think=0.05)
    results = tmp_path / "r"
    args = ["duel", "divers-weights", str(SIMPLE), str(slow), "--sandbox", "none", "--trust-bots", "--workers", "1"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]), ARENA_TEST_AGAIN_SIGNAL=again)
    proc = start_arena(*args, "--results", str(results), env=env)
    end = time.monotonic() + 120
    while stored_matches(results) < 1:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the duel made no progress"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "resume with: arena duel divers-weights" in err
    assert "Traceback" not in err and "Exception ignored" not in err, err
