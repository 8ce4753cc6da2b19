"""The ladder's luck-adjusted place: baselines computed for the stored matches as they arrive.

``arena run`` computes its luck baselines (arena/luck/baselines.py) once, after the matches.
A ladder never ends, so the matchmaker starts one *luck process* beside its workers that,
every ``LUCK_EVERY_S``, fills in the baselines (and AIVAT corrections) of the matches stored
since its last pass, with ``arena.luck.baselines.fill`` on the whole stored schedule (so its
reference-deal counts are exactly those ``load`` expects for these rows). It is bounded in CPU
so the ladder's throughput holds: it runs ``LUCK_NICE`` below the workers (bots and workers go
first) and, after each job, sleeps long enough that it uses at most ``LUCK_CPU_SHARE`` of one core.

After each pass it writes ``<data>/luck.json``: ``{"through": R}``, the highest matches rowid
whose matches it has computed. The matchmaker's ratings (matchmaker.publish_standings) adjust
the mean place over the matches up to R (``adjusted``), so the figure follows the plain one a
few seconds behind and is never over a set of matches with a baseline still missing.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import sqlite3
    from multiprocessing.process import BaseProcess

    from arena.report.ratings import RatingReport
    from arena.tournament.config import Tournament
    from arena.tournament.store import ResultRow, ResultStore

log = logging.getLogger("arena.serve")

LUCK_FILE = "luck.json"
LUCK_EVERY_S = 2.0  # a pass at most this often (as the ratings)
LUCK_RETRY_S = 30.0  # after a failed pass
LUCK_CPU_SHARE = 0.25  # of one core, at most
# niceness added to the matchmaker's (``workers_nice``): 0, the workers' own, as the cap bounds
# what it takes (at nice 19 on a saturated machine it got 8% of a core and fell behind)
LUCK_NICE = 0


class LuckSpec(NamedTuple):
    """What ``arena.luck.baselines.fill`` reads of a scheduled match (a stored one here)."""

    match_id: str
    game: str
    players: int
    options: dict[str, Any]
    deal_seed: int


def options_by_config(tournament: Tournament) -> dict[tuple[str, int], dict[str, Any] | None]:
    """(game id, seats) -> the resolved options the ladder plays them with; None where two
    entries play the same game and seat count with different options (then the deal set says)."""
    out: dict[tuple[str, int], dict[str, Any] | None] = {}
    for g in tournament.games:
        for p in g.players:
            opts = dict(g.options_for(p))
            out[(g.id, p)] = opts if out.get((g.id, p), opts) == opts else None
    return out


def stored_schedule(
    conn: sqlite3.Connection,
    through: int,
    options: dict[tuple[str, int], dict[str, Any] | None],
    by_set: dict[int, dict[str, Any]] | None = None,
) -> list[LuckSpec]:
    """The stored matches up to rowid ``through`` as ``LuckSpec``s. ``by_set``: deal set id ->
    options, for configurations ``options`` leaves ambiguous (a match of neither is left out:
    its bots' adjusted place shows as unavailable)."""
    from arena.serve.db import INDEX_STRIDE

    out = []
    for mid, game, players, seed, idx in conn.execute(
        "SELECT match_id, game, players, deal_seed, idx FROM matches WHERE rowid <= ? ORDER BY rowid", (through,)
    ):
        opts = options.get((game, players))
        if opts is None and (game, players) in options and by_set is not None:  # not a game the file dropped:
            opts = by_set.get(idx // INDEX_STRIDE)  # its set's entry may be another game's now
        if opts is None or seed is None:
            continue
        out.append(LuckSpec(mid, game, players, opts, int(seed)))
    return out


def read_through(data: Path) -> int:
    """The rowid through which the luck process has computed (0: nothing yet, or unreadable)."""
    try:
        got = json.loads((Path(data) / LUCK_FILE).read_text())["through"]
        return got if type(got) is int and got >= 0 else 0
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def _write_through(data: Path, through: int) -> None:
    path = Path(data) / LUCK_FILE
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"through": through}))
    os.replace(tmp, path)


class Throttle:
    """``fill``'s progress callback: after a job, sleep just long enough that this process's
    CPU time since it started stays at most ``share`` of the wall time (a bound on the CPU it
    takes, not a fixed pause per job: on a busy machine a job's wall time stretches already).
    ``sleep``, ``cpu`` and ``clock`` are injectable for tests."""

    def __init__(
        self,
        share: float = LUCK_CPU_SHARE,
        sleep: Callable[[float], None] = time.sleep,
        cpu: Callable[[], float] = time.process_time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.share, self.sleep, self.cpu, self.clock = share, sleep, cpu, clock
        self.cpu0, self.wall0 = cpu(), clock()
        self.slept = 0.0

    def __call__(self, done: int, total: int) -> None:
        used = self.cpu() - self.cpu0
        pause = used / self.share - (self.clock() - self.wall0)
        if pause > 0:
            self.slept += pause
            self.sleep(pause)


def fill_pass(
    store: ResultStore,
    data: Path,
    through: int,
    options: dict[tuple[str, int], dict[str, Any] | None],
    by_set: dict[int, dict[str, Any]] | None,
    rollouts: int,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """One pass: the missing baselines of the stored matches up to rowid ``through``, then
    ``luck.json`` says they are there; returns how many jobs it computed."""
    from arena.luck.baselines import fill

    with store.reading() as conn:
        schedule = stored_schedule(conn, through, options, by_set)
    n = fill(store, schedule, rollouts, progress=progress, workers=1)
    _write_through(data, through)
    return n


def luck_main(
    data: Path,
    options: dict[tuple[str, int], dict[str, Any] | None],
    entries: dict[tuple[int, int], dict[str, Any]],
    rollouts: int,
    parent_pid: int,
) -> None:
    """The luck process (spawned by the matchmaker): passes without end, ``LUCK_NICE`` below it.
    ``entries``: (game entry index, seats) -> options, for the deal sets ``options`` leaves ambiguous."""
    import signal

    from arena.interrupts import take_held
    from arena.serve.db import LadderDB
    from arena.tournament.runner import _die_with_parent
    from arena.tournament.store import ResultStore

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    take_held()  # started with them held (start_luck)
    _die_with_parent(parent_pid)
    handler = logging.FileHandler(Path(data) / "run.log")  # beside the matchmaker's lines (appends are atomic)
    handler.setFormatter(logging.Formatter("%(asctime)s %(processName)s %(levelname)s %(message)s"))
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)
    try:
        os.nice(LUCK_NICE)
    except OSError:
        pass
    store = ResultStore(data)
    db = LadderDB(data)
    done = read_through(data)
    while True:
        last = store.last_rowid()
        if last > done:
            started = time.monotonic()
            throttle = Throttle()
            try:
                by_set = {
                    r["id"]: entries[(r["entry"], r["players"])]
                    for r in db.deal_sets_since(0)
                    if (r["entry"], r["players"]) in entries
                }
                n = fill_pass(store, data, last, options, by_set, rollouts, throttle)
            except Exception as exc:  # noqa: BLE001 - the figure stays n/a; matches go on
                log.warning(
                    "luck baselines of the ladder's matches not computed (%s: %s); retried in %.0f s",
                    type(exc).__name__,
                    exc,
                    LUCK_RETRY_S,
                )
                time.sleep(LUCK_RETRY_S)
                continue
            done = last
            if n:
                log.info(
                    "luck baselines: %d jobs for the matches up to %d in %.1f s (%.1f s of it paused)",
                    n,
                    last,
                    time.monotonic() - started,
                    throttle.slept,
                )
        time.sleep(LUCK_EVERY_S)


def start_luck(tournament: Tournament, data: Path) -> BaseProcess | None:
    """Spawn the luck process (a fresh interpreter: the matchmaker may hold threads), or None
    when the ladder computes no luck baselines (``luck_rollouts: 0``)."""
    import multiprocessing as mp

    rollouts = ladder_rollouts(tournament)
    if rollouts < 1:
        return None
    entries = {(i, p): dict(g.options_for(p)) for i, g in enumerate(tournament.games) for p in g.players}
    proc = mp.get_context("spawn").Process(
        target=luck_main,
        name="luck",
        args=(Path(data), options_by_config(tournament), entries, rollouts, os.getpid()),
        daemon=True,
    )
    from arena.interrupts import held_while_starting

    with held_while_starting("spawn"):
        proc.start()
    return proc


def kept_alive(proc: BaseProcess | None, tournament: Tournament, data: Path) -> BaseProcess | None:
    """``proc``, or the luck process started again if it died (the OOM killer, a stray kill):
    the ladder plays on without it, so its figure would stop following without a word."""
    if proc is None or proc.is_alive():
        return proc
    log.warning("the luck process stopped (exit code %s); starting it again", proc.exitcode)
    proc.join()
    return start_luck(tournament, data)


def ladder_rollouts(tournament: Tournament) -> int:
    """The ladder file's ``luck_rollouts`` (games per seat of each deal's baseline; 0: none)."""
    got = getattr(tournament, "luck_rollouts", 0)
    return got if type(got) is int else 0


def adjusted(
    report: RatingReport, rows: list[ResultRow], store: ResultStore, rollouts: int, through: int
) -> tuple[RatingReport, int]:
    """``report`` with the luck-adjusted mean place (``arena.report.luck.adjust``) over the
    stored matches up to rowid ``through``, and how many matches that is. ``rows``: the
    report's rows, numbered in play order (matchmaker.rows_in_play_order). A table this arena
    cannot read leaves the figure unavailable (as ``arena run``'s leaderboards do)."""
    import sqlite3

    from arena.luck.baselines import load
    from arena.report.luck import adjust

    if rollouts < 1 or through < 1:
        return report, 0
    with store.reading() as conn:
        count = conn.execute("SELECT COUNT(*) FROM matches WHERE rowid <= ?", (through,)).fetchone()[0]
    covered = [r for r in rows if r.index < count]  # play order is rowid order
    try:
        baselines = load(store, covered, rollouts)
    except (sqlite3.Error, ValueError, TypeError) as exc:
        log.warning("luck baselines unreadable (%s); adjusted places unavailable", exc)
        return report, 0
    return adjust(report, covered, baselines), len(covered)
