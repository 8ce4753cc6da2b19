"""Tries to read the referee's and other bots' files; answers a JSON verdict per path.

Paths: HOSTILE_READ (os.pathsep-separated) plus /etc/shadow and the referee's
/proc/<pid>/environ (HOSTILE_REFEREE_PID, default the parent).
"""
import json
import os
import signal
import sys

signal.alarm(30)
sys.stdin.readline()
ref = os.environ.get("HOSTILE_REFEREE_PID") or str(os.getppid())
paths = [p for p in os.environ.get("HOSTILE_READ", "").split(os.pathsep) if p]
paths += ["/etc/shadow", f"/proc/{ref}/environ"]
out = {}
for p in paths:
    try:
        with open(p, "rb") as f:
            f.read(64)
        out[p] = "read"
    except OSError as e:
        out[p] = f"denied:{e.errno}"
print(json.dumps(out), flush=True)
for line in sys.stdin:
    print("ok", flush=True)
