"""A small ladder of fixture bots (never bots/): Tightwad at three seats only, so deal
sets are short; by default three builtin random players (played in process: a match takes
milliseconds, no sandbox start), with ``programs=True`` the three fixture bot programs.
And the helpers the ladder tests share."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

BOTS = Path(__file__).resolve().parent / "bots"
ROOT = Path(__file__).resolve().parents[2]


def ladder_file(folder: Path, *, upload_max_bytes: int = 8192, extra: str = "", programs: bool = False) -> Path:
    path = folder / "ladder.yaml"
    bots = (
        f"[{BOTS}/alpha.py, {BOTS}/beta.py, {BOTS}/gamma.py]"
        if programs
        else "[{builtin: random, name: alpha}, {builtin: random, name: beta}, {builtin: random, name: gamma}]"
    )
    path.write_text(f"""name: fixture
seed: 7
bots: {bots}
games:
  - id: tightwad
    players: [3]
    deals: 1
time_control: {{startup_s: 10, move_s: 2.0}}
workers: 1
ladder:
  upload_max_bytes: {upload_max_bytes}
  new_bot_matches: 6
  refresh_s: 0.5
{extra}""")
    return path


def safe_sandbox():
    """This machine's sandbox, or a skip when no level is safe for untrusted bots (a ladder refuses)."""
    import io

    from arena.match.detect import open_sandbox

    sandbox = open_sandbox("auto", io.StringIO())
    if not sandbox.safe:
        pytest.skip(f"no sandbox level safe for untrusted bots here ({sandbox.level}); the ladder refuses to start")
    return sandbox


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    ladder: Path, data: Path, port: int, log: Path, *more: str, command: list[str] | None = None
) -> subprocess.Popen:
    """`arena serve` in a session of its own (so the test can find everything it started);
    ``command``: how `arena` is run (default ``python -m arena``)."""
    return subprocess.Popen(
        [
            *(command or [sys.executable, "-m", "arena"]),
            "serve",
            str(ladder),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--data",
            str(data),
            *more,
        ],
        cwd=ROOT,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=dict(os.environ),
    )


def wait_until(predicate, timeout_s: float = 120.0, what: str = "the condition"):
    """Poll ``predicate`` until it returns a true value (the test's own bound, not a speed claim)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def add_user(data: Path, name: str, password: str = "correct horse", organiser: bool = False) -> str:
    from arena.serve.accounts import add_user as add

    data.mkdir(parents=True, exist_ok=True)
    return add(data, name, password, organiser=organiser)
