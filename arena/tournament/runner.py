"""`arena run`: play a whole tournament on a pool of worker processes.

The parent schedules, the workers play. Each worker keeps its bots warm across
matches and writes every finished match to the SQLite store itself, in one
transaction, so a kill -9 of any process loses at most the matches in flight.
Resuming is the same command: matches already stored are skipped, and ratings
are recomputed from the store in schedule order, so the leaderboard does not
depend on the number of workers or on interruptions.
"""

from __future__ import annotations

import io
import logging
import multiprocessing as mp
import os
import queue
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from arena.errors import ArenaError

log = logging.getLogger("arena.run")


@dataclass
class RunSummary:
    results: Path
    scheduled: int
    already_done: int
    played: int = 0
    faults: int = 0
    interrupted: bool = False
    sandbox_level: str = ""
    reports: dict[str, Path] = field(default_factory=dict)
    leaderboard: str = ""


def limits_from(tournament: Any) -> Any:
    from arena.match.sandbox import Limits

    lim = getattr(tournament, "limits", None)
    if lim is None:
        return Limits()
    data = lim.model_dump() if hasattr(lim, "model_dump") else dict(lim)
    return Limits(**{k: v for k, v in data.items() if v is not None})


def time_control_from(tournament: Any) -> Any:
    from arena.match.timecontrol import TimeControl

    tc = tournament.time_control
    data = tc.model_dump() if hasattr(tc, "model_dump") else dict(tc)
    return TimeControl(**data)


def worker_count(tournament: Any, override: int | None) -> int:
    return override or tournament.worker_count


# ---- the worker process ---------------------------------------------------------


def _die_with_parent(parent_pid: int) -> None:
    """A worker must not outlive a kill -9 of the arena (it would keep playing)."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def _worker_main(wid: int, tasks: Any, done: Any, stop: Any, ctx: dict[str, Any]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides how to stop
    from arena.tournament.match_player import MatchPlayer
    from arena.match.sandbox import become_subreaper
    from arena.tournament.store import ResultStore

    _die_with_parent(ctx["parent_pid"])
    become_subreaper()
    store = ResultStore(ctx["results"])
    log_dir = ctx["results"] / "logs" / f"worker-{wid}"
    log_dir.mkdir(parents=True, exist_ok=True)
    player = MatchPlayer(ctx["entries"], sandbox=ctx["sandbox"], limits=ctx["limits"], time_control=ctx["tc"],
                         log_dir=log_dir, fresh=ctx["fresh"], tournament=ctx["name"],
                         warm_bots=ctx.get("warm_bots", 32))

    signal.signal(signal.SIGTERM, lambda *_: (player.close(), os._exit(0)))
    try:
        while not stop.is_set():
            try:
                match = tasks.get(timeout=0.2)
            except queue.Empty:
                continue
            if match is None:
                break
            record = player.play(match)
            stored = store.record_match(record)
            faults = _log_match(record, stored)
            done.put((match.match_id, faults, stored))
    finally:
        player.close()
        done.put(("__worker_exit__", wid, None))


def _log_match(record: dict[str, Any], stored: bool) -> list[tuple[str, str]]:
    """Log one finished match (its faults as warnings, to run.log only: the console's
    display summarises them per bot and kind); returns its faults as (bot, kind)."""
    faults = [(s, f["kind"]) for s, f in enumerate(record["faults"]) if f is not None]
    for seat, kind in faults:
        log.warning("match %s: seat %d (%s) faulted: %s", record["match_id"], seat,
                    record["seats"][seat]["bot"], kind, extra={MATCH_FAULT: True})
    log.info("match %s done: places %s%s", record["match_id"], record["result"]["places"],
             "" if stored else " (already stored)")
    return [(record["seats"][seat]["bot"], kind) for seat, kind in faults]


MATCH_FAULT = "arena_match_fault"  # marks a per-match fault record, kept out of the console


# ---- the parent -----------------------------------------------------------------


class Progress:
    """Plain progress lines (for pipes and CI: no control codes): matches done, rate,
    ETA and faults, every few seconds; each (bot, fault kind) is named once when it
    first happens and counted after that. The terminal's live display (arena/cli/live.py)
    has the same interface."""

    every_s = 5.0

    def __init__(self, total: int, out: TextIO) -> None:
        self.total = total
        self.out = out
        self.done = 0
        self.faults: dict[tuple[str, str], int] = {}
        self.t0 = time.monotonic()
        self._last_print = 0.0

    def update(self, match_id: str, faults: list[tuple[str, str]]) -> None:
        self.done += 1
        for key in faults:
            if key not in self.faults:
                self.out.write(f"arena: {key[0]} faulted ({key[1]}) in match {match_id}; "
                               "repeats are counted below, details in run.log\n")
            self.faults[key] = self.faults.get(key, 0) + 1
        now = time.monotonic()
        if now - self._last_print > self.every_s or self.done == self.total:
            self._last_print = now
            self.out.write(self.line() + "\n")
            self.out.flush()

    def line(self) -> str:
        elapsed = time.monotonic() - self.t0
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        return (f"{self.done}/{self.total} matches · {rate:.1f}/s · "
                f"ETA {int(left // 60)}:{int(left % 60):02d} · faults {sum(self.faults.values())}")

    def fault_summary(self) -> list[str]:
        return [f"{bot}: {kind} x{n}" for (bot, kind), n in sorted(self.faults.items(), key=lambda kv: -kv[1])]

    def close(self) -> None:
        if self.faults:
            self.out.write("arena: faults by bot and kind: " + "; ".join(self.fault_summary()) + "\n")
            self.out.flush()


def setup_logging(results: Path, console: TextIO) -> None:
    """One run log file plus the console, fed by every worker (multiprocessing-logging)."""
    import multiprocessing_logging

    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_arena", False):
            root.removeHandler(h)
    root.setLevel(logging.INFO)
    fh = logging.FileHandler(results / "run.log")
    fh.setFormatter(logging.Formatter("%(asctime)s %(processName)s %(levelname)s %(message)s"))
    ch = logging.StreamHandler(console)
    ch.setLevel(logging.WARNING)
    ch.addFilter(lambda record: not getattr(record, MATCH_FAULT, False))
    ch.setFormatter(logging.Formatter("arena: %(message)s"))
    for h in (fh, ch):
        h._arena = True  # type: ignore[attr-defined]
        root.addHandler(h)
    multiprocessing_logging.install_mp_handler(root)


def require_safe_sandbox(sandbox: Any, tournament: Any) -> None:
    """Refuse a sandbox level that is not safe for untrusted bots, unless the file trusts its bots."""
    if sandbox.safe or tournament.trust_bots:
        return
    why = "; ".join(sandbox.details.get("unsafe", [])) or "not proven safe"
    raise ArenaError(
        f"{tournament.source or 'tournament'}: sandbox level {sandbox.level} is not safe for untrusted bots "
        f"({why}); install bubblewrap (apt-get install bubblewrap) or run as root for a safe level, "
        "or add 'trust_bots: true' to the tournament file if you trust every bot in it")


def run_tournament(tournament: Any, *, fresh: bool = False, workers: int | None = None,
                   sandbox_level: str | None = None, out: TextIO = sys.stdout,
                   err: TextIO = sys.stderr, resume_hint: str = "", executor: str = "local",
                   ray_address: str | None = None, display: Any = None) -> RunSummary:
    """Play every match of the schedule not yet in the store, then rate and report.

    ``executor`` ``local`` plays on a pool of forked processes; ``ray`` on a Ray
    cluster at ``ray_address`` (None: a local Ray instance), see arena/tournament/ray_executor.py.
    ``display(total, err)`` makes the progress display (default: plain ``Progress`` lines).
    """
    if executor not in ("local", "ray"):
        raise ArenaError(f"unknown executor {executor!r}; choose local or ray")
    if executor == "ray":
        from arena.tournament.ray_executor import require_ray

        require_ray()  # before anything is written
    from arena.match.sandbox.detect import open_sandbox
    from arena.tournament.roster import resolve_bots
    from arena.tournament.schedule import build_schedule, check_schedule
    from arena.tournament.store import ResultStore, StoreError

    entries = resolve_bots(tournament)
    check_schedule(tournament, entries)  # config errors before anything is written
    results = Path(tournament.results_dir)
    results.mkdir(parents=True, exist_ok=True)
    store = ResultStore(results)
    if fresh:
        store.reset()
    _check_deals_mode(store, tournament, results)
    try:
        secret = None if tournament.deals == "public" else store.deal_secret()
    except StoreError as exc:
        raise ArenaError(str(exc)) from None
    schedule = build_schedule(tournament, entries, secret)
    if tournament.deals == "public":
        err.write(f"arena: deals are PUBLIC (deals: public, seed {tournament.seed}): any bot can "
                  "compute every hand; for research, not for competition\n")
    current = {e.name: e.sha256 for e in entries}
    changed = store.changed_bots(current)
    if changed:
        raise ArenaError(
            f"{results}: bot file changed since its matches were played: {', '.join(changed)}; "
            f"rerun with --fresh to start over, or set a new 'results' folder")
    level_lines = io.StringIO()                     # printed once the run is under way
    sandbox = open_sandbox(sandbox_level or tournament.sandbox, level_lines)
    require_safe_sandbox(sandbox, tournament)        # before anything of this run is stored
    store.init_tournament(tournament.name, _config_json(tournament),
                          [{"name": e.name, "path": str(e.path), "sha256": e.sha256} for e in entries])
    err.write(level_lines.getvalue())
    done_ids = store.completed_ids()
    pending = [m for m in schedule if m.match_id not in done_ids]
    summary = RunSummary(results=results, scheduled=len(schedule), already_done=len(schedule) - len(pending))
    setup_logging(results, err)
    summary.sandbox_level = sandbox.level
    n_workers = max(1, min(worker_count(tournament, workers), len(pending) or 1))
    if executor == "ray":  # workers: auto = one per CPU of the cluster, not of this machine (0)
        n_workers = workers or (0 if getattr(tournament, "workers", "auto") == "auto" else n_workers)
    if summary.already_done:
        err.write(f"arena: resuming: {summary.already_done} of {len(schedule)} matches already played\n")
    log.info("tournament %s: %d matches scheduled, %d to play, %d workers, sandbox %s",
             tournament.name, len(schedule), len(pending), n_workers, sandbox.level)
    if pending:
        ctx = {
            "results": results, "entries": {e.name: e for e in entries}, "sandbox": sandbox,
            "limits": limits_from(tournament), "tc": time_control_from(tournament),
            "fresh": bool(getattr(tournament, "fresh_processes", False)), "name": tournament.name,
            "warm_bots": getattr(tournament, "warm_bots", 32),
            "parent_pid": os.getpid(),
        }
        ctx["display"] = display or Progress
        _play_pending(pending, n_workers, ctx, summary, err, resume_hint, executor=executor,
                      ray_address=ray_address, sandbox_level=sandbox_level or tournament.sandbox)
    return summary


def _play_pending(pending: list[Any], n_workers: int, ctx: dict[str, Any], summary: RunSummary,
                  err: TextIO, resume_hint: str, *, executor: str = "local", ray_address: str | None = None,
                  sandbox_level: str = "auto") -> None:
    if executor == "ray":
        _play_pending_ray(pending, n_workers, ctx, summary, err, resume_hint, ray_address, sandbox_level)
        return
    mpctx = mp.get_context("fork")  # multiprocessing-logging forwards records from forked workers
    tasks = mpctx.Queue()
    done = mpctx.Queue()
    stop = mpctx.Event()
    for m in pending:
        tasks.put(m)
    for _ in range(n_workers):
        tasks.put(None)
    procs = [mpctx.Process(target=_worker_main, args=(i, tasks, done, stop, ctx), name=f"worker-{i}",
                           daemon=False) for i in range(n_workers)]
    for p in procs:
        p.start()
    progress = ctx["display"](len(pending), err)
    alive = n_workers
    try:
        while alive:
            try:
                mid, a, b = done.get(timeout=0.5)
            except queue.Empty:
                if not any(p.is_alive() for p in procs):
                    break
                continue
            if mid == "__worker_exit__":
                alive -= 1
                continue
            summary.played += 1
            summary.faults += len(a)
            progress.update(mid, a)
    except KeyboardInterrupt:
        summary.interrupted = True
        stop.set()
        progress.close()
        err.write("\narena: interrupted; matches in flight are dropped, finished ones are kept\n")
        for p in procs:
            p.join(timeout=2)
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=5)
        if resume_hint:
            err.write(f"arena: resume with: {resume_hint}\n")
        return
    progress.close()
    for p in procs:
        p.join(timeout=10)


def _play_pending_ray(pending: list[Any], n_workers: int, ctx: dict[str, Any], summary: RunSummary,
                      err: TextIO, resume_hint: str, ray_address: str | None, sandbox_level: str) -> None:
    """The same as the local pool, with Ray actors playing and this process storing each record."""
    from arena.tournament.ray_executor import play_on_ray
    from arena.tournament.store import ResultStore

    store = ResultStore(ctx["results"])
    progress = ctx["display"](len(pending), err)

    levels: set[str] = set()

    def on_record(record: dict[str, Any]) -> None:
        levels.add(record["sandbox"]["level"])  # detected per node: may differ from this machine's
        summary.sandbox_level = ", ".join(sorted(levels))
        faults = _log_match(record, store.record_match(record))
        summary.played += 1
        summary.faults += len(faults)
        progress.update(record["match_id"], faults)

    try:
        play_on_ray(pending, ctx, on_record, address=ray_address, workers=n_workers, sandbox_level=sandbox_level)
    except KeyboardInterrupt:
        summary.interrupted = True
        progress.close()
        err.write("\narena: interrupted; matches in flight are dropped, finished ones are kept\n")
        if resume_hint:
            err.write(f"arena: resume with: {resume_hint}\n")
        return
    progress.close()


def _check_deals_mode(store: Any, tournament: Any, results: Path) -> None:
    """Matches already stored were dealt one way; resuming must not switch to the other."""
    if not store.match_count():
        return
    before = ((store.tournament() or {}).get("config") or {}).get("deals", "public")  # older: public
    if before != tournament.deals:
        raise ArenaError(f"{results}: its matches were played with deals: {before}, the file now says "
                         f"deals: {tournament.deals}; rerun with --fresh or set a new 'results' folder")


def _config_json(tournament: Any) -> dict[str, Any]:
    if hasattr(tournament, "model_dump"):
        return tournament.model_dump(mode="json")
    return dict(tournament)
