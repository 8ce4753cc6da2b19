"""Says hello, writes what it is doing to stderr at its first act, then never answers."""

import sys
import time

from botkit import run


def choose(observation, match):
    print("searching depth 12 of 40...", file=sys.stderr, flush=True)
    time.sleep(600)
    return observation["legal_actions"][0]["id"]


run(choose, name="thinks-aloud")
