"""Test bot: imports the engines inside the sandbox, samples a position from its observation,
checks that the sample offers the same moves, and plays the move that wins most random
playouts of one sample (a tiny search). Exits with an error if anything does not fit."""

import random
import sys

from botkit import run

import games
from games.determinize import Determinizer
from games.simulate import play_randomly
from games.rng import DealRng


def choose(observation, match):
    legal = observation["legal_actions"]
    if len(legal) == 1:
        return legal[0]["id"]
    state = Determinizer(observation, match.options).sample(random)
    if state.observation(match.seat)["legal_actions"] != legal:
        sys.exit("the sampled state offers other moves")
    best, best_place = legal[0]["id"], 99
    for a in legal[:4]:
        if match.seat not in state.to_move():
            break
        s = state.clone()
        s.apply(match.seat, a["id"])
        play_randomly(s, DealRng(random.getrandbits(63)))
        if s.result().places[match.seat] < best_place:
            best, best_place = a["id"], s.result().places[match.seat]
    return best


print("engines from", games.__file__, file=sys.stderr)
run(choose, name="uses-engine")
