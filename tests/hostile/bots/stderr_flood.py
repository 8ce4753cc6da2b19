"""Writes 200 MB to stderr, then answers normally."""
import os
import signal
import sys

signal.alarm(30)
sys.stdin.readline()
chunk = b"E" * 65535 + b"\n"
for _ in range(3200):
    os.write(2, chunk)
os.write(2, b"stderr-flood-done\n")
print("ok", flush=True)
for line in sys.stdin:
    print("ok", flush=True)
