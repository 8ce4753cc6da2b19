"""One 100 MB line with no newline."""
import os
import signal
import sys

signal.alarm(30)
sys.stdin.readline()
chunk = b"A" * (1 << 20)
for _ in range(100):
    os.write(1, chunk)
os.write(1, b"\n")
