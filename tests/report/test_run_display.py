"""What `arena run` shows while it plays: in a terminal a live bar with faults summarised
per bot and kind (and the standings with --live); in a pipe plain lines, no control codes."""

from __future__ import annotations

import os
import pty
import re
import selectors
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import support

HERE = Path(__file__).resolve().parent
BOTS = {
    "alpha": HERE / "bots" / "random_player.py",
    "beta": HERE / "bots" / "random_player.py",
    "crasher": HERE / "bots" / "crash_loudly.py",
    "illegal": support.BOTS / "illegal_answer.py",
}


@pytest.fixture()
def tournament(tmp_path: Path) -> Path:
    for name, src in BOTS.items():
        (tmp_path / f"{name}.py").write_text(src.read_text())
    path = tmp_path / "t.yaml"
    path.write_text(f"""
name: shown
seed: 3
bots: [{", ".join(str(tmp_path / f"{n}.py") for n in BOTS)}]
games:
  - {{id: tightwad, players: [3], deals: 2}}
workers: 1
sandbox: none
trust_bots: true
results: {tmp_path / "results"}
""")
    return path


def test_in_a_pipe_faults_are_named_once_per_bot_and_kind_without_control_codes(tournament):
    out = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(tournament)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tournament.parent,
    )
    assert out.returncode in (0, 1), out.stderr
    err = out.stderr
    assert "\x1b" not in err and "\r" not in err
    assert err.count("crasher faulted (crash)") == 1 and err.count("illegal faulted (illegal)") == 1
    assert "seat" not in err  # no per-match fault lines: those are in run.log
    summary = next(ln for ln in err.splitlines() if ln.startswith("arena: faults by bot and kind:"))
    counts = dict(re.findall(r"(\w+): \w+ x(\d+)", summary))
    assert int(counts["crasher"]) > 1 and int(counts["illegal"]) > 1
    # the first fault says what it was, and run.log ("details in run.log") says it for every one
    first = next(ln for ln in err.splitlines() if "crasher faulted (crash)" in ln)
    assert "(exit code 3); its stderr ends: ValueError: the strategy table is empty" in first, first
    logged = [
        ln for ln in (tournament.parent / "results" / "run.log").read_text().splitlines() if "faulted: crash" in ln
    ]
    assert logged and all("its stderr ends: ValueError: the strategy table is empty" in ln for ln in logged)


def _run_in_a_terminal(args: list[str], cwd: Path, timeout_s: float = 300) -> str:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "120", "TERM": "xterm"},
        start_new_session=True,
    )
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout_s
    sel = selectors.DefaultSelector()  # poll-based: the pytest process may hold descriptors above 1023
    sel.register(master, selectors.EVENT_READ)
    try:
        while time.monotonic() < deadline:
            if sel.select(0.5):
                try:
                    data = os.read(master, 65536)
                except OSError:
                    break
                if not data:
                    break
                chunks.append(data)
            elif proc.poll() is not None:
                break
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
        proc.wait(timeout=30)
        sel.close()
        os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def test_in_a_terminal_a_live_bar_with_faults_summarised_and_standings(tournament):
    screen = _run_in_a_terminal(["run", str(tournament), "--live"], tournament.parent)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen)
    assert "\x1b[" in screen  # it is a live display
    assert re.search(r"matches .*\d+/\d+\s+100%", plain), plain[-2000:]
    assert "faults by bot and kind" in plain and re.search(r"crasher\s+crash\s+\d+", plain)
    assert re.search(r"crasher\s+crash\s+\d+\s+closed its output \(exit code 3\)", plain), plain[-2000:]
    assert "standings after" in plain
    # its mean places say how sure they are, as the leaderboard does (2 deals: no interval claimed)
    live = plain[plain.index("standings after") :]
    assert "(too few deals)" in live.split("Tightwad\n")[0], live[:2000]
    assert "faulted: crash" not in plain  # never one line per faulty match
    # one game: its table alone, no Overall table repeating it
    assert "Tightwad" in plain and "Overall" not in plain and "leaderboard.html" in plain


def test_a_fault_reason_keeps_the_end_of_a_long_last_stderr_line():
    """A folder's copy ran from results/<t>/bots/<sha256>/...: the first 120 characters of
    '<long path>/run.sh: 2: exec: /home/me/engine: not found' were the path, the cause was cut."""
    from arena.tournament.runner import fault_reason

    path = "/tmp/results/abs/bots/" + "0" * 64 + "/cfold/run.sh"
    reason = fault_reason(
        {"detail": "closed its output (exit code 127)", "stderr_tail": f"{path}: 2: exec: /x/e: not found\n"}
    )
    assert reason.startswith("closed its output (exit code 127); its stderr ends: ...")
    assert reason.endswith("exec: /x/e: not found"), reason


def test_a_bots_stderr_in_the_live_display_is_text_not_rich_markup():
    """The live table's "the first was" cell holds the end of a bot's stderr: rich read it as
    markup, so "[/x]" raised MarkupError and stopped `arena run` (exit 70, no leaderboard), and
    "[link=...]" put a hyperlink of the bot's choosing on the organiser's terminal."""
    import io

    from rich.console import Console

    from arena.report.live import LiveDisplay
    from arena.tournament.runner import fault_reason

    screen = io.StringIO()
    display = LiveDisplay(
        3, Console(file=screen, force_terminal=True, width=240), results=Path("/nonexistent"), live_standings=False
    )
    tail = "see [link=https://evil.example]here[/link] [/x] [blink]\n"
    display.update("m1", [("crasher", "crash")], (fault_reason({"detail": "exit code 1", "stderr_tail": tail}),))
    display.close()
    text = screen.getvalue()
    assert "\x1b]8;" not in text  # no hyperlink
    assert "[link=https://evil.example]here[/link] [/x] [blink]" in text  # shown as it is
