"""Self-test probe bot: reads one JSON request, tries each escape, answers one JSON line.

Every attempt is harmless even where it succeeds (it sets the hostname to its
current value and only lowers or restores its own priority). It also leaves a
setsid grandchild behind (argv carries the caller's marker), so the caller can
check that the kill leaves no survivor.
"""

import ctypes
import json
import os
import resource
import socket
import sys
import time
from collections.abc import Callable
from typing import Any


def _try(fn: Callable[[], str]) -> str:
    try:
        return fn()
    except OSError:
        return "denied"


def host_uid() -> int:
    """This process's uid as the host sees it (through any user namespace)."""
    uid = os.getuid()
    try:
        with open("/proc/self/uid_map") as f:
            for line in f:
                inside, outside, count = (int(x) for x in line.split())
                if inside <= uid < inside + count:
                    return outside + uid - inside
    except (OSError, ValueError):
        pass
    return uid


def main() -> None:
    req = json.loads(sys.stdin.readline())
    out: dict[str, Any] = {"rlimit_nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0], "host_uid": host_uid()}
    with open("/proc/self/status") as f:
        out["cap_eff"] = next((ln.split()[1] for ln in f if ln.startswith("CapEff:")), "?")
    try:  # not if_nameindex(): it needs AF_NETLINK, which seccomp refuses
        with open("/proc/net/dev") as f:
            out["ifaces"] = sorted(ln.split(":")[0].strip() for ln in f.readlines()[2:])
    except OSError:
        out["ifaces"] = None

    def tcp() -> str:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(1)
        try:
            s.connect(("127.0.0.1", req["tcp"]))
            return "connected"
        finally:
            s.close()

    def udp() -> str:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.sendto(b"x", ("127.0.0.1", req["udp"]))
            return "sent"
        finally:
            s.close()

    def inet() -> str:
        socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).close()
        return "allowed"

    def sees_referee() -> str:
        with open(f"/proc/{req['referee']}/stat", "rb") as f:
            raw = f.read()
        return "visible" if int(raw[raw.rfind(b")") + 2 :].split()[19]) == req["referee_start"] else "denied"

    def environ() -> str:
        with open(f"/proc/{req['referee']}/environ", "rb") as f:
            f.read(1)
        return "read"

    libc = ctypes.CDLL(None, use_errno=True)

    def hostname() -> str:
        name = os.uname().nodename.encode()
        return "changed" if libc.sethostname(name, len(name)) == 0 else "denied"

    def nice() -> str:
        os.setpriority(os.PRIO_PROCESS, 0, -1)
        return "raised"

    def realtime() -> str:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        return "realtime"

    out["tcp"] = _try(tcp)
    out["udp"] = _try(udp)
    out["inet_socket"] = _try(inet)

    def canary() -> str:
        with open(req["canary"]) as f:
            f.read()
        return "read"

    def kill_referee() -> str:
        os.kill(req["referee"], 0)
        return "allowed"

    out["canary"] = _try(canary)
    out["kill_referee"] = _try(kill_referee)
    out["sees_referee"] = _try(sees_referee)
    out["environ"] = _try(environ)
    out["hostname"] = hostname()
    out["nice"] = _try(nice)
    out["realtime"] = _try(realtime)
    out["userns"] = "allowed" if libc.unshare(0x10000000) == 0 else "denied"
    st = os.statvfs(".")  # the scratch (its cwd): its size and inode cap
    out["scratch"] = [st.f_blocks * st.f_frsize, st.f_files]
    out["nodename"] = os.uname().nodename
    try:  # what it sees of its pid 1 (none: no pid namespace, or hidden)
        with open("/proc/1/cmdline", "rb") as cmdline:
            out["pid1"] = cmdline.read().decode(errors="replace").split("\0")[:-1]
    except OSError:
        out["pid1"] = None
    if os.fork() == 0:  # double fork + setsid: the escapee the kill must catch
        os.setsid()
        if os.fork() == 0:
            time.sleep(30)
        os._exit(0)
    os.wait()
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    sys.stdin.readline()


if __name__ == "__main__":
    main()
