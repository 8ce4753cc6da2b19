"""Fork bomb (bounded: 49 children, each alive <= 30 s); a refused fork crashes the bot."""
import os
import signal
import sys
import time

signal.alarm(30)
sys.stdin.readline()
n = 0
for _ in range(49):
    if os.fork() == 0:
        signal.alarm(30)
        time.sleep(30)
        os._exit(0)
    n += 1
print(f"forked {n}", flush=True)
for line in sys.stdin:
    print("ok", flush=True)
