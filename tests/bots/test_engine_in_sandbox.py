"""A Python bot may ``import games`` (the engines) at every sandbox level, like botkit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.match.sandbox import SandboxUnavailable
from arena.match.detect import detect_sandbox

ROOT = Path(__file__).resolve().parents[2]
BOT = Path(__file__).parent / "bots" / "uses_engine.py"


def _play(game: str, players: int, level: str) -> dict:
    try:
        detect_sandbox(level)
    except SandboxUnavailable as exc:
        if level == "full":
            pytest.skip(f"level full unavailable here: {exc}")
        raise
    res = subprocess.run([sys.executable, "-m", "arena", "play", game, str(BOT),
                          *(["random_bot"] * (players - 1)), "--seed", "4", "--json",
                          "--sandbox", level, "--move-s", "5"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert f"sandbox level {level}" in res.stderr or level in res.stderr
    return json.loads(res.stdout)


@pytest.mark.parametrize("level", ["full", "landlock", "rlimits"])
@pytest.mark.parametrize("game,players", [("tightwad", 3), ("divers-weights", 2), ("palace", 2)])
def test_bot_importing_games_plays_a_whole_match(level: str, game: str, players: int) -> None:
    if level == "landlock":
        try:
            detect_sandbox("landlock")
        except SandboxUnavailable as exc:
            pytest.skip(f"landlock unavailable here: {exc}")
    doc = _play(game, players, level)
    assert [s["fault"] for s in doc["seats"]] == [None] * players, doc["seats"]


def test_the_bot_sees_only_the_engines_not_the_arena() -> None:
    """The folder on the bot's path holds the ``games`` package and nothing else."""
    from arena.match.sandbox.launch import bot_env, bot_lib_dir

    lib = bot_lib_dir()
    assert sorted(p.name for p in lib.iterdir()) == ["games"]
    assert {p.name for p in (lib / "games").iterdir()} >= {"__init__.py", "determinize.py", "core.py"}
    assert str(lib) in bot_env(None, "/tmp")["PYTHONPATH"].split(os.pathsep)
    assert not os.access(lib / "games" / "core.py", os.W_OK) or os.geteuid() == 0
