"""Says hello, then never answers an act message (it thinks for ever)."""
import time

from botkit import run


def choose(observation, match):
    time.sleep(600)
    return observation["legal_actions"][0]["id"]


run(choose, name="never")
