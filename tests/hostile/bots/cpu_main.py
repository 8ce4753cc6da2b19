"""Busy loop in the main thread (<= 30 s), never answers."""
import signal
import sys
import time

signal.alarm(30)
sys.stdin.readline()
end = time.monotonic() + 30
x = 0
while time.monotonic() < end:
    x += 1
