"""Speaks the protocol by hand and sends its action id as a string ("0"), not a number."""
import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "string-id"}), flush=True)
    elif msg["type"] == "act":
        print(json.dumps({"type": "action", "action": "0"}), flush=True)
    elif msg["type"] == "bye":
        break
