"""A random bot (``random`` is seeded by botkit from the match, so it replays exactly)."""

import random

from botkit import run


def choose(observation, match):
    return random.choice(observation["legal_actions"])["id"]


run(choose, name="plain-random")
