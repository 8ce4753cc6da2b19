"""Luck baselines: computed once per deal after the matches, stored beside the results.

The luck-adjusted mean place (docs/luck.md, ``arena.report.luck``) needs, for every deal
``d`` of the tournament and every seat ``s``, ``h(d, s)``: how the game's fixed reference
policy fares from that seat of that deal (``arena.luck.reference.seat_baselines``), and the
population mean of ``h`` per seat, estimated on a sample of *reference deals* drawn from
their own stream (``arena.luck.reference.reference_deal_seed``), one game per seat each.

Both live in the results store's ``luck_baselines`` table, one row per (game, players,
options, rules version, reference version, deal seed, kind), where ``kind`` is ``deal``
(a tournament deal, ``rollouts`` games per seat), ``reference`` (with its ordinal in the
stream) or ``summary`` (per configuration: the estimate of eta from its first N reference
deals, so a leaderboard reads one row, not thousands). Nothing in a row
depends on a bot. The table is part of the store's schema (``arena.luck.tables``, schema 4;
an older store gets it in its migration). Rows are committed in batches (at most
256 rows or one second of work each, and whatever is done when the computation is
interrupted or fails), so an interruption keeps what was finished and the next run
completes it.

Where and when: ``fill`` runs in the ``arena run`` process after the matches (never
while bots are being timed), for the deals of the schedule that lack a row, shared among
as many processes as the run had workers. Configurations whose coefficient
``arena.luck.reference.luck_beta`` is 0 get none: their adjusted place is the plain one. A store
for which none were computed (older runs, ``luck_rollouts: 0``, benchmarks/make_store.py) is shown as
"unavailable" by the leaderboards, which never compute baselines themselves.

The same pass computes, for every stored match with a builtin random player
(``{builtin: random}``) in a game with AIVAT, and every match of a configuration with chance
terms (four-player Palace), that match's AIVAT corrections
(``arena.luck.aivat.aivat_corrections``: the luck of the builtin players' draws and of the
face-down cards revealed, from the match record's decisions), in the ``luck_aivat`` table,
one row per match, bound to the record's SHA-256.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from arena.luck import tables
from arena.luck.aivat import AIVAT_CHANCE, AIVAT_ROLLOUTS, AIVAT_VERSION, has_aivat, has_chance_aivat
from arena.luck.pool import computed
from arena.luck.reference import DEFAULT_ROLLOUTS, REFERENCE_VERSION, luck_beta, reference_deal_seed
from games import REGISTRY

log = logging.getLogger(__name__)

_COLUMNS = tables.BASELINES_COLUMNS
_AIVAT_COLUMNS = tables.AIVAT_COLUMNS

MIN_REFERENCE_DEALS = 32  # reference deals per (game, players, options), at least ...
# ... and this many per tournament deal of that configuration: their mean's error is one more
# term of every adjusted interval, so they must outnumber the deals; Palace's are slower (its
# rule policy enumerates many moves): fewer of them there
REFERENCE_PER_DEAL = {"palace": 16}
DEFAULT_REFERENCE_PER_DEAL = 64


def canonical(options: dict[str, Any]) -> str:
    return json.dumps(options, sort_keys=True, separators=(",", ":"))


def _digest(values: Iterable[Any]) -> str:
    return hashlib.sha256(json.dumps(list(values), separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True)
class Config:
    """One (game, players, options) of a tournament and its deal seeds."""

    game: str
    players: int
    options: dict[str, Any]
    deal_seeds: tuple[int, ...]

    @property
    def key(self) -> tuple[str, int, str, str]:
        return (self.game, self.players, canonical(self.options), REGISTRY[self.game].rules_version)


def configs_of(schedule: Iterable[Any]) -> list[Config]:
    """The configurations of a schedule (``MatchSpec``s), each with its distinct deal seeds."""
    seen: dict[tuple[str, int, str], tuple[dict[str, Any], dict[int, None]]] = {}
    for m in schedule:
        opts = REGISTRY[m.game].resolve_options(m.players, m.options)
        entry = seen.setdefault((m.game, m.players, canonical(opts)), (opts, {}))
        entry[1][m.deal_seed] = None
    return [Config(g, p, opts, tuple(seeds)) for (g, p, _), (opts, seeds) in seen.items()]


def reference_target(game: str, deals: int) -> int:
    """Reference deals for a configuration of ``game`` with ``deals`` tournament deals."""
    return max(MIN_REFERENCE_DEALS, REFERENCE_PER_DEAL.get(game, DEFAULT_REFERENCE_PER_DEAL) * deals)


def _stored(conn: sqlite3.Connection, cfg: Config, kind: str, rollouts: int) -> set[str]:
    game, players, options, rules = cfg.key
    return {
        r[0]
        for r in conn.execute(
            "SELECT deal_seed FROM luck_baselines WHERE game = ? AND players = ? AND options = ?"
            " AND rules_version = ? AND reference = ? AND kind = ? AND rollouts = ?",
            (game, players, options, rules, REFERENCE_VERSION, kind, rollouts),
        )
    }


def _row(cfg: Config, seed: int, kind: str, ordinal: int, rollouts: int, places: list[float]) -> tuple[Any, ...]:
    game, players, options, rules = cfg.key
    row = (
        game,
        players,
        options,
        rules,
        REFERENCE_VERSION,
        str(seed),
        kind,
        ordinal,
        rollouts,
        json.dumps([round(p, 9) for p in places]),
    )
    return (*row, _digest(row))


def _put(store: Any, rows: list[tuple[Any, ...]], corrections: Iterable[tuple[Any, ...]] = ()) -> None:
    with store.writing() as conn:
        conn.executemany(
            f"INSERT OR REPLACE INTO luck_baselines ({', '.join(_COLUMNS)}, digest)"
            f" VALUES ({', '.join('?' * (len(_COLUMNS) + 1))})",
            rows,
        )
        conn.executemany(
            f"INSERT OR REPLACE INTO luck_aivat ({', '.join(_AIVAT_COLUMNS)}, digest)"
            f" VALUES ({', '.join('?' * (len(_AIVAT_COLUMNS) + 1))})",
            corrections,
        )


FLUSH_ROWS, FLUSH_S = 256, 1.0  # rows are committed in batches: at most this much work is redone


def fill(
    store: Any,
    schedule: Iterable[Any],
    rollouts: int = DEFAULT_ROLLOUTS,
    progress: Callable[[int, int], None] | None = None,
    workers: int = 1,
) -> int:
    """Compute and store every missing baseline of the schedule's deals and reference deals,
    and every missing AIVAT correction of its matches with builtin random players, on
    ``workers`` processes; returns how many rows it added. Rows are committed in batches, and
    the finished ones on an interruption too. ``rollouts`` < 1 does nothing."""
    if rollouts < 1:
        return 0
    with store.writing() as conn:
        tables.repair(conn)  # a hand-dropped or hand-made table: made again
        tables.mark_computed(conn)
    todo: list[tuple[Config, int, str, int]] = []
    targets: dict[tuple[str, int, str, str], int] = {}
    for cfg in configs_of(schedule):
        if luck_beta(cfg.game, cfg.players) == 0.0:  # no correction there: nothing to compute
            continue
        with store.reading() as conn:
            have = _stored(conn, cfg, "deal", rollouts)
            have_ref = _stored(conn, cfg, "reference", 1)
        todo += [(cfg, s, "deal", 0) for s in cfg.deal_seeds if str(s) not in have]
        targets[cfg.key] = reference_target(cfg.game, len(cfg.deal_seeds))
        for k in range(targets[cfg.key]):
            seed = reference_deal_seed(cfg.game, cfg.players, k)
            if str(seed) not in have_ref:
                todo.append((cfg, seed, "reference", k))
    jobs: list[list[Any]] = [
        ["baseline", cfg.game, cfg.players, cfg.options, seed, rollouts if kind == "deal" else 1]
        for cfg, seed, kind, _ in todo
    ]
    aivat_todo = _aivat_todo(store, schedule)
    total = len(jobs) + len(aivat_todo)
    if total and progress is not None:
        progress(0, total)
    baselines: list[tuple[Any, ...]] = []
    corrections: list[tuple[Any, ...]] = []
    last = time.monotonic()
    done = 0
    try:
        for (cfg, seed, kind, ordinal), job, places in zip(todo, jobs, computed(jobs, workers)):
            baselines.append(_row(cfg, seed, kind, ordinal, job[5], places))
            done += 1
            if len(baselines) >= FLUSH_ROWS or time.monotonic() - last >= FLUSH_S:
                _put(store, baselines)
                baselines, last = [], time.monotonic()
            if progress is not None:
                progress(done, total)
        # the matches' records are read a batch at a time: 100,000 matches' decisions at once
        # would take gigabytes
        for start in range(0, len(aivat_todo), AIVAT_BATCH):
            batch = aivat_todo[start : start + AIVAT_BATCH]
            batch_jobs = [_aivat_job(store, *item) for item in batch]
            for (mid, sha, _), job, result in zip(batch, batch_jobs, computed(batch_jobs, workers)):
                corrections.append(_aivat_row(mid, sha, job[7], result))
                done += 1
                if len(baselines) + len(corrections) >= FLUSH_ROWS or time.monotonic() - last >= FLUSH_S:
                    _put(store, baselines, corrections)
                    baselines, corrections, last = [], [], time.monotonic()
                if progress is not None:
                    progress(done, total)
    finally:
        if baselines or corrections:  # interrupted or failed: what was computed is kept all the same
            _put(store, baselines, corrections)
    write_summaries(store, targets)
    return total


# -- AIVAT corrections of the matches with builtin players ----------------------------------


def known_seats_query() -> str:
    """(match id, seat, record SHA-256, game, players) of every seat played by the builtin random
    player (its stored sha256 is the builtin's identity, which no bot file can have) in AIVAT's
    games; ``has_aivat`` then keeps the configurations that have it."""
    games = ", ".join(f"'{g}'" for g in AIVAT_ROLLOUTS)
    return (
        "SELECT s.match_id, s.seat, m.record_sha256, m.game, m.players FROM seats s JOIN matches m"
        f" USING (match_id) WHERE s.sha256 = ? AND m.game IN ({games}) ORDER BY m.idx, s.match_id, s.seat"
    )


AIVAT_BATCH = 256  # matches whose records are held in memory at once


def aivat_matches(conn: sqlite3.Connection, wanted: set[str]) -> dict[str, tuple[str, str, int, list[int]]]:
    """Match id -> (record SHA-256, game, players, builtin random seats) of the ``wanted`` stored matches
    that AIVAT corrects: those with builtin random seats in a configuration with AIVAT for them,
    and every match of a configuration with chance terms (Palace's reveals), whoever played."""
    from arena.match.builtin import builtin_sha256

    found: dict[str, tuple[str, str, int, list[int]]] = {}
    for mid, seat, sha, game, players in conn.execute(known_seats_query(), (builtin_sha256("random"),)):
        if mid in wanted and (has_aivat(game, players) or has_chance_aivat(game, players)):
            found.setdefault(mid, (sha, game, players, []))[3].append(seat)
    games = ", ".join(f"'{g}'" for g in AIVAT_CHANCE)
    for mid, sha, game, players in conn.execute(
        f"SELECT match_id, record_sha256, game, players FROM matches WHERE game IN ({games}) ORDER BY idx, match_id"
    ):
        if mid in wanted and has_chance_aivat(game, players):
            found.setdefault(mid, (sha, game, players, []))
    return found


def _aivat_todo(store: Any, schedule: Iterable[Any]) -> list[tuple[str, str, list[int]]]:
    """(match id, record SHA-256, builtin seats) of the schedule's stored matches that AIVAT
    corrects (``aivat_matches``) and that have no valid correction row."""
    wanted = {m.match_id for m in schedule}
    with store.reading() as conn:
        todo = aivat_matches(conn, wanted)
        have = {
            r[0]: r
            for r in conn.execute(
                f"SELECT {', '.join(_AIVAT_COLUMNS)}, digest FROM luck_aivat WHERE version = ?", (AIVAT_VERSION,)
            )
        }
    return [
        (mid, sha, seats)
        for mid, (sha, game, _, seats) in todo.items()
        if _aivat_parse(have.get(mid), sha, AIVAT_ROLLOUTS[game]) is None
    ]


def _aivat_job(store: Any, match_id: str, sha: str, seats: list[int]) -> list[Any]:
    record = store.get_record(match_id)
    return [
        "aivat",
        record["game"],
        record["players"],
        record.get("options") or {},
        int(record["deal_seed"]),
        [[d["seat"], d["action"]] for d in record["decisions"]],
        seats,
        AIVAT_ROLLOUTS[record["game"]],
        int(record["match_seed"]),
    ]


def _aivat_row(match_id: str, record_sha: str, rollouts: int, corrections: list[float] | None) -> tuple[Any, ...]:
    row = (
        match_id,
        record_sha,
        AIVAT_VERSION,
        rollouts,
        json.dumps(None if corrections is None else [round(c, 9) for c in corrections]),
    )
    return (*row, _digest(row))


def _aivat_parse(row: tuple[Any, ...] | None, record_sha: str, rollouts: int) -> list[float] | None:
    """A stored correction ([] for a record that did not replay: no correction), if the row is
    intact, belongs to this very record and was made with today's playouts; else None (missing)."""
    if row is None:
        return None
    if row[3] != rollouts:  # made with another number of playouts: computed again
        return None
    try:
        if row[-1] != _digest(row[:-1]) or row[1] != record_sha or row[2] != AIVAT_VERSION:
            raise ValueError("checksum")
        got = json.loads(row[4])
        return [] if got is None else [float(c) for c in got]
    except (ValueError, TypeError):
        log.warning("AIVAT correction of match %s is damaged; left out", row[0])
        return None


Eta = tuple[list[float], list[list[float]], int]  # per-seat means, covariance of the means, deals


def summarize(rows: list[tuple[float, ...]]) -> Eta | None:
    """The reference deals' per-seat mean of ``h`` (the estimate of ``eta``), the covariance
    matrix of those means, and how many deals; None with fewer than two."""
    k = len(rows)
    if k < 2:
        return None
    n = len(rows[0])
    mean = [sum(r[s] for r in rows) / k for s in range(n)]
    cov = [[sum((r[a] - mean[a]) * (r[b] - mean[b]) for r in rows) / (k - 1) / k for b in range(n)] for a in range(n)]
    return mean, cov, k


def _summary_row(key: tuple[str, int, str, str], eta: Eta) -> tuple[Any, ...]:
    game, players, options, rules = key
    row = (
        game,
        players,
        options,
        rules,
        REFERENCE_VERSION,
        "",
        "summary",
        eta[2],
        0,
        json.dumps({"mean": eta[0], "cov": eta[1]}),
    )
    return (*row, _digest(row))


def _reference_rows(
    conn: sqlite3.Connection, key: tuple[str, int, str, str], count: int
) -> list[tuple[float, ...]] | None:
    """The first ``count`` reference deals of a configuration (ordinals 0..count-1), or None
    if any of them is missing or damaged (then no estimate of eta: the figure is n/a)."""
    out = []
    for row in conn.execute(
        f"SELECT {', '.join(_COLUMNS)}, digest FROM luck_baselines WHERE game = ?"
        " AND players = ? AND options = ? AND rules_version = ? AND reference = ?"
        " AND kind = 'reference' AND ordinal < ? AND rollouts = 1 ORDER BY ordinal",
        (*key, REFERENCE_VERSION, count),
    ):
        h = _parse(row)
        if h is None:
            return None
        out.append(h)
    return out if len(out) == count else None


def _parse(row: tuple[Any, ...]) -> tuple[float, ...] | None:
    values, digest = row[:-1], row[-1]
    game, players, seed, places = values[0], values[1], values[5], values[-1]
    try:
        if digest != _digest(values):
            raise ValueError("checksum")
        h = tuple(float(x) for x in json.loads(places))
        if len(h) != players:
            raise ValueError("seats")
    except (ValueError, TypeError):
        log.warning("luck baseline of %s p%s deal %s is damaged; left out", game, players, seed)
        return None
    return h


def write_summaries(store: Any, targets: dict[tuple[str, int, str, str], int]) -> None:
    """Store each configuration's ``summarize`` of its first ``targets[key]`` reference deals,
    so that a leaderboard reads one row instead of thousands."""
    with store.reading() as conn:
        rows = []
        for key, count in targets.items():
            refs = _reference_rows(conn, key, count)
            eta = summarize(refs) if refs is not None else None
            if eta is not None:
                rows.append(_summary_row(key, eta))
    if rows:
        _put(store, rows)


@dataclass
class Baselines:
    """What the leaderboards read: per stored match, its deal's ``h`` and configuration key;
    per configuration, the estimate of ``eta`` (``summarize``)."""

    by_match: dict[str, tuple[tuple[str, int, str, str], tuple[float, ...]]]
    eta: dict[tuple[str, int, str, str], Eta]
    rollouts: int
    # the matches AIVAT corrects (``aivat_matches``), and the stored corrections
    # (per seat; [] for a record that does not replay: no correction)
    needs_aivat: frozenset[str] = frozenset()
    aivat: dict[str, list[float]] = dataclasses.field(default_factory=dict)
    # of ``needs_aivat``: the matches whose builtin players' draws are corrected, and those
    # whose face-down reveals are (a match may be both)
    aivat_draws: int = 0
    aivat_reveals: int = 0


def load(store: Any, rows: Iterable[Any], rollouts: int = DEFAULT_ROLLOUTS) -> Baselines | None:
    """The stored baselines for the result ``rows`` (``ResultRow``s of the current schedule),
    or None if none were computed for the store (``arena.luck.tables.computed``: the
    leaderboards then show the adjusted figure as unavailable). A table without rows is
    not None: configurations whose beta is 0 need none.

    Only what a fresh run of the same tournament file would use is read, so the leaderboards
    do not depend on the folder's history: deal rows with ``rollouts`` games per seat (the
    tournament's ``luck_rollouts``), and for each configuration the first
    ``reference_target(game, deals)`` reference deals, ``deals`` being the configuration's deals
    among ``rows``. Rows that fail their checksum or do not parse are left out (their matches,
    or their configuration, show as unavailable)."""
    if rollouts < 1:
        return None
    ids = {r.match_id for r in rows}
    with store.reading() as conn:
        if not tables.computed(conn):
            return None
        deal_rows = conn.execute(
            f"SELECT {', '.join(_COLUMNS)}, digest FROM luck_baselines WHERE reference = ? AND kind = 'deal'"
            " AND rollouts = ?",
            (REFERENCE_VERSION, rollouts),
        ).fetchall()
        matches = conn.execute("SELECT match_id, game, players, deal_seed, rules_version FROM matches").fetchall()
        deals: dict[tuple[str, int, str, str], list[tuple[tuple[str, int, str, str], tuple[float, ...]]]] = {}
        for row in deal_rows:
            h = _parse(row)
            if h is not None:
                game, players, options, rules, _, seed = row[:6]
                deals.setdefault((game, players, seed, rules), []).append(((game, players, options, rules), h))
        by_match = {}
        seeds: dict[tuple[str, int, str, str], set[str]] = {}
        for mid, game, players, seed, rules in matches:
            found = deals.get((game, players, seed, rules))
            if mid in ids and found is not None and len(found) == 1:  # two option sets for one seed: left out
                by_match[mid] = found[0]
                seeds.setdefault(found[0][0], set()).add(seed)
        summaries = {
            tuple(r[:4]): r
            for r in conn.execute(
                f"SELECT {', '.join(_COLUMNS)}, digest FROM luck_baselines WHERE reference = ? AND kind = 'summary'",
                (REFERENCE_VERSION,),
            )
        }
        eta: dict[tuple[str, int, str, str], Eta] = {}
        for key, used in seeds.items():
            count = reference_target(key[0], len(used))
            got = _summary(summaries.get(key), count, key[1])
            if got is None:  # none stored for this count, or damaged: from the rows themselves
                refs = _reference_rows(conn, key, count)
                got = summarize(refs) if refs is not None else None
            if got is not None:
                eta[key] = got
        needs, aivat, draws, reveals = _load_aivat(conn, ids)
    return Baselines(by_match, eta, rollouts, needs, aivat, draws, reveals)


def _load_aivat(conn: sqlite3.Connection, ids: set[str]) -> tuple[frozenset[str], dict[str, list[float]], int, int]:
    matches = aivat_matches(conn, ids)
    shas = {mid: (sha, game) for mid, (sha, game, _, _) in matches.items()}
    draws = sum(1 for _, game, players, seats in matches.values() if seats and has_aivat(game, players))
    reveals = sum(1 for _, game, players, _ in matches.values() if has_chance_aivat(game, players))
    out: dict[str, list[float]] = {}
    if shas and tables.exists(conn, "luck_aivat"):
        for row in conn.execute(
            f"SELECT {', '.join(_AIVAT_COLUMNS)}, digest FROM luck_aivat WHERE version = ?", (AIVAT_VERSION,)
        ):
            found = shas.get(row[0])
            got = _aivat_parse(row, found[0], AIVAT_ROLLOUTS[found[1]]) if found is not None else None
            if got is not None:
                out[row[0]] = got
    return frozenset(shas), out, draws, reveals


def _summary(row: tuple[Any, ...] | None, count: int, players: int) -> Eta | None:
    """A stored summary, if it is intact and covers exactly the first ``count`` reference deals."""
    if row is None or row[7] != count:
        return None
    try:
        if row[-1] != _digest(row[:-1]):
            raise ValueError("checksum")
        got = json.loads(row[-2])
        mean = [float(x) for x in got["mean"]]
        cov = [[float(x) for x in r] for r in got["cov"]]
        if len(mean) != players or len(cov) != players or any(len(r) != players for r in cov):
            raise ValueError("seats")
    except (ValueError, TypeError, KeyError, AttributeError):
        log.warning("luck summary of %s p%s is damaged; recomputed from its reference deals", row[0], row[1])
        return None
    return mean, cov, count
