"""Continuous matchmaking: the next deal set, and the process that plays them without end.

A *deal set* is one deal played by one group in every cyclic rotation of its seats
(arena/tournament/schedule.py's duplicate format), so each bot holds every hand once
and the luck of the deal cancels as in `arena run`. Deals come from the data folder's
secret; each set gets a deal number of its own (its id), so no deal is ever played
twice and a set's replays can be shown once all its rotations are stored.

Where the next set goes (Halite's matchmaker, with TrueSkill's sigma): the *seed* bot is
a new one (fewer than ``new_bot_matches`` matches, scheduled ones included) if any, else
the bot whose rating is least certain (highest sigma), fewest matches breaking ties; the
game and seat count are those it has played least; its opponents are the bots nearest
it in mu, with a random jitter so that every pairing keeps happening. But a bot in fewer
than half the mean number of the recent sets (``RecentSets``) seeds the next one, the
rarest first: matches in which every seat faulted are not rated, so bots that always fault
kept their high sigma and, nearest each other in mu, played only each other while the
honest bots waited for good.

The matchmaker runs in a process of its own, forked by the server before it starts
serving, feeding arena/tournament/runner.py's local worker pool through ``_Pool.run``'s
``top_up`` hook. Workers store each finished match once (the store's per-match
idempotence), so after a kill -9 the restarted matchmaker plays exactly the matches of
unfinished sets that are missing. When the roster changes (an upload passed its
check, a bot was retired) the pool drains and starts again with the new roster. The ratings
the matchmaking needs, and the server shows, are computed in that loop (no thread: the pool
forks its workers), reading only the matches stored since the last pass (``PlayOrder``) and
resting three times a pass's length after it, so a large store costs the workers little.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from arena.errors import ArenaError
from arena.serve.db import INDEX_STRIDE, LadderDB  # noqa: F401 - INDEX_STRIDE: side.py reads it here

if TYPE_CHECKING:
    import sqlite3

    from arena.records import MatchSpec
    from arena.report.ratings import History, RatingReport
    from arena.tournament.config import Tournament
    from arena.tournament.roster import BotEntry
    from arena.tournament.store import ResultRow, ResultStore

log = logging.getLogger("arena.serve")

ROSTER_POLL_S = 1.0
MATCHMAKER_REFUSED = 2  # its exit code after an ArenaError, whose line it sent the server
RATINGS_EVERY_S = 2.0  # the leaderboard's freshness while matches arrive
RATINGS_REST = 3.0  # after a pass of d seconds, none for RATINGS_REST * d: the loop rates a quarter of the time at most


@dataclasses.dataclass(frozen=True)
class Standing:
    mu: float
    sigma: float
    matches: int


def choose_deal_set(
    candidates: Sequence[tuple[int, int, str]],
    playing: Sequence[str],
    ratings: dict[str, dict[str, Standing]],
    scheduled: Counter[str | tuple[str, str]],
    rng: random.Random,
    new_bot_matches: int,
    default: Standing = Standing(25.0, 25.0 / 3, 0),
    recent: Counter[str] | None = None,
) -> tuple[int, int, list[str]] | None:
    """(game entry index, seat count, bots in seat order) of the next deal set, or None.

    ``candidates``: (entry index, seat count, scope = game id); ``ratings[scope][bot]``;
    ``scheduled[(bot, scope)]`` and ``scheduled[bot]``: matches given to a bot so far,
    played or not (so a new bot is not handed every set while its first ones play);
    ``recent[bot]``: how many of the last sets it was in (``RecentSets``).
    """
    usable = [c for c in candidates if len(playing) >= c[1]]
    if not usable:
        return None
    recent = recent or Counter()
    half_mean = sum(recent[b] for b in playing) / len(playing) / 2
    starved = [b for b in playing if recent[b] < half_mean]

    def rating(bot: str, scope: str) -> Standing:
        return ratings.get(scope, {}).get(bot, default)

    def seed_key(bot: str) -> tuple[bool, float, int, float]:
        n = scheduled[bot]
        return (n >= new_bot_matches, -rating(bot, "overall").sigma if n >= new_bot_matches else n, n, rng.random())

    if starved and all(scheduled[b] >= new_bot_matches for b in playing):
        seed = min(starved, key=lambda b: (recent[b], rng.random()))
    else:
        seed = min(playing, key=seed_key)
    entry, players, scope = min(usable, key=lambda c: (scheduled[(seed, c[2])], rng.random()))
    mu = rating(seed, scope).mu
    others = sorted(
        (b for b in playing if b != seed), key=lambda b: abs(rating(b, scope).mu - mu) + rng.uniform(0, 3.0)
    )
    group = [seed, *others[: players - 1]]
    rng.shuffle(group)
    return entry, players, group


RECENT_SETS = 4  # times the bots playing: the window of ``RecentSets``


class RecentSets:
    """How many of the last sets dealt (``RECENT_SETS`` times the bots playing) each bot was in."""

    def __init__(self, bots: int) -> None:
        from collections import deque

        self.sets: deque[list[str]] = deque(maxlen=max(1, RECENT_SETS * bots))
        self.seats: Counter[str] = Counter()

    def add(self, group: Sequence[str]) -> None:
        if len(self.sets) == self.sets.maxlen:
            self.seats.subtract(self.sets[0])
        self.sets.append(list(group))
        self.seats.update(group)


def deal_set_matches(
    tournament: Tournament,
    set_id: int,
    entry: int,
    players: int,
    bots: Sequence[str],
    sha: dict[str, str],
    secret: str,
) -> list[MatchSpec]:
    """The matches of one deal set: deal ``set_id`` in every rotation of ``bots``' seats."""
    from arena.records import MatchSpec
    from arena.tournament.schedule import deal_key, deal_seed, match_id, match_key
    from games.rng import derive_seed

    g = tournament.games[entry]
    options = g.options_for(players)
    key = deal_key(tournament, secret)
    dseed = deal_seed(key, g.id, players, options, set_id)
    out = []
    for r in range(players):
        order = tuple(bots[(s + r) % players] for s in range(players))
        content = match_key(g.key, g.id, players, options, dseed, [(b, sha[b]) for b in order])
        mid = match_id(g.key, players, set_id, r, content)
        out.append(
            MatchSpec(
                match_id=mid,
                index=set_id * INDEX_STRIDE + r,
                game=g.id,
                players=players,
                options=dict(options),
                group=0,
                deal=set_id,
                rotation=r,
                deal_seed=dseed,
                match_seed=derive_seed(key, mid),
                bots=order,
                key=content,
            )
        )
    return out


def candidates_of(tournament: Tournament) -> list[tuple[int, int, str]]:
    return [(i, p, g.id) for i, g in enumerate(tournament.games) for p in g.players]


def rate_in_play_order(store: ResultStore, cache: Path | None = None) -> RatingReport:
    """The ``RatingReport`` of every stored match, rated in the order they were stored.

    A ladder never ends, so its ratings are online: each match is rated after those stored
    before it (SQLite's rowid order: append-only). Numbered so, the stored matches are always
    a complete prefix, and ``cache`` (arena/report/rating_cache.py, sealed with the key of the
    data folder's secret) lets each call rate only the matches stored since the last one.
    """
    return rate_rows(store, rows_in_play_order(store), cache)


def rows_in_play_order(store: ResultStore) -> list[ResultRow]:
    """Every stored match's ``ResultRow``, its index its place in the store's rowid order."""
    import dataclasses as dc

    with store.reading() as conn:
        order = {mid: i for i, (mid,) in enumerate(conn.execute("SELECT match_id FROM matches ORDER BY rowid"))}
    return [dc.replace(r, index=order[r.match_id]) for r in store.iter_results(scheduled=False) if r.match_id in order]


class PlayOrder:
    """``rows_in_play_order``, kept between ratings passes: a pass reads only the matches stored
    since the one before (at 100,000 stored matches, reading them all took 3.7 s of a 4.9 s pass).
    If the store lost matches meanwhile (fewer up to the last one read than were read), it reads
    them all again. A row changed after it was read is caught when the store is next read whole
    (the server's start)."""

    def __init__(self) -> None:
        self.rows: list[ResultRow] = []
        self.last = 0  # the rowid of the last match read

    def update(self, store: ResultStore) -> list[ResultRow]:
        with store.reading() as conn:
            count = conn.execute("SELECT COUNT(*) FROM matches WHERE rowid <= ?", (self.last,)).fetchone()[0]
        if count != len(self.rows):
            self.rows, self.last = [], 0
        for rowid, row in store.results_after(self.last):
            self.rows.append(dataclasses.replace(row, index=len(self.rows)))
            self.last = rowid
        return list(self.rows)


def rate_rows(store: ResultStore, rows: list[ResultRow], cache: Path | None = None) -> RatingReport:
    from arena.report.rating_cache import key_from_secret
    from arena.report.ratings import compute_ratings

    key = key_from_secret(store.deal_secret()) if cache is not None else None
    return compute_ratings(rows, cache=cache, cache_key=key)


STANDINGS_FILE = "standings.json"  # the matchmaker's ratings, read by the server (never computed per request)


def standings_of(report: RatingReport) -> dict[str, dict[str, Standing]]:
    """{scope: {bot: Standing}} of a ``RatingReport`` (scopes: overall and each game)."""
    return {s.scope: {b.name: Standing(b.mu, b.sigma, b.matches) for b in s.standings} for s in report.scopes}


def standings(store: ResultStore, cache: Path | None = None) -> dict[str, dict[str, Standing]]:
    """{scope: {bot: Standing}} from every stored match."""
    return standings_of(rate_in_play_order(store, cache))


class StandingsDoc(TypedDict):
    """``standings.json``: what the matchmaker writes and the server reads (``report_doc``)."""

    stored: int
    matches: int
    luck_matches: int
    # scope -> bot -> [mu, sigma, matches, mean place, faults, luck-adjusted place or None]
    scopes: dict[str, dict[str, list[Any]]]
    history: dict[str, list[list[float]]]  # bot -> [match number, mu, sigma] (overall)


def report_doc(report: RatingReport, stored: int, luck_matches: int = 0) -> StandingsDoc:
    """What the server needs of a ``RatingReport``: per scope and bot mu, sigma, matches,
    mean place, faults, luck-adjusted mean place (None: unavailable); ``stored``: the highest
    rowid rated (the server's freshness mark); ``luck_matches``: how many of the stored
    matches the adjusted place covers (luck.py: its baselines follow a few seconds behind)."""
    return {
        "stored": stored,
        "matches": next((s.matches for s in report.scopes if s.scope == "overall"), 0),
        "luck_matches": luck_matches,
        "scopes": {
            s.scope: {
                b.name: [b.mu, b.sigma, b.matches, b.mean_place, b.faults_total, b.adjusted_place] for b in s.standings
            }
            for s in report.scopes
        },
        "history": {b.name: _thinned(b.history) for s in report.scopes if s.scope == "overall" for b in s.standings},
    }


HISTORY_POINTS = 120  # a bot page's rating history plot: at most this many points


def _thinned(history: History) -> list[list[float]]:
    """At most ``HISTORY_POINTS`` (match number, mu, sigma) of a rating history, evenly spread,
    the last one always kept (the plot ends at the current rating)."""
    n = len(history)
    step = max(1, -(-n // HISTORY_POINTS))
    keep = list(range(0, n, step))
    if n and keep[-1] != n - 1:
        keep.append(n - 1)
    return [[int(history[i][0]), round(float(history[i][1]), 3), round(float(history[i][2]), 3)] for i in keep]


def write_standings(data: Path, doc: StandingsDoc) -> None:
    """``<data>/standings.json``, replaced atomically (a reader sees the old file or the new one)."""
    import json

    path = Path(data) / STANDINGS_FILE
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc, separators=(",", ":")))
    os.replace(tmp, path)


def first_free_set(store: ResultStore) -> int:
    """The first deal set id whose matches the results store holds none of (the ids after it too)."""
    with store.reading() as conn:
        top = conn.execute("SELECT MAX(idx) FROM matches").fetchone()[0]
    return 1 if top is None else int(top) // INDEX_STRIDE + 1


def last_stored(store: ResultStore) -> int:
    return store.last_rowid()


class _Quiet:
    """The pool's progress display: the ladder's pages are its display."""

    def __init__(self, *_: object) -> None:
        self.done = 0

    def update(self, match_id: str, faults: list[tuple[str, str]], reasons: tuple[str, ...] = ()) -> None:
        self.done += 1

    def close(self) -> None:
        pass


class Matchmaker:
    """Plays deal sets without end on the local worker pool or Ray (call ``run`` in its own process)."""

    def __init__(
        self,
        ladder: Any,
        data: Path,
        sandbox: Any,
        workers: int | None = None,
        executor: str = "local",
        ray_address: str | None = None,
    ) -> None:
        self.ladder = ladder
        self.t = ladder.tournament
        self.data = Path(data)
        self.sandbox = sandbox
        self.workers = workers or self.t.worker_count
        self.executor = executor
        self.ray_address = ray_address
        self.rng = random.Random(os.getpid() ^ time.time_ns())
        self.last_set = 0.0
        self.rated_at = -1  # the highest rowid in the standings file
        self.play_order = PlayOrder()  # the stored rows, read once each
        self.luck_at = -1  # the highest rowid its luck-adjusted places cover (luck.py)
        self.dropped: set[int] = set()  # deal sets the ladder file no longer deals (said once)
        self.luck: Any = None  # the luck process (luck.py), started by run()

    # ---- the roster ------------------------------------------------------------

    def roster(self, db: LadderDB) -> tuple[list[str], dict[str, BotEntry]]:
        """(names of the versions that get new sets, entries of every version that may still play)."""
        playing = [db.version_name(r) for r in db.playing_versions()]
        entries = {}
        for r in db.all_versions():
            if r["status"] != "ok":
                continue
            entry = version_entry(db.version_name(r), r)
            if entry is None:
                continue
            entries[entry.name] = entry
        return [p for p in playing if p in entries], entries

    def unfinished(self, db: LadderDB, entries: dict[str, BotEntry], secret: str, store: Any) -> list[MatchSpec]:
        """Matches of stored deal sets not yet in the store (after a restart: those in flight).

        A set whose every rotation is stored is done, whatever the ladder file says now; a set
        the file can no longer deal as it began (its game entry removed, or another game or seat
        count at that place) is left unfinished, said once in run.log. Recomputing every set's
        match ids from the file instead crashed the matchmaker at each start once a game was
        removed, and queued every finished set of a game again once its options changed."""
        import json

        done = store.completed_ids()
        with store.reading() as conn:  # stored rotations per set (its id is the index's block), played by the harness
            stored = {
                sid: (n, game)
                for sid, n, game in conn.execute(
                    "SELECT idx / ?, COUNT(*), MIN(game) FROM matches WHERE has_sandbox_fault = 0 GROUP BY idx / ?",
                    (INDEX_STRIDE, INDEX_STRIDE),
                )
            }
        out = []
        for row in db.deal_sets_since(0):
            n, game = stored.get(row["id"], (0, None))
            if n >= row["players"]:
                continue
            g = self.t.games[row["entry"]] if row["entry"] < len(self.t.games) else None
            bots = json.loads(row["bots"])
            if not all(b in entries for b in bots):
                continue  # a version whose file is gone: its set cannot be finished
            sha = {b: entries[b].sha256 for b in bots}
            ms = []
            if g is not None and row["players"] in g.players and game in (None, g.id):
                ms = deal_set_matches(self.t, row["id"], row["entry"], row["players"], bots, sha, secret)
            if not ms or (n and not any(m.match_id in done for m in ms)):  # dealt otherwise now (options)
                if row["id"] not in self.dropped:
                    self.dropped.add(row["id"])
                    log.info("deal set %d (%s) left unfinished: the ladder file no longer deals it", row["id"], game)
                continue
            out += [m for m in ms if m.match_id not in done]
        return out

    # ---- ratings for the server -------------------------------------------------

    def publish_standings(self, store: ResultStore) -> dict[str, dict[str, Standing]] | None:
        """Rate the stored matches if any arrived since the last time, write ``standings.json``
        for the server, and return them (None: nothing new)."""
        from arena.serve.luck import adjusted, ladder_rollouts, read_through

        last = last_stored(store)
        through = min(read_through(self.data), last)
        if (last, through) == (self.rated_at, self.luck_at):
            return None
        rows = self.play_order.update(store)
        report = rate_rows(store, rows, self.data / "ratings-cache-matchmaker.json.z")
        report, luck_matches = adjusted(report, rows, store, ladder_rollouts(self.t), through)
        write_standings(self.data, report_doc(report, last, luck_matches))
        self.rated_at, self.luck_at = last, through
        return standings_of(report)

    # ---- the loop --------------------------------------------------------------

    def run(self, should_stop: Callable[[], bool] = lambda: False, started: Callable[[], None] = lambda: None) -> None:
        """Play until ``should_stop()``; ``started()`` once it can play (Ray reached, with ``ray``)."""
        owns_ray = self._start_ray() if self.executor == "ray" else False
        try:
            started()
            self._run(should_stop)
        finally:
            if owns_ray:  # a forked process runs no atexit: Ray's local processes would be left behind
                import ray

                ray.shutdown()

    def _run(self, should_stop: Callable[[], bool]) -> None:
        from arena.tournament.runner import limits_from, time_control_from
        from arena.tournament.store import ResultStore

        db = LadderDB(self.data)
        store = ResultStore(self.data)
        secret = store.deal_secret()
        self.publish_standings(store)  # the server shows the stored matches' ratings from the start
        ctx_base = {
            "results": self.data,
            "sandbox": self.sandbox,
            "limits": limits_from(self.t),
            "tc": time_control_from(self.t),
            "fresh": bool(self.t.fresh_processes),
            "name": self.t.name,
            "warm_bots": self.t.warm_bots,
            "parent_pid": os.getpid(),
            "deal_memory": False,  # fair play: no bot process plays a deal twice (load_ladder refuses the opt-out)
            "display": _Quiet,
        }
        (self.data / "logs").mkdir(exist_ok=True)
        from arena.serve.luck import start_luck

        self.luck = start_luck(self.t, self.data)  # the luck-adjusted place's baselines, off the workers' CPU
        try:
            self._loop(db, store, secret, ctx_base, should_stop)
        finally:
            if self.luck is not None:
                self.luck.kill()
                self.luck.join()

    def _loop(
        self, db: LadderDB, store: Any, secret: str, ctx_base: dict[str, Any], should_stop: Callable[[], bool]
    ) -> None:
        from arena.serve.luck import kept_alive
        from arena.tournament.runner import RunSummary, _config_json, _Pool

        while not should_stop():
            playing, entries = self.roster(db)
            store.init_tournament(self.t.name, _config_json(self.t), [e.to_json() for e in entries.values()])
            pending = self.unfinished(db, entries, secret, store)
            if not pending and not self._can_deal(playing):
                reap_orphans()
                self.luck = kept_alive(self.luck, self.t, self.data)
                time.sleep(ROSTER_POLL_S)
                continue
            log.info("matchmaker: %d bots playing, %d matches of unfinished deal sets", len(playing), len(pending))
            top_up = self._top_up(db, store, secret, playing, entries, should_stop)
            ctx = dict(ctx_base, entries=entries)
            if self.executor == "ray":
                self._play_on_ray(pending, ctx, top_up)
            else:
                summary = RunSummary(results=self.data, scheduled=0, already_done=0)
                _Pool(ctx, summary, _Quiet()).run(pending, self.workers, top_up)
            self.publish_standings(store)  # the drained pool's last matches

    def _start_ray(self) -> bool:
        """One Ray session for the matchmaker's life (each roster's actors start in it); a caller's
        (a test's) instance is used as it is. True: started here, to shut down at the end."""
        from arena.tournament.ray_executor import connect

        return connect(self.ray_address)

    def _play_on_ray(self, pending: list[Any], ctx: dict[str, Any], top_up: Callable[[Any], None]) -> None:
        """The local pool's supervisor, over Ray actors: the same top-up hook, each record stored here."""
        from collections import deque

        from arena.tournament.ray_executor import ray_backend
        from arena.tournament.runner import RunSummary, _Pool, store_in_driver

        queue = deque(pending)
        top_up(queue)  # as many actors as the first batch needs, not one per CPU for a handful of matches
        if not queue:
            time.sleep(ROSTER_POLL_S)
            return
        summary = RunSummary(results=self.data, scheduled=0, already_done=0)
        backend = ray_backend(ctx, sandbox_level=self.sandbox.level, store=store_in_driver(ctx, summary))
        _Pool(ctx, summary, _Quiet(), backend).run(list(queue), backend.size(self.workers, len(queue)), top_up)

    def _can_deal(self, playing: list[str]) -> bool:
        return any(len(playing) >= p for _, p, _ in candidates_of(self.t))

    def _top_up(
        self,
        db: LadderDB,
        store: Any,
        secret: str,
        playing: list[str],
        entries: dict[str, Any],
        should_stop: Callable[[], bool],
    ) -> Callable[[Any], None]:
        import json

        from arena.serve.luck import kept_alive
        from arena.tournament.runner import _Pool

        scheduled: Counter = Counter()
        recent = RecentSets(len(playing))
        games = {i: g.id for i, g in enumerate(self.t.games)}
        for row in db.deal_sets_since(0):
            group = json.loads(row["bots"])
            recent.add(group)
            for b in group:
                scheduled[b] += row["players"]
                scheduled[(b, games.get(row["entry"], "?"))] += row["players"]
        state: dict[str, Any] = {
            "polled": time.monotonic(),
            "rated": -RATINGS_EVERY_S,
            "rest_until": 0.0,
            "ratings": {},
            "closed": False,
        }
        candidates = candidates_of(self.t)
        first_set = first_free_set(store)
        if self.rated_at >= 0 and (self.data / STANDINGS_FILE).is_file():
            state["ratings"] = standings_of_file(self.data)

        def top_up(queue: Any) -> None:
            now = time.monotonic()
            if state["closed"]:
                return
            if now - state["rated"] >= RATINGS_EVERY_S and now >= state["rest_until"]:
                # rated here, off the server's process: its pages read the file this writes. A
                # pass of d seconds is followed by 3d without one, so on a large store the
                # workers' next matches wait for ratings a quarter of the time at most
                state["rated"] = now
                fresh = self.publish_standings(store)
                state["rest_until"] = time.monotonic() + RATINGS_REST * (time.monotonic() - now)
                if fresh is not None:
                    state["ratings"] = fresh
            if now - state["polled"] >= ROSTER_POLL_S:
                state["polled"] = now
                reap_orphans()
                self.luck = kept_alive(self.luck, self.t, self.data)
                if should_stop() or self.roster(db)[0] != playing:
                    state["closed"] = True  # the pool drains; run() starts again with the new roster
                    return
            rate = self.ladder.settings.match_rate
            # enough queued that every worker also holds its next match (the pool's prefetch):
            # a worker never waits for the matchmaker between two matches
            while len(queue) <= self.workers * _Pool.PREFETCH:
                if rate and now - self.last_set < 60.0 / rate:
                    return
                choice = choose_deal_set(
                    candidates,
                    playing,
                    state["ratings"],
                    scheduled,
                    self.rng,
                    self.ladder.settings.new_bot_matches,
                    recent=recent.seats,
                )
                if choice is None:
                    return
                entry, players, bots = choice
                set_id = db.add_deal_set(entry, players, bots, first_set)
                recent.add(bots)
                for b in bots:
                    scheduled[b] += players
                    scheduled[(b, games[entry])] += players
                queue.extend(
                    deal_set_matches(self.t, set_id, entry, players, bots, {b: entries[b].sha256 for b in bots}, secret)
                )
                self.last_set = now

        return top_up


def reap_orphans() -> int:
    """Reap the zombies re-parented to this process, the matchmaker (a child subreaper): the
    sandbox processes of a worker that died (the OOM killer, kill -9), which their sandbox kills
    with it. They went to the server, which never reaps them: 116 zombies after one worker's
    death, for the server's life. The processes multiprocessing started are left to it; the
    dead worker's scratch folders are removed. Returns how many were reaped."""
    import multiprocessing.process as mp_process
    from multiprocessing import resource_tracker

    from arena.match.sandbox import procs

    ours = {p.pid for p in getattr(mp_process, "_children", ())}
    ours.add(getattr(resource_tracker._resource_tracker, "_pid", None))
    reaped = 0
    for pid in procs.children(os.getpid()):
        if pid in ours or procs._state(pid) != b"Z":
            continue
        try:
            reaped += os.waitpid(pid, os.WNOHANG)[0] == pid
        except ChildProcessError:
            pass
    if reaped:  # a worker died: its bots' scratch folders would stay in the temporary folder until the next start
        from arena.match.sandbox.launch import sweep_stale_scratch

        sweep_stale_scratch()
    return reaped


def standings_of_file(data: Path) -> dict[str, dict[str, Standing]]:
    """The standings of ``<data>/standings.json`` ({} if it cannot be read)."""
    import json

    try:
        doc = json.loads((Path(data) / STANDINGS_FILE).read_text())
        return {
            scope: {b: Standing(v[0], v[1], v[2]) for b, v in bots.items()} for scope, bots in doc["scopes"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return {}


BUILTIN_PREFIX = "builtin:"  # a version's path for a player of arena/match/builtin.py


def version_entry(name: str, row: sqlite3.Row) -> BotEntry | None:
    """The roster entry that plays a stored version, or None if its code is gone."""
    from arena.tournament.roster import BotEntry, builtin_entry

    path = str(row["path"])
    if row["kind"] == "builtin" and path.startswith(BUILTIN_PREFIX):
        return builtin_entry(path[len(BUILTIN_PREFIX) :], name)
    p = Path(path)
    if not (p.is_dir() if row["kind"] == "folder" else p.is_file()):
        return None
    return BotEntry(name=name, path=p, sha256=row["sha256"], kind=row["kind"])


def matchmaker_main(
    ladder: Any,
    data: Path,
    sandbox: Any,
    parent_pid: int,
    workers: int | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    news: Any = None,
) -> None:
    """The matchmaker process: dies with the server (a kill -9 of it too), logs to run.log. It tells
    the server through ``news`` (a pipe's end) that it plays, or the one line that stopped it."""
    import signal

    from arena.interrupts import take_held, this_process_only
    from arena.tournament.runner import _die_with_parent, setup_logging

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent_pid)
    from arena.match.sandbox import become_subreaper

    become_subreaper()  # a dead worker's bots come here, not to the server, which never reaps them (reap_orphans)
    if ladder.settings.workers_nice:
        os.nice(ladder.settings.workers_nice)  # inherited by the workers and their bots
    stop = {"now": False}

    def on_term(*_: Any) -> None:
        raise KeyboardInterrupt  # the pool kills its workers (and their bots) on the way out

    signal.signal(signal.SIGTERM, this_process_only(on_term))
    take_held()  # started with them held (start_matchmaker)
    setup_logging(Path(data), sys.stderr)

    def tell(*message: Any) -> None:
        if news is not None:
            try:
                news.send(message)
            except OSError:  # the server is gone
                pass

    try:
        Matchmaker(ladder, data, sandbox, workers, executor, ray_address).run(
            lambda: stop["now"], started=lambda: tell("ready")
        )
    except KeyboardInterrupt:
        pass
    except ArenaError as exc:  # the server says it as its own one line; starting again will not help
        log.info("the matchmaker stopped: %s", exc)
        tell("error", str(exc), getattr(exc, "exit_code", 2))
        os._exit(MATCHMAKER_REFUSED)
    except Exception as exc:  # noqa: BLE001 - the server must see it stopped: logged, then a non-zero exit
        from arena.errors import MachineTrouble
        from arena.tournament.failure import disk_full

        full = disk_full(exc, Path(data))
        log.exception("the matchmaker failed%s", f": {full}" if full else "")
        if full:  # run.log cannot hold the reason then (its traceback was cut short): the server says it
            tell("error", full, MachineTrouble.exit_code)
        os._exit(3)


def start_matchmaker(
    ladder: Any,
    data: Path,
    sandbox: Any,
    workers: int | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> Any:
    """Fork the matchmaker process (before the server starts any thread) and return it; its
    ``news`` is the pipe's end it tells through (``matchmaker_main``)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    news, tell = ctx.Pipe(duplex=False)
    proc = ctx.Process(
        target=matchmaker_main,
        name="matchmaker",
        args=(ladder, Path(data), sandbox, os.getpid(), workers, executor, ray_address, tell),
        daemon=False,
    )
    from arena.interrupts import held_while_starting

    with held_while_starting():
        proc.start()
    tell.close()  # the child's: its end closes when it dies
    proc.news = news
    return proc
