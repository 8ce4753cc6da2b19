"""Stops itself with SIGSTOP on the first request."""
import os
import signal
import sys

signal.alarm(30)
sys.stdin.readline()
os.kill(os.getpid(), signal.SIGSTOP)
print("resumed", flush=True)
