"""Self-test probe bot: reads one JSON request, tries each escape, answers one JSON line.

It also leaves a setsid grandchild behind (argv carries the caller's marker),
so the caller can check that the kill leaves no survivor.
"""

import ctypes
import json
import os
import resource
import socket
import sys
import time


def _try(fn):
    try:
        return fn()
    except OSError:
        return "denied"


def main() -> None:
    req = json.loads(sys.stdin.readline())
    out = {"rlimit_nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0]}
    try:  # not if_nameindex(): it needs AF_NETLINK, which seccomp refuses
        with open("/proc/net/dev") as f:
            out["ifaces"] = sorted(ln.split(":")[0].strip() for ln in f.readlines()[2:])
    except OSError:
        out["ifaces"] = None

    def tcp():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(1)
        try:
            s.connect(("127.0.0.1", req["tcp"]))
            return "connected"
        finally:
            s.close()

    def udp():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.sendto(b"x", ("127.0.0.1", req["udp"]))
            return "sent"
        finally:
            s.close()

    def inet():
        socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).close()
        return "allowed"

    out["tcp"] = _try(tcp)
    out["udp"] = _try(udp)
    out["inet_socket"] = _try(inet)
    out["canary"] = _try(lambda: (open(req["canary"]).read(), "read")[1])
    out["kill_referee"] = _try(lambda: (os.kill(req["referee"], 0), "allowed")[1])
    libc = ctypes.CDLL(None, use_errno=True)
    out["userns"] = "allowed" if libc.unshare(0x10000000) == 0 else "denied"
    if os.fork() == 0:          # double fork + setsid: the escapee the kill must catch
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
