"""From a policy trained in-process to a bot file the arena can run.

``export_bot(policy_json, path)`` writes one self-contained Python bot: a verbatim
copy of ``encoding.py`` (the observation vector and the action slots), the
policy's weights as JSON, and a ``choose`` doing the linear policy's arithmetic
in pure Python, so it runs in every sandbox level with the standard library and
botkit only (no numpy there). It plays what ``LinearPolicy.choose`` plays.

Standard library only (no numpy): ``arena export-bot`` works without the rl extra.
Policy files are user input: bounded in size, every field checked, and each
problem is one ``ValueError`` line naming the file, the field and the fix.
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import Any

from arena.rl import encoding
from games import GameError, get_game

FORMAT = "decktet-arena linear policy"  # the "format" field of LinearPolicy.to_json()
MAX_POLICY_BYTES = 32 * 1024 * 1024
ENCODING_FILE = Path(encoding.__file__)


def check_policy(data: Any, source: str = "policy") -> dict[str, Any]:
    """The policy dict if it is a well-formed linear policy; else ValueError naming the field."""

    def bad(field: str, message: str) -> ValueError:
        return ValueError(f"{source}: field '{field}': {message}")

    if not isinstance(data, dict):
        raise bad("format", "expected a JSON object written by LinearPolicy.to_json()")
    if data.get("format") != FORMAT:
        raise bad("format", f'expected "{FORMAT}" (write it with LinearPolicy.to_json())')
    game = data.get("game")
    if game not in encoding.GAMES:
        raise bad("game", f"expected one of {', '.join(encoding.GAMES)}, got {game!r}")
    players = data.get("players")
    try:
        get_game(game).resolve_options(players, {})
    except GameError as err:
        raise bad("players", str(err)) from None
    rows, cols = encoding.ACTION_SIZE[game], encoding.obs_size(game, players)
    weights, bias = data.get("weights"), data.get("bias")
    if (
        not isinstance(weights, list)
        or len(weights) != rows
        or not all(isinstance(r, list) and len(r) == cols for r in weights)
    ):
        trained = _trained_for(game, weights, rows)
        if trained is not None and trained != players:  # an edited `players`, not broken weights
            raise bad(
                "players",
                f"{players}, but the weights are for {game} with {trained} players; set players back to "
                f"{trained}, or train a policy for {players} players",
            )
        raise bad("weights", f"expected {rows} rows of {cols} numbers for {game} with {players} players")
    if not isinstance(bias, list) or len(bias) != rows:
        raise bad("bias", f"expected {rows} numbers")

    def number(v: Any) -> bool:
        return type(v) in (int, float) and math.isfinite(v)

    if not all(number(v) for r in weights for v in r):
        raise bad("weights", "every weight must be a finite number")
    if not all(number(v) for v in bias):
        raise bad("bias", "every bias must be a finite number")
    return data


def _trained_for(game: str, weights: Any, rows: int) -> int | None:
    """The player count whose encoding has as many numbers as each of ``weights``' rows, if the
    rows are all alike and one count fits."""
    if not isinstance(weights, list) or len(weights) != rows or not all(isinstance(r, list) for r in weights):
        return None
    lengths = {len(r) for r in weights}
    if len(lengths) != 1:
        return None
    (length,) = lengths
    fits = [n for n in range(2, 11) if encoding.obs_size(game, n) == length]
    return fits[0] if len(fits) == 1 else None


def _read_bounded(p: Path) -> bytes:
    """The file's bytes, bounded in the read (a device has no size to check by stat) and never
    waiting: opened without blocking, so a named pipe nothing writes to is refused, not waited on."""
    fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{p}: not a regular file (a pipe, a device or a folder); give the policy file itself")
        data = f.read(MAX_POLICY_BYTES + 1)
    if len(data) > MAX_POLICY_BYTES:
        raise ValueError(f"{p}: more than a policy may have ({MAX_POLICY_BYTES} bytes)")
    return data


def load_policy(path: str | Path) -> dict[str, Any]:
    """Read and check a policy JSON file (bounded in size)."""
    p = Path(path)
    try:
        raw = _read_bounded(p)
    except OSError as err:
        raise ValueError(f"{p}: cannot read it: {err.strerror or err}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as err:  # not UTF-8, not JSON, an integer of thousands of digits
        raise ValueError(f"{p}: not a JSON policy file ({str(err).splitlines()[0][:120]})") from None
    return check_policy(data, str(p))


_TAIL = '''

# ---- the policy (written by arena/rl/bridge.py) ------------------------------------
import json as _json
import sys as _sys

from botkit import log, run, simple_choice

POLICY = _json.loads({policy!r})
BOT_NAME = {name!r}
_fallback_said = []


def policy_choice(observation):
    """The legal action with the highest linear score (lowest slot on a tie)."""
    x = encode(observation)
    slots = slot_actions(observation)
    weights, bias = POLICY["weights"], POLICY["bias"]
    best, best_score = None, None
    for slot in sorted(slots):
        score = sum(w * v for w, v in zip(weights[slot], x)) + bias[slot]
        if best_score is None or score > best_score:
            best, best_score = slot, score
    return slots[best]


def choose(observation, match):
    if observation.get("game") != POLICY["game"] or observation.get("players") != POLICY["players"]:
        if not _fallback_said:
            _fallback_said.append(True)
            log(f"{{BOT_NAME}}: trained for {{POLICY['game']}} with {{POLICY['players']}} players; "
                "playing botkit.simple_choice here")
        return simple_choice(observation, match)
    return policy_choice(observation)


if __name__ == "__main__":
    run(choose, name=BOT_NAME)
'''


def bot_source(policy: dict[str, Any], name: str = "linear-policy") -> str:
    """The text of a bot file that plays ``policy`` (checked first)."""
    check_policy(policy)
    if not isinstance(name, str) or not name or len(name) > 64 or not name.isprintable():
        raise ValueError("bot name: expected 1-64 printable characters")
    head = (
        f"# A {policy['game']} bot for {policy['players']} players, exported by "
        "`arena export-bot` (arena/rl/bridge.py).\n"
        "# Standard library + botkit only. What follows first is a verbatim copy of\n"
        "# arena/rl/encoding.py, then the policy's weights and its choice.\n"
    )
    body = {k: policy[k] for k in ("format", "version", "game", "players", "weights", "bias") if k in policy}
    text = json.dumps(body, separators=(",", ":"))
    return head + ENCODING_FILE.read_text(encoding="utf-8") + _TAIL.format(policy=text, name=name)


def export_bot(policy: dict[str, Any], path: str | Path, name: str = "linear-policy") -> Path:
    """Write the bot file for ``policy`` to ``path``; returns the path."""
    out = Path(path)
    source = bot_source(policy, name)
    if not out.parent.is_dir():
        raise ValueError(f"{out}: the folder {out.parent} does not exist; create it first (mkdir -p {out.parent})")
    try:
        out.write_text(source, encoding="utf-8")
    except OSError as err:
        raise ValueError(f"{out}: cannot write the bot: {err.strerror or err}") from None
    return out
