"""The live display of `arena run` in a terminal: a progress bar with count, rate and
ETA; above it, warnings as they come and one line per (bot, fault kind) with its count
(never one line per faulty match); with ``--live``, the standings, refreshed every few
seconds from the results store. Pipes and CI get the plain lines of
``arena.tournament.runner.Progress`` instead (``run_console`` gives None): no control codes.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console, Group
from rich.live import Live
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from arena.inert import visible

STANDINGS_EVERY_S = 3.0


class RunConsole:
    """The terminal of one `arena run`: ``stream`` is what the run writes its messages and
    warnings to (printed above the bar), ``display`` the factory `run_tournament` takes."""

    def __init__(self, stream: TextIO, *, results: Path, live_standings: bool) -> None:
        self.console = Console(file=stream)
        self.results = results
        self.live_standings = live_standings
        self.stream = _ConsoleStream(self.console)

    def display(self, total: int, err: TextIO) -> LiveDisplay:
        return LiveDisplay(total, self.console, results=self.results, live_standings=self.live_standings)


def run_console(stream: TextIO, *, results: Path, live_standings: bool) -> RunConsole | None:
    """A live console in a terminal; None for pipes and CI (the run prints plain lines)."""
    return RunConsole(stream, results=results, live_standings=live_standings) if stream.isatty() else None


class _ConsoleStream:
    """A text stream whose lines go through the rich console (above a live display)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        while "\n" in self._pending:
            line, self._pending = self._pending.split("\n", 1)
            self.console.print(visible(line), markup=False, highlight=False, soft_wrap=True)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


class LiveDisplay:
    """Same interface as the plain ``Progress``: ``update(match_id, faults)``, ``close()``."""

    def __init__(self, total: int, console: Console, *, results: Path, live_standings: bool) -> None:
        self.console = console
        self.results = results
        self.live_standings = live_standings
        self.faults: dict[tuple[str, str], int] = {}
        self.first_reason: dict[tuple[str, str], str] = {}  # what each bot's first fault of a kind was
        self.bar = Progress(
            TextColumn("matches"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TimeElapsedColumn(),
            console=console,
        )
        self.task = self.bar.add_task("run", total=total, rate="")
        self.t0 = time.monotonic()
        self._standings: Table | None = None
        self._standings_at = 0.0
        self.live = Live(
            self._render(),
            console=console,
            refresh_per_second=4,
            transient=False,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.live.start()

    def update(self, match_id: str, faults: list[tuple[str, str]], reasons: tuple[str, ...] = ()) -> None:
        for i, key in enumerate(faults):
            self.faults[key] = self.faults.get(key, 0) + 1
            if key not in self.first_reason and i < len(reasons):
                self.first_reason[key] = reasons[i]
        done = self.bar.tasks[0].completed + 1
        elapsed = time.monotonic() - self.t0
        self.bar.update(self.task, completed=done, rate=f"{done / elapsed:.1f}/s" if elapsed > 0 else "")
        if self.live_standings and time.monotonic() - self._standings_at > STANDINGS_EVERY_S:
            self._standings = _standings_table(self.results)
            self._standings_at = time.monotonic()
        self.live.update(self._render())

    def _render(self) -> Group:
        parts: list[Any] = []
        if self.faults:
            parts.append(
                Text(
                    "faults by bot and kind (details in run.log; list them with arena matches <results> --fault KIND):"
                )
            )
            t = Table(show_edge=False, box=None)
            t.add_column("bot")
            t.add_column("kind")
            t.add_column("matches", justify="right")
            t.add_column("the first was", overflow="ellipsis", no_wrap=True)
            for (bot, kind), n in sorted(self.faults.items(), key=lambda kv: -kv[1]):
                why = visible(self.first_reason.get((bot, kind), ""), keep="")
                # Text, not str: rich reads a str cell as markup, and a bot's stderr is in the
                # reason ("[/x]" raised MarkupError and stopped the run; "[link=...]" made a link)
                t.add_row(_plain(bot), _plain(kind), str(n), Text(why))
            parts.append(t)
        if self._standings is not None:
            parts.append(self._standings)
        parts.append(self.bar)
        return Group(*parts)

    def grow(self, more: int) -> None:
        """An adaptive schedule planned ``more`` matches."""
        self.bar.update(self.task, total=(self.bar.tasks[0].total or 0) + more)

    def close(self) -> None:
        if self.live_standings:
            self._standings = _standings_table(self.results)
        self.live.update(self._render())
        self.live.stop()


def _standings_table(results: Path) -> Table | None:
    """The overall standings so far, from the store (None if nothing is rated yet)."""
    from arena.errors import ArenaError
    from arena.report.standings import load_report

    try:
        report, _ = load_report(results)
    except ArenaError:
        return None
    from arena.report.leaderboard import format_mean_place

    if not report.scopes:
        return None
    scope = report.scopes[0]
    t = Table(title=f"standings after {scope.rated} rated matches", title_justify="left", box=None)
    for name, justify in (
        ("rank", "right"),
        ("bot", "left"),
        ("conservative", "right"),
        ("mean place", "right"),
        ("faults", "right"),
    ):
        t.add_column(name, justify=justify)  # type: ignore[arg-type]
    for s in scope.standings[:20]:  # the mean place as the leaderboard shows it: with its ±, ties marked
        t.add_row(s.rank_label, _plain(s.name), f"{s.conservative:.2f}", format_mean_place(s), str(s.faults_total))
    return t


def _plain(text: str) -> Text:
    """A table cell shown as itself: control characters as escapes, and no rich markup."""
    return Text(visible(text, keep=""))
