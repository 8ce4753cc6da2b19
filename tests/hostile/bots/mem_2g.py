"""Touch 2 GiB of memory, 64 MiB at a time (bounded: stops at 2 GiB, <= 30 s)."""
import signal
import sys

signal.alarm(30)
sys.stdin.readline()
chunks = []
for _ in range(32):
    b = bytearray(64 << 20)
    for i in range(0, len(b), 4096):
        b[i] = 1
    chunks.append(b)
print("allocated 2048 MiB", flush=True)
for line in sys.stdin:
    print("ok", flush=True)
