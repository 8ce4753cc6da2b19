"""A forked child burns CPU (<= 30 s) while the main process keeps answering."""
import os
import signal
import sys
import time

signal.alarm(30)
sys.stdin.readline()
if os.fork() == 0:
    end = time.monotonic() + 30
    while time.monotonic() < end:
        pass
    os._exit(0)
print("ok", flush=True)
for line in sys.stdin:
    print("ok", flush=True)
