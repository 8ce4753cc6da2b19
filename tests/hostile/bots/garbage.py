"""Answers binary garbage (NUL, invalid UTF-8, CR, escape codes) terminated by a newline."""
import os
import signal
import sys

signal.alarm(30)
GARBAGE = b"\x00\xff\xfe\x1b[2J garbage \r\x80\x81"
for line in sys.stdin:
    os.write(1, GARBAGE + b"\n")
