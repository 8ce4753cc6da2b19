"""Real bots attacking the referee through their output, in real `arena play` / `arena check` runs.

* 1,000 nested brackets as an answer or as the hello: a `protocol` fault, no traceback.
* A bot that closes its stdout and keeps running: a `crash` at once (not a `timeout` after
  the whole move time), at the strongest level (bubblewrap) and at a fallback level.
* Terminal escape sequences in a bot's answer or stderr are shown escaped, never obeyed.
* A bot that floods stdout after its answer: the arena stays bounded, the flood is taken
  as the next answers (docs/protocol.md, Transport), the honest seats finish.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.match.detect import SandboxUnavailable, detect_sandbox

ROOT = Path(__file__).resolve().parents[2]
RANDOM = str(ROOT / "bots" / "random_bot.py")

BOT = """import json, os, sys, time
MODE = {mode!r}
def say(obj):
    sys.stdout.write(obj if isinstance(obj, str) else json.dumps(obj))
    sys.stdout.write("\\n"); sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        say("[" * 1000 + "]" * 1000 if MODE == "nested_hello" else {{"type": "hello", "name": MODE}})
    elif msg["type"] == "act":
        if MODE == "nested":
            say("[" * 1000 + "]" * 1000)
        elif MODE == "close_stdout":
            os.close(1)
            time.sleep(60)
        elif MODE == "escapes":
            sys.stderr.write("\x1b[2J\x1b]0;pwned\x07 cleared your screen\\n"); sys.stderr.flush()
            sys.exit(3)
        elif MODE == "flood":
            say("0")
            junk = ("x" * 1023 + "\\n").encode()
            for _ in range(8 * 1024):       # 8 MiB of stray lines after a valid answer
                os.write(1, junk)
        else:
            say("0")
    elif msg["type"] == "bye":
        break
"""


def make_bot(tmp: Path, mode: str) -> str:
    path = tmp / f"{mode}_bot.py"
    path.write_text(BOT.format(mode=mode))
    return str(path)


def arena(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def play_json(*args: str, ok: bool = False) -> tuple[dict, subprocess.CompletedProcess[str]]:
    r = arena("play", *args, "--json", timeout=600)  # a hang guard only: no run's length is asserted
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == (0 if ok else 1), r.stderr  # 1: a bot faulted (arena play says so)
    return json.loads(r.stdout), r


def fallback_level() -> str:
    for level in ("landlock", "rlimits"):
        try:
            detect_sandbox(level)
            return level
        except SandboxUnavailable:
            continue
    pytest.skip("no fallback sandbox level works here")


def test_nested_brackets_answer_is_a_protocol_fault_in_arena_play(tmp_path):
    bot = make_bot(tmp_path, "nested")
    record, _ = play_json("tightwad", bot, RANDOM, RANDOM, "--seed", "3")
    fault = record["faults"][0]
    assert fault["kind"] == "protocol" and "nested deeper than" in fault["detail"]
    assert record["faults"][1:] == [None, None]
    assert record["result"]["places"][0] == 2


def test_nested_brackets_hello_is_a_protocol_fault_in_arena_play(tmp_path):
    bot = make_bot(tmp_path, "nested_hello")
    record, _ = play_json("palace", RANDOM, bot, "--seed", "3")
    assert record["faults"][1]["kind"] == "protocol" and record["faults"][0] is None


def test_nested_brackets_fail_arena_check_with_a_reason(tmp_path):
    r = arena("check", make_bot(tmp_path, "nested"))
    assert r.returncode == 1 and "Traceback" not in r.stdout + r.stderr
    assert "FAIL" in r.stdout and "protocol" in r.stdout and "nested deeper than 32" in r.stdout
    r = arena("check", make_bot(tmp_path, "nested_hello"))
    assert r.returncode == 1 and "Traceback" not in r.stdout + r.stderr
    assert "FAIL  handshake" in r.stdout


@pytest.mark.parametrize("where", ["strongest", "fallback"])
def test_closing_stdout_is_a_crash_at_once(tmp_path, where):
    level = detect_sandbox("auto").level if where == "strongest" else fallback_level()
    bot = make_bot(tmp_path, "close_stdout")
    # a deadline of 300 s: had the end of its output not been seen, the fault would be a timeout
    record, r = play_json("tightwad", bot, RANDOM, RANDOM, "--seed", "3", "--move-s", "300", "--sandbox", level)
    assert f"sandbox level {level}" in r.stderr
    fault = record["faults"][0]
    assert fault["kind"] == "crash" and "closed its output" in fault["detail"], fault
    assert record["faults"][1:] == [None, None]


def test_stdout_flood_after_an_answer_blocks_the_bot_not_the_arena(tmp_path):
    bot = make_bot(tmp_path, "flood")
    record, _ = play_json("tightwad", bot, RANDOM, RANDOM, "--seed", "3", "--move-s", "2")
    fault = record["faults"][0]
    assert fault["kind"] == "protocol" and "xxxx" in fault["detail"], fault
    mine = [d for d in record["decisions"] if d["seat"] == 0]
    assert mine[0]["status"] == "ok"  # its real answer counted
    assert record["faults"][1:] == [None, None]
    assert all(d["status"] == "ok" for d in record["decisions"] if d["seat"] != 0)


def test_escape_sequences_from_a_bot_never_reach_the_terminal(tmp_path):
    bot = make_bot(tmp_path, "escapes")
    r = arena("play", "tightwad", bot, RANDOM, RANDOM, "--seed", "3")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert (
        r.stderr.strip().splitlines()[-1]
        == "arena: a bot faulted, seat 0 (escapes_bot): crash at decision 2; exit code 1"
    )
    assert "crash" in r.stdout and "cleared your screen" in r.stdout
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout
    c = arena("check", bot)
    assert c.returncode == 1 and "cleared your screen" in c.stdout
    assert "\x1b" not in c.stdout and "\x07" not in c.stdout


def test_nested_brackets_in_a_tournament_are_charged_to_the_bot_and_the_run_completes(tmp_path):
    bot = make_bot(tmp_path, "nested")
    path = tmp_path / "t.yaml"
    path.write_text(f"""
name: nested
seed: 1
bots: [{bot}, {RANDOM}, {{path: {RANDOM}, name: random_two}}]
games:
  - {{id: palace, players: [3], deals: 1}}
workers: 1
results: {tmp_path / "results"}
""")
    r = arena("run", str(path), timeout=300)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "3 matches played now" in r.stdout
    board = json.loads((tmp_path / "results" / "leaderboard.json").read_text())
    mine = next(s for s in board["scopes"][0]["standings"] if s["bot"] == "nested_bot")
    assert mine["faults"]["protocol"] == 3 and mine["matches"] == 3
