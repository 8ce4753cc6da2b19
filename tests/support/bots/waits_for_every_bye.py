"""Plays randomly; on bye it leaves a mark in a folder and exits only once every bot of the
test has left one (the folder and the count are in the file ``barrier`` beside it), marking
that it exited cleanly. Told goodbye one at a time, each waited for before the next is told,
every bot but the last would be killed at the end of its grace period instead."""
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BARRIER = open(os.path.join(HERE, "barrier")).read().strip()   # folder, count
FOLDER, COUNT = BARRIER.split("|")
ME = os.path.basename(__file__)

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": ME}), flush=True)
    elif msg["type"] == "act":
        print(random.randrange(len(msg["observation"]["legal_actions"])), flush=True)
    elif msg["type"] == "bye":
        open(os.path.join(FOLDER, ME + ".bye"), "w").close()
        end = time.monotonic() + 20
        while len([f for f in os.listdir(FOLDER) if f.endswith(".bye")]) < int(COUNT):
            if time.monotonic() > end:
                sys.exit(1)
            time.sleep(0.01)
        open(os.path.join(FOLDER, ME + ".clean"), "w").close()
        sys.exit(0)
