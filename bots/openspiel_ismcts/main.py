"""OpenSpiel's own ISMCTS (open_spiel.python.algorithms.ismcts, written by DeepMind) as an arena bot.

A bot folder (entry ``main.py``, packages in ``requirements.txt``). It plays every game through
the OpenSpiel bridge: ``decktet_openspiel.py`` beside this file is a verbatim copy of
``arena/openspiel/__init__.py`` (a test keeps them equal), as the sandbox gives a bot the
``games`` engines and botkit but not the arena package. At each decision the bot digests the
observations it has had (its information state), draws a world that fits the observation
(``state_from_observation``: games.determinize) and runs ISMCTSBot on it, which resamples a
world for each simulation (``resample_from_infostate``) and rolls it out at random to the end.

Budget: a fixed number of simulations a decision, from the bot's tournament name
(``ismcts-200sims``), else ``ISMCTS_SIMS`` in the environment, else 100. Forced moves are
played at once.
"""

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pyspiel  # noqa: E402
from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

import decktet_openspiel as bridge  # noqa: E402  (registers the three games)
from botkit import run  # noqa: E402

DEFAULT_SIMS = int(os.environ.get("ISMCTS_SIMS", "100"))
_NAME_SIMS = re.compile(r"[-_](\d+)sims$")


def sims_of(match):
    name = match.bots[match.seat] if match.seat < len(match.bots) else ""
    m = _NAME_SIMS.search(name)
    return max(2, int(m.group(1))) if m else max(2, DEFAULT_SIMS)  # the first simulation only expands


def load(match):
    """The game as OpenSpiel sees it (sequential form: ISMCTS asserts sequential dynamics)."""
    params = {"players": match.players}
    for key, value in match.options.items():
        params[key] = (0 if value is None or isinstance(value, str) else value)
    if bridge.REGISTRY[match.game].simultaneous:
        params["simultaneous"] = False
    return pyspiel.load_game(bridge.NAMES[match.game], params)


def choose(observation, match):
    mem = match.memory
    if "game" not in mem:
        mem["game"] = load(match)
        mem["rs"] = np.random.RandomState(match.seed % 2**32)
        mem["history"] = ""
        mem["bot"] = ismcts.ISMCTSBot(mem["game"], mcts.RandomRolloutEvaluator(1, mem["rs"]), uct_c=2.0,
                                      max_simulations=sims_of(match), random_state=mem["rs"])
    mem["history"] = bridge.digest(mem["history"], observation)
    legal = observation["legal_actions"]
    if len(legal) == 1:
        return legal[0]["id"]
    state = bridge.state_from_observation(mem["game"], observation, mem["history"],
                                          int(mem["rs"].randint(2**31)))
    return int(mem["bot"].step(state))


run(choose, name="openspiel-ismcts")
