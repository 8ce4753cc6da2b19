"""Writes half a line, then falls silent (<= 30 s)."""
import os
import signal
import sys
import time

signal.alarm(30)
sys.stdin.readline()
os.write(1, b'{"move": 12, "hal')
time.sleep(30)
