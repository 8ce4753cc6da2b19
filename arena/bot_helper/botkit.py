"""botkit: a tiny, standard-library-only helper for Python bots.

The arena puts this file on a Python bot's import path, so a bot is just::

    import random
    from botkit import run

    def choose(observation, match):
        return random.choice(observation["legal_actions"])["id"]

    run(choose, name="my-random-bot")

``choose`` gets the observation of a decision (a dict, with its
``legal_actions``) and the ``Match`` (game, seat, players, options, seed, and a
card table) and returns an action id. ``random`` is seeded from the match's bot
seed, so a bot using it plays the same way in the same match. The protocol is in
docs/protocol.md; this helper is a convenience, never a requirement.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any, Callable

PROTOCOL_VERSION = 1


class Match:
    """What the start message said, plus card lookups by id."""

    def __init__(self, start: dict[str, Any]) -> None:
        self.id: str = start["match_id"]
        self.game: str = start["game"]
        self.options: dict[str, Any] = start["options"]
        self.players: int = start["players"]
        self.seat: int = start["seat"]
        self.seed: int = start["seed"]
        self.bots: list[str] = start.get("bots", [])
        self.time_control: dict[str, Any] = start.get("time_control", {})
        self.cards: dict[int, dict[str, Any]] = {c["id"]: c for c in start["cards"]}
        self.memory: dict[str, Any] = {}  # free space for the bot, reset every match

    def card(self, card_id: int) -> dict[str, Any]:
        """{"id", "name", "rank", "value", "suits"} of a physical card."""
        return self.cards[card_id]

    def value(self, card_id: int) -> int:
        return self.cards[card_id]["value"]

    def suits(self, card_id: int) -> list[str]:
        return self.cards[card_id]["suits"]

    def name(self, card_id: int) -> str:
        return self.cards[card_id]["name"]


def _send(msg: Any) -> None:
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def log(*parts: Any) -> None:
    """Write to the bot's own log (stderr); never mixes with the protocol."""
    print(*parts, file=sys.stderr, flush=True)


def run(choose: Callable[[dict[str, Any], Match], int], name: str = "bot",
        on_result: Callable[[dict[str, Any], Match], None] | None = None) -> None:
    """Serve the protocol on stdin/stdout until goodbye (or end of input)."""
    match: Match | None = None
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            _send({"type": "hello", "name": name, "protocol": PROTOCOL_VERSION})
        elif kind == "start":
            match = Match(msg)
            random.seed(match.seed)
        elif kind == "act":
            assert match is not None, "act before start"
            _send({"type": "action", "action": int(choose(msg["observation"], match))})
        elif kind == "result":
            if on_result is not None and match is not None:
                on_result(msg, match)
            match = None
        elif kind == "bye":
            return
