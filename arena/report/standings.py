"""Ratings and leaderboards recomputed from a results folder, and the report files
written there (`arena run` after its matches, `arena leaderboard`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.report import leaderboard as lb
from arena.report.html_report import render_html


def results_folder(source: Path) -> Path:
    """A results folder from itself or from the tournament file that names it."""
    if source.is_dir():
        return source
    from arena.tournament.load import load_tournament

    return Path(load_tournament(source).results)


def deals_of(meta: dict[str, Any]) -> dict[str, Any] | None:
    """How the stored tournament drew its deals (files from before ``deals`` were public)."""
    config = meta.get("config")
    if not config:
        return None
    if config.get("deals", "public") == "public":
        return {"mode": "public", "seed": config.get("seed")}
    return {"mode": "secret"}


def load_report(source: Path) -> tuple[Any, Path]:
    from arena.report.ratings import compute_ratings
    from arena.tournament.store import ResultStore, StoreError

    folder = results_folder(source)
    if not (folder / "results.sqlite").exists():
        raise ArenaError(f"{folder}: no results yet (no results.sqlite); run the tournament first with arena run")
    try:
        store = ResultStore(folder)
        meta = store.tournament() or {}
        if not meta and not store.match_count():  # e.g. an empty file: nothing was ever stored
            raise ArenaError(f"{folder}: no results yet (results.sqlite holds no tournament); "
                             "run the tournament first with arena run")
        stored = (meta.get("config") or {}).get("ratings") or {}
        # Unset keys are stored as null and mean "the default", as in `arena run`.
        params = {k: v for k, v in stored.items() if v is not None} or None
        from arena.report.rating_cache import FILE_NAME
        scheduled, _ = store.progress()
        rows = list(store.iter_results())
        report = compute_ratings(rows, params, cache=folder / FILE_NAME, scheduled=scheduled)
        report = _luck_adjusted(report, rows, store, (meta.get("config") or {}).get("luck_rollouts"))
        report = dataclasses.replace(report, deals=deals_of(meta))
        report = dataclasses.replace(report, sandbox=tuple(store.sandbox_levels()))
        from arena.tournament.adaptive import read_state
        report = dataclasses.replace(report, adaptive=tuple(read_state(folder)))
        store.close()  # not left to the garbage collector: a long-lived caller runs many
    except StoreError as err:
        raise ArenaError(_naming(folder, err)) from None
    return report, folder


def _luck_adjusted(report: Any, rows: list[Any], store: Any, rollouts: Any) -> Any:
    """The report with its luck-adjusted mean places from the stored baselines (never computed
    here: a store without them shows the figure as unavailable). ``rollouts``: the stored
    tournament's ``luck_rollouts``. A baseline table this arena cannot read leaves the figure
    unavailable rather than failing the leaderboard."""
    import sqlite3

    from arena.report.luck import adjust
    from arena.tournament.luck import DEFAULT_ROLLOUTS, load

    if rollouts is None:        # a tournament stored before the option: its default
        rollouts = DEFAULT_ROLLOUTS
    if type(rollouts) is not int:
        return report
    try:
        baselines = load(store, rows, rollouts)
    except (sqlite3.Error, ValueError, TypeError) as exc:
        import logging

        logging.getLogger(__name__).warning("luck baselines unreadable (%s); adjusted places unavailable", exc)
        return report
    return adjust(report, rows, baselines)


def _naming(folder: Path, err: Exception) -> str:
    """The store's message, led by the folder unless it already names its file."""
    text = str(err)
    return text if str(folder) in text else f"{folder}: {text}"


def render(report: Any, fmt: str, folder: Path, write: bool = False) -> str:
    if write or fmt == "html":
        paths = write_reports(report, folder)
        if fmt == "html":
            return str(paths["html"])
    if fmt == "md":
        return lb.render_markdown(report)
    if fmt == "csv":
        return lb.render_csv(report)
    if fmt == "json":
        return lb.render_json(report)
    return lb.render_terminal(report, results=str(folder))


REPLAYS = "replays"        # sub-folder of the results with the notable matches' replay pages
MAX_REPLAYS = 40           # one page per notable group (its first match), the largest groups first


def notable_extras(report: Any, folder: Path) -> dict[str, dict[str, str]]:
    """For the first match of each notable group: its stored stderr tail and a replay page
    (written under ``replays/``, only for these, so the results folder stays small)."""
    if not report.notable or not (folder / "results.sqlite").exists():
        return {}
    from arena.report.replay_view import write_replay_html
    from arena.tournament.store import ResultStore, StoreError

    extras: dict[str, dict[str, str]] = {}
    store = ResultStore(folder)
    for group in lb.notable_groups(report)[:MAX_REPLAYS]:
        first = group.first
        try:
            record = store.get_record(first.match_id)
        except (KeyError, StoreError):
            continue
        if record is None:
            continue
        extra: dict[str, str] = {}
        faults = record.get("faults") or []
        fault = faults[first.seat] if first.seat is not None and first.seat < len(faults) else None
        if fault and fault.get("stderr_tail"):
            extra["tail"] = str(fault["stderr_tail"])
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in first.match_id) + ".html"
        try:
            (folder / REPLAYS).mkdir(exist_ok=True)
            write_replay_html(record, folder / REPLAYS / name)
            extra["replay"] = f"{REPLAYS}/{name}"
        except ArenaError:
            pass  # a record this engine cannot replay keeps its row, without a link
        extras[first.match_id] = extra
    return extras


def write_reports(report: Any, folder: str | Path, *, title: str = "Leaderboard") -> dict[str, Path]:
    """Write leaderboard.{md,csv,json,html} into ``folder``; returns {kind: path}."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    texts = {"md": lb.render_markdown(report, title=title), "csv": lb.render_csv(report),
             "json": lb.render_json(report),
             "html": render_html(report, title=title, extras=notable_extras(report, folder))}
    paths = {}
    for kind, text in texts.items():
        path = folder / lb.FILES[kind]
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)  # a reader never sees half a file
        paths[kind] = path
    return paths


def publish(folder: Path, *, title: str) -> tuple[dict[str, Path], str]:
    """Rate everything stored in ``folder``, write the report files there, and return
    their paths with the terminal text."""
    report, folder = load_report(folder)
    return write_reports(report, folder, title=title), lb.render_terminal(report, results=str(folder))
