"""botkit sends what ``choose`` returned only when it is an action id (an int): it used int(),
which sent 2 for 2.7 and 1 for True, a legal move the bot never chose, with no word of it.
Anything else now stops the bot with a TypeError naming what choose returned, and `arena
check` turns that into a hint (None: a path without return)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.match.detect import open_sandbox
from arena.match.sandbox import Limits
from arena.tournament.check import run_check
from arena.tournament.roster import bot_entry

BOTKIT = Path(__file__).resolve().parents[2] / "arena" / "bot_helper" / "botkit.py"
_spec = importlib.util.spec_from_file_location("botkit_under_test", BOTKIT)
assert _spec is not None and _spec.loader is not None
botkit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(botkit)


class _NumpyLikeInt:  # numbers.Integral by registration, as numpy's integers are
    def __init__(self, v: int) -> None:
        self.v = v

    def __int__(self) -> int:
        return self.v


def test_ints_pass_and_nothing_else_is_guessed():
    import numbers

    numbers.Integral.register(_NumpyLikeInt)
    assert botkit._action_id(3) == 3
    assert botkit._action_id(_NumpyLikeInt(4)) == 4
    assert botkit._action_id(3.0) == botkit._action_id("3") == botkit._action_id(" 3\n") == 3  # as before
    for bad in (2.7, float("nan"), True, "3.5", "x", "", "--3", "٣", None, {"id": 0}):
        with pytest.raises(TypeError, match="choose\\(\\) must return an action id"):
            botkit._action_id(bad)


def _one_act(tmp_path: Path, returns: str) -> subprocess.CompletedProcess:
    bot = tmp_path / "bot.py"
    bot.write_text(f"from botkit import run\nrun(lambda observation, match: {returns})\n")
    start = {"type": "start", "match_id": "m", "game": "tightwad", "options": {}, "players": 3, "seat": 0}
    start |= {"seed": 1, "cards": []}
    act = {"type": "act", "decision": 0, "observation": {"legal_actions": [{"id": i} for i in range(4)]}}
    lines = [{"type": "hello", "protocol": 1}, start, act, {"type": "bye"}]
    env = dict(os.environ, PYTHONPATH=str(BOTKIT.parent))
    return subprocess.run(
        [sys.executable, str(bot)],
        input="".join(json.dumps(m) + "\n" for m in lines),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_a_float_is_refused_not_truncated_to_a_move(tmp_path):
    done = _one_act(tmp_path, "2.7")
    answers = done.stdout.splitlines()[1:]  # after the hello
    assert answers == [] and done.returncode != 0, done.stdout
    assert "choose() must return an action id (an int), not 'float': 2.7" in done.stderr
    ok = _one_act(tmp_path, "2")
    assert json.loads(ok.stdout.splitlines()[1]) == {"type": "action", "action": 2} and ok.returncode == 0


def test_check_says_choose_returned_none(tmp_path):
    bot = tmp_path / "forgot_return.py"
    bot.write_text("from botkit import run\n\ndef choose(observation, match):\n    observation['legal_actions'][0]['id']\n\nrun(choose)\n")
    report = run_check(bot_entry(str(bot)), sandbox=open_sandbox("none"), limits=Limits())
    failed = [c for c in report.checks if not c.ok]
    assert failed and failed[0].fix.startswith("choose() returned None"), report.checks
