"""A fixture bot of the ladder tests: a random legal action."""
import random

from botkit import run

run(lambda obs, match: random.choice(obs["legal_actions"])["id"], name="ladder-fixture")
