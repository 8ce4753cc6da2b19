"""Load a tournament file and check it against everything it names: the bots it
resolves to, the schedule they make, and the results folder it writes to.

``load_tournament`` is the one entry point; ``config`` parses and validates the file
alone, ``roster`` and ``schedule`` build on its models.
"""

from __future__ import annotations

import os
from pathlib import Path

from arena.tournament.config import Tournament, _read, parse_tournament
from arena.tournament.roster import resolve_bots
from arena.tournament.schedule import check_schedule


def load_tournament(path: str | os.PathLike[str]) -> Tournament:
    """Read and fully check a tournament file; raises ``ConfigError`` (one line).

    Relative paths resolve against the current working directory, or against
    ``root`` (itself relative to the file's folder) when the file sets it.
    """
    label = str(path)
    file = Path(path)
    text, data = _read(file, label)
    t = parse_tournament(data, label, Path.cwd(), text, file.resolve().parent)
    _check_results(t)

    bots = resolve_bots(t)
    check_schedule(t, bots)
    return t


def _check_results(t: Tournament) -> None:
    target = t.results_dir
    shown = t.results
    probe = target
    while True:
        if probe.exists():
            if not probe.is_dir():
                what = "is an existing file" if probe == target else f"is inside {probe}, which is a file"
                raise t.config_error(
                    ("results",), f"{shown!r} {what}; results must be a folder, e.g. results: results/{t.name}"
                )
            if not os.access(probe, os.W_OK | os.X_OK):
                raise t.config_error(("results",), f"{shown!r}: cannot write in {probe}; choose a writable folder")
            return
        if probe.parent == probe:
            return
        probe = probe.parent
