"""Answers only after HOSTILE_SLEEP seconds (default 30): past any sane deadline."""
import os
import sys
import time

sys.stdin.readline()
time.sleep(float(os.environ.get("HOSTILE_SLEEP", "30")))
print("late", flush=True)
for line in sys.stdin:
    print("late", flush=True)
