"""Takes SLOW_S seconds (default 3.5) over its first decision, then answers at once."""
import os
import time

from botkit import run

first = [True]


def choose(observation, match):
    if first[0]:
        first[0] = False
        time.sleep(float(os.environ.get("SLOW_S", "3.5")))
    return observation["legal_actions"][0]["id"]


run(choose, name="slow-first")
