"""Ratings and leaderboards recomputed from a results folder (`arena leaderboard`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.errors import ArenaError


def results_folder(source: Path) -> Path:
    """A results folder from itself or from the tournament file that names it."""
    if source.is_dir():
        return source
    from arena.config import load_tournament

    return Path(load_tournament(source).results)


def load_report(source: Path) -> tuple[Any, Path]:
    from arena.ratings import compute_ratings
    from arena.store import ResultStore, StoreError

    folder = results_folder(source)
    if not (folder / "results.sqlite").exists():
        raise ArenaError(f"{folder}: no results yet (no results.sqlite); run the tournament first with arena run")
    try:
        store = ResultStore(folder)
        meta = store.tournament() or {}
        stored = (meta.get("config") or {}).get("ratings") or {}
        # Unset keys are stored as null and mean "the default", as in `arena run`.
        params = {k: v for k, v in stored.items() if v is not None} or None
        report = compute_ratings(list(store.iter_results()), params)
    except StoreError as err:
        raise ArenaError(f"{folder}: {err}") from None
    return report, folder


def render(report: Any, fmt: str, folder: Path, write: bool = False) -> str:
    from arena import leaderboard as lb

    if write:
        lb.write_reports(report, folder)
    if fmt == "md":
        return lb.render_markdown(report)
    if fmt == "csv":
        return lb.render_csv(report)
    if fmt == "json":
        return lb.render_json(report)
    return lb.render_terminal(report, results=str(folder))
