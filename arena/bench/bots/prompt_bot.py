"""A bot that always answers within 20 ms: it thinks 0-15 ms, then plays a random legal action.

Used by `arena bench` (P8) to count timeouts that fire wrongly under load."""

import random
import time

import botkit


def choose(observation, match):
    time.sleep(random.uniform(0.0, 0.015))
    return random.choice(observation["legal_actions"])["id"]


botkit.run(choose, name="prompt")
