"""Tries to inflate its own time allowance: on the first request it starts 8 busy threads
(more runnable threads than CPUs, all waiting on the run queue) and never answers (<= 30 s)."""
import signal
import sys
import threading
import time

signal.alarm(30)
sys.stdin.readline()


def spin():
    end = time.monotonic() + 30
    while time.monotonic() < end:
        pass


for _ in range(8):
    threading.Thread(target=spin, daemon=True).start()
spin()
