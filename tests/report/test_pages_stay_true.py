"""Every leaderboard page on disk is true, or says plainly that it is old: `arena leaderboard`
rewrites the pages it recomputes, a run marks the earlier pages out of date before it plays
(a run killed with -9 never publishes), and an interrupted run publishes what it kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import arena.tournament.runner as runner
from arena.cli import cli
from arena.report.run import run_and_publish
from arena.report.standings import STALE_START, mark_reports_stale
from arena.tournament.load import load_tournament
from arena.tournament.supervisor import Supervisor

HERE = Path(__file__).resolve().parent
RANDOM = HERE / "bots" / "random_player.py"


def _tournament(tmp: Path, deals: int) -> Path:
    for name in ("alpha", "beta", "gamma"):
        (tmp / f"{name}.py").write_text(RANDOM.read_text())
    path = tmp / "t.yaml"
    path.write_text(f"""name: pages
seed: 3
bots: [{tmp / "alpha.py"}, {tmp / "beta.py"}, {tmp / "gamma.py"}]
games:
  - {{id: divers-weights, players: [2], deals: {deals}}}
workers: 1
sandbox: none
trust_bots: true
results: {tmp / "results"}
""")
    return path


def _run(path: Path):
    devnull = open(os.devnull, "w")
    return run_and_publish(load_tournament(path), out=devnull, err=devnull)


@pytest.fixture()
def played(tmp_path: Path) -> Path:
    summary = _run(_tournament(tmp_path, deals=1))  # 3 pairs x 2 seatings: 6 matches
    assert summary.complete and summary.counted == 6
    return summary.results


def test_the_pages_say_when_they_were_written_and_from_how_many_matches(played: Path) -> None:
    for page in ("leaderboard.html", "leaderboard.md"):
        text = (played / page).read_text()
        assert "Written 20" in text and " UTC from 6 of 6 scheduled matches." in text
        assert "Leaderboard: pages" in text  # the tournament's name as the title
    assert "Written" not in (played / "leaderboard.json").read_text()  # byte-identical for the same results


def test_arena_leaderboard_rewrites_the_pages_it_prints(played: Path) -> None:
    html = played / "leaderboard.html"
    html.write_text("<html><body>an old field: zeta first</body></html>")
    kept = CliRunner().invoke(cli, ["leaderboard", str(played), "--no-write"])
    assert kept.exit_code == 0 and "zeta" in html.read_text()  # --no-write: print only
    res = CliRunner().invoke(cli, ["leaderboard", str(played)])
    assert res.exit_code == 0, res.output
    page = html.read_text()
    assert "zeta" not in page and "Complete: all 6 scheduled matches counted." in page
    assert all(f">{bot}<" in page for bot in ("alpha", "beta", "gamma"))


def test_a_run_marks_the_earlier_pages_out_of_date_until_it_publishes(
    played: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _tournament(tmp_path, deals=2)  # 6 more matches to play
    seen: dict[str, str] = {}
    real = runner._play_pending

    def play_and_look(pending, *a, **kw):  # what a reader sees while the run plays
        seen.update({p: (played / p).read_text() for p in ("leaderboard.html", "leaderboard.md")})
        return real(pending, *a, **kw)

    monkeypatch.setattr(runner, "_play_pending", play_and_look)
    summary = _run(path)
    assert summary.complete and summary.counted == 12
    for page, text in seen.items():
        assert text.count(STALE_START) == 1, page
        assert "OUT OF DATE: a run started" in text and "to play 6 more matches" in text
        assert f"Refresh with: arena leaderboard {played}" in text
        assert "6 of 6 scheduled matches" in text  # the old page, kept below the note
    for page in ("leaderboard.html", "leaderboard.md"):  # published: true again, no note
        text = (played / page).read_text()
        assert STALE_START not in text and "from 12 of 12 scheduled matches" in text


def test_marking_twice_leaves_one_note_and_a_missing_page_alone(played: Path, tmp_path: Path) -> None:
    mark_reports_stale(played, "first note")
    marked = mark_reports_stale(played, "second note")
    assert sorted(p.name for p in marked) == ["leaderboard.html", "leaderboard.md"]
    for page in marked:
        text = page.read_text()
        assert text.count(STALE_START) == 1 and "second note" in text and "first note" not in text
    assert mark_reports_stale(tmp_path / "nothing-here", "note") == []


def test_an_interrupted_run_publishes_what_it_kept_marked_incomplete(
    played: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _tournament(tmp_path, deals=2)
    real = Supervisor._on_reply
    replies = []

    def interrupt_after_two(self, *a, **kw):  # Ctrl-C once two new matches are stored
        real(self, *a, **kw)
        replies.append(1)
        if len(replies) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(Supervisor, "_on_reply", interrupt_after_two)
    summary = _run(path)
    kept = summary.counted  # (a match the worker held may be stored too)
    assert summary.interrupted and 8 <= kept < 12 and summary.scheduled == 12
    for page in ("leaderboard.html", "leaderboard.md"):
        text = (played / page).read_text()
        assert f"INCOMPLETE: {kept} of 12 scheduled matches counted" in text
        assert f"from {kept} of 12 scheduled matches." in text and STALE_START not in text
