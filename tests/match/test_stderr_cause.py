"""A crash's error line survives a deep stack trace: Java prints the exception's name first and
up to 1024 frames after it, so the stderr tail kept for the record ('at Bot.f(Bot.java:5)' x 60)
never named the error. The record keeps it as ``stderr_cause``; arena play and check show it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from arena.match.detect import open_sandbox
from arena.match.process import stderr_cause
from arena.match.sandbox import Limits
from arena.tournament.check import run_check
from arena.tournament.roster import bot_entry

ROOT = Path(__file__).resolve().parents[2]
JAVA = 'Exception in thread "main" java.lang.StackOverflowError\n' + "\tat Bot.f(Bot.java:5)\n" * 1024


def test_the_error_line_above_the_tail_is_found():
    assert stderr_cause(JAVA, JAVA[-2000:]) == 'Exception in thread "main" java.lang.StackOverflowError'
    rust = "thread 'main' panicked at src/main.rs:9:5:\nindex out of bounds\n" + "  frame\n" * 500
    assert stderr_cause(rust, rust[-2000:]) == "thread 'main' panicked at src/main.rs:9:5:"
    python = "Traceback (most recent call last):\n" + '  File "bot.py", line 3, in f\n' * 200 + "RecursionError: x\n"
    assert stderr_cause(python, python[-2000:]) is None  # the tail names it already
    assert stderr_cause("starting\n" + "working\n" * 500, ("working\n" * 500)[-2000:]) is None


def _bot(tmp_path: Path) -> Path:
    bot = tmp_path / "deep_stack.sh"
    trace = tmp_path / "trace.txt"
    trace.write_text(JAVA)
    bot.write_text(
        f'#!/bin/sh\nread line\necho \'{{"type":"hello"}}\'\nread line\nread line\ncat {trace} >&2\nexit 1\n'
    )
    bot.chmod(0o755)
    return bot


def test_a_deep_stack_trace_keeps_its_error_in_the_record_and_the_check(tmp_path):
    bot = _bot(tmp_path)
    res = subprocess.run(
        [sys.executable, "-m", "arena", "play", "tightwad", str(bot), "builtin:random", "builtin:random"]
        + ["--seed", "7", "--json", "--sandbox", "none"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    fault = json.loads(res.stdout)["faults"][0]
    assert fault["kind"] == "crash" and fault["stderr_tail"].endswith("\tat Bot.f(Bot.java:5)\n")
    assert fault["stderr_cause"] == 'Exception in thread "main" java.lang.StackOverflowError'
    report = run_check(
        bot_entry(str(bot)), sandbox=open_sandbox("none"), limits=Limits(), matches=[("tightwad", 3, {})]
    )
    shown = report.render()
    assert '   | Exception in thread "main" java.lang.StackOverflowError\n   | [...]\n' in shown, shown
