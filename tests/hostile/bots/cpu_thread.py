"""A thread burns CPU (<= 30 s) while the main thread keeps answering."""
import signal
import sys
import threading
import time


def burn() -> None:
    end = time.monotonic() + 30
    while time.monotonic() < end:
        pass


signal.alarm(30)
sys.stdin.readline()
threading.Thread(target=burn, daemon=True).start()
print("ok", flush=True)
for line in sys.stdin:
    print("ok", flush=True)
