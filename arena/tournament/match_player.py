"""Play matches one after another with each bot's process kept warm across them.

Shared by the local worker processes (arena/tournament/runner.py) and the Ray actors
(arena/tournament/ray_executor.py), so both play a match exactly the same way.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any, Mapping

WARM_BOTS = 32  # arena.tournament.config.WARM_BOTS, the tournament file's default


class MatchPlayer:
    """The bots of one worker: started on first use, reused by later matches, closed at the end.

    At most ``warm_bots`` bot processes stay running (never fewer than one match's
    seats): before a match needs another, the least recently seated bot is stopped.
    In a field of hundreds of bots a worker would otherwise hold a process, pipes and
    memory for every bot it ever met.
    """

    def __init__(self, entries: Mapping[str, Any], *, sandbox: Any, limits: Any, time_control: Any,
                 log_dir: Path | None, fresh: bool, tournament: str, warm_bots: int = WARM_BOTS) -> None:
        self.entries = entries
        self.sandbox = sandbox
        self.limits = limits
        self.tc = time_control
        self.log_dir = log_dir
        self.fresh = fresh
        self.tournament = tournament
        self.warm_bots = max(1, warm_bots)
        # every agent met, least recently seated first; an agent outlives its process, so a
        # bot that keeps failing to start is still known as such after being stopped
        self.agents: OrderedDict[str, Any] = OrderedDict()

    def play(self, match: Any) -> dict[str, Any]:
        """Play one scheduled match (a ``MatchSpec``) and return its record."""
        from arena.match.builtin import agent_for
        from arena.match.referee import play_match

        seats = []
        for name in match.bots:
            agent = self.agents.get(name)
            if agent is None:
                agent = agent_for(self.entries[name], sandbox=self.sandbox, limits=self.limits,
                                  time_control=self.tc, log_dir=self.log_dir, fresh=self.fresh)
                self.agents[name] = agent
            self.agents.move_to_end(name)
            seats.append(agent)
        self._make_room(set(match.bots))
        return play_match(match, seats, time_control=self.tc, sandbox=self.sandbox,
                          tournament=self.tournament)

    def running(self) -> list[str]:
        """Names of the bots with a running process, least recently seated first."""
        return [name for name, agent in self.agents.items() if getattr(agent, "proc", None) is not None]

    def _make_room(self, seated: set[str]) -> None:
        """Stop the least recently seated bots until this match's bots fit in ``warm_bots``."""
        running = self.running()
        cold = sum(1 for name in seated if name not in running)
        excess = len(running) + cold - self.warm_bots
        for name in running:
            if excess <= 0:
                break
            if name in seated:
                continue
            _stop(self.agents[name])
            excess -= 1

    def close(self) -> None:
        """Stop every bot process; never raises. Every bot hears its goodbye before any is
        waited for, so they exit side by side (the end of every run waits for this)."""
        for agent in self.agents.values():
            try:
                bye = getattr(agent, "say_bye", None)
                if bye is not None:
                    bye()
            except Exception:  # noqa: BLE001 - closing must never raise; _stop kills it below
                pass
        for agent in self.agents.values():
            _stop(agent)
        self.agents.clear()


def _stop(agent: Any) -> None:
    """Say bye and stop the agent's process; never raises."""
    try:
        agent.close()
    except Exception:  # noqa: BLE001 - closing must never raise
        agent.discard()
