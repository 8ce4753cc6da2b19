"""Floods stdout with short lines (bounded: 1 GiB, <= 30 s)."""
import os
import signal
import sys

signal.alarm(30)
sys.stdin.readline()
line = b"x" * 1023 + b"\n"
for _ in range(1 << 20):
    os.write(1, line)
