"""A fixture bot: says why on stderr, then dies at its first decision."""
import sys

for line in sys.stdin:
    if '"hello"' in line:
        print('{"type": "hello", "name": "crash-loudly", "protocol": 1}', flush=True)
    elif '"act"' in line:
        print("ValueError: the strategy table is empty", file=sys.stderr, flush=True)
        sys.exit(3)
