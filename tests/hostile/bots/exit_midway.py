"""Answers the first request, then exits with code 3 on the second."""
import sys

sys.stdin.readline()
print("first", flush=True)
sys.stdin.readline()
sys.stderr.write("exit_midway: bye\n")
sys.exit(3)
