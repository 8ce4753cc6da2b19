"""Hostile bots inside real matches: each is contained by the referee and the sandbox.

For every attack: the right fault is recorded for the hostile seat, the other
seats (real sandboxed bot processes) finish their match unharmed, the record
replays, and no process the hostile bot started is left behind.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from arena.match.agents import ProcessAgent
from arena.match.detect import _marker_pids, detect_sandbox
from arena.match.referee import play_match
from arena.match.sandbox import Limits
from arena.match.timecontrol import TimeControl
from arena.report.replay import verify_record
from arena.tournament.roster import bot_entry
from arena.tournament.schedule import MatchSpec
from games import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = Path(__file__).parent / "match" / "hostile_template.py"
LIMITS = Limits(memory_mb=256, cpu_s=4, processes=16, file_mb=4)
# Generous for a busy machine (allocating 150 MB or starting a sandbox can take seconds of
# wall time there); the bots that must time out stall for good, so any clock catches them.
TC = TimeControl(startup_s=30, move_s=3.0)
# Attacks whose right fault must come from a limit, not from the move clock, get at least this
# (a cgroup OOM is slow under load; a thread burning CPU starves the answering one of the GIL).
ROOMY = TimeControl(startup_s=30, move_s=5.0)
NEEDS_ROOM = {"memory", "well_behaved", "fork_bomb", "thread_bomb", "cpu_child", "cpu_thread"}

# behaviour -> fault kinds that correctly describe it (None: no fault at all)
CASES = {
    "fork_bomb": {"resource", "crash"},
    "thread_bomb": {"resource", "crash"},
    "memory": {"resource", "crash"},
    "cpu_main": {"timeout", "resource"},
    "cpu_child": {"resource"},
    "cpu_thread": {"resource"},
    "sleeper": {"timeout"},
    "sigstop": {"timeout"},
    "stdout_flood": {"resource", "protocol"},
    "long_line": {"protocol"},
    "stderr_flood": {None},
    "garbage": {"protocol"},
    "half_line": {"timeout"},
    "never_reads": {"timeout", "resource"},
    "exit_midway": {"crash"},
    "read_files": {None},
    "write_outside": {None},
    "network": {None},
    "daemon": {None},
    "attack_referee": {None},
    "well_behaved": {None},
}
# What only a namespaced/Landlocked sandbox can stop (skipped below those levels).
NEEDS_ISOLATION = {"read_files", "write_outside", "network", "attack_referee"}


@pytest.fixture(scope="module")
def sandbox():
    return detect_sandbox("auto")


def hostile_bot(tmp: Path, behaviour: str, **consts) -> Path:
    marker = f"hostile_{behaviour}_{uuid.uuid4().hex[:10]}"
    # The honest seats run from a copy named after this bot, so that the attacks on other
    # processes aim only at this test's own (never at another suite's random_bot.py).
    honest = honest_seat(tmp / f"{marker}.py")
    honest.write_bytes((ROOT / "bots/random_bot.py").read_bytes())
    head = [f"BEHAVIOUR = {behaviour!r}", f"HONEST = {honest.stem!r}"] + [f"{k} = {v!r}" for k, v in consts.items()]
    path = tmp / f"{marker}.py"
    path.write_text("\n".join(head) + "\n" + TEMPLATE.read_text())
    return path


def honest_seat(hostile: Path) -> Path:
    return hostile.with_name(hostile.stem + "_honest.py")


def no_survivors(marker: str, timeout: float = 15.0) -> list[int]:
    end = time.monotonic() + timeout
    left = _marker_pids(marker)
    while left and time.monotonic() < end:
        time.sleep(0.05)
        left = _marker_pids(marker)
    return left


def play_with(path: Path, sandbox, game="palace", players=3, seat=1, limits=LIMITS, tc=TC):
    honest = honest_seat(path)
    honest = honest if honest.exists() else ROOT / "bots/random_bot.py"
    entries = [bot_entry(str(honest)) for _ in range(players)]
    entries[seat] = bot_entry(str(path))
    agents = [ProcessAgent(e, sandbox=sandbox, limits=limits, time_control=tc) for e in entries]
    spec = REGISTRY[game]
    m = MatchSpec(
        match_id=f"hostile/{path.stem}",
        index=0,
        game=game,
        players=players,
        options=spec.resolve_options(players, {}),
        deal_seed=17,
        match_seed=18,
        bots=tuple(e.name for e in entries),
    )
    try:
        return play_match(m, agents, time_control=tc, sandbox=sandbox)
    finally:
        for a in agents:
            a.close()


@pytest.mark.slow
@pytest.mark.parametrize("behaviour", sorted(CASES))
def test_hostile_bot_is_contained_in_a_match(behaviour, sandbox, tmp_path):
    if behaviour in NEEDS_ISOLATION and not sandbox.safe:
        pytest.skip(
            f"sandbox level {sandbox.level} is not safe here, missing: bubblewrap, or root for "
            f"landlock ({'; '.join(sandbox.details.get('unsafe', []))})"
        )
    consts: dict = {"VICTIM": 0, "PORT": 0, "SECRET": "", "MEMORY_MB": LIMITS.memory_mb, "MOVE_S": TC.move_s}
    cleanup = []
    listener = None
    if behaviour == "read_files":
        secret = tmp_path / "referee_secret.txt"
        secret.write_text("s3cret")
        os.chmod(secret, 0o600)
        consts["SECRET"] = f"{secret},{ROOT / 'bots/tightwad_heuristic.py'},/etc/shadow"
    if behaviour == "write_outside":
        # (its own /tmp is a private tmpfs: writing there is allowed and invisible here)
        consts["SECRET"] = f"{tmp_path / 'planted.txt'},{ROOT / 'bots/planted.py'},/etc/arena-planted"
    if behaviour == "network":
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(5)
        listener.settimeout(0.2)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", listener.getsockname()[1]))
        udp.settimeout(0.2)
        cleanup += [listener, udp]
        consts["PORT"] = listener.getsockname()[1]
    if behaviour == "attack_referee":
        decoy = subprocess.Popen(["sleep", "60"])
        cleanup.append(decoy)
        consts["VICTIM"] = decoy.pid
        # it must predate the bots by a clock tick: at the levels without a pid namespace of
        # bubblewrap the kill sweeps the referee's children started after a bot (its escapees)
        time.sleep(0.05)
    path = hostile_bot(tmp_path, behaviour, **consts)
    try:
        # a CPU budget of 1 s makes a burning child or thread trip it within the match
        limits = (
            Limits(memory_mb=256, cpu_s=1, processes=16, file_mb=4)
            if behaviour in ("cpu_child", "cpu_thread")
            else LIMITS
        )
        record = play_with(path, sandbox, limits=limits, tc=ROOMY if behaviour in NEEDS_ROOM else TC)
        fault = record["faults"][1]
        kind = None if fault is None else fault["kind"]
        assert kind in CASES[behaviour], f"{behaviour}: got fault {fault}"
        if fault is not None:
            assert record["result"]["places"][1] == 2  # last place
            assert fault.get("exit_code") != 42 and "42" not in str(fault.get("detail", ""))[-3:]
        # the other seats played the whole match: no fault, every one of their decisions answered
        assert record["faults"][0] is None and record["faults"][2] is None
        assert all(d["status"] == "ok" for d in record["decisions"] if d["seat"] != 1)
        verify_record(record)
        assert no_survivors(path.stem) == [], f"{behaviour}: processes left behind"
        if behaviour == "write_outside":
            assert not (tmp_path / "planted.txt").exists() and not (ROOT / "bots/planted.py").exists()
            assert not Path("/etc/arena-planted").exists()
            assert not path.read_text().endswith("# pwned")
        if behaviour == "network":
            with pytest.raises(OSError):
                listener.accept()
            with pytest.raises(OSError):
                cleanup[1].recvfrom(16)
        if behaviour == "attack_referee":
            assert cleanup[0].poll() is None, "the decoy referee process was killed"
    finally:
        for c in cleanup:
            if isinstance(c, subprocess.Popen):
                c.kill()
                c.wait()
            else:
                c.close()
