"""Tries to write outside its scratch; answers a JSON verdict per path.

Paths: HOSTILE_WRITE (os.pathsep-separated), /tmp/<marker> and its own bot file.
Writing in its own cwd must work.
"""
import json
import os
import signal
import sys

signal.alarm(30)
sys.stdin.readline()
marker = os.environ.get("HOSTILE_MARKER", "hostile")
paths = [p for p in os.environ.get("HOSTILE_WRITE", "").split(os.pathsep) if p]
paths += [f"/tmp/{marker}-escape", os.path.abspath(__file__), "scratch-ok.txt"]
out = {}
for p in paths:
    try:
        with open(p, "ab") as f:
            f.write(b"pwned\n")
        out[p] = "written"
    except OSError as e:
        out[p] = f"denied:{e.errno}"
print(json.dumps(out), flush=True)
for line in sys.stdin:
    print("ok", flush=True)
