"""`arena run`: play the tournament's missing matches, then publish its leaderboards."""

from __future__ import annotations

from typing import Any

from arena.report.standings import publish
from arena.tournament.runner import RunSummary, run_tournament


def run_and_publish(tournament: Any, **kw: Any) -> RunSummary:
    """``run_tournament`` then, unless interrupted, the report files and terminal text."""
    summary = run_tournament(tournament, **kw)
    if not summary.interrupted:
        summary.reports, summary.leaderboard = publish(summary.results, title=f"Leaderboard: {tournament.name}")
    return summary
