"""Plays one match, then exits instead of waiting for the next."""
import json
import random
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "one-match"}), flush=True)
    elif msg["type"] == "act":
        print(random.randrange(len(msg["observation"]["legal_actions"])), flush=True)
    elif msg["type"] in ("result", "bye"):
        break
