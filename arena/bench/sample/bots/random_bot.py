"""Plays a uniformly random legal action, in any game."""

import random

from botkit import run


def choose(observation, match):
    return random.choice(observation["legal_actions"])["id"]


run(choose, name="random")
