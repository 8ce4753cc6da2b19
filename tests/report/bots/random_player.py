"""A fixture bot: a random legal action from its seeded generator."""
import random

from botkit import run

run(lambda obs, match: random.choice(obs["legal_actions"])["id"], name="random-player")
