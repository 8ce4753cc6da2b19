"""`arena run`: play the tournament's missing matches, then publish its leaderboards."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from arena.errors import ArenaError
from arena.records import MatchSpec
from arena.report.standings import mark_reports_stale, publish
from arena.tournament.runner import Plan, RunSummary, run_tournament

if TYPE_CHECKING:
    from arena.tournament.config import Tournament


def run_and_publish(tournament: Tournament, **kw: Any) -> RunSummary:
    """``run_tournament`` then, unless interrupted, the report files and terminal text
    (written while the run still holds the results folder)."""

    def _publish(summary: RunSummary) -> None:
        summary.reports, summary.leaderboard = publish(summary.results, title=f"Leaderboard: {tournament.name}")

    def _mark_stale(results: Path, pending: int) -> None:
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
    if summary.adaptive_open and summary.counted == summary.scheduled:
        lines.append(
            f"incomplete: {summary.counted} of {summary.scheduled} matches, and the adaptive schedule "
            f"{', '.join(summary.adaptive_open)} has rounds still to play; rerun to finish"
        )
        return lines
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
    for a in plan.adaptive:  # its later rounds follow from results not yet played: not listed
        if a.status == "playing":
            where = (
                f"{len(a.rounds)} round{'' if len(a.rounds) == 1 else 's'} planned so far ({a.matches} matches, "
                "listed here); each further round "
                f"is planned from the results of the one before, until the ranking is decided or {a.cap} matches"
            )
        else:
            where = f"{'decided' if a.status == 'decided' else 'at its cap'} after {a.matches} matches: no more rounds"
        out.write(f"adaptive schedule {a.key} ({a.players} players): {where}\n")
    if plan.forgotten:  # --fresh deletes them: say so, above all in another tournament's folder
        of = f" of {plan.forgotten_of!r}" if plan.forgotten_of else ""
        out.write(f"--fresh deletes the {plan.forgotten} matches stored{of} in this results folder\n")
    if plan.roster_news:
        out.write(f"since the last run: {plan.roster_news}\n")
    if plan.provisional:
        out.write(
            "match ids are provisional: the results folder has no deal secret yet (the run draws it), "
            "so the run deals other cards and its ids differ from these\n"
        )
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


def summary_lines(summary: RunSummary) -> list[str]:
    """What `arena run` prints after the leaderboard: the counts, then each report file."""
    lines = [
        f"\n{summary.played} matches played now, {summary.already_done} before; "
        f"{summary.faults} faults; {summary.counted} of {summary.scheduled} scheduled matches "
        f"counted; sandbox {summary.sandbox_level}"
    ]
    return lines + [f"{kind:>5}: {path}" for kind, path in sorted(summary.reports.items())]


def resume_hint(tournament_file: str, executor: str, ray_address: str | None) -> str:
    """The command that resumes this run (said when it stops incomplete)."""
    if ray_address is not None and executor != "ray":
        raise ArenaError("--ray-address goes with --executor ray")
    hint = f"arena run {tournament_file}"
    if executor == "ray":
        hint += " --executor ray" + (f" --ray-address {ray_address}" if ray_address else "")
    return hint


def print_outcome(summary: RunSummary, out: TextIO, err: TextIO) -> int:
    """What `arena run` prints once it has stopped, and its exit code: 130 interrupted (said
    already), 1 incomplete (why, on ``err``), 0 every match stored."""
    if summary.interrupted:
        return 130
    print(summary.leaderboard, *summary_lines(summary), sep="\n", file=out, flush=True)
    if summary.complete:
        return 0
    for line in incomplete_lines(summary):
        print(f"arena: {line}", file=err, flush=True)
    return 1
