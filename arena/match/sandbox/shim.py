"""Trusted exec shim for the no-namespace levels: confine itself, announce, exec the bot.

Run as ``python -I -S shim.py CONFIG_JSON -- ARGV...``. Order: rlimits, Landlock,
seccomp, then the ready line on stdout, then ``execvp``. Any failure before the
ready line is the harness's (SANDBOX), never the bot's.
"""

import json
import os
import resource
import sys


def main() -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves it out
    cfg = json.loads(sys.argv[1])
    argv = sys.argv[sys.argv.index("--", 2) + 1:]
    try:
        import landlock  # siblings; imported before Landlock hides their directory
        import seccomp
        import ctypes
        import signal
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG: die with the referee
        ll = cfg.get("landlock")
        if ll is not None:
            landlock.restrict(ll["ro"], ll["rw"])
        if cfg.get("seccomp"):
            seccomp.load(cfg["seccomp"])
        for res, soft, hard in cfg.get("rlimits", ()):
            resource.setrlimit(res, (soft, hard))
    except Exception as exc:  # noqa: BLE001 - reported as a sandbox failure
        os.write(2, f"arena-shim: {type(exc).__name__}: {exc}\n".encode())
        os._exit(121)
    os.write(1, cfg["ready"].encode() + b"\n")
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, f"arena-shim: exec {argv[0]}: {exc}\n".encode())
        os._exit(127)


if __name__ == "__main__":
    main()
