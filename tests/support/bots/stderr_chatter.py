"""A random bot that writes one stderr line per match (to check its log keeps them all)."""

import random
import sys

from botkit import run


def choose(observation, match):
    return random.choice(observation["legal_actions"])["id"]


def on_result(result, match):
    print(f"result of a match, seat {match.seat}", file=sys.stderr, flush=True)


run(choose, name="chatter", on_result=on_result)
