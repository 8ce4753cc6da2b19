"""Leaderboard files (md, csv, json, html) and the terminal text."""

from __future__ import annotations

import csv
import dataclasses
import html
import io
import json
import random
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from arena.report.leaderboard import CSV_COLUMNS, render_markdown, render_terminal
from arena.report.leaderboard import render_csv as lb_csv
from arena.report.ratings import OVERALL, RatingReport, compute_ratings
from arena.report.standings import write_reports
from tests.support.record_factory import make_record

EVIL = '<script>alert("x")</script>&amp'
BOTS = ("alpha", "bravo", EVIL, "delta")


def _report(n: int = 60, seed: int = 11) -> RatingReport:
    rng = random.Random(seed)
    strength = {"alpha": 3.0, "bravo": 1.0, EVIL: 0.5, "delta": 0.0}
    recs = []
    for i in range(n):
        game = ("tightwad", "palace")[i % 2]
        seats = rng.sample(BOTS, 3)
        perf = [strength[b] + rng.gauss(0, 1) for b in seats]
        places = [sum(1 for q in perf if q > p) for p in perf]
        faults = [None, None, None]
        if i == 7:
            faults[0] = {"kind": "timeout", "detail": "no answer within 1.0 s"}
            places = [2, 0, 1]  # the faulted seat is last (fault policy)
        recs.append(
            make_record(i, seats, places, game=game, faults=faults, capped=(i == 12), match_id=f"{game}/m{i:03d}")
        )
    return compute_ratings(recs)


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@pytest.fixture(scope="module")
def report() -> RatingReport:
    return _report()


@pytest.fixture(scope="module")
def written(report: RatingReport, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_reports(report, tmp_path_factory.mktemp("lb"), title="Test <cup>")


def test_all_files_exist(written: dict[str, Path]) -> None:
    assert {k: p.name for k, p in written.items()} == {
        "md": "leaderboard.md",
        "csv": "leaderboard.csv",
        "json": "leaderboard.json",
        "html": "leaderboard.html",
    }
    assert all(p.stat().st_size > 0 for p in written.values())
    assert not list(written["md"].parent.glob("*.tmp"))


def test_csv_one_row_per_scope_and_bot(report: RatingReport, written: dict[str, Path]) -> None:
    rows = list(csv.DictReader(io.StringIO(written["csv"].read_text(encoding="utf-8"))))
    assert tuple(rows[0]) == CSV_COLUMNS
    expected = [(s.scope, b.name) for s in report.scopes for b in s.standings]
    assert [(r["scope"], r["bot"]) for r in rows] == expected
    assert {r["scope"] for r in rows} == {OVERALL, "palace", "tightwad"}
    for scope in report.scopes:
        mine = [r for r in rows if r["scope"] == scope.scope]
        cons = [float(r["conservative"]) for r in mine]
        assert cons == sorted(cons, reverse=True)
        assert [int(r["rank"]) for r in mine] == list(range(1, len(mine) + 1))
        for r in mine:
            assert float(r["conservative"]) == pytest.approx(float(r["mu"]) - 3 * float(r["sigma"]), abs=1e-5)
    timeouts = sum(int(r["faults_timeout"]) for r in rows if r["scope"] == OVERALL)
    assert timeouts == 1


def test_json_is_the_report(report: RatingReport, written: dict[str, Path]) -> None:
    data = json.loads(written["json"].read_text(encoding="utf-8"))
    assert data == report.to_json()
    assert data["format"] == "decktet-arena-leaderboard" and data["version"] == 1
    assert [s["scope"] for s in data["scopes"]] == [OVERALL, "palace", "tightwad"]


def test_html_has_tables_and_one_svg_per_scope(report: RatingReport, written: dict[str, Path]) -> None:
    page = written["html"].read_text(encoding="utf-8")
    parser = _Collector()
    parser.feed(page)
    n = len(report.scopes)
    assert parser.tags.count("svg") == n
    assert parser.tags.count("polyline") == sum(1 for s in report.scopes for b in s.standings if b.history)
    classes = [a.get("class") for t, a in parser.attrs if t == "table"]
    assert classes.count("standings") == n and classes.count("h2h") == n
    assert classes.count("notable") == 1
    sections = [a.get("id") for t, a in parser.attrs if t == "section"]
    assert sections == [f"scope-{s.scope}" for s in report.scopes] + ["notable"]
    text = "".join(parser.text)
    assert "palace/m007" in text and "tightwad/m012" in text


def test_html_is_self_contained(written: dict[str, Path]) -> None:
    parser = _Collector()
    parser.feed(written["html"].read_text(encoding="utf-8"))
    assert "script" not in parser.tags and "link" not in parser.tags
    assert "img" not in parser.tags and "iframe" not in parser.tags
    for tag, attrs in parser.attrs:
        for key in ("src", "href"):
            value = attrs.get(key)
            assert value is None or value.startswith("#"), (tag, key, value)
    assert "@import" not in written["html"].read_text() and "url(" not in written["html"].read_text()


def test_html_escapes_bot_names(written: dict[str, Path]) -> None:
    page = written["html"].read_text(encoding="utf-8")
    assert EVIL not in page and "<cup>" not in page
    # escaped, whichever entity the template engine picks for the quote (&quot; or &#34;)
    assert re.search(r"&lt;script&gt;alert\((&quot;|&#34;)x(&quot;|&#34;)\)&lt;/script&gt;&amp;amp", page)
    parser = _Collector()
    parser.feed(page)
    assert EVIL in "".join(parser.text)  # the name reads right once unescaped
    assert "Test <cup>" in "".join(parser.text)


def test_markdown_has_a_table_per_scope(report: RatingReport, written: dict[str, Path]) -> None:
    md = written["md"].read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", md, re.M)
    assert headings == ["Overall", "Palace", "Tightwad", "Notable matches"]
    chunks = re.split(r"^## ", md, flags=re.M)[1:4]
    for chunk in chunks:
        assert re.search(r"^\|\s+rank\s+\| bot\s+\|\s+μ", chunk, re.M)
        assert "### Head-to-head" in chunk
    assert EVIL not in md and "&lt;script&gt;" in md
    for chunk, scope in zip(chunks, report.scopes):
        ranked = re.findall(r"^\|\s*(\d+)\s*\|\s*(.+?)\s*\|", chunk, re.M)
        assert [(int(r), html.unescape(n)) for r, n in ranked] == [
            (s.rank, s.name + (" ⚠" if s.faults_total else "")) for s in scope.standings
        ]


def test_terminal_text_lists_scopes_and_notable_matches(report: RatingReport) -> None:
    text = render_terminal(report, results="results/spring")
    for title in ("Overall", "Palace", "Tightwad", "Head-to-head:"):
        assert title in text
    assert "arena replay results/spring <match id>" in text and "arena matches results/spring" in text
    line = next(li for li in text.splitlines() if "palace/m007" in li)
    faulted = next(n for n in report.notable if n.match_id == "palace/m007")
    assert "timeout" in line and line.startswith(faulted.bot)
    assert any("tightwad/m012" in li and "capped" in li for li in text.splitlines())
    overall = text.split("Palace\n")[0]
    names = [s.name for s in report.scopes[0].standings]
    positions = [re.search(rf"\n +{s.rank}  {re.escape(s.name)}", overall).start() for s in report.scopes[0].standings]
    assert positions == sorted(positions) and len(names) == 4


def test_ties_sorted_by_name_in_every_output(tmp_path: Path) -> None:
    recs = [make_record(0, ["zed", "x"], [0, 1]), make_record(1, ["amy", "y"], [0, 1])]
    report = compute_ratings(recs)
    paths = write_reports(report, tmp_path)
    rows = list(csv.DictReader(paths["csv"].open(encoding="utf-8")))
    assert [r["bot"] for r in rows if r["scope"] == OVERALL] == ["amy", "zed", "x", "y"]
    md = render_markdown(report)
    assert md.index("| amy") < md.index("| zed") < md.index("| x ") < md.index("| y ")


def test_two_writers_of_one_folder_at_once_each_write_whole_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both wrote leaderboard.<ext>.tmp: when a second writer (`arena leaderboard` while `arena
    run` publishes) wrote and renamed it between the first's write and rename, the first failed
    with FileNotFoundError, a crash "in arena"; a second writer still writing when the first
    renamed made half a file the leaderboard. Each writer has a temporary file of its own now."""
    import os

    from arena.report import files

    first = compute_ratings([make_record(0, ["alpha", "bravo"], [0, 1])])
    second = compute_ratings([make_record(0, ["alpha", "bravo"], [1, 0])])
    replace = os.replace
    other_writer = iter([lambda: write_reports(second, tmp_path, written="second")])

    def replace_after_another_writer(src: str | Path, dst: str | Path) -> None:
        for write in other_writer:  # once, in the middle of the first writer's first file
            write()
        replace(src, dst)

    monkeypatch.setattr(files.os, "replace", replace_after_another_writer)
    paths = write_reports(first, tmp_path, written="first")
    assert json.loads(paths["json"].read_text())["scopes"][0]["standings"][0]["bot"] == "alpha"
    assert paths["md"].read_text() == render_markdown(first, written="first", title="Leaderboard")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths.values())


def test_no_csv_cell_reads_as_a_spreadsheet_formula(report: RatingReport) -> None:
    """docs/leaderboard-json.md: the CSV is the data as it is (no leading quote added), and safe
    to open in a spreadsheet because no text cell can start a formula: the name rule refuses
    such names, and only a negative number starts with '-'."""
    from arena.tournament.config import SAFE_NAME

    for name in ('=HYPERLINK("http://x","y")', "+1", "-1", "@SUM(A1)", "\tx", "\rx", "|x", "%0A"):
        assert not SAFE_NAME.match(name), name
    after_one_match = compute_ratings([make_record(0, ["alpha", "bravo"], [0, 1])])  # bravo's is below 0
    for r in (report, after_one_match):
        cells = [c for row in csv.reader(io.StringIO(lb_csv(r))) for c in row]
        assert any(c.startswith("-") for c in cells) or r is report
        for c in cells:
            if c[:1] in ("=", "+", "-", "@", "\t", "\r"):
                float(c)  # a number, which a spreadsheet reads as one


def test_empty_report_renders(tmp_path: Path) -> None:
    report = compute_ratings([])
    paths = write_reports(report, tmp_path)
    parser = _Collector()
    parser.feed(paths["html"].read_text())
    assert parser.tags.count("svg") == 1
    assert "Overall" in render_terminal(report)
    assert json.loads(paths["json"].read_text())["scopes"][0]["standings"] == []


def _column_of(table_text: str, header: str) -> list[str]:
    """The cells of one column of a tabulate 'simple' table, with their padding."""
    lines = table_text.splitlines()
    rule = next(i for i, ln in enumerate(lines) if set(ln) <= {"-", " "} and "-" in ln)
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[rule])]
    col = next(k for k, (a, b) in enumerate(spans) if header in lines[rule - 1][a:b])
    a, b = spans[col]
    return [ln[a:b] for ln in lines[rule + 1 :] if ln.strip()]


def test_numbers_are_right_aligned_in_the_terminal_and_markdown(report: RatingReport) -> None:
    text = render_terminal(report)
    standings = text.split("\n\n")[2]  # after the status line and the scope summary
    for header in ("rank", "μ", "conservative", "matches", "mean place", "firsts"):
        cells = _column_of(standings, header)
        assert len(cells) == 4 and all(c == c.rstrip() or c.strip() == "" for c in cells), (header, cells)
        assert len({len(c.rstrip()) for c in cells}) == 1, (header, cells)  # right edges line up
    md = render_markdown(report)
    rule = next(ln for ln in md.splitlines() if ln.startswith("|--") or ln.startswith("|-") or ln.startswith("|:"))
    aligns = [c.strip() for c in rule.strip("|").split("|")]
    assert aligns[0].endswith(":") and not aligns[1].endswith(":") and aligns[2].endswith(":")


def test_bots_with_faults_are_marked_with_their_counts_by_kind(report: RatingReport) -> None:
    text = render_terminal(report)
    overall = report.scopes[0]
    faulty = [s for s in overall.standings if s.faults_total]
    assert faulty, "the fixture has a timeout"
    for s in overall.standings:
        line = next(ln for ln in text.splitlines() if f" {s.name}" in ln)
        assert ("⚠" in line) == bool(s.faults_total)
        if s.faults_total:
            assert f"{s.faults_total} (timeout 1)" in line


def test_notable_matches_are_grouped_by_bot_and_kind() -> None:
    rng = random.Random(5)
    recs = []
    for i in range(160):
        seats = rng.sample(BOTS, 3)
        faults = [{"kind": "crash" if i % 2 else "timeout", "detail": f"boom {i}"}, None, None]
        recs.append(make_record(i, seats, [2, 0, 1], game="tightwad", faults=faults, match_id=f"tightwad/m{i:03d}"))
    report = compute_ratings(recs)
    text = render_terminal(report, results="res")
    section = text.split("Notable matches:")[1]
    assert "160 in " in text.split("Notable matches:")[1][:20]
    rows = [ln for ln in section.splitlines()[3:] if ln.strip()]
    assert len(rows) <= len(BOTS) * 2
    total = 0
    for ln in rows:
        count = int(re.search(r"\s(\d+)\s+tightwad/m", ln).group(1))
        total += count
        assert ", …" in ln or count <= 3
    assert total == 160


def _adaptive_entry(players: int, status: str = "cap") -> dict:
    standings = [
        {
            "bot": b,
            "rating": 0.0,
            "score": 0.5,
            "low": 0.4,
            "high": 0.6,
            "samples": 4,
            "ranks": [1, 2],
            "decided": False,
        }
        for b in ("alpha", "bravo")
    ]
    return {
        "key": "tightwad",
        "game": "tightwad",
        "players": players,
        "confidence": 0.95,
        "top": None,
        "margin": 0.05,
        "status": status,
        "rounds": 4,
        "matches": 4 * players,
        "matches_rated": 4 * players,
        "cap": 4 * players,
        "standings": standings,
        "decided_pairs": [],
    }


def test_two_adaptive_entries_of_one_game_get_their_own_section_ids_and_titles() -> None:
    """Adaptive tightwad at 3 and at 4 players (both keyed 'tightwad'): the page had two
    sections with id="adaptive-scope-tightwad" (invalid HTML, an anchor that finds only the first)
    and both files two identical titles."""
    from arena.report.html_report import render_html

    report = dataclasses.replace(_report(), adaptive=(_adaptive_entry(3), _adaptive_entry(4)))
    ids = re.findall(r'id="([^"]+)"', render_html(report))
    assert len(ids) == len(set(ids)) and {"adaptive-scope-tightwad-p3", "adaptive-scope-tightwad-p4"} <= set(ids)
    md = render_markdown(report)
    assert "## Adaptive schedule: tightwad (3 players)" in md and "## Adaptive schedule: tightwad (4 players)" in md


def test_an_adaptive_race_still_playing_leaves_the_report_incomplete() -> None:
    """Every match planned so far counted, but an adaptive entry between rounds: not complete."""
    base = _report()
    full = dataclasses.replace(base, scheduled=base.counted)
    assert full.complete
    open_race = dataclasses.replace(full, adaptive=(_adaptive_entry(3, "playing"),))
    assert not open_race.complete and open_race.to_json()["complete"] is False
    assert render_markdown(open_race).count("INCOMPLETE") >= 1
    assert dataclasses.replace(full, adaptive=(_adaptive_entry(3, "decided"),)).complete


def test_a_writer_killed_mid_write_leaves_a_temporary_file_the_next_write_removes(tmp_path: Path) -> None:
    """kill -9 between the write and the rename leaves `.leaderboard.md.<pid>.<hex>.tmp`: the
    next write of that file removes it once its process is gone, and keeps a running writer's."""
    import os
    import subprocess
    import sys

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(gone.stdout)  # exited: no process has this pid (unless reused at once)
    orphan = tmp_path / f".leaderboard.md.{dead_pid}.0123456789ab.tmp"
    orphan.write_text("half a page")
    running = tmp_path / f".leaderboard.md.{os.getpid()}.ba9876543210.tmp"  # a writer still at work
    running.write_text("its page, being written")
    other = tmp_path / f".leaderboard.csv.{dead_pid}.0123456789ab.tmp"  # another file's: its next write
    other.write_text("x")
    report = compute_ratings([make_record(0, ["amy", "zed"], [0, 1])])
    (tmp_path / "leaderboard.md").write_text("old")
    from arena.report.files import replace_text

    replace_text(tmp_path / "leaderboard.md", render_markdown(report))
    assert not orphan.exists() and running.exists() and other.exists()
