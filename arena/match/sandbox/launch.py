"""Build the host command line that starts one bot at a given sandbox level.

Every launch ends in a small trusted step inside the sandbox that prints
``READY`` on stdout and then execs the bot, so a failure before that line is the
harness's (SANDBOX) and anything after it is the bot's.
"""

from __future__ import annotations

import atexit
import glob
import itertools
import json
import os
import resource
import shlex
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import games as _games

from . import READY, Limits, SandboxInfo, bwrap_path
from . import cgroup as _cg
from . import seccomp as _sc

MiB = 1 << 20
BOT_HELPER_DIR = Path(__file__).resolve().parents[2] / "bot_helper"
SANDBOX_UID = 1000  # uid/gid the bot sees inside the user namespace
_READY_SH = f'echo {READY}; exec "$@"'
# argv[0] of the sandbox's own processes that a bot can see (its pid 1): no host path, no configuration
INIT_NAME = "arena-init"
START_MARKER = b"\0sh\0/arena-start\0"  # how a bubblewrap monitor's command line (and its init's) ends
HOSTNAME = "arena-bot"  # the bot's hostname at every level with a uts namespace
# Debian's and Ubuntu's OpenJDK keep their configuration in /etc/java-N-openjdk, linked from
# /usr/lib/jvm/*/conf and lib (java.security, jvm.cfg): without it their java fails to start
_SYSTEM_RO = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives", *sorted(glob.glob("/etc/java-*")))
BOT_PATH = "/usr/local/bin:/usr/bin:/bin"  # the bot's PATH at every level
# top folders every bot sees: recreated as links where they link into /usr, bound where they are real
TOP_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


SCRATCH_PREFIX = "arena-scratch-"
BOT_LIB_PREFIX = "arena-botlib-"
GAMES_DIR = Path(_games.__file__).resolve().parent
_bot_lib: tuple[int, Path] | None = None  # (owner pid, folder)


def sweep_dead_owner_dirs(prefix: str) -> int:
    """Remove temp folders named ``<prefix><pid>-...`` whose owning process is gone.

    Returns how many were removed. Folders of live processes (or of processes we
    may not signal) are kept.
    """
    n = 0
    for d in Path(tempfile.gettempdir()).glob(f"{prefix}*-*"):
        pid = d.name[len(prefix) :].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # its owner still runs
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        shutil.rmtree(d, ignore_errors=True)
        n += 1
    return n


def sweep_stale_scratch() -> int:
    """Remove scratch directories of referees that died without cleaning up. Returns how many."""
    return sweep_dead_owner_dirs(SCRATCH_PREFIX)


def bot_lib_dir() -> Path:
    """A read-only folder holding only a copy of the ``games`` engines, for bots to import.

    Made once per process. The bot's PYTHONPATH names this folder rather than the one
    that holds ``games`` in the arena's install, which also holds the arena's own code:
    at the Landlock level a path entry the bot may not list would hide ``games``.
    """
    global _bot_lib
    if _bot_lib is not None and _bot_lib[1].is_dir():
        return _bot_lib[1]
    sweep_dead_owner_dirs(BOT_LIB_PREFIX)
    lib = Path(tempfile.mkdtemp(prefix=f"{BOT_LIB_PREFIX}{os.getpid()}-"))
    dest = lib / "games"
    dest.mkdir()
    for src in sorted(GAMES_DIR.glob("*.py")):
        shutil.copyfile(src, dest / src.name)
        os.chmod(dest / src.name, 0o444)
    os.chmod(dest, 0o555)
    os.chmod(lib, 0o555)
    if _bot_lib is None:
        atexit.register(remove_bot_lib)
    _bot_lib = (os.getpid(), lib)
    return lib


def remove_bot_lib() -> None:
    if _bot_lib is not None and _bot_lib[0] == os.getpid():  # forked workers share the parent's copy
        lib = _bot_lib[1]
        for d in (lib, lib / "games"):
            if d.is_dir():
                os.chmod(d, 0o755)
        shutil.rmtree(lib, ignore_errors=True)


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str]
    cwd: str
    pass_fds: list[int] = field(default_factory=list)
    cgroup: _cg.BotCgroup | None = None
    scratch: Path | None = None  # host directory removed at close
    bwrap: bool = False
    rlimits: dict[str, list[int]] = field(default_factory=dict)
    executable: str | None = None  # the program, when argv[0] is only a name (INIT_NAME)

    def close_fds(self) -> None:
        for fd in self.pass_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.pass_fds = []


def interpreter() -> str:
    """The real Python binary (venv and pyenv shims resolved)."""
    return os.path.realpath(sys.executable)


def bot_env(extra: dict[str, str] | None, home: str, *, inherit: bool = False) -> dict[str, str]:
    """The bot's whole environment: a fixed minimal set plus the caller's ``extra``."""
    env = dict(os.environ) if inherit else {}
    env.update(
        {
            "PATH": BOT_PATH,
            "HOME": home,
            "TMPDIR": home,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    # botkit, and the pure ``games`` engines (standard library only) so bots can search with them
    env["PYTHONPATH"] = os.pathsep.join([str(BOT_HELPER_DIR)] * BOT_HELPER_DIR.is_dir() + [str(bot_lib_dir())])
    env.update(extra or {})
    return env


def _memfd(name: str, data: bytes) -> int:
    """An inheritable fd holding ``data``, positioned at 0 (for a child to read)."""
    fd = os.memfd_create(name, 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def scratch_tmpfs(limits: Limits, uid: int) -> str:
    """Mount options of a bot's private scratch: ``scratch_mb`` and its inode cap, its uid's alone."""
    return f"size={limits.scratch_mb * MiB},nr_inodes={limits.scratch_inodes},mode=0700,uid={uid},gid={uid}"


def _rlimits(limits: Limits, *, address_space: bool) -> dict[str, list[int]]:
    r = {
        # backstop 1 s above the tree budget that the referee enforces (so a child killed by its own
        # rlimit has always been seen over budget); soft < hard: SIGXCPU first, SIGKILL 1 s later
        "cpu": [limits.cpu_s + 1, limits.cpu_s + 2],
        "fsize": [limits.file_mb * MiB] * 2,
        "nofile": [limits.open_files] * 2,
        "core": [0, 0],
    }
    if address_space:
        r["as"] = [limits.memory_mb * MiB] * 2
    return r


_RES = {
    "cpu": resource.RLIMIT_CPU,
    "fsize": resource.RLIMIT_FSIZE,
    "nofile": resource.RLIMIT_NOFILE,
    "core": resource.RLIMIT_CORE,
    "as": resource.RLIMIT_AS,
    "nproc": resource.RLIMIT_NPROC,
}


def _prlimit(r: dict[str, list[int]]) -> list[str]:
    return ["prlimit", *(f"--{k}={s}:{h}" for k, (s, h) in r.items()), "--"]


def _ro_sources(argv: Sequence[str], bot_file: Path, extra_ro: Sequence[Path]) -> list[str]:
    """Host paths the bot must read: interpreter prefix, helper, its own file, extras."""
    paths = [os.path.realpath(sys.base_prefix), os.path.dirname(interpreter())]
    if BOT_HELPER_DIR.is_dir():
        paths.append(str(BOT_HELPER_DIR))
    paths.append(str(bot_lib_dir()))
    paths.append(os.path.realpath(bot_file))
    if argv and os.path.isabs(argv[0]):
        paths.append(os.path.realpath(argv[0]))
    paths += [os.path.realpath(p) for p in extra_ro]
    out: list[str] = []
    for p in paths:
        if p.startswith("/usr/") or p == "/usr" or not os.path.exists(p):
            continue
        if not any(p == q or p.startswith(q.rstrip("/") + "/") for q in out):
            out = [q for q in out if not q.startswith(p.rstrip("/") + "/")] + [p]
    return out


def build(
    info: SandboxInfo,
    argv: Sequence[str],
    *,
    bot_file: Path,
    limits: Limits,
    extra_ro: Sequence[Path] = (),
    env: dict[str, str] | None = None,
) -> Launch:
    """The command, environment and resources for one bot process at ``info.level``."""
    level = info.level
    if level in ("full", "namespaces"):
        return _build_bwrap(level, argv, bot_file, limits, extra_ro, env)
    scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
    wrapped = ["/bin/sh", "-c", _READY_SH, "arena-bot", *argv]
    # the bot dies with the referee (bwrap's --die-with-parent does this at the bwrap levels, the
    # keeper's own at landlock): a bot stopped between its turns would never see its input end
    death = ["setpriv", "--pdeathsig", "KILL", "--"] if shutil.which("setpriv") else []
    if level == "none":
        return Launch(death + wrapped, bot_env(env, str(scratch), inherit=True), str(scratch), scratch=scratch)
    r = _rlimits(limits, address_space=True)
    benv = bot_env(env, str(scratch))
    if level == "rlimits":
        return Launch(_prlimit(r) + death + wrapped, benv, str(scratch), scratch=scratch, rlimits=r)
    if level == "landlock":
        return _build_landlock(argv, bot_file, limits, extra_ro, benv, scratch)
    raise ValueError(f"unknown sandbox level {level!r}")


def landlock_mode() -> dict[str, bool]:
    """What the ``landlock`` level can add here: namespaces and a uid per bot need root."""
    root = os.geteuid() == 0
    cg = root and _cg.usable(_cg.discover())[0]
    return {"namespaces": root, "own_uid": root, "cgroup": cg}


def bot_uid() -> int:
    """A host uid no account uses, unique among this referee's live bots (and other referees')."""
    return _UID_BASE + ((os.getpid() & 0x3FFFFF) << 8) + (next(_uid_seq) & 0xFF)


_UID_BASE = 0x40000000
_uid_seq = itertools.count()


def _build_landlock(
    argv: Sequence[str], bot_file: Path, limits: Limits, extra_ro: Sequence[Path], benv: dict[str, str], scratch: Path
) -> Launch:
    mode = landlock_mode()
    sources = _ro_sources(argv, bot_file, extra_ro)
    ro = [
        "/usr",
        *(p for p in TOP_LINKS if os.path.exists(p)),
        *_SYSTEM_RO,
        "/proc",
        "/dev/urandom",
        "/dev/random",
        "/dev/zero",
        *sources,
    ]
    cg = None
    if mode["cgroup"]:
        # the page cache of its scratch files and the two shim processes are charged too: as at full,
        # the group gets the scratch's room on top of memory_mb
        cg = _cg.BotCgroup(
            _cg.discover(), memory_bytes=(limits.memory_mb + limits.scratch_mb) * MiB, pids_max=limits.processes + 2
        )  # + the keeper and the namespace's init
    r = _rlimits(limits, address_space=cg is None)
    if mode["own_uid"] and cg is None:
        r["nproc"] = [limits.processes] * 2  # counts this bot's own uid only
    cfg: dict[str, object] = {
        "ready": READY,
        "seccomp": "strict",
        "cwd": str(scratch),
        "landlock": {"ro": ro, "rw": [str(scratch), "/dev/null"]},
        "rlimits": [[_RES[k], s, h] for k, (s, h) in r.items()],
    }
    if mode["namespaces"]:
        links = {p: os.readlink(p) for p in TOP_LINKS if os.path.islink(p)}
        ns_ro = ["/usr", *(p for p in TOP_LINKS if os.path.isdir(p) and not os.path.islink(p)), *_SYSTEM_RO, *sources]
        uid = bot_uid()
        cfg["uid"] = uid
        # the scratch is a tmpfs of its own (scratch_mb, inode cap) at the host scratch's path
        cfg["ns"] = {
            "ro": [[os.path.realpath(p), p] for p in ns_ro],
            "rw": [str(scratch)],
            "links": links,
            "hostname": HOSTNAME,
            "tmpfs": scratch_tmpfs(limits, uid),
        }
        if cg is not None:
            cfg["cgroup_procs"] = cg.procs_files()
    # The shim comes as a script on an fd, and its configuration inside it: the keeper and the
    # namespace's init (the bot's pid 1) show only "arena-init -I -S -B /dev/fd/N" in /proc/*/cmdline.
    fd = _memfd(INIT_NAME, b"")
    code = (
        f"import json, sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\nimport shim\n"
        f"shim.main(json.loads({json.dumps(cfg)!r}), {list(argv)!r}, {fd})\n"
    )
    os.write(fd, code.encode())
    os.lseek(fd, 0, os.SEEK_SET)
    cmd = [INIT_NAME, "-I", "-S", "-B", f"/dev/fd/{fd}"]
    return Launch(
        cmd, benv, str(scratch), pass_fds=[fd], cgroup=cg, scratch=scratch, rlimits=r, executable=interpreter()
    )


def _build_bwrap(
    level: str,
    argv: Sequence[str],
    bot_file: Path,
    limits: Limits,
    extra_ro: Sequence[Path],
    env: dict[str, str] | None,
) -> Launch:
    bw = bwrap_path()
    if not bw:
        raise OSError("bwrap not found")
    cg = None
    if level == "full":
        # the tmpfs scratch is charged to the group too, so it gets its own room
        cg = _cg.BotCgroup(
            _cg.discover(), memory_bytes=(limits.memory_mb + limits.scratch_mb) * MiB, pids_max=limits.processes + 2
        )  # + bwrap's monitor and its pid-1 init
    r = _rlimits(limits, address_space=cg is None)
    home = "/tmp"
    cmd = [
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--cap-drop",
        "ALL",
        "--hostname",
        HOSTNAME,
    ]
    root = os.geteuid() == 0
    sources = _ro_sources(argv, bot_file, extra_ro)
    stage = _stage(sources) if root else None
    if root:
        cmd += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    cmd += ["--proc", "/proc", "--dev", "/dev"]
    if stage is not None:  # dropuid.py mounts it there: size and inodes capped
        cmd += ["--bind", str(stage[0] / "scratch"), home]
    else:  # bubblewrap's own tmpfs caps the size only (it has no inode option)
        cmd += ["--size", str(limits.scratch_mb * MiB), "--perms", "0700", "--tmpfs", home]
    cmd += ["--ro-bind", "/usr", "/usr"]
    for p in TOP_LINKS:
        if os.path.islink(p):
            cmd += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            cmd += ["--ro-bind", p, p]
    for p in _SYSTEM_RO:
        cmd += ["--ro-bind-try", p, p]
    for p, seen in zip(sources, stage[2] if stage else sources):
        cmd += ["--ro-bind", seen, p]
    for k, v in bot_env(env, home).items():
        cmd += ["--setenv", k, v]
    fd = _sc.memfd("bwrap")
    # bwrap's monitor and its pid-1 init keep their own stdin/stdout for the bot's whole life,
    # so a bot that closed its stdout would never show EOF. So bwrap gets /dev/null as stdio and
    # the pipes as two extra fds, which it closes in its own processes; only the bot gets them
    # as 0 and 1. (Single digits: dash redirects no higher fd.) The options come on an fd
    # (--args) and the start script as a file (--file), so that bwrap's pid-1 init, which the
    # bot sees, shows no host path and no configuration: "arena-init --args N sh /arena-start".
    start = _memfd("arena-start", b"")
    args_fd = _memfd("arena-args", b"")
    a, b = [n for n in range(3, 10) if n not in (fd, start, args_fd)][:2]
    os.write(
        start,
        (
            f"exec 0<&{a} 1>&{b} {a}<&- {b}>&-\necho {READY}\nexec " + " ".join(shlex.quote(x) for x in argv) + "\n"
        ).encode(),
    )
    os.lseek(start, 0, os.SEEK_SET)
    cmd += [
        "--seccomp",
        str(fd),
        "--perms",
        "0444",
        "--file",
        str(start),
        "/arena-start",
        "--chdir",
        home,
        # bubblewrap's root and /dev are tmpfs of no size: read-only, the scratch is the only room
        "--remount-ro",
        "/dev",
        "--remount-ro",
        "/",
    ]
    os.write(args_fd, b"".join(x.encode() + b"\0" for x in cmd))
    os.lseek(args_fd, 0, os.SEEK_SET)
    run = ["--args", str(args_fd), "--", "sh", "/arena-start"]
    fds = [fd, start, args_fd]
    if stage is not None:
        # root: bubblewrap runs as the bot's own host uid, see dropuid.py, which also mounts the
        # scratch and sets the rlimits (no prlimit: bwrap must be exec'd with argv[0] INIT_NAME)
        uid = bot_uid()
        (stage[0] / "scratch").mkdir(mode=0o700)
        cfg = {
            "fds": [a, b],
            "binds": stage[1],
            "uid": uid,
            "argv0": INIT_NAME,
            "scratch": [str(stage[0] / "scratch"), scratch_tmpfs(limits, uid)],
            "rlimits": [[_RES[k], s, h] for k, (s, h) in r.items()],
            "cgroup_procs": cg.procs_files() if cg is not None else [],
        }
        dropper = str(Path(__file__).with_name("dropuid.py"))
        cmd = [interpreter(), "-I", "-S", "-B", dropper, json.dumps(cfg), "--", bw, *run]
        return Launch(
            cmd, {"PATH": "/usr/bin:/bin"}, "/", pass_fds=fds, cgroup=cg, bwrap=True, rlimits=r, scratch=stage[0]
        )
    host = f"exec {a}<&0 {b}>&1 </dev/null >/dev/null\n"
    if cg is not None:
        host += "".join(f"echo $$ > {shlex.quote(f)} || exit 125\n" for f in cg.procs_files())
    cmd = ["/bin/sh", "-c", host + 'exec "$@"', "arena-launch", *_prlimit(r), bw, *run]
    return Launch(cmd, {"PATH": "/usr/bin:/bin"}, "/", pass_fds=fds, cgroup=cg, bwrap=True, rlimits=r)


def _stage(sources: list[str]) -> tuple[Path, list[list[str]], list[str]]:
    """(stage folder, binds, what bubblewrap binds for each source) for bubblewrap run as a bot uid.

    The stage is a host folder any uid may traverse (not list). It holds a mount point per
    source folder, which dropuid.py binds in a mount namespace of its own, so that bubblewrap,
    run as the bot's uid, reaches folders under a 0700 one such as /root; and a readable copy
    of each source file.
    """
    stage = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
    os.chmod(stage, 0o711)
    binds, shown = [], []
    for i, src in enumerate(sources):
        point = stage / str(i)
        if os.path.isdir(src):
            point.mkdir(mode=0o755)
            binds.append([src, str(point)])
        else:  # a file (the bot's own): a copy the bot's uid may read even if the original is 0600
            shutil.copyfile(src, point)
            point.chmod(0o755 if os.access(src, os.X_OK) else 0o644)
        shown.append(str(point))
    return stage, binds, shown
