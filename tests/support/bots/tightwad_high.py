"""Tightwad: always the highest legal card (sheds danger while it is still cheap); a fixture
of known strength for the adaptive schedule's tests (far stronger than random)."""

from botkit import run


def choose(observation, match):
    legal = observation["legal_actions"]
    return max(legal, key=lambda a: (match.value(a["card"]), a["id"]))["id"]


run(choose, name="tightwad-high")
