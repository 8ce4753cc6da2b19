"""Writes HOSTILE_STDERR_KB KiB to stderr as it starts (each fresh process does), then echoes."""
import os
import signal
import sys

signal.alarm(30)
kb = int(os.environ.get("HOSTILE_STDERR_KB", "64"))
for i in range(kb):
    os.write(2, (f"{i:07d} " + "e" * 1015 + "\n").encode())
print("started", flush=True)
for line in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
