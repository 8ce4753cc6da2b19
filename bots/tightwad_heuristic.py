"""Tightwad heuristic (random in the other games).

Only the last trick of a round costs points, so the bot sheds its highest legal
card while it can (leading high also forces the others to give up their low
cards) and keeps its lowest card, the safest one to hold at the end.
"""

import random

from botkit import run


def tightwad(obs, match):
    legal = obs["legal_actions"]
    if len(legal) == 1:
        return legal[0]["id"]
    rank = lambda a: match.value(a["card"])  # noqa: E731
    keep = min(obs["hand"], key=match.value)  # the card to hold for the last trick
    shed = [a for a in legal if a["card"] != keep] or legal
    return max(shed, key=rank)["id"]


def choose(observation, match):
    if match.game == "tightwad":
        return tightwad(observation, match)
    return random.choice(observation["legal_actions"])["id"]


run(choose, name="tightwad-heuristic")
