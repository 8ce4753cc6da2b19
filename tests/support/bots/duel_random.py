"""A fixture for arena duel's tests: a uniformly random legal action (seeded by botkit)."""

import random

from botkit import run


def choose(observation, match):
    return random.choice(observation["legal_actions"])["id"]


run(choose, name="duel-random")
