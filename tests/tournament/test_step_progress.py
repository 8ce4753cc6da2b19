"""A long step shows counts with totals, throttled: arena.tournament.step_progress."""

from __future__ import annotations

import io

from arena.tournament.step_progress import StepProgress


def test_counts_with_totals_at_most_every_few_seconds_and_always_the_last():
    now = [100.0]
    out = io.StringIO()
    progress = StepProgress(out, "luck baselines", "jobs", intro=" (Ctrl-C stops)", every_s=3.0, clock=lambda: now[0])
    progress(0, 130)
    for done in range(1, 131):
        now[0] += 0.1  # 13 s in all: a line after each 3 s, not one per job
        progress(done, 130)
    lines = out.getvalue().splitlines()
    assert lines[0] == "arena: luck baselines: 0 of 130 jobs (Ctrl-C stops)"
    assert lines[-1] == "arena: luck baselines: 130 of 130 jobs done in 13.0 s"
    counts = [int(ln.split(": ")[2].split(" of ")[0]) for ln in lines[1:-1]]
    assert counts == sorted(counts) and len(counts) == 4  # at 3, 6, 9, 12 s
    assert all(ln.endswith("%)") and " of 130 jobs (" in ln for ln in lines[1:-1])


def test_a_quick_step_prints_only_its_start_and_end():
    out = io.StringIO()
    progress = StepProgress(out, "x", "jobs", clock=lambda: 5.0)
    for done in range(0, 4):
        progress(done, 3)
    assert out.getvalue().splitlines() == ["arena: x: 0 of 3 jobs", "arena: x: 3 of 3 jobs done in 0.0 s"]


def test_arena_check_prints_each_check_as_it_ends():
    from pathlib import Path

    from arena.match.detect import open_sandbox
    from arena.match.sandbox import Limits
    from arena.tournament.check import run_check
    from arena.tournament.roster import bot_entry

    printed: list[str] = []
    entry = bot_entry(str(Path(__file__).resolve().parents[2] / "bots" / "random_bot.py"))
    report = run_check(
        entry,
        sandbox=open_sandbox("none"),
        limits=Limits(),
        echo=printed.append,
        matches=[("tightwad", 3, {}), ("palace", 2, {})],
    )
    assert printed[0] == "arena check random_bot"
    assert [p.split(":")[0].strip() for p in printed[1:]] == [
        "PASS  handshake",
        "PASS  tightwad 3 players (seat 0)",
        "PASS  palace 2 players (seat 1)",
        "PASS  several matches in one process",
        "PASS  clean exit on bye",
    ]
    tail = report.render(streamed=True).splitlines()
    assert tail[-1] == "RESULT: PASS" and not any("PASS  " in ln for ln in tail)
    assert report.render().splitlines() == "\n".join(printed).splitlines() + tail  # same text, streamed


def test_a_runs_plain_progress_ends_on_the_count_it_reached() -> None:
    """An adaptive run prints no line when its last round ends (its total is still open), so a
    2 s run's log ended on '1/6 matches' above a summary of 180 played; a stop likewise."""
    from arena.tournament.runner import Progress

    out = io.StringIO()
    progress = Progress(6, out)
    progress.open_ended = True
    progress.update("m0", [])  # the first line, at once
    progress.total = 180  # the rounds planned as results came
    for i in range(1, 180):
        progress.update(f"m{i}", [("b", "crash")] if i == 7 else [])
    progress.close()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("1/6 matches")
    assert lines[-2].startswith("180/180 matches · ") and lines[-1] == "arena: faults by bot and kind: b: crash x1"
    again = io.StringIO()
    done = Progress(2, again)
    done.update("a", [])
    done.update("b", [])  # the last of a fixed total prints at once: close adds nothing
    done.close()
    assert [line.split(" · ")[0] for line in again.getvalue().splitlines()] == ["1/2 matches", "2/2 matches"]
