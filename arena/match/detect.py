"""Choose the sandbox level: the strongest one whose self-test passes on this machine.

The self-test starts ``probe.py`` through the real bot process layer
(``arena.match.process``), so it proves what a bot would get, not what should work.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, TextIO

from arena.errors import ArenaError
from arena.match.faults import BotFault
from arena.match.process import BotProcess, bot_command
from arena.match.sandbox import (
    LEVELS,
    ORDER,
    Limits,
    SandboxInfo,
    SandboxUnavailable,
    _bwrap_ver,
    become_subreaper,
    bwrap_path,
)
from arena.match.sandbox import cgroup as _cg
from arena.match.sandbox import landlock as _ll
from arena.match.sandbox import launch as _launch
from arena.match.sandbox import procs as _procs
from arena.match.sandbox import seccomp as _sc
from arena.match.sandbox.launch import sweep_stale_scratch

_cache: dict[tuple[int, str], SandboxInfo] = {}
_cache_lock = threading.Lock()


def _static_details(level: str) -> dict[str, Any]:
    """What a level would use on this machine, before the self-test proves it."""
    root = os.geteuid() == 0
    d: dict[str, Any] = {"level_doc": LEVELS[level], "missing": [], "warnings": []}
    layers = ["session", "clean-env", "close-fds", "scratch-cwd", "subreaper-sweep"]
    enf = {
        "cpu": False,
        "memory": False,
        "processes": False,
        "file_size": False,
        "filesystem": False,
        "network": False,
        "signals": False,
        "cleanup": True,
    }
    if level != "none":
        layers.append("rlimits")
        enf.update(cpu=True, memory=True, file_size=True)
    if level in ("full", "namespaces"):
        bw = bwrap_path()
        d["backend"] = _bwrap_ver(bw) if bw else "bwrap (missing)"
        layers += ["userns", "pidns", "netns", "mountns", "ipcns", "utsns", "seccomp"]
        enf.update(filesystem=True, network=True, signals=True)
        d["seccomp"] = _sc.describe("bwrap") if _sc.supported() else None
        if root:  # bubblewrap itself runs as that uid, see dropuid.py
            d["bot_uid"] = "its own unprivileged host uid per bot (1000 inside its user namespace), no capabilities"
    elif level == "landlock":
        mode = _launch.landlock_mode()
        d["backend"] = f"landlock abi {_ll.abi_version()}" + (
            " + namespaces by the arena" if mode["namespaces"] else ""
        )
        layers += ["landlock", "seccomp-strict"]
        enf.update(filesystem=True, network=True, signals=_ll.abi_version() >= 6 or mode["namespaces"])
        d["seccomp"] = _sc.describe("strict") if _sc.supported() else None
        d["landlock_abi"] = _ll.abi_version()
        if mode["namespaces"]:
            layers += ["pidns", "netns", "mountns", "ipcns", "utsns", "own-root", "own-uid"]
            d["bot_uid"] = "its own unprivileged host uid per bot, no capabilities"
        else:
            d["missing"] += [
                "pid/net/mount namespaces and a uid of its own (need root or bubblewrap)",
                "scratch size and inode limit (only RLIMIT_FSIZE per file; needs root)",
            ]
        if _ll.abi_version() < 6 and not mode["namespaces"]:
            d["missing"].append("landlock signal scope (ABI < 6): the bot can signal same-uid processes")
    else:
        d["backend"] = "subprocess"
        if level == "rlimits":
            d["missing"] += [
                "filesystem isolation",
                "network isolation",
                "signal/ptrace isolation",
                "scratch size and inode limit",
            ]
            d["warnings"].append("resource-limited only, NOT isolated")
        else:
            d["missing"] += ["all limits", "all isolation"]
            d["warnings"].append("UNSANDBOXED: no limits, no isolation")
    ll_mode = _launch.landlock_mode() if level == "landlock" else {}
    if level == "full" or ll_mode.get("cgroup"):
        h = _cg.discover()
        d["cgroup"] = h.describe()
        layers.append("cgroup")
        enf["processes"] = True
    elif ll_mode.get("own_uid"):
        d["cgroup"] = "none"
        layers.append("rlimit-nproc")
        enf["processes"] = True  # RLIMIT_NPROC counts the bot's own uid only
    else:
        d["cgroup"] = "none"
        if level != "none":
            d["missing"].append(
                "process/thread limit (no pids cgroup" + ("; RLIMIT_NPROC is ignored for uid 0)" if root else ")")
            )
    if ll_mode.get("cgroup"):
        d["memory_limit"] = "cgroup (memory_mb + scratch_mb, whole bot, OOM kill)"
    elif level in ("namespaces", "landlock", "rlimits"):
        d["memory_limit"] = "RLIMIT_AS per process (virtual memory; a bot may catch MemoryError)"
    elif level == "full":
        d["memory_limit"] = "cgroup (memory_mb + scratch_mb, whole bot, OOM kill)"
    if level != "none":
        d["rlimits"] = [
            "cpu: cpu_s+1 soft / cpu_s+2 hard per process (the tree budget cpu_s is the referee's)",
            "fsize: file_mb",
            "nofile: open_files",
            "core: 0",
        ]
        if level != "full" and not ll_mode.get("cgroup"):
            d["rlimits"].append("as: memory_mb")
        if ll_mode.get("own_uid") and not ll_mode.get("cgroup"):
            d["rlimits"].append("nproc: processes (the bot's own uid)")
    # the scratch: a tmpfs of its own per bot process where the arena can mount one (root), else
    # bubblewrap's own tmpfs (size only), else a host folder (only RLIMIT_FSIZE per file)
    own_tmpfs = level in ("full", "namespaces") and root or level == "landlock" and root
    enf["scratch"] = own_tmpfs or level in ("full", "namespaces")
    enf["inodes"] = own_tmpfs
    enf["host_facts"] = level in ("full", "namespaces") or level == "landlock" and root
    if own_tmpfs:
        d["scratch"] = "a tmpfs of its own per bot process: scratch_mb, and one inode per 4 KiB of it"
    elif enf["scratch"]:
        d["scratch"] = "bubblewrap's tmpfs: scratch_mb; no inode cap"
        d["missing"].append("scratch inode limit (needs root: bubblewrap's tmpfs has no inode option)")
    else:
        d["scratch"] = "a host folder: only file_mb per file (RLIMIT_FSIZE)"
    if enf["host_facts"]:
        d["host_facts"] = f"hostname {_launch.HOSTNAME}; pid 1 shows only {_launch.INIT_NAME}"
    elif level != "none":
        d["missing"].append("a hostname and pid 1 of its own (needs namespaces)")
    d["layers"] = layers
    d["enforces"] = enf
    return d


def _prerequisites(level: str) -> str | None:
    """A one-line reason why ``level`` cannot even be tried here, or None."""
    if level in ("full", "namespaces"):
        if not bwrap_path():
            return "bwrap not found"
        if not _sc.supported():
            return "no seccomp syscall table for this architecture"
        if level == "full":
            ok, why = _cg.usable(_cg.discover())
            if not ok:
                return why
    if level == "landlock":
        if _ll.abi_version() < 4:
            return f"landlock ABI {_ll.abi_version()} < 4 (needs TCP rules)"
        if not _sc.supported():
            return "no seccomp syscall table for this architecture"
    return None


def _self_test(level: str, details: dict[str, Any]) -> str | None:
    """Run the probe bot at ``level``; return a one-line failure reason or None."""

    probe = Path(_launch.__file__).with_name("probe.py")  # the probe lives with the sandbox
    marker = "arena-probe-" + uuid.uuid4().hex
    with tempfile.TemporaryDirectory(prefix="arena-selftest-") as tmp:
        canary = Path(tmp) / "canary"
        canary.write_text("secret")
        canary.chmod(0o600)
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(4)
        udp.bind(("127.0.0.1", 0))
        tcp.setblocking(False)
        udp.setblocking(False)
        info = SandboxInfo(level, details)
        limits = Limits(memory_mb=512, cpu_s=30, processes=16)
        t0 = time.monotonic()
        bot = None
        try:
            bot = BotProcess.start(
                [*bot_command(probe), marker], bot_file=probe, name="selftest", sandbox=info, limits=limits
            )
            details["startup_ms"] = round((time.monotonic() - t0) * 1000, 1)
            req = {
                "tcp": tcp.getsockname()[1],
                "udp": udp.getsockname()[1],
                "canary": str(canary),
                "referee": os.getpid(),
                "referee_start": _procs.start_ticks(os.getpid()),
            }
            bot.send_line(json.dumps(req).encode(), time.monotonic() + 10)
            line, _ = bot.read_line(time.monotonic() + 10)
            res = json.loads(line)
            res["host_uids"] = _bot_host_uids(marker)  # seen from here: a nested user namespace may hide it
            details["probe"] = res
            cg_tasks = bot._cgroup.pids_current() if bot._cgroup else None
        except (BotFault, ValueError) as exc:
            return f"probe failed: {exc}"
        finally:
            if bot is not None:
                bot.kill()
        leaked = []
        try:
            conn, _ = tcp.accept()
            conn.close()
            leaked.append("tcp")
        except BlockingIOError:
            pass
        try:
            udp.recv(64)
            leaked.append("udp")
        except BlockingIOError:
            pass
        tcp.close()
        udp.close()
        survivors = _marker_pids(marker)
        for pid in survivors:  # the self-test must not leave its own mess behind
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        details["selftest_ms"] = round((time.monotonic() - t0) * 1000, 1)
    fails = []
    if survivors:
        fails.append(f"{len(survivors)} process(es) survived the kill")
    if res.get("rlimit_nofile") != limits.open_files and level != "none":
        fails.append(f"RLIMIT_NOFILE not applied ({res.get('rlimit_nofile')})")
    if level in ("full", "namespaces", "landlock"):
        if leaked or res.get("tcp") == "connected" or res.get("udp") == "sent":
            fails.append("reached the referee's loopback sockets")
        if res.get("canary") != "denied":
            fails.append("read the referee's 0600 canary file")
        if res.get("kill_referee") != "denied":
            fails.append("could signal the referee")
        if res.get("userns") != "denied":
            fails.append("could create a user namespace")
        if res.get("inet_socket") != "denied":
            fails.append("seccomp did not refuse an AF_INET socket")
    if level in ("full", "namespaces") and res.get("ifaces") != ["lo"]:
        fails.append(f"network interfaces visible: {res.get('ifaces')}")
    if level == "full" and not cg_tasks:
        fails.append("bot not in its cgroup")
    size, inodes = res.get("scratch") or (None, None)
    if details["enforces"].get("scratch") and (size is None or size > limits.scratch_mb * _launch.MiB):
        fails.append(f"scratch not capped at scratch_mb ({size} bytes)")
    if details["enforces"].get("inodes") and (inodes is None or inodes > limits.scratch_inodes):
        fails.append(f"scratch inodes not capped ({inodes})")
    if not fails:
        _judge_safety(level, res, details)
    return "; ".join(fails) or None


SAFE_CANDIDATES = ("full", "namespaces", "landlock")
NO_CAPS = "0000000000000000"


def _judge_safety(level: str, res: dict[str, Any], details: dict[str, Any]) -> None:
    """Whether ``level`` is safe for untrusted bots here, from what the probe could do.

    Safe: no capabilities, not host root, no view of other processes or their
    environment, no change of host state, no network, no files beyond its own,
    a process limit. Stores ``safe`` and the ``unsafe`` reasons in ``details``.
    """
    unsafe: list[str] = []
    if level not in SAFE_CANDIDATES:
        unsafe.append("resource limits only: files, network and other processes are open to the bot")
    else:
        if res.get("cap_eff") != NO_CAPS:
            unsafe.append(f"the bot holds capabilities ({res.get('cap_eff')})")
        # as the host sees it (inside, bubblewrap's nested user namespaces show an inner uid 0)
        if 0 in res.get("host_uids", []) or not res.get("host_uids") and res.get("host_uid") == 0:
            unsafe.append("the bot runs as host root")
        if res.get("sees_referee") != "denied":
            unsafe.append("the bot sees other processes")
        if res.get("environ") != "denied":
            unsafe.append("the bot reads other processes' environment")
        changed = [k for k in ("hostname", "nice", "realtime") if res.get(k) != "denied"]
        if changed:
            unsafe.append(f"the bot can change host state ({', '.join(changed)})")
        if not details["enforces"].get("processes"):
            unsafe.append("no process limit")
        if not (details["enforces"].get("scratch") and details["enforces"].get("inodes")):
            unsafe.append("no cap on the scratch's size and inodes")
        if res.get("nodename") != _launch.HOSTNAME:
            unsafe.append("the bot sees the host's hostname")
        if not res.get("pid1") or res["pid1"][0] != _launch.INIT_NAME:
            unsafe.append("the bot's pid 1 shows host paths")
    details["safe"] = not unsafe
    details["unsafe"] = unsafe


def _bot_host_uids(marker: str) -> list[int]:
    """Host uids of the processes that run the bot: those carrying ``marker`` with no such child.

    (Launchers that carry the bot's argv too, such as bubblewrap's or the shim's parent
    processes, are above it.)
    """
    pids = set(_marker_pids(marker))
    parents = {st[0] for p in pids if (st := _procs.stat(p)) is not None}
    uids = []
    for pid in pids - parents:
        try:
            with open(f"/proc/{pid}/status") as f:
                uids += [int(line.split()[1]) for line in f if line.startswith("Uid:")]
        except OSError:
            pass
    return sorted(set(uids))


def _marker_pids(marker: str) -> list[int]:
    """Live processes whose argv or environment contains ``marker`` (zombies excluded)."""
    needle = marker.encode()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                st = f.read()
            if st[st.rfind(b")") + 2 : st.rfind(b")") + 3] in (b"Z", b"X"):
                continue
            blob = b""
            for part in ("cmdline", "environ"):
                try:
                    with open(f"/proc/{name}/{part}", "rb") as f:
                        blob += f.read()
                except OSError:
                    pass
        except OSError:
            continue
        if needle in blob:
            out.append(int(name))
    return out


def detect_sandbox(requested: str = "auto") -> SandboxInfo:
    """The sandbox to use: ``auto`` = strongest level whose self-test passes.

    ``SANDBOX_LEVEL`` in the environment replaces ``auto``. A named level that
    fails raises SandboxUnavailable with a one-line reason. Cached per process.
    """
    if requested == "auto":
        requested = os.environ.get("SANDBOX_LEVEL", "auto") or "auto"
    if requested != "auto" and requested not in LEVELS:
        raise SandboxUnavailable(f"unknown sandbox level {requested!r}; choose from auto, {', '.join(LEVELS)}")
    key = (os.getpid(), requested)
    with _cache_lock:
        if key in _cache:
            return _cache[key]
        become_subreaper()
        h = _cg.discover()
        if h.v1 or h.v2:
            _cg.sweep_stale(h)
        sweep_stale_scratch()
        rejected: dict[str, str] = {}
        candidates = ORDER if requested == "auto" else (requested,)
        info = None
        for level in candidates:
            why = _prerequisites(level)
            details = _static_details(level)
            if why is None and level != "none":
                why = _self_test(level, details)
            elif level == "none":
                details.update(safe=False, unsafe=["no limits and no isolation"])
            if why is None:
                details["rejected"] = rejected
                info = SandboxInfo(level, details)
                break
            rejected[level] = why
        if info is None:
            if requested != "auto":
                raise SandboxUnavailable(f"sandbox level {requested!r} unavailable: {rejected[requested]}")
            raise SandboxUnavailable(
                "no sandbox level passed its self-test: " + "; ".join(f"{k}: {v}" for k, v in rejected.items())
            )
        _cache[key] = info
        return info


def safe_level_here() -> tuple[str | None, str]:
    """(the strongest level proven safe on this machine, "") or, if none is, (None, what would
    give one here: bubblewrap, root, or why each safe candidate failed). Runs the self-tests."""
    failed = []
    for level in SAFE_CANDIDATES:
        try:
            info = detect_sandbox(level)
        except SandboxUnavailable as exc:
            failed.append(str(exc).removeprefix("sandbox level "))
            continue
        if info.safe:
            return level, ""
        failed.append(f"{level!r} passed but is not safe ({'; '.join(info.details.get('unsafe', []))})")
    steps = []
    if not bwrap_path():
        steps.append("install bubblewrap (apt-get install bubblewrap)")
    if os.geteuid() != 0:
        steps.append("run as root (landlock as root is safe)")
    if steps:
        return None, " or ".join(steps)
    return None, f"make one pass its self-test ({'; '.join(failed)}; docs/sandbox.md)"


def open_sandbox(level: str, err: TextIO | None = None) -> SandboxInfo:
    """Detect (self-test) the sandbox and say which level is in force."""
    try:
        info = detect_sandbox(level)
    except SandboxUnavailable as exc:
        raise ArenaError(f"--sandbox {level}: {exc}; use --sandbox auto to take the strongest available") from None
    (err or sys.stderr).write(level_lines(info))
    return info


def level_lines(info: SandboxInfo) -> str:
    """What a run prints about its sandbox: the level, why ``auto`` fell back, and whether it is safe."""
    out = f"arena: sandbox level {info.level}"
    out += (
        " (safe for untrusted bots)\n"
        if info.safe
        else (" (NOT safe for untrusted bots: " + "; ".join(info.details.get("unsafe", [])) + ")\n")
    )
    rejected = info.details.get("rejected") or {}
    if rejected:
        first, why = next(iter(rejected.items()))
        hint = "install bubblewrap (apt-get install bubblewrap)" if "bwrap not found" in why else "see docs/sandbox.md"
        out += f"arena: sandbox {first} unavailable ({why}), using {info.level}; to get {first}: {hint}\n"
    return out
