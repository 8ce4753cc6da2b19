"""The promise of every level that is safe for untrusted bots, attack by attack.

Each attack is performed by a real bot, inside a real match against honest
sandboxed bots, at every safe level this machine provides (``full``,
``namespaces``, ``landlock``). The attack must fail and the honest seats must
finish unharmed. A level the machine cannot provide is skipped with the
missing tool named. ``EXPECTED`` is the table in docs/sandbox.md; a test checks
that the two agree.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from arena.match.detect import detect_sandbox
from arena.match.process import BotProcess, bot_command
from arena.match.sandbox import Limits, SandboxInfo, SandboxUnavailable
from tests.hostile.test_match_hostile import NEEDS_ROOM, ROOMY, ROOT, TC, hostile_bot, no_survivors, play_with

SAFE = ("full", "landlock")  # namespaces is never safe: no process limit (see the docs)
DOC = ROOT / "docs" / "sandbox.md"
ROOT_USER = os.geteuid() == 0

# attack -> (hostile behaviour, fault kinds that are right for the attacker at a safe level)
ATTACKS: dict[str, tuple[str, set]] = {
    "write a move into an opponent's stdout via /proc/<pid>/fd": ("inject_fd", {None}),
    "read another seat's observation (its stdin, memory, scratch)": ("peek", {None}),
    "read the arena's environment (/proc/<ppid>/environ)": ("environ", {None}),
    "change host state (hostname, clock, priority, kernel log)": ("host_state", {None}),
    "loopback TCP or UDP connection": ("network", {None}),
    "read the results, logs, other bots, tournament file, home": ("read_files", {None}),
    "write into bots/ or anywhere outside its scratch": ("write_outside", {None}),
    "kill or ptrace another process": ("attack_referee", {None}),
    "fork bomb": ("fork_bomb", {"resource"}),
    "CPU burnt in a thread": ("cpu_thread", {"resource"}),
}
IDENTITY = ("no capabilities", "not host root", "environment is the allow-list")
# checked by tests/hostile/test_bounds.py
BOUNDS = (
    "write more than scratch_mb or more files than its inode cap",
    "see the host's hostname or host paths in its pid 1",
)

# the table of docs/sandbox.md: attack -> level -> result
EXPECTED: dict[str, dict[str, str]] = {
    a: {"full": "blocked", "landlock": "blocked", "namespaces": "not run", "rlimits": "not run"}
    for a in [*IDENTITY, *ATTACKS, *BOUNDS]
}
MISSING = {
    "full": "bubblewrap (bwrap) and a pids+memory cgroup (root)",
    "landlock": "root (for the namespaces and a uid per bot) and Landlock ABI >= 4",
}


def safe_level(name: str) -> SandboxInfo:
    """The level, or a skip that names what this machine lacks for it."""
    try:
        info = detect_sandbox(name)
    except SandboxUnavailable as exc:
        missing = "bubblewrap (bwrap)" if "bwrap not found" in str(exc) else f"{MISSING[name]} ({exc})"
        pytest.skip(f"level {name} unavailable here, missing: {missing}")
    if not info.safe:
        pytest.skip(
            f"level {name} is not safe here, missing: {MISSING[name]} ("
            + "; ".join(info.details.get("unsafe", []))
            + ")"
        )
    return info


def expect(attack: str, level: str) -> None:
    """The table promises this attack fails at this level."""
    assert EXPECTED[attack][level] == "blocked", EXPECTED[attack][level]


# ---------------------------------------------------------------- the documented table


def _doc_table() -> dict[str, dict[str, str]]:
    text = DOC.read_text()
    block = text.split("<!-- safe-levels-table -->")[1].split("<!-- /safe-levels-table -->")[0]
    rows = [r.strip().strip("|").split("|") for r in block.strip().splitlines()]
    head = [c.strip() for c in rows[0]][1:]
    return {r[0].strip(): dict(zip(head, (c.strip() for c in r[1:]))) for r in rows[2:]}


def test_docs_table_is_the_tested_table():
    assert _doc_table() == EXPECTED


# ---------------------------------------------------------------- who the bot is

IDENTITY_BOT = """
import json, os, sys
sys.stdin.readline()
caps = {l.split()[0]: l.split()[1] for l in open("/proc/self/status") if l.startswith("Cap")}
print(json.dumps({"caps": caps, "env": dict(os.environ), "cwd": os.getcwd()}), flush=True)
sys.stdin.readline()
"""


def _host_uids(marker: str) -> list[int]:
    """Real, effective, saved and file uids, as the host sees them, of the processes running
    the bot: those whose argv holds ``marker`` and that have no such child (bubblewrap or a
    shim above the bot carry its argv too, and inside, nested user namespaces hide the host uid)."""
    from tests import own_processes as own

    pids = set(own.with_marker(marker))
    parents = {st[1] for p in pids if (st := own.stat(p)) is not None}
    uids: list[int] = []
    for pid in pids - parents:
        with open(f"/proc/{pid}/status") as f:
            uids += [int(u) for line in f if line.startswith("Uid:") for u in line.split()[1:]]
    return uids


@pytest.fixture(scope="module")
def identities(tmp_path_factory):
    """What a bot sees of itself at each safe level (one run per level), and its host uids."""
    tmp = tmp_path_factory.mktemp("identity")
    bot = tmp / f"identity-{uuid.uuid4().hex}.py"
    bot.write_text(IDENTITY_BOT)
    bot.chmod(0o644)
    seen: dict[str, dict] = {}

    def at(level: str) -> dict:
        if level not in seen:
            info = safe_level(level)
            p = BotProcess.start(bot_command(bot), bot_file=bot, name="identity", sandbox=info, limits=Limits())
            try:
                p.send_line(b"go", time.monotonic() + 10)
                seen[level] = json.loads(p.read_line(time.monotonic() + 10)[0])
                seen[level]["host_uids"] = _host_uids(bot.name)  # the bot waits for a second line
            finally:
                p.close()
        return seen[level]

    return at


@pytest.mark.parametrize("level", SAFE)
def test_no_capabilities(identities, level):
    me = identities(level)
    expect("no capabilities", level)
    assert me["caps"]["CapEff:"] == me["caps"]["CapPrm:"] == me["caps"]["CapAmb:"] == "0" * 16, me["caps"]


@pytest.mark.parametrize("level", SAFE)
def test_not_host_root(identities, level):
    me = identities(level)
    expect("not host root", level)
    assert me["host_uids"], "the bot's process was not found from the host"
    assert 0 not in me["host_uids"], me["host_uids"]


@pytest.mark.parametrize("level", SAFE)
def test_environment_is_the_allow_list(identities, level, monkeypatch):
    me = identities(level)
    expect("environment is the allow-list", level)
    allowed = {
        "PATH",
        "LANG",
        "LC_ALL",
        "HOME",
        "TMPDIR",
        "PYTHONPATH",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED",
        "PWD",
    }  # PWD: set by the /bin/sh that starts it at full
    assert set(me["env"]) <= allowed, set(me["env"]) - allowed
    assert me["env"]["HOME"] == me["cwd"] and me["env"]["LANG"] == "C.UTF-8"


# ---------------------------------------------------------------- attacks inside a match


def arena_stand_in(token: str, cleanup: list) -> int:
    """A process of the arena's uid with ``token`` in its environment (the target of the attacks
    on other processes: /proc/<pid>/environ, kill, ptrace); returns its pid."""
    p = subprocess.Popen(["sleep", "60"], env={**os.environ, "ARENA_TEST_SECRET": token})
    cleanup.insert(0, p)
    time.sleep(0.05)  # it predates the bots (the orphan sweep spares older processes)
    return p.pid


@pytest.mark.slow
@pytest.mark.parametrize("level", SAFE)
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_attack_fails_and_honest_seats_finish(attack, level, tmp_path):
    info = safe_level(level)
    expect(attack, level)
    behaviour, kinds = ATTACKS[attack]
    token = "arena-secret-" + uuid.uuid4().hex
    hostname = socket.gethostname()
    cleanup: list = []
    consts: dict = {
        "VICTIM": arena_stand_in(token, cleanup),
        "PORT": 0,
        "SECRET": token,
        "MEMORY_MB": 256,
        "MOVE_S": 0.5,
    }
    planted = [tmp_path / "planted.txt", ROOT / "bots" / f"planted_{uuid.uuid4().hex[:8]}.py"]
    if behaviour == "read_files":
        results = tmp_path / "results"
        (results / "logs").mkdir(parents=True)
        for f in (results / "results.sqlite", results / "run.log", results / "logs" / "bot.stderr.log"):
            f.write_text("secret")
        home = [str(p) for p in Path.home().glob(".*") if p.is_file()][:2]
        consts["SECRET"] = ",".join(
            [
                str(results / "results.sqlite"),
                str(results / "run.log"),
                str(results / "logs" / "bot.stderr.log"),
                str(ROOT / "bots" / "tightwad_heuristic.py"),
                str(ROOT / "tournaments" / "spring.yaml"),
                *home,
                "/etc/shadow",
            ]
        )
    if behaviour == "write_outside":
        consts["SECRET"] = ",".join(str(p) for p in planted)
    if behaviour == "network":
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(5)
        listener.setblocking(False)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", listener.getsockname()[1]))
        udp.setblocking(False)
        cleanup += [listener, udp]
        consts["PORT"] = listener.getsockname()[1]
    decoy = cleanup[0]
    path = hostile_bot(tmp_path, behaviour, **consts)
    limits = Limits(memory_mb=256, cpu_s=1 if behaviour == "cpu_thread" else 4, processes=16, file_mb=4)
    try:
        record = play_with(path, info, limits=limits, tc=ROOMY if behaviour in NEEDS_ROOM else TC)
        fault = record["faults"][1]
        kind = None if fault is None else fault["kind"]
        assert kind in kinds, f"{attack} at {level}: attacker got {fault}"
        if fault is not None:
            assert fault.get("exit_code") != 42, f"{attack} at {level}: the attack succeeded"
            assert record["result"]["places"][1] == max(record["result"]["places"])
        assert record["faults"][0] is None and record["faults"][2] is None, record["faults"]
        assert all(d["status"] == "ok" for d in record["decisions"] if d["seat"] != 1)
        assert no_survivors(path.stem) == []
        assert socket.gethostname() == hostname
        assert not any(p.exists() for p in planted)
        assert decoy.poll() is None, "the arena's stand-in process was killed"
        if behaviour == "network":
            with pytest.raises(BlockingIOError):
                cleanup[1].accept()
            with pytest.raises(BlockingIOError):
                cleanup[2].recvfrom(16)
    finally:
        for p in planted:
            p.unlink(missing_ok=True)
        for c in cleanup:
            if isinstance(c, subprocess.Popen):
                c.kill()
                c.wait()
            else:
                c.close()


# ---------------------------------------------------------------- common runtimes

RUNTIMES = {
    "python": (
        "bot.py",
        None,
        """import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "py"}), flush=True)
    elif m["type"] == "act":
        print(m["observation"]["legal_actions"][0]["id"], flush=True)
    elif m["type"] == "bye":
        break
""",
    ),
    "perl": (
        "bot.pl",
        "perl",
        """#!/usr/bin/env perl
use strict; use warnings; use JSON::PP;
my $json = JSON::PP->new; $| = 1;
while (my $line = <STDIN>) {
    my $m = $json->decode($line);
    if ($m->{type} eq 'hello') { print $json->encode({type => 'hello', name => 'pl'}), "\\n"; }
    elsif ($m->{type} eq 'act') { print $m->{observation}{legal_actions}[0]{id}, "\\n"; }
    elsif ($m->{type} eq 'bye') { last; }
}
""",
    ),
    "node": (
        "bot.js",
        "node",
        """#!/usr/bin/env node
const rl = require('readline').createInterface({input: process.stdin});
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.type === 'hello') process.stdout.write(JSON.stringify({type: 'hello', name: 'js'}) + '\\n');
  else if (m.type === 'act') process.stdout.write(m.observation.legal_actions[0].id + '\\n');
  else if (m.type === 'bye') process.exit(0);
});
""",
    ),
    "c": (
        "bot.c",
        "cc",
        r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    char *line = NULL; size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        if (strstr(line, "\"type\":\"hello\"")) puts("{\"type\":\"hello\",\"name\":\"c\"}");
        else if (strstr(line, "\"type\":\"act\"")) {
            char *p = strstr(line, "\"legal_actions\":[{\"id\":");
            printf("%ld\n", p ? strtol(p + 23, NULL, 10) : 0L);
        } else if (strstr(line, "\"type\":\"bye\"")) break;
        fflush(stdout);
    }
    return 0;
}
""",
    ),
    "sh": (
        "bot.sh",
        "sed",
        """#!/bin/sh
while IFS= read -r line; do
  case "$line" in
    *'"type":"hello"'*) echo '{"type":"hello","name":"sh"}' ;;
    *'"type":"act"'*) printf '%s\\n' "$line" | sed -n 's/.*"legal_actions":\\[{"id":\\([0-9]*\\).*/\\1/p' ;;
    *'"type":"bye"'*) exit 0 ;;
  esac
done
""",
    ),
}


@pytest.fixture(scope="module")
def runtime_bots(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runtimes")
    made: dict[str, Path] = {}

    def get(runtime: str) -> Path:
        name, tool, src = RUNTIMES[runtime]
        if tool and not shutil.which(tool):
            pytest.skip(f"{runtime}: missing tool {tool}")
        if runtime not in made:
            f = tmp / name
            f.write_text(src)
            if runtime == "c":
                exe = tmp / "bot_c"
                subprocess.run([shutil.which("cc"), "-O1", "-o", str(exe), str(f)], check=True)
                f = exe
            f.chmod(0o755)
            made[runtime] = f
        return made[runtime]

    return get


@pytest.mark.slow
@pytest.mark.parametrize("level", SAFE)
@pytest.mark.parametrize("runtime", list(RUNTIMES))
def test_common_runtime_completes_a_match(runtime, level, runtime_bots):
    info = safe_level(level)
    bot = runtime_bots(runtime)
    # a roomy clock: this checks that the runtime works in the sandbox, not how fast it starts
    record = play_with(bot, info, game="tightwad", limits=Limits(), tc=ROOMY)
    assert record["faults"] == [None, None, None], record["faults"]
    assert sum(1 for d in record["decisions"] if d["seat"] == 1) > 0
    assert all(d["status"] == "ok" for d in record["decisions"])


def test_auto_fallback_says_why_and_what_gives_full(monkeypatch):
    import arena.match.detect as sb

    monkeypatch.setattr(sb, "_cache", {})
    monkeypatch.setattr(sb, "bwrap_path", lambda: None)
    monkeypatch.delenv("SANDBOX_LEVEL", raising=False)
    info = sb.detect_sandbox("auto")
    lines = sb.level_lines(info).splitlines()
    assert lines[0].startswith(f"arena: sandbox level {info.level} (")
    assert len(lines) == 2 and re.search(r"full unavailable \(bwrap not found\).*install bubblewrap", lines[1])


def test_rlimits_is_never_called_safe():
    info = detect_sandbox("rlimits")
    assert not info.safe and info.details["unsafe"]


# ---------------------------------------------------------------- the attacks are real


@pytest.mark.slow
@pytest.mark.parametrize(
    "attack", [a for a, (b, _) in ATTACKS.items() if b in ("inject_fd", "peek", "environ", "read_files", "network")]
)
def test_attack_succeeds_at_rlimits(attack, tmp_path):
    """The same bots do escape where the sandbox is not safe (only the harmless attacks are run)."""
    behaviour, _ = ATTACKS[attack]
    token = "arena-secret-" + uuid.uuid4().hex
    cleanup: list = []
    consts: dict = {
        "VICTIM": arena_stand_in(token, cleanup),
        "PORT": 0,
        "SECRET": token,
        "MEMORY_MB": 256,
        "MOVE_S": 0.5,
    }
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    if behaviour == "network":
        consts["PORT"] = listener.getsockname()[1]
    if behaviour == "read_files":
        secret = tmp_path / "results.sqlite"
        secret.write_text("secret")
        consts["SECRET"] = str(secret)
    path = hostile_bot(tmp_path, behaviour, **consts)
    try:
        record = play_with(path, detect_sandbox("rlimits"), limits=Limits(memory_mb=256, cpu_s=4))
    finally:
        listener.close()
        cleanup[0].kill()
        cleanup[0].wait()
    assert record["faults"][1] is not None and record["faults"][1].get("exit_code") == 42, record["faults"]


@pytest.mark.parametrize("bot", ["fork_bomb.py", "thread_bomb.py"])
def test_landlock_without_cgroup_caps_processes_by_the_bots_own_uid(bot, monkeypatch):
    """As root without a usable cgroup, landlock limits a bot's processes by RLIMIT_NPROC on its own uid."""
    from arena.match.detect import _static_details
    from arena.match.faults import BotFault, FaultKind
    from arena.match.sandbox import launch

    if not ROOT_USER:
        pytest.skip("missing: root (a uid per bot)")
    safe_level("landlock")
    monkeypatch.setattr(launch, "landlock_mode", lambda: {"namespaces": True, "own_uid": True, "cgroup": False})
    info = SandboxInfo("landlock", _static_details("landlock"))
    assert info.enforces("processes") and "rlimit-nproc" in info.details["layers"]
    path = Path(__file__).parent / "bots" / bot
    p = BotProcess.start(bot_command(path), bot_file=path, name=bot, sandbox=info, limits=Limits(processes=16))
    try:
        p.send_line(b"go", time.monotonic() + 10)
        with pytest.raises(BotFault) as ei:
            p.read_line(time.monotonic() + 20)
        assert ei.value.kind == FaultKind.RESOURCE and ei.value.extra["limit"] == "processes", ei.value.to_json()
    finally:
        p.kill()
