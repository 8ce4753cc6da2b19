"""Speaks the protocol by hand and answers the start message, which wants no answer."""
import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "answers-start"}), flush=True)
    elif msg["type"] == "start":
        print(json.dumps({"type": "ok"}), flush=True)
    elif msg["type"] == "act":
        print(json.dumps({"type": "action", "action": 0}), flush=True)
    elif msg["type"] == "bye":
        break
