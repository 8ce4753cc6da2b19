"""Thread bomb (bounded: 2000 threads with 64 KiB stacks, <= 30 s); a refused thread crashes it."""
import signal
import sys
import threading
import time

signal.alarm(30)
threading.stack_size(64 * 1024)
sys.stdin.readline()
for i in range(2000):
    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
print("threads 2000", flush=True)
for line in sys.stdin:
    print("ok", flush=True)
