"""``time_control.ponder``: off (the default), a bot's processes are stopped from each answer
until its next request, so a bot that keeps computing between its turns takes no CPU from
the bots whose clocks run; on, they run all the time (the behaviour before)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from arena.match import protocol
from arena.match.detect import SandboxUnavailable, detect_sandbox, open_sandbox
from arena.match.process import BotProcess, bot_command
from arena.match.sandbox import Limits, SandboxInfo

# a thread that spins from start-up on, and (with an argument) a child in a session of its
# own that spins too: out of reach of a signal to the bot's process group
PONDERER = """\
import json, os, sys, threading

def spin():
    while True:
        pass

threading.Thread(target=spin, daemon=True).start()
if os.environ.get("ESCAPE") and os.fork() == 0:
    os.setsid()
    spin()
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "ponderer"}), flush=True)
    elif msg["type"] == "act":
        print(json.dumps({"type": "action", "action": msg["observation"]["legal_actions"][0]["id"]}), flush=True)
    elif msg["type"] == "bye":
        break
"""

ACT = {"type": "act", "decision": 1, "time_left_s": 5.0, "observation": {"legal_actions": [{"id": 7}]}}


def _start(tmp_path: Path, info: SandboxInfo, *, pause: bool, escape: bool = False) -> BotProcess:
    path = tmp_path / "ponderer.py"
    path.write_text(PONDERER)
    env = {"ESCAPE": "1"} if escape else None
    proc = BotProcess.start(bot_command(path), bot_file=path, name="ponderer", sandbox=info, limits=Limits(), env=env)
    proc.pause_after_answer = pause
    proc.send_line(protocol.encode(protocol.hello("test")), time.monotonic() + 30)
    proc.read_line(time.monotonic() + 30)
    return proc


def _cpu_over(proc: BotProcess, seconds: float) -> float:
    before = proc.cpu_seconds()
    time.sleep(seconds)
    return proc.cpu_seconds() - before


def _answers(proc: BotProcess) -> int:
    proc.resume()
    proc.send_line(json.dumps(ACT).encode(), time.monotonic() + 30)
    line, _ = proc.read_line(time.monotonic() + 30)
    return json.loads(line)["action"]


def _cgroup_level() -> SandboxInfo:
    for level in ("full", "landlock"):
        try:
            info = detect_sandbox(level)
        except SandboxUnavailable:
            continue
        if "v2:" in str(info.details.get("cgroup", "")):  # a cgroup v2 group per bot: cgroup.freeze
            return info
    pytest.skip("no sandbox level with a cgroup v2 group per bot here")


def test_ponder_off_stops_a_bot_between_its_turns_and_it_answers_when_asked(tmp_path: Path) -> None:
    proc = _start(tmp_path, open_sandbox("rlimits"), pause=True)
    try:
        assert _cpu_over(proc, 1.0) < 0.05  # its spinning thread is stopped with it
        assert _answers(proc) == 7  # asked again, it runs again and answers
        assert _cpu_over(proc, 1.0) < 0.05  # and is stopped again after its answer
    finally:
        proc.say_bye()
        proc.close()
    assert not proc.alive()


def test_ponder_on_lets_a_bot_compute_between_its_turns(tmp_path: Path) -> None:
    proc = _start(tmp_path, open_sandbox("rlimits"), pause=False)
    try:
        spent, deadline = 0.0, time.monotonic() + 60
        while spent < 0.2 and time.monotonic() < deadline:  # a busy machine gives it less, never none
            spent += _cpu_over(proc, 0.5)
        assert spent >= 0.2
        assert _answers(proc) == 7
    finally:
        proc.close()


def test_a_stopped_bot_still_exits_on_bye_and_dies_on_kill(tmp_path: Path) -> None:
    proc = _start(tmp_path, open_sandbox("rlimits"), pause=True)
    proc.say_bye()  # resumed first: it reads the goodbye and leaves by itself
    deadline = time.monotonic() + 30
    while proc.alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not proc.alive()
    proc.close()
    stuck = _start(tmp_path, open_sandbox("rlimits"), pause=True)
    stuck.kill()  # stopped, never resumed: SIGKILL still ends it
    assert not stuck.alive()


def test_at_a_cgroup_level_a_child_in_a_session_of_its_own_is_stopped_too(tmp_path: Path) -> None:
    """A signal to the process group misses a ``setsid`` child; freezing the cgroup does not."""
    proc = _start(tmp_path, _cgroup_level(), pause=True, escape=True)
    try:
        assert proc._paused == "cgroup"
        assert _cpu_over(proc, 1.0) < 0.05
        assert _answers(proc) == 7
    finally:
        proc.close()


def test_at_the_namespaces_level_the_bot_inside_bubblewrap_is_stopped_too(tmp_path: Path) -> None:
    """bubblewrap's ``--new-session`` puts the bot in a process group of its own: a signal to
    the launched process's group stopped bubblewrap's monitor and left the bot spinning."""
    try:
        info = detect_sandbox("namespaces")
    except SandboxUnavailable:
        pytest.skip("no namespaces level here")
    proc = _start(tmp_path, info, pause=True)
    try:
        assert proc._paused == "signal"
        assert _cpu_over(proc, 1.0) < 0.05
        assert _answers(proc) == 7
        assert _cpu_over(proc, 1.0) < 0.05
    finally:
        proc.say_bye()
        proc.close()
    assert not proc.alive()


def test_a_message_longer_than_its_pipe_reaches_a_stopped_bot_which_stays_stopped(tmp_path: Path) -> None:
    """``start`` and ``result`` are written while the bot is stopped: one its input pipe cannot
    hold (a warm bot's ``result`` and the next ``start`` of a 16-deck Palace are 60 KB and more
    with a few faults' stderr in the result; a pipe is 64 KiB, or 4 KiB past the kernel's
    pipe-user-pages-soft) blocked until the deadline, and the bot faulted for not reading."""
    proc = _start(tmp_path, open_sandbox("rlimits"), pause=True)
    try:
        big = json.dumps({"type": "start", "cards": ["x" * 100] * 2000}).encode()  # 200 KB
        proc.send_line(big, time.monotonic() + 10)  # resumed for as long as it takes
        assert proc._paused
        assert _cpu_over(proc, 1.0) < 0.05  # and stopped again
        assert _answers(proc) == 7
    finally:
        proc.say_bye()
        proc.close()


CHILD = """\
import json, os, sys

if os.fork() == 0:  # a child in the bot's own process group, spinning
    while True:
        pass
for line in sys.stdin:
    if json.loads(line)["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "parent"}), flush=True)
"""


def test_a_kill_cut_short_by_the_worker_s_end_is_finished_by_the_exit_cleanup(tmp_path: Path) -> None:
    """SIGTERM ends a worker from a handler that may run inside a bot's ``kill`` (marked killed,
    its tree not yet swept): the cleanup then skipped that bot, the worker's death took its main
    process (``--pdeathsig``) and left its child stopped, or running, for good."""
    from arena.match import process
    from arena.match.sandbox import procs

    path = tmp_path / "parent.py"
    path.write_text(CHILD)
    proc = BotProcess.start(
        bot_command(path), bot_file=path, name="parent", sandbox=open_sandbox("rlimits"), limits=Limits()
    )
    proc.pause_after_answer = True
    proc.send_line(protocol.encode(protocol.hello("test")), time.monotonic() + 30)
    proc.read_line(time.monotonic() + 30)
    deadline = time.monotonic() + 30
    while not procs.descendants(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    tree = {proc.pid, *procs.descendants(proc.pid)}
    assert len(tree) == 2 and proc._paused
    proc._killed = True  # what kill() does first; the signal's handler runs before its sweep
    try:
        process.kill_every_bot()
        assert not [p for p in tree if procs._state(p) not in (None, b"Z")]
    finally:
        proc._killed = False
        proc.kill()
        procs.kill_pids(tree)
