"""Tightwad: the highest legal card half the time, else a random one (``random`` is seeded by
botkit from the match): a fixture between random and tightwad_high.py in strength."""

import random

from botkit import run


def choose(observation, match):
    legal = observation["legal_actions"]
    if random.random() < 0.5:
        return random.choice(legal)["id"]
    return max(legal, key=lambda a: (match.value(a["card"]), a["id"]))["id"]


run(choose, name="tightwad-half")
