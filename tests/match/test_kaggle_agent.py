"""arena/bot_helper/kaggle_agent.py: a Kaggle-style agent(observation, configuration) plays as a bot,
one file with run_agent, or an untouched submission file served from a bot folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arena.match.detect import detect_sandbox
from arena.match.sandbox.launch import BOT_HELPER_DIR
from arena.tournament.roster import bot_entry
from tests.match.test_bot_folders import play

sys.path.insert(0, str(BOT_HELPER_DIR))
import kaggle_agent  # noqa: E402

ONE_FILE = """
from kaggle_agent import run_agent

seen = {"step": 0, "seed": None}


def agent(observation, configuration):
    # Kaggle's conventions: attributes at every depth, a step count from 0 per match
    assert configuration.game == "tightwad" and configuration.players == 3, configuration
    assert configuration.actTimeout == 3.0 and configuration.cards["0"].name
    if seen["seed"] != configuration.seed:
        seen.update(seed=configuration.seed, step=0)
    assert observation.step == seen["step"], (observation.step, seen)
    seen["step"] += 1
    assert observation.seat == configuration.seat and isinstance(observation.hand, list)
    return observation.legal_actions[-1].id


run_agent(agent)
"""

SUBMISSION = """
import random


def helper(legal):
    return random.choice(legal)


def agent(obs, config):
    return helper(obs.legal_actions)   # the legal action itself: Kaggle agents return what they pick
"""


def none_level():
    return detect_sandbox("none")


def test_a_one_file_kaggle_agent_plays_a_match(tmp_path: Path) -> None:
    bot = tmp_path / "kaggle_bot.py"
    bot.write_text(ONE_FILE)
    record = play(bot_entry(str(bot)), none_level())
    assert record["faults"] == [None, None, None], record["faults"]


def test_an_untouched_submission_file_is_served_from_a_bot_folder(tmp_path: Path) -> None:
    folder = tmp_path / "submission_bot"
    folder.mkdir()
    (folder / "submission.py").write_text(SUBMISSION)
    (folder / "main.py").write_text('from kaggle_agent import serve\n\nserve("submission.py")\n')
    record = play(bot_entry(str(folder)), none_level())
    assert record["faults"] == [None, None, None], record["faults"]


def test_an_answer_that_is_not_a_legal_id_is_a_crash_that_says_why(tmp_path: Path) -> None:
    bot = tmp_path / "bad_kaggle.py"
    bot.write_text("from kaggle_agent import run_agent\nrun_agent(lambda o, c: 'left')\n")
    record = play(bot_entry(str(bot)), none_level())
    fault = record["faults"][0]
    assert fault["kind"] == "crash" and "return the id of one of observation.legal_actions" in fault["stderr_tail"]


def test_action_ids() -> None:
    legal = [{"id": 0}, {"id": 3}]
    assert kaggle_agent.action_id(3, legal) == 3
    assert kaggle_agent.action_id({"id": 0, "text": "x"}, legal) == 0
    for bad in (True, "3", 1, 3.0, None):
        with pytest.raises(ValueError):
            kaggle_agent.action_id(bad, legal)


def test_struct_has_attributes_at_every_depth() -> None:
    s = kaggle_agent.structify({"a": [{"b": {"c": 1}}]})
    assert s.a[0].b.c == 1
    with pytest.raises(AttributeError):
        s.missing


def test_the_docs_example_agent_plays(tmp_path: Path) -> None:
    """docs/first-bot.md's Kaggle example, as written, plays a match without a fault."""
    text = (Path(__file__).parents[2] / "docs" / "first-bot.md").read_text()
    section = text.split("## A Kaggle-style agent", 1)[1].split("\n## ", 1)[0]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    bot = tmp_path / "doc_kaggle.py"
    bot.write_text(code)
    record = play(bot_entry(str(bot)), none_level())
    assert record["faults"] == [None, None, None], record["faults"]
