"""Ratings and leaderboards recomputed from a results folder, and the report files
written there (`arena run` after its matches, `arena leaderboard`)."""

from __future__ import annotations

import dataclasses
import errno
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.errors import ArenaError
from arena.report import leaderboard as lb
from arena.report.files import replace_text
from arena.report.html_report import render_html

if TYPE_CHECKING:
    from arena.report.ratings import DealsJson, RatingReport
    from arena.tournament.store import ResultRow, ResultStore


def results_folder(source: Path) -> Path:
    """A results folder from itself or from the tournament file that names it."""
    if source.is_dir():
        return source
    from arena.tournament.load import load_tournament

    return Path(load_tournament(source).results)


def deals_of(meta: Mapping[str, Any]) -> DealsJson | None:
    """How the stored tournament drew its deals (files from before ``deals`` were public)."""
    config = meta.get("config")
    if not config:
        return None
    if config.get("deals", "public") == "public":
        return {"mode": "public", "seed": config.get("seed")}
    return {"mode": "secret"}


def load_report(source: Path) -> tuple[RatingReport, Path]:
    from arena.report.ratings import compute_ratings
    from arena.tournament.store import ResultStore, StoreError

    folder = results_folder(source)
    if not (folder / "results.sqlite").exists():
        raise ArenaError(f"{folder}: no results yet (no results.sqlite); run the tournament first with arena run")
    try:
        store = ResultStore(folder, read_only=True)  # a view writes nothing to the store
        meta: Mapping[str, Any] = store.tournament() or {}
        if not meta and not store.match_count():  # e.g. an empty file: nothing was ever stored
            raise ArenaError(
                f"{folder}: no results yet (results.sqlite holds no tournament); "
                "run the tournament first with arena run"
            )
        stored = (meta.get("config") or {}).get("ratings") or {}
        # Unset keys are stored as null and mean "the default", as in `arena run`.
        params = {k: v for k, v in stored.items() if v is not None} or None
        from arena.report.rating_cache import FILE_NAME, key_from_secret

        scheduled, _ = store.progress()
        rows = list(store.iter_results())
        cache = _cache_file(folder, FILE_NAME)
        try:  # the cache is sealed with the folder's secret; a folder without one rates from scratch
            key: bytes | None = key_from_secret(store.deal_secret()) if cache is not None else None
        except StoreError:
            key = None
        report = compute_ratings(rows, params, cache=None if key is None else cache, cache_key=key, scheduled=scheduled)
        report = _luck_adjusted(report, rows, store, (meta.get("config") or {}).get("luck_rollouts"))
        report = dataclasses.replace(report, deals=deals_of(meta), tournament=meta.get("name"))
        report = dataclasses.replace(report, sandbox=tuple(store.sandbox_levels()))
        from arena.tournament.adaptive import read_state

        report = dataclasses.replace(report, adaptive=tuple(read_state(folder)))
        store.close()  # not left to the garbage collector: a long-lived caller runs many
    except StoreError as err:
        raise ArenaError(_naming(folder, err)) from None
    return report, folder


def _cache_file(folder: Path, name: str) -> Path | None:
    """Where the folder's rating cache lives: in the folder, or, for a folder that cannot be
    written (read-only media), in the user's cache folder under a digest of its path (the
    cache is sealed with the folder's secret and checked against its rows wherever it is)."""
    import hashlib
    import os

    if os.access(folder, os.W_OK):
        return folder / name
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "decktet-arena"
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return base / f"{hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:32]}-{name}"


def _luck_adjusted(report: RatingReport, rows: list[ResultRow], store: ResultStore, rollouts: object) -> RatingReport:
    """The report with its luck-adjusted mean places from the stored baselines (never computed
    here: a store without them shows the figure as unavailable). ``rollouts``: the stored
    tournament's ``luck_rollouts``. A baseline table this arena cannot read leaves the figure
    unavailable rather than failing the leaderboard."""
    import sqlite3

    from arena.luck.baselines import load
    from arena.luck.reference import DEFAULT_ROLLOUTS
    from arena.report.luck import adjust

    if rollouts is None:  # a tournament stored before the option: its default
        rollouts = DEFAULT_ROLLOUTS
    if type(rollouts) is not int:
        return report
    if rollouts == 0:  # turned off on purpose: the pages say so, not "arena run computes them"
        return dataclasses.replace(report, luck_off=True)
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


def render(report: RatingReport, fmt: str, folder: Path, write: bool | None = False) -> str:
    """The leaderboard in ``fmt``, as printed (md, csv and json byte for byte the files; every
    format ends in a newline; html: the page's path); ``write`` (and ``html``) also refreshes
    the four report files, or raises an ArenaError when they cannot be written. ``write=None``: only in a folder
    that can be written (a finished folder on read-only media is viewed), with a note where not."""
    best_effort = write is None and fmt != "html"  # not asked for: refreshed where they can be
    if best_effort:
        write = os.access(folder, os.W_OK)
        if not write:
            note = f"arena: note: {folder} is read-only: its report files were not rewritten and may be out of date"
            print(note, file=sys.stderr)
    written = written_line(report)  # the page printed and the page written say the same
    if write or fmt == "html":
        try:
            paths = write_reports(report, folder, written=written)
        except OSError as exc:
            # by default the files are refreshed where they can be: on a full disk (the operator
            # looking why a run or ladder stopped) print the leaderboard anyway, as on read-only media
            if not best_effort or exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            print(
                f"arena: note: no space left on the device of {folder}: its report files were not "
                "rewritten and may be out of date",
                file=sys.stderr,
            )
        else:
            if fmt == "html":
                return f"{paths['html']}\n"
    if fmt == "md":
        return lb.render_markdown(report, title=report_title(report), written=written)
    if fmt == "csv":
        return lb.render_csv(report)
    if fmt == "json":
        return lb.render_json(report)
    text = lb.render_terminal(report, results=str(folder))
    return text if text.endswith("\n") else text + "\n"


REPLAYS = "replays"  # sub-folder of the results with the notable matches' replay pages
MAX_REPLAYS = 40  # one page per notable group (its first match), the largest groups first


def notable_extras(report: RatingReport, folder: Path) -> dict[tuple[str, int | None], dict[str, str]]:
    """For the first match of each notable group, keyed by (match id, seat): that seat's stored
    stderr tail and a replay page (written under ``replays/``, only for these, so the results
    folder stays small). Two groups may share a first match; each shows its own bot's tail."""
    if not report.notable or not (folder / "results.sqlite").exists():
        return {}
    from arena.tournament.store import ResultStore

    extras: dict[tuple[str, int | None], dict[str, str]] = {}
    # writable: a replay page's deal is recorded as shown before the page is written
    store = ResultStore(folder, read_only=not os.access(folder, os.W_OK))
    try:
        _fill_extras(report, folder, store, extras)
    finally:
        store.close()
    return extras


def _fill_extras(
    report: RatingReport, folder: Path, store: ResultStore, extras: dict[tuple[str, int | None], dict[str, str]]
) -> None:
    import sqlite3

    from arena.report.replay_view import write_replay_html
    from arena.tournament.store import StoreError

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
            # recorded first: a later run never deals a deal a page shows (tournament/fair_play.py)
            store.reveal_deals([(record["game"], record["players"], record["deal_seed"])])
            (folder / REPLAYS).mkdir(exist_ok=True)
            write_replay_html(record, folder / REPLAYS / name)
            extra["replay"] = f"{REPLAYS}/{name}"
        except (ArenaError, KeyError, TypeError, ValueError, StoreError, sqlite3.Error):
            pass  # a record this engine cannot replay (or record) keeps its row, without a link
        extras[(first.match_id, first.seat)] = extra


def report_title(report: RatingReport) -> str:
    return f"Leaderboard: {report.tournament}" if getattr(report, "tournament", None) else "Leaderboard"


def write_reports(
    report: RatingReport, folder: str | Path, *, title: str | None = None, written: str | None = None
) -> dict[str, Path]:
    """Write leaderboard.{md,csv,json,html} into ``folder``; returns {kind: path}. The pages
    (md, html) say when they were written (``written``, else now); the JSON and CSV stay
    byte-identical for the same results."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    title = title or report_title(report)
    written = written or written_line(report)
    texts = {
        "md": lb.render_markdown(report, title=title, written=written),
        "csv": lb.render_csv(report),
        "json": lb.render_json(report),
        "html": render_html(report, title=title, extras=notable_extras(report, folder), written=written),
    }
    paths = {}
    for kind, text in texts.items():
        path = folder / lb.FILES[kind]
        try:
            replace_text(path, text)  # a reader never sees half a file, nor a second writer's
        except OSError as exc:
            if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise  # a full disk says so in the guard's words
            raise ArenaError(
                f"{path}: cannot write the report ({exc.strerror}); the results folder is "
                f"read-only: print the leaderboard instead, e.g. arena leaderboard {folder} "
                "--format md --no-write"
            ) from None
        paths[kind] = path
    return paths


def written_line(report: RatingReport, now: float | None = None) -> str:
    """'Written 2026-12-03 08:45 UTC from 12 of 30 scheduled matches.': a page read later says
    how old it is and what it counted."""
    import time

    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(now))
    return f"Written {when} from {report.counted} of {report.scheduled} scheduled matches."


STALE_START, STALE_END = "<!-- arena: stale -->", "<!-- /arena: stale -->"


def mark_reports_stale(folder: Path, note: str) -> list[Path]:
    """Put ``note`` (why the pages are older than the results) at the top of leaderboard.html
    and leaderboard.md if they exist, replacing an earlier note; the next ``write_reports``
    rewrites them whole, without it. Returns the pages marked."""
    from markupsafe import Markup

    from arena.report.pages import render

    marked = []
    for kind in ("html", "md"):
        path = Path(folder) / lb.FILES[kind]
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        while STALE_START in text and STALE_END in text:  # an earlier note goes
            start = text.index(STALE_START)
            text = text[:start] + text[text.index(STALE_END) + len(STALE_END) :].lstrip("\n")
        if kind == "html":
            banner = render("stale_banner.html.j2", start=Markup(STALE_START), note=note, end=Markup(STALE_END)).rstrip(
                "\n"
            )
            text = text.replace("<body>", "<body>" + banner, 1) if "<body>" in text else banner + text
        else:
            text = f"{STALE_START}\n**{note}**\n{STALE_END}\n\n" + text
        replace_text(path, text)
        marked.append(path)
    return marked


def publish(folder: Path, *, title: str) -> tuple[dict[str, Path], str]:
    """Rate everything stored in ``folder``, write the report files there, and return
    their paths with the terminal text."""
    report, folder = load_report(folder)
    return write_reports(report, folder, title=title), lb.render_terminal(report, results=str(folder))


def open_in_browser(report: RatingReport, folder: Path) -> str | None:
    """`arena leaderboard --open`: write leaderboard.html and open it; why not, if no browser did."""
    import webbrowser

    page = Path(render(report, "html", folder).strip()).resolve()
    return None if webbrowser.open(page.as_uri()) else f"no browser found; open {page} yourself"
