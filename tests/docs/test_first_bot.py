"""docs/first-bot.md works as written.

The tutorial is followed step by step in an empty folder that holds only a copy of
bots/random_bot.py: blocks under ``<!-- file: PATH -->`` are written to PATH, every
``arena ...`` line of a block under ``<!-- run -->`` is run (as ``python -m arena``)
and must exit 0, and a ```text block under ``<!-- output -->`` must appear in that
command's stdout (its lines in order; ``...`` stands for any text, a line of only
``...`` for any lines). At the end the tournament's leaderboard.json must rank the
tutorial's bot above both random bots in Tightwad, and its log must hold the lines
the tutorial shows.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "first-bot.md"
BLOCK = re.compile(
    r"^<!-- (?P<mark>file: (?P<path>\S+)|run|output) -->\n```(?P<lang>\w+)\n(?P<body>.*?)^```$", re.S | re.M
)


def _steps() -> list[tuple[str, str | None, str, str]]:
    return [
        (m.group("mark").split(":")[0], m.group("path"), m.group("lang"), m.group("body"))
        for m in BLOCK.finditer(DOC.read_text(encoding="utf-8"))
    ]


def _expect(expected: str, stdout: str, command: str) -> None:
    """``expected``'s lines appear in ``stdout`` in order ("..." = any text)."""
    lines = [ln.rstrip() for ln in stdout.splitlines()]
    i = 0
    for want in expected.splitlines():
        want = want.rstrip()
        if not want or want == "...":
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in want.split("...")))
        while i < len(lines) and not pattern.fullmatch(lines[i]):
            i += 1
        assert i < len(lines), f"`{command}`: line not found (in order) in its output: {want!r}\n{stdout}"
        i += 1


def test_tutorial_has_every_step() -> None:
    steps = _steps()
    kinds = [k for k, *_ in steps]
    files = [p for k, p, *_ in steps if k == "file"]
    assert files.count("bots/my_bot.py") == 2 and "tournaments/first-bot.yaml" in files
    assert kinds.count("run") >= 5 and kinds.count("output") >= 4
    assert kinds[0] == "file", "the tutorial starts from writing the bot"
    runs = " ".join(body for k, _, _, body in steps if k == "run")
    for command in (
        "arena play tightwad bots/my_bot.py random_bot random_bot --seed",
        "--seat 0",
        "--quiet",
        "arena check bots/my_bot.py",
        "arena run tournaments/first-bot.yaml",
        "--no-timeouts --sandbox none",
    ):
        assert command in runs
    first_bot = next(body for k, p, _, body in steps if p == "bots/my_bot.py")
    assert "from botkit import run" in first_bot
    for game in ("tightwad", "divers-weights", "palace"):  # the search bot keeps its budget in each
        assert f"arena play {game} bots/search_bot.py" in runs, game


@pytest.mark.slow
def test_tutorial_as_written(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    shutil.copy(ROOT / "bots" / "random_bot.py", tmp_path / "bots" / "random_bot.py")
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    last: tuple[str, str] | None = None
    for kind, path, lang, body in _steps():
        if kind == "file":
            assert path is not None and not Path(path).is_absolute() and ".." not in Path(path).parts
            target = tmp_path / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body, encoding="utf-8")
        elif kind == "run":
            assert lang == "sh"
            last = None
            for line in body.splitlines():
                if not line.strip():
                    continue
                argv = shlex.split(line)
                assert argv[0] == "arena", f"a run block holds arena commands only: {line!r}"
                out = subprocess.run(
                    [sys.executable, "-m", "arena", *argv[1:]],
                    cwd=tmp_path,
                    env=env,
                    capture_output=True,
                    text=True,
                    encoding="utf-8",
                    timeout=300,
                )
                assert out.returncode == 0, f"`{line}` exited {out.returncode}\n{out.stdout}\n{out.stderr}"
                if argv[1] == "play":  # no seat faulted (a timeout is a fault): the fault column is empty
                    rows = [r for r in out.stdout.splitlines() if re.match(r"\s+\d+\s+\S+\s+\d+\s+-?\d+", r)]
                    assert rows and all(len(r.split()) == 4 for r in rows), f"`{line}`: a fault\n{out.stdout}"
                last = (line, out.stdout)
        else:
            assert lang == "text" and last is not None, "an output block follows a run block"
            _expect(body, last[1], last[0])

    results = tmp_path / "results" / "first-bot"
    board = json.loads((results / "leaderboard.json").read_text())
    scope = next(s for s in board["scopes"] if s["scope"] == "tightwad")
    rank = {s["bot"]: s["rank"] for s in scope["standings"]}
    assert rank["my_bot"] < rank["random_bot"] and rank["my_bot"] < rank["random_twin"], rank
    assert all(s["faults_total"] == 0 for s in scope["standings"])

    # The log lines the tutorial shows are what on_result wrote, one per match of my_bot.
    logs = "".join(p.read_text() for p in sorted(results.glob("logs/worker-*/my_bot.stderr.log")))
    lines = logs.splitlines()
    logged = [ln for ln in lines if not ln.startswith("[arena: my_bot: new process at ")]
    # one header per process of the bot: fair play keeps about one per rotation of a deal on
    # each worker (a process never plays a deal twice), plus a few started ahead; a new process
    # for every match would be one header per match
    assert 1 <= len(lines) - len(logged) <= min(16, len(logged) // 2)
    assert len(logged) == scope["matches"] == 30
    assert all(re.fullmatch(r"tightwad/p3/d\d\d/r[012]/[0-9a-f]{16} seat [012] place [123]", ln) for ln in logged)
    text = DOC.read_text(encoding="utf-8")
    shown = text[text.index("cat results/first-bot/logs/") :]
    shown = shown[shown.index("```text\n") + 8 :]
    shown = shown[: shown.index("```")]
    for line in shown.splitlines():
        if line != "...":
            assert line in logged, f"the tutorial shows a log line the bot did not write: {line!r}"
