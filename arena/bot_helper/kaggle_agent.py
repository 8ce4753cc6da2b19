"""kaggle_agent: run a Kaggle-style ``agent(observation, configuration) -> action`` as an arena bot.

Kaggle's simulation environments call one function per step with two attribute
dictionaries and take back an action. This module, on every Python bot's import path
next to botkit (standard library only), serves the arena's protocol with such a
function. Either end a file with it::

    from kaggle_agent import run_agent

    def agent(observation, configuration):
        return observation.legal_actions[0].id

    run_agent(agent)

or keep a Kaggle submission file untouched and run it through this module (a bot folder
whose ``main.py`` is ``from kaggle_agent import serve; serve("submission.py")``):
like Kaggle, ``serve`` takes the last function the file defines.

``observation`` is the arena's observation of the decision (docs/protocol.md), with
attribute access at every depth (``observation.hand``, ``observation.legal_actions[0].id``),
plus Kaggle's ``step`` (decisions this seat has made in the match, from 0) and
``remainingOverageTime`` (seconds left in the match's time bank, if it has one).
``configuration`` holds the match: ``game``, ``players``, ``seat``, ``options``, ``seed``,
``bots``, ``cards`` (card id -> {name, rank, value, suits}) and Kaggle's ``actTimeout``
(seconds per decision) and ``agentTimeout`` (seconds to start).

The agent returns the ``id`` of one of ``observation.legal_actions``, or the legal action
itself (a dict with an ``id``). Anything else is a bug in the agent: it is reported on
stderr and the bot exits, so the arena records a crash rather than a guessed move.
"""

from __future__ import annotations

import numbers
import runpy
import sys
import time
from collections.abc import Callable
from typing import Any

from botkit import Match, log, run

Agent = Callable[[Any, Any], Any]


class Struct(dict):
    """A dict whose keys are also attributes (Kaggle's ``utils.Struct``), at every depth."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value


def structify(value: Any) -> Any:
    if isinstance(value, dict):
        return Struct({k: structify(v) for k, v in value.items()})
    if isinstance(value, list):
        return [structify(v) for v in value]
    return value


def configuration_of(match: Match) -> Struct:
    tc = match.time_control or {}
    return structify(
        {
            "game": match.game,
            "players": match.players,
            "seat": match.seat,
            "options": match.options,
            "seed": match.seed,
            "bots": match.bots,
            "cards": {str(k): v for k, v in match.cards.items()},
            "actTimeout": tc.get("move_s"),
            "agentTimeout": tc.get("startup_s"),
        }
    )


def action_id(answer: Any, legal: list[dict[str, Any]]) -> int:
    """The action id an agent's answer names; raises ValueError for anything not legal."""
    if isinstance(answer, dict) and "id" in answer:
        answer = answer["id"]
    if isinstance(answer, numbers.Integral) and not isinstance(answer, bool):
        answer = int(answer)  # numpy integers too
    if not isinstance(answer, int) or isinstance(answer, bool):
        raise ValueError(f"the agent returned {answer!r}; return the id of one of observation.legal_actions")
    if answer not in {a["id"] for a in legal}:
        raise ValueError(f"the agent returned {answer}, not a legal id ({', '.join(str(a['id']) for a in legal[:20])})")
    return answer


def run_agent(agent: Agent, name: str = "kaggle-agent") -> None:
    """Serve the arena's protocol with ``agent`` until goodbye."""
    state: dict[str, Any] = {}

    def choose(observation: dict[str, Any], match: Match) -> int:
        if state.get("match") is not match:  # a new match: fresh configuration and step count
            state.update(match=match, configuration=configuration_of(match), step=0)
            state["bank"] = (match.time_control or {}).get("bank_s")
        obs = structify(observation)
        obs["step"] = state["step"]
        obs["remainingOverageTime"] = state["bank"]
        state["step"] += 1
        t0 = time.monotonic()
        try:
            answer = action_id(agent(obs, state["configuration"]), observation["legal_actions"])
        except ValueError as exc:
            log(f"kaggle_agent: {exc}")
            sys.exit(1)
        move_s = (match.time_control or {}).get("move_s")
        used = time.monotonic() - t0
        if state["bank"] is not None and move_s is not None and used > move_s:
            state["bank"] = max(0.0, state["bank"] - (used - move_s))  # as the arena's clock spends it
        return answer

    run(choose, name=name)


def load_agent(path: str) -> Agent:
    """The last function a Kaggle submission file defines (Kaggle's own rule)."""
    namespace = runpy.run_path(path, run_name="kaggle_submission")
    agents = [
        v
        for v in namespace.values()
        if callable(v)
        and getattr(v, "__module__", None) == "kaggle_submission"
        and getattr(v, "__code__", None) is not None
    ]
    if not agents:
        raise SystemExit(f"kaggle_agent: {path} defines no function; define agent(observation, configuration)")
    return agents[-1]


def serve(path: str, name: str | None = None) -> None:
    """Run the Kaggle submission file ``path`` (relative to the caller's folder) as this bot."""
    import os

    caller = sys._getframe(1).f_globals.get("__file__")
    if caller and not os.path.isabs(path):
        path = os.path.join(os.path.dirname(os.path.abspath(caller)), path)
    run_agent(load_agent(path), name=name or os.path.splitext(os.path.basename(path))[0])
