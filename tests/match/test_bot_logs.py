"""A bot's log keeps everything it wrote, up to the last line before it exited.

The last line is the one at risk: when the referee notices the exit, that line may
still sit in the pipe. These tests run with both cores kept busy by CPU burners
they start (and kill), as on a busy machine, where the loss showed first.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.match.detect import detect_sandbox
from arena.match.process import BotProcess, bot_command
from arena.match.sandbox import Limits, SandboxUnavailable
from tests import support

BOT = support.BOTS / "last_words.py"
LEVELS = ["auto", "rlimits"]


@pytest.fixture
def busy_cores():
    """Two processes that spin for the whole test; killed at its end."""
    burners = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(2)]
    try:
        yield burners
    finally:
        for p in burners:
            p.kill()
        for p in burners:
            p.wait()


def start(level: str, log: Path) -> BotProcess:
    try:
        info = detect_sandbox(level)
    except SandboxUnavailable as exc:
        pytest.skip(f"sandbox level {level} unavailable here: {exc}")
    return BotProcess.start(
        bot_command(BOT), bot_file=BOT, name="last_words", sandbox=info, limits=Limits(), log_path=log
    )


def ask(bot: BotProcess, line: bytes) -> None:
    bot.send_line(line, time.monotonic() + 30)
    assert bot.read_line(time.monotonic() + 30)[0] == b"ok"


def lines(log: Path) -> list[str]:
    """What the bot wrote, without the arena's one header line per process."""
    return [ln for ln in log.read_text().splitlines() if not ln.startswith("[arena: ")]


def wait_exit(bot: BotProcess, limit_s: float = 30) -> None:
    end = time.monotonic() + limit_s
    while bot.alive():
        assert time.monotonic() < end, "the bot did not exit after bye"
        time.sleep(0.01)


@pytest.mark.parametrize("level", LEVELS)
def test_the_last_line_of_a_bot_that_exited_before_the_close_is_logged(tmp_path, level, busy_cores):
    log = tmp_path / "bot.stderr.log"
    bot = start(level, log)
    ask(bot, b"log 5")
    bot.send_line(b"bye", time.monotonic() + 30)
    wait_exit(bot)  # gone before the referee looks: its last line waits in the pipe
    bot.close()
    assert lines(log) == [f"line {i}" for i in range(1, 6)] + ["last words"]


@pytest.mark.parametrize("level", LEVELS)
def test_no_goodbye_loses_the_last_line_on_busy_cores(tmp_path, level, busy_cores):
    """What a worker does at the end of a tournament, many times over."""
    for k in range(15):
        log = tmp_path / f"bot{k}.stderr.log"
        bot = start(level, log)
        ask(bot, b"log 3")
        bot.send_line(b"bye", time.monotonic() + 30)
        bot.close()
        assert lines(log) == ["line 1", "line 2", "line 3", "last words"], f"run {k}"


@pytest.mark.parametrize("level", LEVELS)
def test_output_after_the_goodbye_does_not_block_the_last_line(tmp_path, level, busy_cores):
    """Nobody waits for stdout after bye, but it is read, so a bot writing there still ends."""
    log = tmp_path / "bot.stderr.log"
    bot = start(level, log)
    ask(bot, b"flood 1048576")  # 1 MiB: far more than a pipe holds
    bot.send_line(b"bye", time.monotonic() + 30)
    bot.close(grace_s=10)  # a generous grace on a busy machine: it ends as soon as the bot does
    assert lines(log) == ["last words"]
