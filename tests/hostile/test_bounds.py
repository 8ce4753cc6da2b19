"""Bounds that hold per bot at every level safe for untrusted bots: disk, inodes, stderr,
and what the bot sees of the host (its hostname, its pid 1).

Each run uses a fixture bot of tests/hostile/bots/ at ``full`` and ``landlock`` (skipped,
with what is missing named, where the machine cannot provide the level).
"""

from __future__ import annotations

import errno
import json
import socket
import time
import uuid
from pathlib import Path

import pytest

from arena.match.bot_log import ledger_path
from arena.match.detect import detect_sandbox
from arena.match.process import BotProcess, bot_command
from arena.match.sandbox import Limits
from arena.match.sandbox.launch import HOSTNAME, INIT_NAME
from tests.hostile.test_match_hostile import ROOT, no_survivors
from tests.hostile.test_safe_levels import BOUNDS, SAFE, expect, safe_level

BOTS = Path(__file__).parent / "bots"
MiB = 1 << 20


def ask_once(bot: str, info, tmp: Path, limits: Limits, env: dict[str, str] | None = None) -> dict:
    """Start a copy of ``bot`` (its name unique to this test), send one line, return its JSON answer."""
    path = tmp / f"{Path(bot).stem}-{uuid.uuid4().hex}.py"
    path.write_bytes((BOTS / bot).read_bytes())
    path.chmod(0o644)
    p = BotProcess.start(bot_command(path), bot_file=path, name=path.stem, sandbox=info, limits=limits, env=env)
    try:
        p.send_line(b"go", time.monotonic() + 60)
        return json.loads(p.read_line(time.monotonic() + 60)[0])
    finally:
        p.close()
        assert no_survivors(path.stem) == []


# ---------------------------------------------------------------- disk and inodes


@pytest.mark.parametrize("level", SAFE)
def test_scratch_size_and_inodes_are_capped(level, tmp_path):
    """Five times scratch_mb as many files and as one file (file_mb above scratch_mb, so only the
    scratch can stop it), four times its inode cap as empty files: each stops at the cap with
    ENOSPC, nothing else is writable, and the room comes back once the files are gone."""
    info = safe_level(level)
    expect(BOUNDS[0], level)
    limits = Limits(scratch_mb=8, file_mb=64, memory_mb=256)
    got = ask_once(
        "fill_scratch.py",
        info,
        tmp_path,
        limits,
        env={"HOSTILE_FILL_MB": str(5 * limits.scratch_mb), "HOSTILE_FILL_FILES": str(4 * limits.scratch_inodes)},
    )
    cap = limits.scratch_mb * MiB
    assert got["many_files"][1] == errno.ENOSPC and got["many_files"][0] <= cap, got
    assert got["big_file"][1] == errno.ENOSPC and got["big_file"][0] <= cap, got
    assert got["inodes"][1] == errno.ENOSPC and got["inodes"][0] <= limits.scratch_inodes, got
    assert got["inodes"][0] >= limits.scratch_inodes - 16, got  # the cap, not some other limit
    assert all(got[where] != "written" for where in ("/", "/dev", "/dev/shm")), got
    assert got["dev_null"] == 1 and got["after"] == MiB, got


@pytest.mark.parametrize("level", SAFE)
def test_the_self_test_proves_the_scratch_cap(level):
    info = safe_level(level)
    assert info.enforces("scratch") and info.enforces("inodes")
    size, inodes = info.details["probe"]["scratch"]
    probe_limits = Limits(memory_mb=512, cpu_s=30, processes=16)  # the self-test's own
    assert size == probe_limits.scratch_mb * MiB and inodes == probe_limits.scratch_inodes


def test_a_level_without_the_cap_says_so():
    info = detect_sandbox("rlimits")
    assert not info.enforces("scratch") and not info.enforces("inodes")
    assert any("scratch size" in m for m in info.details["missing"])
    assert "file_mb" in info.details["scratch"]


# ---------------------------------------------------------------- host facts


@pytest.mark.parametrize("level", SAFE)
def test_the_bot_sees_no_host_facts(level, tmp_path):
    info = safe_level(level)
    expect(BOUNDS[1], level)
    got = ask_once("host_facts.py", info, tmp_path, Limits())
    host = socket.gethostname()
    assert got["hostname"] == HOSTNAME and got["hostname"] != host, got
    assert got["pid1"] and got["pid1"][0] == INIT_NAME, got
    assert got["others"] == {}, got  # pid 1 and itself only
    for arg in got["pid1"]:
        assert str(ROOT) not in arg and str(tmp_path) not in arg and host not in arg, got["pid1"]
        assert "{" not in arg, got["pid1"]  # no configuration
        assert not arg.startswith("/") or arg == "/arena-start" or arg.startswith("/dev/fd/"), got["pid1"]


# ---------------------------------------------------------------- stderr


def test_stderr_is_capped_per_bot_over_fresh_processes_and_workers(tmp_path):
    """12 fresh processes of one bot, in two workers' log folders, each writing 64 KiB to stderr:
    together they keep stderr_log_kb, with one note saying the log was capped."""
    info = detect_sandbox("rlimits")  # the cap is the referee's: the same at every level
    limits = Limits(stderr_log_kb=32)
    bot = BOTS / "stderr_every_start.py"
    logs = tmp_path / "logs"
    for k in range(12):
        log_dir = logs / f"worker-{k % 2}"
        p = BotProcess.start(
            bot_command(bot),
            bot_file=bot,
            name="chatty",
            sandbox=info,
            limits=limits,
            log_path=log_dir / "chatty.stderr.log",
            log_ledger=ledger_path(log_dir, "chatty"),
            env={"HOSTILE_STDERR_KB": "64"},
        )
        try:
            assert p.read_line(time.monotonic() + 30)[0] == b"started"
            p.send_line(b"ping", time.monotonic() + 30)
            assert p.read_line(time.monotonic() + 30)[0] == b"ping"
        finally:
            p.close()
    texts = [
        (logs / f"worker-{w}" / "chatty.stderr.log").read_text()
        for w in (0, 1)
        if (logs / f"worker-{w}" / "chatty.stderr.log").exists()
    ]
    notes = [ln for t in texts for ln in t.splitlines() if ln.startswith("[arena: stderr log capped")]
    assert len(notes) == 1 and "32 KiB" in notes[0] and "bytes dropped" in notes[0], notes
    kept = sum(len(t.encode()) for t in texts) - len(notes[0]) - 2  # the note and its newlines
    assert kept == limits.stderr_log_kb * 1024
    assert sum(t.count("[arena: chatty: new process at ") for t in texts) == 1  # one process filled it


@pytest.mark.slow
def test_a_tournament_keeps_a_bots_stderr_cap_over_its_workers_and_fresh_processes(tmp_path):
    """The same through the runner: two workers, a fresh process per match, 8 KiB each."""
    from tests.tournament.test_trust import RANDOM, make_bot, run_in_process, tour

    chatty = tmp_path / "b" / "chatty.py"
    chatty.parent.mkdir()
    chatty.write_text("import os\nfor i in range(8):\n    os.write(2, b'c' * 1023 + b'\\n')\n" + RANDOM.read_text())
    path = tour(
        tmp_path,
        [chatty, make_bot(tmp_path / "b", "quiet")],
        deals=3,
        workers=2,
        extra="fresh_processes: true\nlimits: {stderr_log_kb: 16}",
    )
    summary = run_in_process(path)
    assert summary.complete
    logs = sorted((tmp_path / "res" / "logs").glob("worker-*/chatty.stderr.log"))
    text = b"".join(p.read_bytes() for p in logs).decode()
    notes = [ln for ln in text.splitlines() if ln.startswith("[arena: stderr log capped")]
    assert len(notes) == 1 and "16 KiB" in notes[0]
    assert len(text.encode()) - len(notes[0]) - 2 <= 16 * 1024  # 6 processes offered 48 KiB
    assert text.count("[arena: chatty: new process at ") >= 2  # more than one process kept some
