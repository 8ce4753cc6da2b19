"""SIGKILLs and ptrace-attaches the pids in HOSTILE_VICTIMS (default: its parent).

Answers a JSON verdict per pid and attack.
"""
import ctypes
import json
import os
import signal
import sys

signal.alarm(30)
sys.stdin.readline()
victims = [int(p) for p in os.environ.get("HOSTILE_VICTIMS", str(os.getppid())).split(",") if p]
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
out = {}
for pid in victims:
    r = libc.ptrace(16, pid, None, None)  # PTRACE_ATTACH
    out[f"ptrace:{pid}"] = "attached" if r == 0 else f"denied:{ctypes.get_errno()}"
    if r == 0:
        libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
    try:
        os.kill(pid, signal.SIGKILL)
        out[f"kill:{pid}"] = "sent"
    except OSError as e:
        out[f"kill:{pid}"] = f"denied:{e.errno}"
print(json.dumps(out), flush=True)
for line in sys.stdin:
    print("ok", flush=True)
