"""A random bot that thinks for a few milliseconds per decision (slows a run down
enough for interruption tests, far below any time limit)."""

import random
import time

from botkit import run


def choose(observation, match):
    time.sleep(0.004)
    return random.choice(observation["legal_actions"])["id"]


run(choose, name="slow-random")
