"""docs/protocol.md is true: its sessions are real recordings, its bots run, its tables are complete.

* Every ```jsonl block under a ``<!-- transcript: ... -->`` comment equals a fresh
  recording (tests/docs/transcript.py) of the match the comment names.
* The bot's side of each session is what bots/random_bot.py really writes when fed
  the arena's side, and the arena's side is the match `arena play` really plays.
* Every ```python / ```perl / ```c block is a bot (``<!-- bot: file -->``) and plays a
  match through `arena play` without a fault (the C bot compiled first; skipped without gcc).
* Every field of every observation and action, and every value of the enumerated
  fields, is named in its game's section; every message field in "Messages".
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.match import protocol
from games import REGISTRY
from games.rng import DealRng
from tests.docs.transcript import MARKER, marker_args, record_session, render_block

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "protocol.md"
TEXT = DOC.read_text(encoding="utf-8")
SESSIONS = {m.group("game"): m for m in MARKER.finditer(TEXT)}
BOT_BLOCK = re.compile(r"<!-- bot: (?P<name>[\w.-]+) -->\n```(?P<lang>\w+)\n(?P<code>.*?)```", re.S)
BOTS = {m.group("name"): m for m in BOT_BLOCK.finditer(TEXT)}
SECTIONS = {
    "tightwad": "## Tightwad: observation and actions",
    "divers-weights": "## Divers Weights: observation and actions",
    "palace": "## Palace: observation and actions",
}
# String-valued fields whose values a bot branches on: each value must be documented.
ENUMS = {"phase", "kind", "type", "pile_mode", "rule", "cause", "from"}
COMMON = {"game", "seat", "players", "decision", "to_move", "over", "legal_actions", "id", "text"}


def _run_arena(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def _section(heading: str) -> str:
    start = TEXT.index(heading + "\n")
    end = TEXT.find("\n## ", start + len(heading))
    return TEXT[start : end if end >= 0 else len(TEXT)]


def _documented_words(text: str) -> set[str]:
    """Every word inside a `code span` of ``text``."""
    words: set[str] = set()
    for span in re.findall(r"`([^`\n]+)`", text):
        words.update(re.findall(r"[\w-]+", span))
    return words


def _split(body: str) -> list[tuple[str, dict[str, Any] | int]]:
    out = []
    for line in body.splitlines():
        assert line[:2] in ("> ", "< "), f"a session line starts with '> ' or '< ': {line[:60]!r}"
        out.append((line[0], json.loads(line[2:])))
    return out


# ---- the sessions -------------------------------------------------------------------------


def test_one_session_per_game() -> None:
    assert set(SESSIONS) == set(REGISTRY)


@pytest.mark.parametrize("game", sorted(REGISTRY))
def test_session_block_is_a_fresh_recording(game: str) -> None:
    m = SESSIONS[game]
    assert m.group("body") == render_block(*marker_args(m)), (
        f"the {game} session in docs/protocol.md is stale: run python -m tests.docs.transcript docs/protocol.md"
    )


@pytest.mark.parametrize("game", sorted(REGISTRY))
def test_session_follows_the_protocol(game: str) -> None:
    """hello/hello, start, act/action pairs with legal ids, result, bye: in that order."""
    lines = _split(SESSIONS[game].group("body"))
    kinds = [(d, msg["type"] if isinstance(msg, dict) else "bare") for d, msg in lines]
    assert kinds[:3] == [(">", "hello"), ("<", "hello"), (">", "start")]
    assert kinds[-2:] == [(">", "result"), (">", "bye")]
    middle = lines[3:-2]
    assert middle and len(middle) % 2 == 0
    for (d1, act), (d2, answer) in zip(middle[::2], middle[1::2]):
        assert (d1, act["type"], d2) == (">", "act", "<")
        legal = act["observation"]["legal_actions"]
        assert [a["id"] for a in legal] == list(range(len(legal)))
        protocol.parse_action(json.dumps(answer).encode(), len(legal))
    assert protocol.parse_hello(json.dumps(lines[1][1]).encode()) == "random"
    start = lines[2][1]
    assert start["seat"] == int(SESSIONS[game].group("seat"))
    assert [c["id"] for c in start["cards"]] == sorted(c["id"] for c in start["cards"])


@pytest.mark.parametrize("game", sorted(REGISTRY))
def test_bot_side_is_what_random_bot_writes(game: str) -> None:
    """Fed the arena's lines, the real bots/random_bot.py writes exactly the '<' lines."""
    body = SESSIONS[game].group("body").splitlines()
    feed = "".join(line[2:] + "\n" for line in body if line.startswith("> "))
    expected = [line[2:] for line in body if line.startswith("< ")]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT / "arena" / "bot_helper")}
    out = subprocess.run(
        [sys.executable, "-s", "-S", str(ROOT / "bots" / "random_bot.py")],
        input=feed,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == expected


@pytest.mark.parametrize("game", sorted(REGISTRY))
def test_arena_side_is_what_arena_play_plays(game: str) -> None:
    """`arena play` with real sandboxed random_bot processes plays the very same match."""
    game_, players, seed, options, seat = marker_args(SESSIONS[game])
    args = ["play", game_, *["random_bot"] * players, "--seed", str(seed), "--json"]
    for key, value in options.items():
        args += ["--option", f"{key}={json.dumps(value)}"]
    out = _run_arena(*args)
    assert out.returncode == 0, out.stderr
    real = json.loads(out.stdout)
    _, mine = record_session(game_, players, seed, options, seat)

    def essence(record: dict[str, Any]) -> dict[str, Any]:
        return {
            "match_id": record["match_id"],
            "options": record["options"],
            "deal_seed": record["deal_seed"],
            "match_seed": record["match_seed"],
            "time_control": record["time_control"],
            "bots": [b["name"] for b in record["bots"]],
            "result": record["result"],
            "faults": record["faults"],
            "decisions": [(d["n"], d["seat"], d["action"], d["text"], d["status"]) for d in record["decisions"]],
        }

    assert essence(real) == essence(mine)


# ---- the example bots -------------------------------------------------------------------------


def test_every_code_block_of_a_program_is_a_tested_bot() -> None:
    fences = re.findall(r"^```(python|perl|c)$", TEXT, re.M)
    assert len(fences) == len(BOTS) >= 4
    assert {m.group("lang") for m in BOTS.values()} == {"python", "perl", "c"}


def test_plain_python_bot_uses_only_json_random_sys() -> None:
    code = next(
        m.group("code") for m in BOTS.values() if m.group("lang") == "python" and "botkit" not in m.group("code")
    )
    assert set(re.findall(r"^import (\w+)", code, re.M)) == {"json", "random", "sys"}
    assert "from " not in code
    assert len(code.strip().splitlines()) <= 25


@pytest.mark.parametrize("name", sorted(BOTS))
def test_documented_bot_plays_without_fault(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_text(BOTS[name].group("code"), encoding="utf-8")
    path.chmod(0o755)
    if BOTS[name].group("lang") == "c":  # as the page says: gcc -O2 -o tiny_random tiny_random.c
        gcc = shutil.which("gcc")
        if gcc is None:
            pytest.skip("no gcc on this machine to build the documented C bot")
        path = tmp_path / path.stem
        subprocess.run([gcc, "-O2", "-o", str(path), str(tmp_path / name)], check=True, capture_output=True)
    out = _run_arena("play", "tightwad", str(path), "random_bot", "random_bot", "--seed", "1", "--json")
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout)
    assert record["faults"] == [None, None, None], record["faults"]
    mine = [d for d in record["decisions"] if d["seat"] == 0]
    assert mine and all(d["status"] == "ok" for d in mine)


# ---- the field tables ------------------------------------------------------------------------

VARIANTS: dict[str, list[tuple[int, dict[str, Any]]]] = {
    "tightwad": [(3, {}), (6, {})],
    "divers-weights": [(2, {}), (3, {"bidding": True}), (2, {"target": 30})],
    "palace": [(2, {"extended": True}), (3, {}), (3, {"wyrm_variant": True, "extended": True})],
}


def _walk(value: Any, keys: set[str], enums: dict[str, set[str]]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            keys.add(k)
            if k in ENUMS and isinstance(v, str):
                enums.setdefault(k, set()).add(v)
            _walk(v, keys, enums)
    elif isinstance(value, list):
        for v in value:
            _walk(v, keys, enums)


def _observations(game: str) -> Iterator[dict[str, Any]]:
    """Every seat's observation at every decision of a few random games of every variant."""
    for players, options in VARIANTS[game]:
        for seed in range(3):
            state = REGISTRY[game].new_game(players, seed, options)
            rng = DealRng(seed)
            while not state.is_over():
                for seat in state.to_move():
                    yield state.observation(seat)
                seat = state.to_move()[0]
                state.apply(seat, rng.randbelow(len(state.legal_actions(seat))))


@pytest.mark.parametrize("game", sorted(REGISTRY))
def test_every_observation_and_action_field_is_documented(game: str) -> None:
    keys: set[str] = set()
    enums: dict[str, set[str]] = {}
    for obs in _observations(game):
        _walk(obs, keys, enums)
    documented = _documented_words(_section(SECTIONS[game]))
    common = _documented_words(_section("## Messages"))
    missing = sorted(k for k in keys if k not in documented and not (k in COMMON and k in common))
    assert not missing, f"{game}: fields not named in its section of docs/protocol.md: {missing}"
    values = sorted(f"{k}={v}" for k, vs in enums.items() for v in vs if v not in documented)
    assert not values, f"{game}: values not named in its section of docs/protocol.md: {values}"


def test_every_message_field_is_documented() -> None:
    fields: set[str] = set()
    for m in SESSIONS.values():
        for _, msg in _split(m.group("body")):
            if isinstance(msg, dict):
                fields.update(msg)
                if msg["type"] == "start":
                    fields.update(msg["time_control"])
                    fields.update(msg["cards"][0])
    documented = (
        _documented_words(_section("## Messages"))
        | _documented_words(_section("## Cards"))
        | _documented_words(_section("## Time control"))
    )
    assert sorted(fields - documented) == []


def test_what_a_bot_does_on_start_counts_on_its_first_act(tmp_path: Path) -> None:
    """protocol.md, start: set-up on reading `start` runs on the first act's clock; the same
    set-up before the hello does not (the hello has startup_s to itself)."""
    assert "counts on that `act`'s clock" in TEXT
    slow = ROOT / "tests" / "support" / "bots" / "slow_on_start.py"
    early = tmp_path / "slow_before_hello.py"
    shutil.copy(slow, early)
    common = ("play", "tightwad", "builtin:random", "builtin:random", "--seed", "2", "--move-s", "1.5", "--quiet")
    late = _run_arena(*common[:2], str(slow), *common[2:])
    assert late.returncode == 1 and "timeout" in late.stdout, late.stdout + late.stderr
    assert "a bot faulted, seat 0 (slow_on_start): timeout at decision" in late.stderr
    ready = _run_arena(*common[:2], str(early), *common[2:])
    assert ready.returncode == 0 and "timeout" not in ready.stdout, ready.stdout + ready.stderr
