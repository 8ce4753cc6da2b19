"""Never reads its input (<= 30 s)."""
import signal
import time

signal.alarm(30)
time.sleep(30)
