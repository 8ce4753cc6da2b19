"""Speaks the protocol by hand and answers with the action object instead of its id."""
import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "raw-dict"}), flush=True)
    elif msg["type"] == "act":
        print(json.dumps({"type": "action", "action": msg["observation"]["legal_actions"][0]}), flush=True)
    elif msg["type"] == "bye":
        break
