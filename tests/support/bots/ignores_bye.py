"""Plays correctly but never exits: it ignores bye."""
import json
import random
import sys
import time

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "stubborn"}), flush=True)
    elif msg["type"] == "act":
        print(random.randrange(len(msg["observation"]["legal_actions"])), flush=True)
    elif msg["type"] == "bye":
        time.sleep(60)
