"""Plain protocol: spends 3 s on each `start` (or, named slow_before_hello.py, before its hello)."""
import json
import sys
import time

BEFORE_HELLO = __file__.endswith("slow_before_hello.py")

if BEFORE_HELLO:
    time.sleep(3.0)
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "hello"}), flush=True)
    elif message["type"] == "start" and not BEFORE_HELLO:
        time.sleep(3.0)
    elif message["type"] == "act":
        print(message["observation"]["legal_actions"][0]["id"], flush=True)
    elif message["type"] == "bye":
        break
