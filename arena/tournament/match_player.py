"""Play matches one after another with each bot's process kept warm across them.

Shared by the local worker processes (arena/tournament/runner.py) and the Ray actors
(arena/tournament/ray_executor.py), so both play a match exactly the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping


class MatchPlayer:
    """The bots of one worker: started on first use, reused by later matches, closed at the end."""

    def __init__(self, entries: Mapping[str, Any], *, sandbox: Any, limits: Any, time_control: Any,
                 log_dir: Path | None, fresh: bool, tournament: str) -> None:
        self.entries = entries
        self.sandbox = sandbox
        self.limits = limits
        self.tc = time_control
        self.log_dir = log_dir
        self.fresh = fresh
        self.tournament = tournament
        self.agents: dict[str, Any] = {}

    def play(self, match: Any) -> dict[str, Any]:
        """Play one scheduled match (a ``MatchSpec``) and return its record."""
        from arena.match.agents import ProcessAgent
        from arena.match.referee import play_match

        seats = []
        for name in match.bots:
            agent = self.agents.get(name)
            if agent is None:
                agent = ProcessAgent(self.entries[name], sandbox=self.sandbox, limits=self.limits,
                                     time_control=self.tc, log_dir=self.log_dir, fresh=self.fresh)
                self.agents[name] = agent
            seats.append(agent)
        return play_match(match, seats, time_control=self.tc, sandbox=self.sandbox,
                          tournament=self.tournament)

    def close(self) -> None:
        """Stop every bot process; never raises."""
        for agent in self.agents.values():
            try:
                agent.close()
            except Exception:  # noqa: BLE001 - closing must never raise
                agent.discard()
        self.agents.clear()
