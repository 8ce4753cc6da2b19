"""`arena matches`: the stored matches of a results folder, findable by bot, game and fault.

One row per match, in schedule order, with its id (what `arena replay` takes), the
bots by seat with their places (1-based) and any faults, each with its detail.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tabulate import tabulate

from arena.errors import ArenaError
from arena.inert import visible
from arena.match.faults import shorten
from arena.report.standings import results_folder
from arena.tournament.store import ResultRow, ResultStore, StoreError

HEADERS = ["match id", "game", "seats (place)", "faults"]


def find_matches(
    rows: Iterable[ResultRow], *, bot: str | None = None, game: str | None = None, fault: str | None = None
) -> list[ResultRow]:
    """The rows where ``bot`` sat, of ``game``, with a ``fault`` of that kind ("any": any fault)."""
    found = []
    for r in rows:
        if bot is not None and bot not in r.bots:
            continue
        if game is not None and r.game != game:
            continue
        if fault is not None:
            seats = [s for s, k in enumerate(r.faults) if k and (fault == "any" or k == fault)]
            if bot is not None:
                seats = [s for s in seats if r.bots[s] == bot]
            if not seats:
                continue
        found.append(r)
    return found


def match_table(rows: list[ResultRow]) -> list[list[Any]]:
    table = []
    for r in rows:
        seats = ", ".join(f"{b} ({p + 1})" for b, p in zip(r.bots, r.places))
        faults = "; ".join(
            f"s{s} {b}: {k}" + (f" ({shorten(d, 80)})" if d else "")
            for s, (b, k, d) in enumerate(zip(r.bots, r.faults, r.fault_details))
            if k
        )
        # one line per cell, nothing a terminal would act on (a name from the store is hostile)
        table.append([visible(c, keep="") for c in (r.match_id, r.game, seats, faults)])
    return table


def list_matches(
    source: Path, *, bot: str | None = None, game: str | None = None, fault: str | None = None
) -> tuple[str, int]:
    """The table text and how many matches it lists."""
    folder = results_folder(source)
    if not (folder / "results.sqlite").exists():
        raise ArenaError(f"{folder}: no results yet (no results.sqlite); run the tournament first with arena run")
    try:
        store = ResultStore(folder, read_only=True)
        if bot is not None:
            _known_bot(store, bot, folder)
        rows = find_matches(store.iter_results(), bot=bot, game=game, fault=fault)
    except StoreError as err:
        text = str(err)
        raise ArenaError(text if str(folder) in text else f"{folder}: {text}") from None
    if not rows:
        return "no stored match fits", 0
    return tabulate(match_table(rows), HEADERS, tablefmt="simple"), len(rows)


def _known_bot(store: ResultStore, bot: str, folder: Path) -> None:
    """``--bot`` names a bot that sat in a stored match, or the command fails naming the known ones
    (a typo must not read as "no match fits")."""
    known = sorted({name for r in store.iter_results() for name in r.bots} | {b["name"] for b in store.bots()})
    if bot in known:
        return
    import difflib

    close = difflib.get_close_matches(bot, known, n=1, cutoff=0.5)
    shown = ", ".join(known[:20]) + (f" and {len(known) - 20} more" if len(known) > 20 else "")
    raise ArenaError(
        f"--bot {bot}: no such bot in {folder}; "
        + (f"did you mean {close[0]!r}? " if close else "")
        + f"(bots: {shown or 'none yet'})"
    )
