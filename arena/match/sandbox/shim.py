"""Trusted exec shim for the no-bwrap levels: confine, announce, exec the bot.

Run as ``python -I -S shim.py CONFIG_JSON -- ARGV...``, or (as launch.py does, so that
no process a bot can see shows host paths or the configuration) from a script on an fd
that calls ``main``. Any failure before the ready line is the harness's (SANDBOX), never
the bot's.

With ``"ns"`` in the config (``landlock`` level, referee is root) there are
three processes:

* the *keeper* (the process the referee started): joins the bot's cgroup,
  unshares the pid, net, uts, ipc and cgroup namespaces, forks the init, and mirrors its end (exit code or
  signal) so the referee sees the bot's own status;
* the *init* (pid 1 of the new pid namespace, still root, no way out of the
  namespaces): unshares a mount namespace of its own (pivot_root would move the
  keeper's root too) and builds the private root, forks the bot, reaps orphans, and
  reports the bot's wait status to the keeper; when it exits, the kernel kills
  everything left in the namespace;
* the *bot* (pid 2): drops to its own unprivileged uid and gid (no
  capabilities, no supplementary groups), sets rlimits, Landlock and seccomp,
  prints the ready line and execs.

Without ``"ns"`` (not root: ``landlock`` without namespaces) the shim itself
does the last step and execs.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import struct
import sys

TYPE_CHECKING = False  # typing is not imported at run time: this starts every bot
if TYPE_CHECKING:
    from typing import Any


def _fail(what: str, exc: BaseException, code: int = 121) -> None:
    os.write(2, f"arena-shim: {what}: {type(exc).__name__}: {exc}\n".encode())
    os._exit(code)


def _pdeathsig() -> None:
    import ctypes

    ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG


def _confine_and_exec(cfg: dict[str, Any], argv: list[str]) -> None:
    """Last step, in the process that becomes the bot."""
    import landlock  # type: ignore[import-not-found]  # siblings; imported before Landlock hides their directory
    import seccomp  # type: ignore[import-not-found]

    try:
        uid = cfg.get("uid")
        if uid is not None:
            import ctypes

            libc = ctypes.CDLL(None)
            for cap in range(64):  # empty the bounding set too (EINVAL past the last cap)
                libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)  # from root to non-root: every capability is gone
        for res, soft, hard in cfg.get("rlimits", ()):
            resource.setrlimit(res, (soft, hard))
        ll = cfg.get("landlock")
        if ll is not None:
            landlock.restrict(ll["ro"], ll["rw"])
        if cfg.get("seccomp"):
            seccomp.load(cfg["seccomp"])
        if cfg.get("cwd"):
            os.chdir(cfg["cwd"])
    except Exception as exc:  # noqa: BLE001 - reported as a sandbox failure
        _fail("confine", exc)
    os.write(1, cfg["ready"].encode() + b"\n")
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        _fail(f"exec {argv[0]}", exc, 127)


def _mirror(status: int) -> None:
    """End this process the way the bot ended (exit code, or death by the same signal)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        try:
            signal.signal(sig, signal.SIG_DFL)  # (SIGKILL and SIGSTOP refuse: they are default)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)  # not reached unless the signal cannot kill us
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 125)


def _quiet_stdio(fd: int) -> None:
    """Drop our copies of the bot's pipes, so the referee sees the bot close them (``fd``: /dev/null)."""
    for i in (0, 1, 2):
        os.dup2(fd, i)
    if fd > 2:
        os.close(fd)


def _init(cfg: dict[str, Any], argv: list[str], report_w: int) -> None:
    """pid 1 of the bot's pid namespace."""
    import nsroot  # type: ignore[import-not-found]  # a sibling (this runs as a script)

    try:
        _pdeathsig()  # the keeper died: so does the whole namespace
        os.umask(0o022)  # the bot's uid must be able to walk the new root
        nsroot.unshare(nsroot.CLONE_NEWNS)  # the keeper keeps the host's root: pivot_root moves every
        ns = cfg["ns"]  # process of a mount namespace, so only ours is new
        nsroot.sethostname(ns.get("hostname", "arena-bot"))
        nsroot.build_root(ro=ns["ro"], rw=ns["rw"], links=ns["links"], rw_tmpfs=ns.get("tmpfs"))
        if cfg.get("uid") is not None:
            for d in ns["rw"]:
                os.chown(d, cfg["uid"], cfg["uid"])
    except Exception as exc:  # noqa: BLE001
        _fail("namespace setup", exc)
    bot = os.fork()
    if bot == 0:
        os.close(report_w)
        _confine_and_exec(cfg, argv)
    _quiet_stdio(os.open("/dev/null", os.O_RDWR))  # the new root's /dev/null
    while True:  # reap everything; stop when the bot itself ends
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(125)
        except InterruptedError:
            continue
        if pid == bot:
            os.write(report_w, struct.pack("=i", status))
            os._exit(0)  # the kernel now kills what is left in the namespace


def main(cfg: dict[str, Any], argv: list[str], script_fd: int = -1) -> None:
    if script_fd >= 0:  # the script this came from (launch.py): not the bot's
        os.close(script_fd)
    try:
        import landlock  # noqa: F401 - imported now: the bot may not see this directory later
        import seccomp  # noqa: F401

        _pdeathsig()  # die with the referee
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if "ns" not in cfg:
            _confine_and_exec(cfg, argv)
        import nsroot  # a sibling (this runs as a script)

        for procs in cfg.get("cgroup_procs", ()):
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        nsroot.unshare(nsroot.NAMESPACES & ~nsroot.CLONE_NEWNS)  # the init makes its own mount ns
        devnull = os.open("/dev/null", os.O_RDWR)
    except Exception as exc:  # noqa: BLE001
        _fail("setup", exc)
    r, w = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(r)
        os.close(devnull)
        _init(cfg, argv, w)
    os.close(w)
    _quiet_stdio(devnull)
    data = b""
    while True:
        chunk = os.read(r, 4)
        if not chunk:
            break
        data += chunk
    _, status = os.waitpid(init, 0)
    if len(data) == 4:
        _mirror(struct.unpack("=i", data)[0])
    _mirror(status)  # init failed (setup error) or was killed


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves it out
    main(json.loads(sys.argv[1]), sys.argv[sys.argv.index("--", 2) + 1 :])
