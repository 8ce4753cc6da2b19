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
import numbers
import random
import re
import sys
from collections.abc import Callable
from typing import Any

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


def _action_id(choice: Any) -> int:
    """What ``choose`` returned, as the id to send: an int (numpy's too), or what botkit always
    took for one and means the same (3.0, "3"). Anything else stops the bot with a TypeError
    saying what it was: int() would have sent 2 for 2.7 and 1 for True, a legal move the bot
    never chose."""
    if isinstance(choice, numbers.Integral) and not isinstance(choice, bool):
        return int(choice)
    if isinstance(choice, float) and choice.is_integer():
        return int(choice)
    if isinstance(choice, str) and re.fullmatch(r"\s*-?[0-9]+\s*", choice):
        return int(choice)
    raise TypeError(f"choose() must return an action id (an int), not {type(choice).__name__!r}: {repr(choice)[:80]}")


def log(*parts: Any) -> None:
    """Write to the bot's own log (stderr); never mixes with the protocol."""
    print(*parts, file=sys.stderr, flush=True)


def run(
    choose: Callable[[dict[str, Any], Match], int],
    name: str = "bot",
    on_result: Callable[[dict[str, Any], Match], None] | None = None,
) -> None:
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
            _send({"type": "action", "action": _action_id(choose(msg["observation"], match))})
        elif kind == "result":
            if on_result is not None and match is not None:
                on_result(msg, match)
            match = None
        elif kind == "bye":
            return


# Simple, better-than-random play for every game: what a bot may fall back on in the
# games it does not specialise in. Each uses the ``random`` module that ``run`` seeds.

PALACE_ORDER = {1: 13, 10: 12, 11: 10, 12: 11, 0: 0, **{r: r for r in range(2, 10)}}  # rank -> strength


def tightwad_simple(obs: dict[str, Any], match: Match) -> int:
    """Keep the lowest card for the last trick (the only one that costs); else a random legal card."""
    legal = obs["legal_actions"]
    keep = min(obs["hand"], key=match.value)
    return random.choice([a for a in legal if a["card"] != keep] or legal)["id"]


def divers_simple(obs: dict[str, Any], match: Match) -> int:
    """Play the card nearest threshold / players; take the prize with the most suit symbols."""
    legal = obs["legal_actions"]
    if obs["phase"] == "bid":
        return next(a["id"] for a in legal if a["bid"] == 1)
    if obs["phase"] == "prize":
        mine = {s for c in obs["prizes"][obs["seat"]] for s in match.suits(c)}
        return max(
            legal, key=lambda a: (len(match.suits(a["card"])), len(set(match.suits(a["card"])) - mine), -a["id"])
        )["id"]
    aim = obs["threshold_total"] / obs["players"]
    return min(legal, key=lambda a: (abs(match.value(a["card"]) - aim), a["id"]))["id"]


def palace_simple(obs: dict[str, Any], match: Match) -> int:
    """No setup swaps; every card of the lowest legal rank, but one play in five at random.

    The random plays keep two copies of this rule from passing the pile back and
    forth for ever. Face-down: the first card.
    """
    legal = obs["legal_actions"]
    if obs["phase"] == "swap":
        return next(a["id"] for a in legal if not a["swaps"])
    plays = [a for a in legal if a["kind"] == "play"] or legal  # else reveals, or a lone Excuse
    if plays[0]["kind"] != "play":
        return plays[0]["id"]
    if random.random() < 0.2:
        return random.choice(plays)["id"]
    return min(plays, key=lambda a: (PALACE_ORDER[match.value(a["cards"][0])], -len(a["cards"]), a["id"]))["id"]


SIMPLE = {"tightwad": tightwad_simple, "divers-weights": divers_simple, "palace": palace_simple}


def simple_choice(obs: dict[str, Any], match: Match) -> int:
    """The simple policy of ``match.game``."""
    return SIMPLE[match.game](obs, match)
