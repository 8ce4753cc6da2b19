"""Start bubblewrap as the bot's own unprivileged host uid, when the arena runs as root.

Standalone on purpose (stdlib only): run as ``python -I -S -B dropuid.py CONFIG -- bwrap ...``.

bubblewrap started by root maps the bot to host uid 0. Started by an unprivileged uid it
builds the same sandbox in an unprivileged user namespace, and the bot is that uid on the
host; but it could no longer open bot files under a 0700 folder such as ``/root``. So,
while still root, this process binds each such source onto a world-traversable stage
folder in a private mount namespace (which only bubblewrap inherits), mounts the bot's
scratch there (a tmpfs capped in size and inodes: bubblewrap's own ``--tmpfs`` has no
inode option), moves the bot's pipes out of the way, joins the bot's cgroup, and then
becomes the bot's uid for good (no groups, no capabilities), sets the rlimits and execs
the rest of its argv, with ``argv0`` as bubblewrap's name.
"""

from __future__ import annotations

import json
import os
import resource
import sys


def _fail(why: str) -> None:
    sys.stderr.write(f"arena-sandbox: {why}\n")
    sys.stderr.flush()
    os._exit(125)


def _capabilities() -> str:
    with open("/proc/self/status") as f:
        return " ".join(line.split()[1] for line in f if line.startswith(("CapEff", "CapPrm")))


def main() -> None:
    cfg, argv = json.loads(sys.argv[1]), sys.argv[3:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves it out
    import nsroot  # type: ignore[import-not-found]  # a sibling (this runs as a script)

    # resolved while still root: the interpreter's own modules may be out of reach afterwards
    prog = (
        argv[0]
        if "/" in argv[0]
        else next(
            (
                p
                for d in os.environ.get("PATH", "/usr/bin:/bin").split(":")
                if os.access(p := os.path.join(d, argv[0]), os.X_OK)
            ),
            argv[0],
        )
    )
    try:
        a, b = cfg["fds"]  # the pipes go to bwrap as two extra fds; its stdio is /dev/null
        os.dup2(0, a)
        os.dup2(1, b)
        null = os.open("/dev/null", os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.close(null)
        for procs in cfg.get("cgroup_procs", []):
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        nsroot.unshare(nsroot.CLONE_NEWNS)
        nsroot.mount(None, "/", None, nsroot.MS_REC | nsroot.MS_PRIVATE)
        for src, stage in cfg["binds"]:
            nsroot.mount(src, stage, None, nsroot.MS_BIND | nsroot.MS_REC)
        if cfg.get("scratch"):  # the bot's /tmp: a tmpfs capped in size and inodes
            where, options = cfg["scratch"]
            nsroot.mount("tmpfs", where, "tmpfs", nsroot.MS_NOSUID | nsroot.MS_NODEV, options)
        uid = int(cfg["uid"])
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # from root to a uid: every capability is gone
        for res, soft, hard in cfg.get("rlimits", ()):
            resource.setrlimit(res, (soft, hard))
    except OSError as exc:
        _fail(f"cannot become the bot's uid: {exc}")
    if os.getuid() != uid or os.geteuid() != uid or _capabilities() != "0000000000000000 0000000000000000":
        _fail("still privileged after dropping to the bot's uid")
    try:  # argv[0] is what the bot sees of bwrap's pid-1 init
        os.execv(prog, [cfg.get("argv0", argv[0]), *argv[1:]])
    except OSError as exc:
        _fail(f"cannot start {argv[0]}: {exc}")


if __name__ == "__main__":
    main()
