"""The bot protocol, version 1: message shapes only (no processes here).

One JSON object per line on the bot's stdin (from the referee) and stdout (from
the bot). docs/protocol.md is the reference; this module is its implementation.

    referee -> bot                               bot -> referee
    {"type": "hello", "protocol": 1, ...}        {"type": "hello", "name": "my-bot"}
    {"type": "start", match, seat, cards, ...}   (nothing)
    {"type": "act", "observation": {...}, ...}   {"type": "action", "action": <id>}  or just <id>
    {"type": "result", places, scores, ...}      (nothing)
    {"type": "bye"}                              (exit)
"""

from __future__ import annotations

import json
from typing import Any

from arena.match.faults import BotFault, FaultKind, shorten

PROTOCOL_VERSION = 1
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def encode(message: dict[str, Any]) -> bytes:
    """One message as a protocol line (compact JSON; the process layer adds the newline)."""
    return _dumps(message).encode("utf-8")


def hello(arena_version: str) -> dict[str, Any]:
    return {"type": "hello", "protocol": PROTOCOL_VERSION, "arena": arena_version}


def start(*, match_id: str, game: str, rules_version: str, options: dict[str, Any],
          players: int, seat: int, seed: int, time_control: dict[str, Any],
          cards: list[dict[str, Any]], bots: list[str]) -> dict[str, Any]:
    return {
        "type": "start", "match_id": match_id, "game": game, "rules_version": rules_version,
        "options": options, "players": players, "seat": seat, "seed": seed,
        "bots": bots, "time_control": time_control, "cards": cards,
    }


def act(decision: int, observation: dict[str, Any], time_left_s: float | None) -> dict[str, Any]:
    return {"type": "act", "decision": decision, "time_left_s": time_left_s, "observation": observation}


def result(match_id: str, seat: int, places: list[int], scores: list[float], capped: bool,
           faults: list[dict[str, Any] | None]) -> dict[str, Any]:
    return {
        "type": "result", "match_id": match_id, "seat": seat, "place": places[seat],
        "places": places, "scores": scores, "capped": capped,
        "faults": [None if f is None else f["kind"] for f in faults],
    }


def bye() -> dict[str, Any]:
    return {"type": "bye"}


def _parse(line: bytes) -> Any:
    try:
        return json.loads(line)
    except (ValueError, UnicodeDecodeError):
        raise BotFault(FaultKind.PROTOCOL, f"not JSON: {shorten(line, 120)!r}", line=shorten(line)) from None


def parse_hello(line: bytes) -> str:
    """The bot's name from its hello reply."""
    msg = _parse(line)
    if not isinstance(msg, dict) or msg.get("type") != "hello":
        raise BotFault(FaultKind.PROTOCOL, f'expected {{"type": "hello", "name": ...}}, got {shorten(line, 120)!r}',
                       line=shorten(line))
    name = msg.get("name", "")
    if not isinstance(name, str):
        raise BotFault(FaultKind.PROTOCOL, "hello 'name' must be a string", line=shorten(line))
    proto = msg.get("protocol", PROTOCOL_VERSION)
    if proto != PROTOCOL_VERSION:
        raise BotFault(FaultKind.PROTOCOL, f"bot speaks protocol {proto!r}, arena speaks {PROTOCOL_VERSION}",
                       line=shorten(line))
    return name[:100]


def parse_action(line: bytes, legal_count: int) -> int:
    """The action id from a reply: ``{"type": "action", "action": 3}`` or a bare ``3``.

    Raises BotFault(PROTOCOL) for a malformed reply and BotFault(ILLEGAL) for an
    id that is not legal now.
    """
    msg = _parse(line)
    if isinstance(msg, dict):
        if msg.get("type", "action") != "action" or "action" not in msg:
            raise BotFault(FaultKind.PROTOCOL, f'expected {{"type": "action", "action": <id>}}, got {shorten(line, 120)!r}',
                           line=shorten(line))
        action = msg["action"]
    else:
        action = msg
    if type(action) is not int:
        raise BotFault(FaultKind.PROTOCOL, f"action must be an integer id, got {shorten(repr(action), 60)}",
                       line=shorten(line))
    if not 0 <= action < legal_count:
        raise BotFault(FaultKind.ILLEGAL, f"action {action} is not legal (legal ids 0..{legal_count - 1})",
                       action=action)
    return action
