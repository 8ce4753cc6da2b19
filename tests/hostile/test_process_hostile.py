"""Hostile bots against the process layer and the sandbox.

Each test runs a bot from tests/hostile/bots/ at the strongest level this machine
passes (``strongest``) and, for the important ones, at ``rlimits`` too. After
every run it checks that no process carrying the run's unique marker survives
and that the referee can still start and talk to a fresh bot.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import asdict
from pathlib import Path

import pytest

from arena.match.detect import _marker_pids, detect_sandbox
from arena.match.faults import BotFault, FaultKind
from arena.match.process import BotProcess, bot_command, read_lines
from arena.match.sandbox import Limits, SandboxInfo, SandboxUnavailable
from arena.match.sandbox.launch import sweep_stale_scratch
from tests import own_processes as own

BOTS = Path(__file__).parent / "bots"
BOTH = ["strongest", "rlimits"]


def level(name: str) -> SandboxInfo:
    if name == "strongest":
        return detect_sandbox("auto")
    if name == "rlimits":  # needs nothing but Linux: its failure is a bug, not a skip
        return detect_sandbox(name)
    try:
        return detect_sandbox(name)
    except SandboxUnavailable as exc:
        pytest.skip(f"level {name} unavailable here: {exc}")


def need(info: SandboxInfo, what: str) -> None:
    if not info.safe:  # isolation is promised only at a safe level
        pytest.skip(
            f"level {info.level!r} is not safe here, missing: bubblewrap, or root for landlock "
            f"({'; '.join(info.details.get('unsafe', []))})"
        )
    if not info.enforces(what):
        pytest.skip(f"level {info.level!r} does not enforce {what}: {info.details.get('missing')}")


def no_survivors(marker: str, timeout: float = 15.0) -> None:
    end = time.monotonic() + timeout
    left = _marker_pids(marker)
    while left and time.monotonic() < end:
        time.sleep(0.02)
        left = _marker_pids(marker)
    assert not left, f"survivors: {left}"


def zombie_children(tree: set[int]) -> list[int]:
    """Our zombie children that belong to ``tree``: their pid, process group or session is in it.

    Only the bot's own processes count: other tests in the same pytest process may leave
    orphans to it (it is a child subreaper), and those may die during this test.
    """
    me = os.getpid()
    return [
        pid
        for pid in own._pids()
        if (st := own.stat(pid)) and st[0] == "Z" and st[1] == me and tree & {pid, st[2], st[4]}
    ]


def healthy(info: SandboxInfo, tree: set[int] = frozenset()) -> None:
    """The referee is alive and can still run a bot at this level; it reaped what it killed.

    ``tree``: the pids recorded in the killed bot's process tree.
    """
    end = time.monotonic() + 10
    while zombie_children(tree) and time.monotonic() < end:
        time.sleep(0.02)
    assert not zombie_children(tree), "zombie children left behind"
    bot = BotProcess.start(
        bot_command(BOTS / "echo.py"), bot_file=BOTS / "echo.py", name="health", sandbox=info, limits=Limits()
    )
    try:  # generous: a busy machine may take seconds to start a sandboxed interpreter
        bot.send_line(b"ping", time.monotonic() + 30)
        assert bot.read_line(time.monotonic() + 30)[0] == b"ping"
    finally:
        bot.close()


class Run:
    """One hostile bot run with a unique marker in its environment."""

    def __init__(
        self, bot: str, info: SandboxInfo, tmp: Path, limits: Limits = Limits(), env: dict[str, str] | None = None
    ) -> None:
        self.info, self.marker = info, "hostile-" + uuid.uuid4().hex
        self.log = tmp / f"{bot}.stderr.log"
        self.proc = BotProcess.start(
            bot_command(BOTS / bot),
            bot_file=BOTS / bot,
            name=bot,
            sandbox=info,
            limits=limits,
            log_path=self.log,
            env={"HOSTILE_MARKER": self.marker, **(env or {})},
        )
        self.tree = self._record({self.proc.pid})

    def _record(self, tree: set[int]) -> set[int]:
        return tree | set(own.descendants(self.proc.pid))

    def ask(self, line: bytes = b"go", timeout: float = 10.0) -> bytes:
        self.proc.send_line(line, time.monotonic() + timeout)
        return self.proc.read_line(time.monotonic() + timeout)[0]

    def fault(self, line: bytes = b"go", timeout: float = 10.0) -> BotFault:
        with pytest.raises(BotFault) as ei:
            self.ask(line, timeout)
        return ei.value

    def finish(self) -> None:
        self.tree = self._record(self.tree)
        self.proc.kill()
        no_survivors(self.marker)
        assert not self.proc.alive()
        healthy(self.info, self.tree)


@pytest.fixture
def run(tmp_path):
    runs: list[Run] = []

    def make(bot: str, lvl: str, **kw) -> Run:
        r = Run(bot, level(lvl), tmp_path, **kw)
        runs.append(r)
        return r

    yield make
    for r in runs:
        r.finish()


# ---------------------------------------------------------------- processes and memory


@pytest.mark.parametrize("lvl", BOTH)
def test_fork_bomb(run, lvl):
    r = run("fork_bomb.py", lvl, limits=Limits(processes=16))
    if r.info.enforces("processes"):
        f = r.fault()
        assert f.kind == FaultKind.RESOURCE and f.extra["limit"] == "processes", f.to_json()
    else:
        assert r.ask() == b"forked 49"  # no process limit here (documented): all 49 must die at close
        r.finish()


@pytest.mark.parametrize("lvl", BOTH)
def test_thread_bomb(run, lvl):
    r = run("thread_bomb.py", lvl, limits=Limits(processes=16))
    if r.info.enforces("processes"):
        f = r.fault()
        assert f.kind == FaultKind.RESOURCE and f.extra["limit"] == "processes", f.to_json()
    else:  # no pids cap: either all 2000 threads fit, or their stacks hit RLIMIT_AS
        try:
            assert r.ask() == b"threads 2000"
        except BotFault as f:
            assert f.kind == FaultKind.RESOURCE and f.extra["limit"] == "memory", f.to_json()
        r.finish()  # no process limit here (documented): cleanup checked


@pytest.mark.parametrize("lvl", BOTH)
def test_memory_2gib(run, lvl):
    r = run("mem_2g.py", lvl, limits=Limits(memory_mb=512))
    f = r.fault(timeout=20)
    assert f.kind == FaultKind.RESOURCE and f.extra["limit"] == "memory", f.to_json()


# ---------------------------------------------------------------- CPU
# Decision: cpu_s is the budget of the whole bot tree (main, threads, children). The referee
# reads the tree's CPU (cgroup cpuacct, else /proc) while it waits for an answer and faults
# RESOURCE/cpu at cpu_s; RLIMIT_CPU = cpu_s + 1 per process is the backstop for the time the
# referee is not waiting (a death by it is classified RESOURCE/cpu too).


@pytest.mark.slow
@pytest.mark.parametrize("lvl", BOTH)
def test_cpu_loop_main_thread(run, lvl):
    r = run("cpu_main.py", lvl, limits=Limits(cpu_s=2))
    f = r.fault(timeout=600)  # a deadline far off: on a busy machine 2 s of CPU take long
    # RESOURCE/cpu, not TIMEOUT: the CPU budget stopped it, not the (far) deadline
    assert f.kind == FaultKind.RESOURCE and f.extra["limit"] == "cpu", f.to_json()
    assert f.extra["cpu_s"] >= 2.0


@pytest.mark.slow
@pytest.mark.parametrize("lvl", BOTH)
@pytest.mark.parametrize("bot", ["cpu_child.py", "cpu_thread.py"])
def test_cpu_loop_while_answering(run, lvl, bot):
    r = run(bot, lvl, limits=Limits(cpu_s=2))
    assert r.ask() == b"ok"
    asked = 0
    with pytest.raises(BotFault) as ei:
        for asked in range(1, 2401):  # 2 s of CPU in 0.05 s naps: far fewer asks (hang guard)
            r.ask(b"again", timeout=600)
            time.sleep(0.05)
    f = ei.value
    # RESOURCE/cpu, not TIMEOUT: the CPU budget stopped it while it answered in time
    assert f.kind == FaultKind.RESOURCE and f.extra["limit"] == "cpu", f.to_json()
    assert f.extra["cpu_s"] >= 2.0 and asked < 2400


def test_a_bot_weighs_as_one_group_in_the_cpu_scheduler(tmp_path):
    """Where the cgroup v1 cpu controller exists, every process of a bot runs in the bot's own
    cpu group, so the scheduler gives its children (a fork bomb's) together the share of one
    process of another bot, not one share each."""
    info = level("strongest")
    bot = BotProcess.start(
        bot_command(BOTS / "echo.py"), bot_file=BOTS / "echo.py", name="cpu-group", sandbox=info, limits=Limits()
    )
    try:
        group = bot._cgroup
        if group is None:
            pytest.skip(f"level {info.level} runs bots in no cgroup here")
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
        if not any(" - cgroup " in m and "cpu" in m.split()[-1].split(",") for m in mounts):
            pytest.skip("no cgroup v1 cpu controller is mounted here")
        assert "cpu" in group.dirs, group.dirs
        bot.send_line(b"ping", time.monotonic() + 30)
        assert bot.read_line(time.monotonic() + 30)[0] == b"ping"
        pids = {int(p) for p in (group.dirs["cpu"] / "cgroup.procs").read_text().split()}
        tree = set(own.descendants(bot.pid)) | {bot.pid}
        assert pids and pids <= tree, (pids, tree)
        assert tree - pids <= {bot.pid}  # all but, at most, the launcher that joined it for them
    finally:
        bot.close()
    assert not group.dirs["cpu"].exists()  # removed with the bot


# ---------------------------------------------------------------- time


@pytest.mark.parametrize("lvl", BOTH)
def test_sleep_past_deadline_is_cut_at_the_deadline(run, lvl):
    # it would answer 300 s after the request: a read that waited for the answer would
    # get "late" back; one cut at the deadline faults and kills the bot while it sleeps
    r = run("sleeper.py", lvl, env={"HOSTILE_SLEEP": "300"})
    r.proc.send_line(b"go", time.monotonic() + 5)
    deadline = time.monotonic() + 0.3
    with pytest.raises(BotFault) as ei:
        r.proc.read_line(deadline)
    assert ei.value.kind == FaultKind.TIMEOUT
    assert ei.value.detail.startswith("no answer before the deadline"), ei.value.detail
    assert not r.proc.alive()  # killed at the deadline, its answer never written
    with pytest.raises(BotFault) as again:  # the bot is dead and stays faulted
        r.proc.read_line(time.monotonic() + 1)
    assert again.value.kind == FaultKind.TIMEOUT


@pytest.mark.parametrize("lvl", BOTH)
def test_sigstop_itself(run, lvl):
    r = run("sigstop.py", lvl)
    f = r.fault(timeout=3)
    assert f.kind == FaultKind.TIMEOUT


@pytest.mark.parametrize("lvl", BOTH)
def test_half_line_then_silence(run, lvl):
    r = run("half_line.py", lvl)
    f = r.fault(timeout=3)  # time for the half line to arrive on a busy machine
    assert f.kind == FaultKind.TIMEOUT and "partial line" in f.detail and "hal" in f.detail


@pytest.mark.parametrize("lvl", BOTH)
def test_never_reads_stdin_cannot_block_writes(run, lvl):
    r = run("no_stdin.py", lvl)
    deadline = time.monotonic() + 0.5
    sent = 0
    with pytest.raises(BotFault) as ei:
        for _ in range(100):  # 6.4 MB: far more than any pipe buffer
            r.proc.send_line(b"x" * 65536, deadline)
            sent += 1
    assert ei.value.kind == FaultKind.TIMEOUT  # not blocked for good: the full pipe faulted
    assert sent < 100 and not r.proc.alive()  # before all was written; the tree is killed


def test_read_lines_multiplexes_with_own_deadlines(run):
    # the sleeper would answer after 300 s: had anything waited for it, its "late" would be read
    fast, slow = run("echo.py", "strongest"), run("sleeper.py", "strongest", env={"HOSTILE_SLEEP": "300"})
    now = time.monotonic()
    fast.proc.send_line(b"hi", now + 60)
    slow.proc.send_line(b"hi", now + 60)
    res = read_lines([(slow.proc, now + 8), (fast.proc, now + 120)])
    assert isinstance(res[0], BotFault) and res[0].kind == FaultKind.TIMEOUT
    assert not slow.proc.alive()  # nor did anything wait for the sleeper
    # the fast answer is stamped when it came, before the sleeper's deadline: it did not wait
    assert res[1][0] == b"hi" and res[1][1] < now + 8


# ---------------------------------------------------------------- output


@pytest.mark.parametrize("lvl", BOTH)
def test_stdout_flood(run, lvl):
    r = run("stdout_flood.py", lvl, limits=Limits(stdout_line_kb=64))
    r.proc.send_line(b"go", time.monotonic() + 5)
    with pytest.raises(BotFault) as ei:
        for _ in range(10_000):
            r.proc.read_line(time.monotonic() + 5)
    assert ei.value.kind == FaultKind.RESOURCE and ei.value.extra["limit"] == "output"
    assert r.proc.stdout_bytes < 2 << 20


@pytest.mark.parametrize("lvl", BOTH)
def test_single_100mb_line(run, lvl):
    r = run("long_line.py", lvl)
    f = r.fault()
    assert f.kind == FaultKind.PROTOCOL and f.extra["limit"] == "line"
    assert "AAAA" in f.detail and len(f.detail) < 300  # cut short
    assert r.proc.stdout_bytes < 2 << 20  # stopped reading at the cap


def test_stderr_flood_is_drained_and_capped(run):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = run("stderr_flood.py", "strongest", limits=Limits(stderr_log_kb=64))
    assert r.ask(timeout=20) == b"ok"
    assert r.ask() == b"ok"
    assert "stderr-flood-done" in r.proc.stderr_tail(200)
    r.proc.close()
    assert r.log.stat().st_size < 64 * 1024 + 200
    assert "bytes dropped" in r.log.read_text()[-200:]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024  # KiB


def test_garbage_is_delivered_verbatim(run):
    r = run("garbage.py", "strongest")
    assert r.ask() == b"\x00\xff\xfe\x1b[2J garbage \r\x80\x81"


@pytest.mark.parametrize("lvl", BOTH)
def test_exit_midway_is_a_crash_with_code_and_stderr(run, lvl):
    r = run("exit_midway.py", lvl)
    assert r.ask() == b"first"
    f = r.fault()
    assert f.kind == FaultKind.CRASH and f.extra["exit_code"] == 3, f.to_json()
    assert "exit_midway: bye" in f.extra["stderr_tail"]


# ---------------------------------------------------------------- isolation


def test_cannot_read_referee_or_other_bot_files(run, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("referee secret")
    secret.chmod(0o600)
    other = BOTS / "echo.py"
    r = run(
        "read_files.py",
        "strongest",
        env={"HOSTILE_READ": f"{secret}{os.pathsep}{other}", "HOSTILE_REFEREE_PID": str(os.getpid())},
    )
    need(r.info, "filesystem")
    verdict = json.loads(r.ask())
    assert verdict and all(v.startswith("denied") for v in verdict.values()), verdict


def test_cannot_write_outside_scratch(run, tmp_path):
    outside = tmp_path / "outside.txt"
    r = run("write_outside.py", "strongest", env={"HOSTILE_WRITE": str(outside)})
    need(r.info, "filesystem")
    before = (BOTS / "write_outside.py").read_bytes()
    verdict = json.loads(r.ask())
    assert verdict.pop("scratch-ok.txt") == "written"
    assert all(
        v.startswith("denied") or r.info.level in ("full", "namespaces") and "/tmp/" in k for k, v in verdict.items()
    ), verdict
    assert not outside.exists()
    assert not Path(f"/tmp/{r.marker}-escape").exists()  # bwrap: went to its private /tmp
    assert (BOTS / "write_outside.py").read_bytes() == before


def test_no_tcp_or_udp_to_loopback(run):
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(4)
        udp.bind(("127.0.0.1", 0))
        tcp.setblocking(False)
        udp.setblocking(False)
        r = run(
            "net.py",
            "strongest",
            env={"HOSTILE_TCP_PORT": str(tcp.getsockname()[1]), "HOSTILE_UDP_PORT": str(udp.getsockname()[1])},
        )
        need(r.info, "network")
        verdict = json.loads(r.ask())
        time.sleep(0.1)
        with pytest.raises(BlockingIOError):
            tcp.accept()
        with pytest.raises(BlockingIOError):
            udp.recv(64)
        assert verdict["tcp"].startswith("denied") and verdict["udp"].startswith("denied"), verdict
    finally:
        tcp.close()
        udp.close()


@pytest.mark.parametrize("lvl", BOTH)
def test_setsid_double_fork_daemon_is_killed(run, lvl):
    r = run("daemon.py", lvl)
    assert r.ask() == b"daemonized"
    assert len(_marker_pids(r.marker)) >= 2  # the escapee really exists before the close
    r.proc.close(grace_s=0.2)
    no_survivors(r.marker)


@pytest.mark.parametrize("lvl", ["strongest", "landlock"])
def test_cannot_kill_or_ptrace_the_referee(run, lvl):
    info = level(lvl)
    need(info, "signals")  # never run this where it could succeed
    decoy = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.05)  # the decoy predates the bot (orphan sweep rule)
        r = run("attack_referee.py", lvl, env={"HOSTILE_VICTIMS": f"{decoy.pid},{os.getpid()}"})
        verdict = json.loads(r.ask())
        assert all(v.startswith("denied") for v in verdict.values()), verdict
        assert decoy.poll() is None  # the decoy (same uid as the referee) lives
    finally:
        decoy.kill()
        decoy.wait()


# ---------------------------------------------------------------- no false positives


@pytest.mark.slow
@pytest.mark.parametrize("lvl", ["strongest", "namespaces", "landlock", "rlimits"])
def test_well_behaved_bot_at_80_percent_of_every_limit(run, lvl):
    limits = Limits(
        memory_mb=256,
        cpu_s=3,
        file_mb=8,
        open_files=64,
        processes=32,
        scratch_mb=32,
        stdout_line_kb=256,
        stderr_log_kb=64,
    )
    r = run("well_behaved.py", lvl, limits=limits, env={"HOSTILE_LIMITS": json.dumps(asdict(limits))})
    report = json.loads(r.ask(timeout=30))
    assert report["memory_mb"] == 204 and report["threads"] == 24 and report["cpu_s"] >= 2.4
    assert len(json.dumps(report)) > 200 * 1024
    assert r.ask() == b"ok"
    assert 2.4 <= r.proc.cpu_seconds() < 3
    r.proc.close()
    assert "capped" not in r.log.read_text()
    assert r.proc.exit_code == 0


# ---------------------------------------------------------------- harness failures and levels


def test_perl_and_node_scripts_run_in_the_sandbox(tmp_path):
    info = detect_sandbox("auto")
    progs = {
        "perl": "#!/usr/bin/perl\n$|=1; while (<STDIN>) { print $_; }\n",
        "node": "#!/usr/bin/env node\nrequire('readline').createInterface({input: process.stdin})"
        ".on('line', l => process.stdout.write(l + '\\n'));\n",
    }
    ran = 0
    for exe, src in progs.items():
        if not shutil.which(exe):
            continue
        f = tmp_path / f"bot_{exe}"
        f.write_text(src)
        f.chmod(f.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        bot = BotProcess.start(bot_command(f), bot_file=f, name=exe, sandbox=info, limits=Limits())
        try:
            bot.send_line(b"hello " + exe.encode(), time.monotonic() + 10)
            assert bot.read_line(time.monotonic() + 10)[0] == b"hello " + exe.encode()
        finally:
            bot.close()
        ran += 1
    if not ran:
        pytest.skip("neither perl nor node installed")


@pytest.mark.parametrize(
    "message, calls",
    [
        ("bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded", 1),
        ("bwrap: Can't fork for pid 1: Resource temporarily unavailable", 4),
    ],
)
def test_sandbox_failure_is_a_sandbox_fault_with_retry(tmp_path, monkeypatch, message, calls):
    try:  # the bwrap levels: the only ones that run bwrap
        info = detect_sandbox("namespaces")
    except SandboxUnavailable as exc:
        pytest.skip(f"missing: bubblewrap (bwrap) ({exc})")
    # as root, bubblewrap runs as the bot's own uid: the fake must be reachable by any uid
    where = Path(tempfile.mkdtemp(prefix="fake-bwrap-"))
    where.chmod(0o755)
    fake, count = where / "bwrap", where / "count"
    count.touch()
    count.chmod(0o666)
    fake.write_text(f'#!/bin/sh\necho x >> {count}\necho "{message}" >&2\nexit 1\n')
    fake.chmod(0o755)
    try:
        _start_with_fake_bwrap(monkeypatch, fake, info)
        assert len(count.read_text().split()) == calls
    finally:
        shutil.rmtree(where)


def _start_with_fake_bwrap(monkeypatch, fake: Path, info: SandboxInfo) -> None:
    monkeypatch.setenv("ARENA_BWRAP", str(fake))
    with pytest.raises(BotFault) as ei:
        BotProcess.start(
            bot_command(BOTS / "echo.py"), bot_file=BOTS / "echo.py", name="x", sandbox=info, limits=Limits()
        )
    assert ei.value.kind == FaultKind.SANDBOX


def test_named_level_that_fails_raises_one_line_reason(monkeypatch):
    import arena.match.detect as sb

    monkeypatch.setattr(sb, "_cache", {})
    monkeypatch.setattr(sb._ll, "abi_version", lambda: 0)
    with pytest.raises(SandboxUnavailable) as ei:
        detect_sandbox("landlock")
    assert "landlock" in str(ei.value) and "\n" not in str(ei.value)
    with pytest.raises(SandboxUnavailable):
        detect_sandbox("bogus")


def test_forced_level_is_reported(monkeypatch):
    import arena.match.detect as sb

    monkeypatch.setattr(sb, "_cache", {})
    monkeypatch.setenv("SANDBOX_LEVEL", "rlimits")
    info = detect_sandbox()
    assert info.level == "rlimits"
    assert "resource-limited only, NOT isolated" in info.details["warnings"]
    assert not info.enforces("filesystem") and json.dumps(info.details)


_REFEREE = """
import sys, time
from pathlib import Path
from arena.match.process import BotProcess, bot_command
from arena.match.sandbox import Limits
from arena.match.detect import detect_sandbox
bot = Path(sys.argv[2])
p = BotProcess.start(bot_command(bot), bot_file=bot, name="b", sandbox=detect_sandbox(sys.argv[1]),
                     limits=Limits(), env={"HOSTILE_MARKER": sys.argv[3]})
print("started", flush=True)
time.sleep(30)
"""


@pytest.mark.parametrize("lvl", ["strongest", "landlock", "rlimits"])
def test_bot_dies_with_a_killed_referee(lvl):
    info = level(lvl)
    marker = "hostile-" + uuid.uuid4().hex
    root = Path(__file__).resolve().parents[2]
    # no_stdin.py ignores its input, so the closed pipe alone would not end it
    ref = subprocess.Popen(
        [sys.executable, "-c", _REFEREE, info.level, str(BOTS / "no_stdin.py"), marker],
        stdout=subprocess.PIPE,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    try:
        assert ref.stdout.readline() == b"started\n"
        # the bot itself (the referee's own command line holds the marker too)
        end = time.monotonic() + 10.0
        while not set(_marker_pids(marker)) - {ref.pid} and time.monotonic() < end:
            time.sleep(0.02)
        assert set(_marker_pids(marker)) - {ref.pid}
        # listed while the referee lives: no sweep removes a live owner's folder, but once it is
        # dead any other referee starting up (another test worker) may sweep it at once
        left = list(Path(tempfile.gettempdir()).glob(f"arena-scratch-{ref.pid}-*"))
        # a host folder: the scratch below the bwrap levels, bubblewrap's stage as root (see dropuid.py)
        host_dir = info.level not in ("full", "namespaces") or os.geteuid() == 0
        assert len(left) == (1 if host_dir else 0)
        ref.kill()  # SIGKILL: no cleanup code runs in the referee
        ref.wait()
        no_survivors(marker, timeout=10.0)
        sweep_stale_scratch()  # what the next referee does at start-up
        assert not any(p.exists() for p in left)
    finally:
        ref.kill()
        ref.wait()


@pytest.mark.parametrize("name", ["full", "namespaces"])
def test_a_sandbox_init_orphaned_by_a_monitor_killed_mid_start_goes_with_its_bot(name: str) -> None:
    """bubblewrap's init arms its parent-death signal only after it is cloned: a monitor killed in
    that window (a start abandoned) leaves the init to the referee, the subreaper, waiting forever.
    Killing the bot kills such an init too; one that started before the bot, or a live bot's own
    process, is left alone."""
    info = level(name)
    marker = ["sh", "/arena-start"]  # what a bubblewrap init's command line ends with
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    before = subprocess.Popen([*sleeper, *marker])
    time.sleep(0.05)  # start ticks are 10 ms apart
    other = BotProcess.start(
        bot_command(BOTS / "echo.py"), bot_file=BOTS / "echo.py", name="other", sandbox=info, limits=Limits()
    )
    bot = BotProcess.start(
        bot_command(BOTS / "echo.py"), bot_file=BOTS / "echo.py", name="killed", sandbox=info, limits=Limits()
    )
    orphan = subprocess.Popen([*sleeper, *marker])
    try:
        bot.kill()
        orphan.wait(timeout=10)  # raises if it survived the kill
        assert before.poll() is None, "an init older than the bot was killed"
        other.send_line(b"ping", time.monotonic() + 30)
        assert other.read_line(time.monotonic() + 30)[0] == b"ping"
    finally:
        for p in (before, orphan):
            p.kill()
            p.wait()
        other.close()
