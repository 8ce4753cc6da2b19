"""Every page and terminal line is inert: a name, a fault message or a stderr tail from the
results shows as itself, never as Markdown/HTML markup or as a terminal control sequence."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from arena.cli import cli
from arena.inert import visible
from arena.report.leaderboard import render_markdown
from arena.report.ratings import compute_ratings
from arena.report.standings import load_report, write_reports
from arena.tournament.store import ResultStore
from tests.support.record_factory import make_record

BAD_LINE = (
    "bad line: ![x](http://evil.example/x.png) [click](https://evil.example/) "
    "<img src=http://evil.example/y.png> www.evil.example mail@evil.example `code` *em* | cell"
)
CONTROLS = "\x1b[2J\x1b]0;owned\x07\r\x85\u202e"  # clear screen, set title, CR, NEL, bidi override
RAW = ("\x1b", "\x07", "\r", "\x85", "\u202e")


def _records(detail: str = BAD_LINE, name: str = "zulu") -> list[dict]:
    recs = []
    for i in range(12):
        bots = ["alpha", "bravo", name] if i % 2 else [name, "alpha", "bravo"]
        faults = [None, None, None]
        if i == 3:
            faults[2] = {"kind": "protocol", "detail": detail, "decision": 0}
        recs.append(make_record(i, bots, [0, 1, 2], match_id=f"tightwad/m{i:02d}"))
        recs[-1]["faults"] = faults
    return recs


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)


def test_a_bad_answer_line_is_no_image_or_link_in_leaderboard_md() -> None:
    md = render_markdown(compute_ratings(_records()))
    assert "evil" in md
    page = MarkdownIt("commonmark").enable("table").render(md)
    tags = _Tags()
    tags.feed(page)
    assert not {"img", "a"} & set(tags.tags), tags.tags
    assert "![x](http://evil.example/x.png) [click](https://evil.example/)" in page  # shown as it is
    assert "`code` *em*" in page and "&lt;img src=" in page
    # GitHub also links bare http://, www. and e-mail addresses: none is left whole
    assert not re.search(r"https?://|www\.evil|mail@evil", md)
    # the notable table still has its 5 columns: the | of the text did not split a cell
    row = next(line for line in md.splitlines() if "evil" in line)
    assert len(re.findall(r"(?<!\\)\|", row)) == 6


def test_control_characters_are_escaped_in_markdown_and_html(tmp_path: Path) -> None:
    report = compute_ratings(_records(detail="crashed " + CONTROLS))
    paths = write_reports(report, tmp_path)
    for kind in ("md", "html"):
        text = paths[kind].read_text(encoding="utf-8")
        assert not any(c in text for c in RAW), kind
        assert "x1b" in text and "u202e" in text, kind


def _results_with_faults(tmp_path: Path, faults: list) -> Path:
    """Six matches of alpha, bravo and charlie in tmp_path/results; the third has ``faults`` (and
    places charlie first)."""
    folder = tmp_path / "results"
    store = ResultStore(folder)
    store.init_tournament("t", {"name": "t"}, [])
    for i in range(6):
        rec = make_record(i, ["alpha", "bravo", "charlie"], [0, 1, 2], match_id=f"tightwad/m{i:02d}")
        if i == 2:
            rec["result"]["places"] = [1, 2, 0]
            rec["faults"] = faults
        store.record_match(rec)
    store.close()
    return folder


def test_each_notable_group_shows_its_own_bots_stderr_tail(tmp_path: Path) -> None:
    # Two bots fault in the same match, the first of both their notable groups: each group's
    # row shows that bot's stderr tail, not the other's (they were keyed by match id alone).
    folder = _results_with_faults(
        tmp_path,
        [
            {"kind": "crash", "detail": "exit 1", "decision": 0, "stderr_tail": "ALPHA-TAIL"},
            {"kind": "crash", "detail": "exit 1", "decision": 0, "stderr_tail": "BRAVO-TAIL"},
            None,
        ],
    )
    report, _ = load_report(folder)
    page = write_reports(report, folder)["html"].read_text(encoding="utf-8")
    rows = {m.group(1): m.group(0) for m in re.finditer(r'<tr[^>]*><td class="name">(\w+)</td>.*?</tr>', page)}
    assert "ALPHA-TAIL" in rows["alpha"] and "BRAVO-TAIL" not in rows["alpha"]
    assert "BRAVO-TAIL" in rows["bravo"] and "ALPHA-TAIL" not in rows["bravo"]


def _assert_inert(text: str) -> None:
    assert not any(c in text for c in RAW), repr(text)


def test_a_bot_file_name_with_escapes_prints_escaped(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / f"bot{CONTROLS}.py"
    bad.write_text("print('hi')\n")
    result = CliRunner().invoke(cli, ["check", str(bad)])
    assert result.exit_code == 2
    _assert_inert(result.stderr)
    assert "\\x1b[2J" in result.stderr and "\\u202e" in result.stderr and "\\r" in result.stderr
    result = CliRunner().invoke(cli, ["play", "tightwad", str(bad), "builtin:random", "builtin:random"])
    assert result.exit_code == 2
    _assert_inert(result.stderr)
    (tmp_path / "t.yaml").write_text(
        f"name: t\nseed: 1\nbots: [{tmp_path}/*.py]\ngames: [{{id: tightwad, players: 3, deals: 1}}]\n"
    )
    result = CliRunner().invoke(cli, ["run", "t.yaml"])
    assert result.exit_code == 2
    _assert_inert(result.stderr)
    assert "\\x1b[2J" in result.stderr


def test_stored_names_and_messages_print_escaped(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    store = ResultStore(folder)
    store.init_tournament("t", {"name": "t"}, [])
    for rec in _records(detail="crashed " + CONTROLS, name="zulu" + CONTROLS):
        store.record_match(rec)
    store.close()
    for args in (["matches", str(folder)], ["matches", str(folder), "--fault", "any"], ["leaderboard", str(folder)]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        _assert_inert(result.output)
        assert "\\u202e" in result.output and "\\x1b" in result.output, args


@pytest.mark.parametrize("text", ["plain", "tab\tand\nnewline", "é ± ✓"])
def test_printable_text_is_unchanged(text: str) -> None:
    assert visible(text) == text


def test_the_live_display_shows_messages_and_bot_names_escaped(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from arena.report.live import LiveDisplay, _ConsoleStream

    out = io.StringIO()
    console = Console(file=out, force_terminal=False, color_system=None, width=200)
    _ConsoleStream(console).write(f"arena: since the last run: bot{CONTROLS} joined\n")
    display = LiveDisplay(3, console, results=tmp_path, live_standings=False)
    display.update("m1", [(f"zulu{CONTROLS}", "crash")])
    display.close()
    _assert_inert(out.getvalue())
    assert "\\u202e" in out.getvalue() and "zulu\\x1b" in out.getvalue()


def test_markdown_escaping_keeps_names_readable_and_makes_no_emphasis() -> None:
    from arena.report.leaderboard import _md_escape

    assert _md_escape("random_bot") == "random_bot"  # an inner _ is never emphasis
    assert (
        _md_escape("INCOMPLETE: 2 of 6 scheduled matches counted.") == "INCOMPLETE: 2 of 6 scheduled matches counted."
    )
    tags = _Tags()
    tags.feed(MarkdownIt("commonmark").render(_md_escape("_em_ __strong__ *em* ~~del~~ a_b_ `code`")))
    assert tags.tags == ["p"]


@pytest.mark.slow
def test_the_human_seat_in_a_terminal_keeps_its_own_drawing(tmp_path: Path) -> None:
    # The guard escapes what commands print; the person's table is drawn by rich with its own
    # control codes (bold, colours), which must reach the terminal as codes, not as \x1b text.
    import os
    import select
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[2]
    main, child = os.openpty()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena",
            "play",
            "tightwad",
            "builtin:random",
            "builtin:random",
            "--human",
            "0",
            "--seed",
            "7",
        ],
        stdin=child,
        stdout=child,
        stderr=child,
        cwd=root,
        start_new_session=True,
        env=dict(os.environ, TERM="xterm-256color", COLUMNS="120"),
    )
    os.close(child)
    out = b""
    try:
        end = time.monotonic() + 120
        while b"your turn" not in out and time.monotonic() < end and proc.poll() is None:
            if select.select([main], [], [], 0.5)[0]:
                try:
                    out += os.read(main, 65536)
                except OSError:
                    break
    finally:
        proc.kill()
        proc.wait()
        os.close(main)
    assert b"your turn" in out, out[-2000:]
    assert b"\x1b[" in out and b"\\x1b[" not in out


def test_json_a_command_prints_is_json_and_the_file_byte_for_byte(tmp_path: Path) -> None:
    """A crashing bot's stderr tail (in every export line) and a fault detail (in leaderboard.json)
    may hold characters a terminal must not act on. Printed, the guard showed them as \\x85, \\x7f,
    \\U000e0041: `arena export results > x.jsonl` wrote lines that are not JSON (`arena replay
    x.jsonl` refused them), and `leaderboard --format json` was not the file. They are written as
    JSON's own \\u escapes now, in the files too: the same data, and nothing raw in a file either."""
    odd = "bad \x85 \x7f \U000e0041 \u202e \u200b \x1b[2J end"
    folder = _results_with_faults(
        tmp_path, [{"kind": "crash", "detail": odd, "decision": 0, "stderr_tail": odd}, None, None]
    )

    printed = CliRunner().invoke(cli, ["export", str(folder)])
    assert printed.exit_code == 0, printed.output
    lines = printed.stdout.splitlines()
    crashed = [json.loads(line) for line in lines][2]["faults"][0]
    assert crashed["stderr_tail"] == odd and crashed["detail"] == odd
    assert CliRunner().invoke(cli, ["export", str(folder), "-o", str(tmp_path / "x.jsonl")]).exit_code == 0
    assert (tmp_path / "x.jsonl").read_text(encoding="utf-8") == printed.stdout

    printed = CliRunner().invoke(cli, ["leaderboard", str(folder), "--format", "json"])
    assert printed.exit_code == 0, printed.output
    assert json.loads(printed.stdout)["notable"][0]["detail"] == odd
    assert (folder / "leaderboard.json").read_text(encoding="utf-8") == printed.stdout
    _assert_inert(printed.stdout)
