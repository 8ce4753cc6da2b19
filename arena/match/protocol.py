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
import math
import re
from typing import Any

from arena.match.faults import BotFault, FaultKind, shorten

PROTOCOL_VERSION = 1
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


_JSON_KINDS = {
    str: "a string",
    float: "a number with a fraction",
    bool: "true or false",
    dict: "an object",
    list: "a list",
    type(None): "null",
}


def encode(message: dict[str, Any]) -> bytes:
    """One message as a protocol line (compact JSON; the process layer adds the newline)."""
    return _dumps(message).encode("utf-8")


def hello(arena_version: str) -> dict[str, Any]:
    return {"type": "hello", "protocol": PROTOCOL_VERSION, "arena": arena_version}


def start(
    *,
    match_id: str,
    game: str,
    rules_version: str,
    options: dict[str, Any],
    players: int,
    seat: int,
    seed: int,
    time_control: dict[str, Any],
    cards: list[dict[str, Any]],
    bots: list[str],
) -> dict[str, Any]:
    return {
        "type": "start",
        "match_id": match_id,
        "game": game,
        "rules_version": rules_version,
        "options": options,
        "players": players,
        "seat": seat,
        "seed": seed,
        "bots": bots,
        "time_control": time_control,
        "cards": cards,
    }


def act(decision: int, observation: dict[str, Any], time_left_s: float | None) -> dict[str, Any]:
    return {"type": "act", "decision": decision, "time_left_s": time_left_s, "observation": observation}


def result(
    match_id: str, seat: int, places: list[int], scores: list[float], capped: bool, faults: list[dict[str, Any] | None]
) -> dict[str, Any]:
    return {
        "type": "result",
        "match_id": match_id,
        "seat": seat,
        "place": places[seat],
        "places": places,
        "scores": scores,
        "capped": capped,
        "faults": [None if f is None else f["kind"] for f in faults],
    }


def bye() -> dict[str, Any]:
    return {"type": "bye"}


MAX_DEPTH = 32  # nesting a bot's line may use; JSON's own parser recurses per level
MAX_INT_DIGITS = 19  # |n| < 10**19 covers every 64-bit id; longer literals are not ids
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')  # a string (unrolled: linear) or a bracket


def _fault(reason: str, line: bytes) -> BotFault:
    return BotFault(FaultKind.PROTOCOL, reason, line=shorten(line))


def _too_deep(line: bytes) -> bool:
    """True if brackets outside strings nest deeper than MAX_DEPTH (checked before parsing,
    so no line can make the parser recurse far)."""
    if line.count(b"[") + line.count(b"{") <= MAX_DEPTH:
        return False  # the common case: a short answer
    depth = 0
    for token in _TOKEN.finditer(line):  # stops at the first level too deep
        ch = line[token.start()]
        if ch == 91 or ch == 123:  # [ {
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif ch == 93 or ch == 125:  # ] }
            depth -= 1
    return False


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"integer with {len(text)} digits")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} out of range")
    return value


_decoder = json.JSONDecoder(parse_constant=_no_constant, parse_int=_int, parse_float=_float)


def _parse(line: bytes) -> Any:
    """One line a bot wrote, as JSON; any byte sequence either parses or is a PROTOCOL fault.

    Strict: UTF-8 only (no BOM, no UTF-16, no NUL), no NaN or Infinity, nesting at most
    MAX_DEPTH, integers of at most MAX_INT_DIGITS digits (docs/protocol.md, Transport).
    """
    try:
        text = bytes(line).decode("utf-8")  # strict: json.loads(bytes) would guess UTF-16
    except UnicodeDecodeError as err:
        bad = bytes(line)[err.start]  # the line as shown has U+FFFD there: name the byte itself
        raise _fault(f"not UTF-8 (byte {err.start} is 0x{bad:02x}): {shorten(line, 80)!a}", line) from None
    if text.startswith("\ufeff"):
        raise _fault("starts with a byte order mark; send plain UTF-8", line)
    if "\x00" in text:
        raise _fault(f"contains a NUL byte: {shorten(line, 80)!a}", line)
    if _too_deep(line):
        raise _fault(f"nested deeper than {MAX_DEPTH} levels: {shorten(line, 80)!a}", line)
    try:
        return _decoder.decode(text)
    except (ValueError, RecursionError) as err:
        why = str(err).split(":")[0] if isinstance(err, ValueError) else "too deep"
        raise _fault(f"not JSON ({shorten(why, 60)}): {shorten(line, 120)!a}", line) from None


def parse_hello(line: bytes) -> str:
    """The bot's name from its hello reply."""
    msg = _parse(line)
    if not isinstance(msg, dict) or msg.get("type") != "hello":
        raise BotFault(
            FaultKind.PROTOCOL,
            f'expected {{"type": "hello", "name": ...}}, got {shorten(line, 120)!a}',
            line=shorten(line),
        )
    name = msg.get("name", "")
    if not isinstance(name, str):
        raise BotFault(FaultKind.PROTOCOL, "hello 'name' must be a string", line=shorten(line))
    proto = msg.get("protocol", PROTOCOL_VERSION)
    if type(proto) is not int or proto != PROTOCOL_VERSION:  # not true, not 1.0
        raise BotFault(
            FaultKind.PROTOCOL,
            f"hello 'protocol' must be the integer {PROTOCOL_VERSION}, got {shorten(ascii(proto), 60)}",
            line=shorten(line),
        )
    return "".join(c for c in name if c.isprintable())[:100]  # shown on terminals: no escapes


def parse_action(line: bytes, legal_count: int) -> int:
    """The action id from a reply: ``{"type": "action", "action": 3}`` or a bare ``3``.

    Raises BotFault(PROTOCOL) for a malformed reply and BotFault(ILLEGAL) for an
    id that is not legal now.
    """
    msg = _parse(line)
    if isinstance(msg, dict):
        if msg.get("type", "action") != "action" or "action" not in msg:
            raise BotFault(
                FaultKind.PROTOCOL,
                f'expected {{"type": "action", "action": <id>}}, got {shorten(line, 120)!a}',
                line=shorten(line),
            )
        action = msg["action"]
    else:
        action = msg
    if type(action) is not int:
        sent = shorten(json.dumps(action, ensure_ascii=True), 60)
        raise BotFault(
            FaultKind.PROTOCOL,
            f"action must be an integer id, got {sent} ({_JSON_KINDS.get(type(action), 'not an integer')})",
            line=shorten(line),
        )
    if not 0 <= action < legal_count:
        raise BotFault(
            FaultKind.ILLEGAL, f"action {action} is not legal (legal ids 0..{legal_count - 1})", action=action
        )
    return action
