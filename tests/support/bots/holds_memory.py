"""A random bot that holds 300 MB (an ML bot's weights): fine at the default memory_mb, a
resource fault below it (``arena check --limit memory_mb=...``)."""

import random

from botkit import run

WEIGHTS = bytearray(300 << 20)  # touched, so the pages are really held
for i in range(0, len(WEIGHTS), 4096):
    WEIGHTS[i] = 1


def choose(observation, match):
    return random.choice(observation["legal_actions"])["id"]


run(choose, name="holds-memory")
