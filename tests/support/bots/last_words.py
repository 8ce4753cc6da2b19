"""Writes to stderr up to its very end: a referee must not lose its last words.

Request lines: ``log N`` writes N numbered lines to stderr and answers ``ok``;
``flood N`` makes it write N bytes to stdout after the goodbye (output no one
waits for) and answers ``ok``. On ``bye`` or end of input it floods stdout if
asked, writes ``last words`` to stderr, and exits at once.
"""
import os
import sys

flood = 0
n = 0
for line in sys.stdin:
    word, _, arg = line.strip().partition(" ")
    if word == "log":
        for _ in range(int(arg)):
            n += 1
            sys.stderr.write(f"line {n}\n")
            sys.stderr.flush()
    elif word == "flood":
        flood = int(arg)
    elif word == "bye":
        break
    sys.stdout.write("ok\n")
    sys.stdout.flush()
chunk = b"x" * 65536
while flood > 0:
    flood -= os.write(1, chunk[:flood])
sys.stderr.write("last words\n")
sys.stderr.flush()
os._exit(0)
