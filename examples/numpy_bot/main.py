"""A bot folder: numpy and a weights file next to this one
(docs/first-bot.md#a-bot-with-packages-and-data-a-folder).

Tightwad: each legal card is scored by a small linear model, ``weights.npy`` (four
weights over the card's features), and the best one is played; the other games use
botkit's simple policies. The weights keep the lowest card for the round's last trick,
play high cards early and avoid taking control late in a round.
"""

from pathlib import Path

import numpy as np
from botkit import run, simple_choice

WEIGHTS = np.load(Path(__file__).with_name("weights.npy"))


def features(obs, action, match):
    """rank (0..1), is it the hand's lowest card, tricks left (0..1), bias."""
    rank = match.value(action["card"]) / 10.0
    lowest = float(action["card"] == min(obs["hand"], key=match.value))
    left = len(obs["hand"]) / max(obs["tricks_in_round"], 1)
    return np.array([rank * left, lowest, rank * (1.0 - left), 1.0])


def choose(observation, match):
    if match.game != "tightwad":
        return simple_choice(observation, match)
    legal = observation["legal_actions"]
    scores = np.array([features(observation, a, match) for a in legal]) @ WEIGHTS
    return legal[int(np.argmax(scores))]["id"]


run(choose, name="numpy-bot")
