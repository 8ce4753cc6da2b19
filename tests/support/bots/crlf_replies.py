"""Speaks the protocol with Windows line endings (\r\n) on stdout."""
import json
import sys

out = open(sys.stdout.fileno(), "w", newline="\r\n", closefd=False)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        out.write(json.dumps({"type": "hello", "name": "crlf"}) + "\n"); out.flush()
    elif msg["type"] == "act":
        out.write(json.dumps({"type": "action", "action": 0}) + "\n"); out.flush()
    elif msg["type"] == "bye":
        break
