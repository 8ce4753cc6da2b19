"""Real protocol transcripts for docs/protocol.md.

``record_session`` plays one match through the real referee (``play_match``) and
records every line exchanged with one seat, in order: the referee's lines as
``> {...}`` and the bot's as ``< {...}``. The match is set up exactly as
``arena play GAME random_bot ... --seed SEED`` sets it up (same match id, seeds,
time control and bot names), and every seat plays like ``bots/random_bot.py``
(botkit: ``random.seed(start["seed"])``, then ``random.choice(legal_actions)``),
so the transcript is what that command exchanges with the recorded seat.

Regenerate the blocks of a document in place::

    python -m tests.docs.transcript docs/protocol.md
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

from arena.match import protocol
from arena.match.agents import ARENA_VERSION, Agent
from arena.match.referee import play_match
from arena.match.timecontrol import TimeControl
from arena.tournament.play import play_spec
from arena.tournament.schedule import MatchSpec
from games import get_game

BOT_NAME = "random_bot"  # the file stem `arena play` names a seat by
HELLO_NAME = "random"  # what bots/random_bot.py calls itself

# <!-- transcript: tightwad players=3 seed=5 options={} seat=0 -->
MARKER = re.compile(
    r"<!-- transcript: (?P<game>[\w-]+) players=(?P<players>\d+) seed=(?P<seed>\d+) "
    r"options=(?P<options>\{.*?\}) seat=(?P<seat>\d+) -->\n```jsonl\n(?P<body>.*?)```",
    re.S,
)


def _bot_line(msg: dict[str, Any]) -> str:
    """A line as botkit writes it (json.dumps, compact separators)."""
    return json.dumps(msg, separators=(",", ":"))


class BotkitRandomAgent(Agent):
    """Plays like bots/random_bot.py, in process; optionally records one seat's lines."""

    def __init__(self, lines: list[str] | None = None) -> None:
        self.name = BOT_NAME
        self.lines = lines
        self._rng = random.Random(0)
        self._reply: str | None = None

    def _in(self, msg: dict[str, Any]) -> None:
        if self.lines is not None:
            self.lines.append("> " + protocol.encode(msg).decode("utf-8"))

    def _out(self, line: str) -> None:
        if self.lines is not None:
            self.lines.append("< " + line)

    def prepare(self) -> None:
        self._in(protocol.hello(ARENA_VERSION))
        self._out(_bot_line({"type": "hello", "name": HELLO_NAME, "protocol": protocol.PROTOCOL_VERSION}))

    def begin(self, start_msg: dict[str, Any]) -> None:
        self._in(start_msg)
        self._rng = random.Random(start_msg["seed"])

    def ask(self, act_msg: dict[str, Any], deadline: float) -> None:
        self._in(act_msg)
        action = self._rng.choice(act_msg["observation"]["legal_actions"])["id"]
        self._reply = _bot_line({"type": "action", "action": action})
        self._out(self._reply)

    def answer(self, deadline: float) -> tuple[bytes, float]:
        line, self._reply = self._reply, None
        assert line is not None
        return line.encode("utf-8"), time.monotonic()

    def finish(self, result_msg: dict[str, Any]) -> None:
        self._in(result_msg)

    def close(self) -> None:
        self._in(protocol.bye())


def match_spec(game: str, players: int, seed: int, options: dict[str, Any]) -> MatchSpec:
    """The match `arena play GAME <players bots> --seed SEED --option ...` plays."""
    resolved = get_game(game).resolve_options(players, options)
    return play_spec(game, resolved, (BOT_NAME,) * players, deal=seed, seed=seed)


def record_session(
    game: str, players: int, seed: int, options: dict[str, Any] | None = None, seat: int = 0
) -> tuple[list[str], dict[str, Any]]:
    """Every line exchanged with ``seat`` in one whole session, and the match record.

    The session is hello, start, act/action pairs, result and bye: one match in
    a fresh bot process, as `arena play` runs it (default time control).
    """
    lines: list[str] = []
    agents = [BotkitRandomAgent(lines if s == seat else None) for s in range(players)]
    spec = match_spec(game, players, seed, options or {})
    tc = TimeControl(startup_s=10.0, move_s=1.0)  # `arena play`'s defaults
    record = play_match(spec, agents, time_control=tc, sandbox=None)
    for agent in agents:
        agent.close()
    return lines, record


def render_block(game: str, players: int, seed: int, options: dict[str, Any], seat: int) -> str:
    """The body of a ```jsonl block: one line per message, newline-terminated."""
    lines, _ = record_session(game, players, seed, options, seat)
    return "\n".join(lines) + "\n"


def marker_args(m: re.Match[str]) -> tuple[str, int, int, dict[str, Any], int]:
    return (
        m.group("game"),
        int(m.group("players")),
        int(m.group("seed")),
        json.loads(m.group("options")),
        int(m.group("seat")),
    )


def regenerate(text: str) -> str:
    """``text`` with every marked transcript block replaced by a fresh recording."""

    def fill(m: re.Match[str]) -> str:
        head = m.group(0)[: m.start("body") - m.start(0)]
        return head + render_block(*marker_args(m)) + "```"

    return MARKER.sub(fill, text)


def main(argv: list[str]) -> int:
    for name in argv or ["docs/protocol.md"]:
        path = Path(name)
        old = path.read_text(encoding="utf-8")
        new = regenerate(old)
        if new != old:
            path.write_text(new, encoding="utf-8")
            print(f"{path}: transcripts regenerated")
        else:
            print(f"{path}: up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
