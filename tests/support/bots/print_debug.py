"""Prints debugging text on stdout instead of stderr (a classic protocol error)."""
from botkit import run


def choose(obs, match):
    print("thinking about", len(obs["legal_actions"]), "moves")
    return 0


run(choose, name="chatty")
