"""`arena run`: play the tournament's missing matches, then publish its leaderboards."""

from __future__ import annotations

import time
from typing import Any, TextIO

from arena.report.standings import mark_reports_stale, publish
from arena.tournament.runner import Plan, RunSummary, run_tournament
from arena.tournament.schedule import MatchSpec


def run_and_publish(tournament: Any, **kw: Any) -> RunSummary:
    """``run_tournament`` then, unless interrupted, the report files and terminal text
    (written while the run still holds the results folder)."""

    def _publish(summary: RunSummary) -> None:
        summary.reports, summary.leaderboard = publish(summary.results, title=f"Leaderboard: {tournament.name}")

    def _mark_stale(results: Any, pending: int) -> None:
        # until the run publishes, pages from an earlier run say they are old (a run killed
        # with -9 never publishes)
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        mark_reports_stale(
            results,
            f"OUT OF DATE: a run started {when} to play {pending} more matches in this "
            "folder; this page shows the results from before it. "
            f"Refresh with: arena leaderboard {results}",
        )

    return run_tournament(tournament, publish=_publish, before_play=_mark_stale, **kw)


def incomplete_lines(summary: RunSummary) -> list[str]:
    """Why a run is not complete, one line each, the last one the verdict."""
    shown = 5
    lines = [f"given up: {g}" for g in summary.given_up[:shown]]
    if len(summary.given_up) > shown:
        lines.append(f"... {len(summary.given_up) - shown} more matches given up, see run.log")
    if summary.harness_failures:
        first = summary.harness_failures[0]
        more = len(summary.harness_failures) - 1
        lines.append(
            f"{len(summary.harness_failures)} matches the harness could not play (not stored), "
            f"e.g. {first}" + (f" (and {more} more, see run.log)" if more else "")
        )
    lines.append(f"incomplete: {summary.counted} of {summary.scheduled} matches; rerun to finish")
    return lines


def _line(m: MatchSpec) -> str:
    return f"  {m.match_id}  " + ", ".join(m.bots)


def render_plan(plan: Plan, out: TextIO, *, limit: int = 20) -> None:
    """`arena run --dry-run`: what would be played, kept and dropped."""
    out.write(
        f"{len(plan.schedule)} matches scheduled: {len(plan.play)} to play, "
        f"{len(plan.keep)} already stored (kept), {len(plan.drop)} stored but no longer "
        "in the tournament (dropped from the leaderboard, kept in the store)\n"
    )
    if plan.roster_news:
        out.write(f"since the last run: {plan.roster_news}\n")
    for title, items in (
        ("play", [_line(m) for m in plan.play]),
        ("keep", [_line(m) for m in plan.keep]),
        ("drop", [f"  {mid}" for mid in plan.drop]),
    ):
        if not items:
            continue
        out.write(f"{title} ({len(items)}):\n")
        for text in items[:limit]:
            out.write(text + "\n")
        if len(items) > limit:
            out.write(f"  ... {len(items) - limit} more\n")
