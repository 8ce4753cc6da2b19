"""Never says hello. One line on stderr as it starts, so each launch leaves a mark in its log."""
import sys
import time

print("silent: started", file=sys.stderr, flush=True)
time.sleep(60)
