"""A prompt bot for the fair-clock tests: each answer costs it CLOCK_CPU_MS (default 3) ms
of its own CPU, far inside any move limit, then it echoes the request line."""
import os
import sys
import time

cost = float(os.environ.get("CLOCK_CPU_MS", "3")) / 1000
for line in sys.stdin:
    t = time.thread_time()
    while time.thread_time() - t < cost:
        pass
    sys.stdout.write(line)
    sys.stdout.flush()
