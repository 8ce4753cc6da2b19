"""`arena run`: play a whole tournament on a pool of worker processes.

The parent schedules, the workers play. Each worker keeps its bots warm across
matches and writes every finished match to the SQLite store itself, in one
transaction (on a thread of its own, while the next match plays), and reports it
done only once it is stored, so a kill -9 of any process loses at most the matches
in flight.
The parent supervises the workers (``_Pool``: arena/tournament/supervisor.py over ``LocalBackend``,
or over Ray actors with ``--executor ray``): a dead worker's match is played again by a new worker,
a bounded number of times.

Matches are named by their content (arena/tournament/schedule.py), so resuming
after any change of the tournament file or of a bot file is the same command:
the schedule is written to the store, matches it has and the store lacks are
played, and only the schedule's matches are counted and rated, in schedule order.
The leaderboard therefore equals that of a fresh run of the same file, whatever
the number of workers, interruptions or earlier versions of the tournament.
A match the harness could not play (a ``sandbox`` fault) is not stored.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import logging
import multiprocessing as mp
import os
import shutil
import signal
import stat
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from arena.errors import ArenaError, MachineTrouble, WorkersLost
from arena.interrupts import as_worker, held_while_starting, this_process_only
from arena.match.faults import printable, shorten
from arena.records.controls import Limits, TimeControl
from arena.records.record import RecordJson
from arena.records.replies import HarnessFailed, NoSpace, Played, Raised, Reply
from arena.records.spec import MatchSpec
from arena.tournament.retries import Retries, seats_text
from arena.tournament.supervisor import Backend, Event, Lost, MatchSupervisor, Replied

log = logging.getLogger("arena.run")


@dataclass
class RunSummary:
    results: Path
    scheduled: int
    already_done: int
    played: int = 0
    faults: int = 0
    counted: int = 0  # scheduled matches stored as played, after the run
    given_up: list[str] = field(default_factory=list)  # matches that kept killing workers
    harness_failures: list[str] = field(default_factory=list)  # matches the harness could not play
    interrupted: bool = False
    stopped: str = ""  # why the run stopped before every match was tried (WorkersLost)
    # schedule: adaptive entries whose race is not over (a round still to plan or to store)
    adaptive_open: list[str] = field(default_factory=list)
    sandbox_level: str = ""
    reports: dict[str, Path] = field(default_factory=dict)
    leaderboard: str = ""

    @property
    def complete(self) -> bool:
        return not self.interrupted and self.counted == self.scheduled and not self.adaptive_open


def limits_from(tournament: Any) -> Limits:
    """The tournament's per-bot limits (the tournament file validates into the one ``Limits``)."""
    lim = getattr(tournament, "limits", None)
    if isinstance(lim, Limits):
        return lim
    return Limits(**{k: v for k, v in dict(lim or {}).items() if v is not None})


def time_control_from(tournament: Any) -> TimeControl:
    tc = tournament.time_control
    return tc if isinstance(tc, TimeControl) else TimeControl(**dict(tc))


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


def is_harness_failure(record: dict[str, Any]) -> str | None:
    """The detail of the first ``sandbox`` fault of a record (the harness, not a bot,
    failed: the match was not really played), else None."""
    from arena.tournament.store import SANDBOX_FAULT

    for fault in record.get("faults") or ():
        if fault is not None and fault.get("kind") == SANDBOX_FAULT:
            return str(fault.get("detail") or "sandbox fault")
    return None


def _worker_main(wid: int, conn: Any, ctx: dict[str, Any]) -> None:
    """Play the matches the parent sends over ``conn``, one at a time, storing each.

    One typed reply per match (arena/records/replies.py): ``Played`` once stored, ``HarnessFailed``
    for a match the harness could not play (not stored), ``NoSpace``, or ``Raised`` (one line)
    after an exception, whose traceback goes to run.log.
    """
    as_worker()  # the parent decides how to stop; started with the signals held (the pool's start)
    _die_with_parent(ctx["parent_pid"])
    try:
        _serve(wid, conn, ctx)
    except BaseException:
        log.exception("worker-%d failed", wid)
        flush_log_queues()
        logging.shutdown()
        os._exit(3)
    flush_log_queues()


def _log_queues() -> list[Any]:
    return [h.queue for h in logging.getLogger().handlers if hasattr(h, "sub_handler") and hasattr(h, "queue")]


def flush_log_queues(timeout_s: float = 5.0) -> None:
    """In a worker about to exit: send its buffered log records to the parent, waiting a
    bounded time. Exiting while the queue's feeder thread writes would leave the queue's
    shared lock held by a dead process; and an unbounded join hangs if another dead worker
    holds it."""
    for q in _log_queues():
        try:
            q.close()
            feeder = getattr(q, "_thread", None)
            if feeder is not None:
                feeder.join(timeout_s)
            q.cancel_join_thread()
        except (OSError, ValueError, AssertionError):
            pass


def free_log_queues(wait_s: float = 1.0) -> bool:
    """In the parent, after a worker died abruptly: a worker killed while sending a log
    record holds its queue's lock forever, and every other worker's records would stop.
    A lock nobody releases within ``wait_s`` (sending one record takes microseconds) is
    released here. Returns whether one was."""
    freed = False
    for q in _log_queues():
        lock = getattr(q, "_wlock", None)
        if lock is None:
            continue
        if lock.acquire(timeout=wait_s):
            lock.release()
        else:
            try:
                lock.release()
                freed = True
            except ValueError:
                pass
    return freed


def _serve(wid: int, conn: Any, ctx: dict[str, Any]) -> None:
    from arena.match.sandbox import become_subreaper
    from arena.tournament.match_player import MatchPlayer
    from arena.tournament.store import ResultStore

    become_subreaper()
    store = ResultStore(ctx["results"])
    log_dir = ctx["results"] / "logs" / f"worker-{wid}"
    log_dir.mkdir(parents=True, exist_ok=True)
    playing = ctx.get("playing")  # shared with the parent: the number of the match being played, 0 between

    def new_player() -> MatchPlayer:
        return MatchPlayer(
            ctx["entries"],
            sandbox=ctx["sandbox"],
            limits=ctx["limits"],
            time_control=ctx["tc"],
            log_dir=log_dir,
            fresh=ctx["fresh"],
            tournament=ctx["name"],
            warm_bots=ctx.get("warm_bots", 64),
            deal_memory=ctx.get("deal_memory", False),
        )

    reply = _Replies(conn)
    committer = _Committer(store, reply, ctx["results"])
    player = new_player()

    def on_term(*_: Any) -> None:
        from arena.match.process import kill_every_bot

        committer.settle(2.0)  # a match already finished is kept if its commit is under way
        player.close()
        # what that close cannot reach: the handler may run inside the player's own close (its kept
        # processes already taken off its lists), a bot's kill or a spare's start; os._exit runs no
        # atexit hook, and a bot's children outlive its main process (stopped, with ponder off)
        kill_every_bot()
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    if ctx.get("up") is not None:
        ctx["up"].value = 1  # set up: the parent's watch for a worker stuck at its start ends
    number = 0
    ahead: list[Any] = []  # the next match, when the parent has sent it already
    try:
        while True:
            try:
                match = ahead.pop() if ahead else conn.recv()
            except EOFError:
                break
            if match is None:
                break
            try:
                if conn.poll():
                    ahead.append(conn.recv())  # its new bot processes start during this match
            except (EOFError, OSError):
                pass
            number += 1
            try:
                if playing is not None:
                    playing.value = number
                try:
                    record = player.play(match, ahead[0] if ahead else None)
                finally:
                    if playing is not None:
                        playing.value = 0
                failure = is_harness_failure(record)
                if failure is not None:
                    log.warning(
                        "match %s (%s): the harness could not play it: %s; not stored, the next run plays it",
                        match.match_id,
                        seats_text(match.bots),
                        failure,
                    )
                    reply(HarnessFailed(match.match_id, failure))
                    continue
                committer.submit(match, record)  # stored, then reported, while the next match plays
            except Exception as exc:  # noqa: BLE001 - reported with its traceback, the match retried
                brief = f"{type(exc).__name__}: {exc}".splitlines()[0]
                if disk_full(exc, Path(ctx["results"])):  # no retry can help: the parent stops the run
                    reply(NoSpace(match.match_id, brief))
                    continue
                log.exception(
                    "match %s (%s): the harness raised %s (traceback in run.log)",
                    match.match_id,
                    seats_text(match.bots),
                    brief,
                )
                player.close()
                player = new_player()
                reply(Raised(match.match_id, brief))
    finally:
        committer.close()
        player.close()


class _Replies:
    """A worker's replies to the parent, sent from its main thread and its committer."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.lock = threading.Lock()

    def __call__(self, message: Reply) -> None:
        with self.lock:
            self.conn.send(message)


REPLY_BROKEN_EXIT = 70  # a worker whose channel to the parent broke: EX_SOFTWARE


def _stop_worker(exc: BaseException) -> None:
    """The worker can no longer tell the parent what it stored: end it at once, so the
    parent sees a dead worker and plays its in-flight matches again, rather than waiting
    for replies that will never come."""
    flush_log_queues()
    os._exit(REPLY_BROKEN_EXIT)


class _Committer:
    """Stores a worker's finished matches on a thread of their own, one transaction each,
    and only then reports each one ``done``: the SQLite commit (an fsync, milliseconds on
    most disks) overlaps the next match instead of idling the worker. A match is never
    reported done before it is durable; one finished but not yet committed when the
    worker dies is still in flight for the parent, which plays it again."""

    def __init__(
        self, store: Any, reply: _Replies, results: Path, on_broken_reply: Callable[[BaseException], None] | None = None
    ) -> None:
        import queue

        self.store = store
        self.reply = reply
        self.on_broken_reply = on_broken_reply or _stop_worker
        self.results = results
        self.todo: Any = queue.Queue(maxsize=1)  # the parent lets a worker hold two matches at most
        self.unsettled = 0  # submitted, neither stored nor failed yet
        self.settled = threading.Condition()
        self.thread = threading.Thread(target=self._loop, name="committer", daemon=True)
        self.thread.start()

    def submit(self, match: MatchSpec, record: RecordJson) -> None:
        with self.settled:
            self.unsettled += 1
        self.todo.put((match, record))

    def settle(self, timeout_s: float) -> None:
        """Wait (bounded) until every submitted match is stored or has failed."""
        with self.settled:
            self.settled.wait_for(lambda: self.unsettled == 0, timeout_s)

    def close(self) -> None:
        self.todo.put(None)
        self.thread.join()

    def _loop(self) -> None:
        while True:
            item = self.todo.get()
            if item is None:
                return
            match, record = item
            try:
                message = self._store(match, record)
            finally:
                with self.settled:
                    self.unsettled -= 1
                    self.settled.notify_all()
            try:
                self.reply(message)
            except OSError:
                pass  # the parent is gone: nothing left to tell
            except Exception as exc:  # noqa: BLE001 - a reply that cannot be sent must not vanish
                log.exception(
                    "match %s: this worker cannot report to the parent (%s: %s); it stops, and the "
                    "parent plays its unreported matches again (those already stored are kept)",
                    match.match_id,
                    type(exc).__name__,
                    exc,
                )
                self.on_broken_reply(exc)
                return

    def _store(self, match: MatchSpec, record: RecordJson) -> Reply:
        try:
            stored = self.store.record_match(record)
            return _played(record, stored)
        except Exception as exc:  # noqa: BLE001 - reported with its traceback, the match retried
            brief = f"{type(exc).__name__}: {exc}".splitlines()[0]
            if disk_full(exc, self.results):  # no retry can help: the parent stops the run
                return NoSpace(match.match_id, brief)
            log.exception(
                "match %s (%s): the harness raised %s (traceback in run.log)",
                match.match_id,
                seats_text(match.bots),
                brief,
            )
            return Raised(match.match_id, brief)


def disk_full(exc: BaseException, folder: Path) -> bool:
    """Whether ``exc`` (or what caused it) says the disk of the results is full, or that it
    became read-only (a file system remounted read-only after an error): no retry can help."""
    import errno
    import sqlite3

    from arena.tournament.store import no_space_left

    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if isinstance(exc, OSError) and exc.errno == errno.EROFS and unwritable(folder) is not None:
            return True  # the results' disk, not some other read-only place
        if "database or disk is full" in str(exc) or (
            isinstance(exc, sqlite3.Error) and (no_space_left(folder) or unwritable(folder) is not None)
        ):
            return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


def unwritable(folder: Path) -> str | None:
    """Why nothing can be written in ``folder`` any more, else None. Tried, not asked: a file
    system remounted read-only after an error may still say ``rw`` (and pass ``access``)."""
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=folder):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)


class ResultsReadOnly(MachineTrouble):
    """The results' file system cannot be written any more (not full): the run stops, exit 1."""

    def __init__(self, folder: Path, detail: str) -> None:
        super().__init__(
            f"{folder} can no longer be written during the run ({detail}); check the disk (dmesg: a "
            "file system remounted read-only after an error), make it writable and rerun; stored matches are kept"
        )


class DiskFull(Exception):
    """The results' disk is full: the run stops (matches stored so far are kept). Not an
    OSError: the pool reads a worker's replies under ``except OSError``."""

    def __init__(self, folder: Path, detail: str) -> None:
        self.filename = str(folder)  # the guard names it
        super().__init__(f"no space left on the device for {folder} ({detail})")


def _played(record: dict[str, Any], stored: bool) -> Played:
    """Log one finished match with who sat where (its faults as warnings, with what each was, to
    run.log only: the console's display summarises them per bot and kind) and answer it."""
    faults = [(s, f, fault_reason(f)) for s, f in enumerate(record["faults"]) if f is not None]
    for seat, fault, reason in faults:
        log.warning(
            "match %s: seat %d (%s) faulted: %s (%s)",
            record["match_id"],
            seat,
            record["seats"][seat]["bot"],
            fault["kind"],
            reason,
            extra={MATCH_FAULT: True},
        )
    bots = [s["bot"] for s in record["seats"]]
    log.info(
        "match %s done (%s): places %s%s",
        record["match_id"],
        seats_text(bots),
        [p + 1 for p in record["result"]["places"]],
        "" if stored else " (already stored)",
    )  # 1 = first
    kinds = tuple((record["seats"][seat]["bot"], fault["kind"]) for seat, fault, _ in faults)
    return Played(record["match_id"], kinds, tuple(reason for *_, reason in faults))


def fault_reason(fault: dict[str, Any]) -> str:
    """One line on what a recorded fault was: its detail, and the last line the bot wrote to
    stderr before it (where a crash's cause usually is), bounded and safe for a terminal."""
    reason = str(fault.get("detail") or "")
    tail = [ln.strip() for ln in str(fault.get("stderr_tail") or "").splitlines() if ln.strip()]
    if tail:
        last = tail[-1]  # its end says why (a long path first, "not found" last): cut the front
        reason += f"; its stderr ends: {last if len(last) <= 120 else '...' + last[-117:]}"
    if fault.get("stderr_cause"):  # the error a deep stack trace pushed out of the tail
        reason += f" (after {shorten(str(fault['stderr_cause']), 100)})"
    return printable(shorten(reason, 240)).replace("\n", " ")


MATCH_FAULT = "arena_match_fault"  # marks a per-match fault record, kept out of the console


# ---- the parent -----------------------------------------------------------------


class Progress:
    """Plain progress lines (for pipes and CI: no control codes): matches done, rate,
    ETA and faults, every few seconds; each (bot, fault kind) is named once when it
    first happens and counted after that. The terminal's live display (arena/report/live.py)
    has the same interface."""

    every_s = 5.0

    def __init__(self, total: int, out: TextIO) -> None:
        self.total = total
        self.out = out
        self.done = 0
        self.faults: dict[tuple[str, str], int] = {}
        self.t0 = time.monotonic()
        self._last_print = 0.0
        self._printed = 0  # matches done as of the last line printed
        self.open_ended = False  # an adaptive schedule: the total grows round by round

    def update(self, match_id: str, faults: list[tuple[str, str]], reasons: tuple[str, ...] = ()) -> None:
        self.done += 1
        for i, key in enumerate(faults):
            if key not in self.faults:
                why = f" ({reasons[i]})" if i < len(reasons) and reasons[i] else ""
                self.out.write(
                    f"arena: {key[0]} faulted ({key[1]}) in match {match_id}{why}; "
                    "repeats are counted below, details in run.log\n"
                )
            self.faults[key] = self.faults.get(key, 0) + 1
        now = time.monotonic()
        if now - self._last_print > self.every_s or (self.done == self.total and not self.open_ended):
            self._print_line(now)

    def _print_line(self, now: float) -> None:
        self._last_print, self._printed = now, self.done
        self.out.write(self.line() + "\n")
        self.out.flush()

    def line(self) -> str:
        elapsed = time.monotonic() - self.t0
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        eta = "rounds planned as results come" if self.open_ended else f"ETA {int(left // 60)}:{int(left % 60):02d}"
        return f"{self.done}/{self.total} matches · {rate:.1f}/s · {eta} · faults {sum(self.faults.values())}"

    def fault_summary(self) -> list[str]:
        return [f"{bot}: {kind} x{n}" for (bot, kind), n in sorted(self.faults.items(), key=lambda kv: -kv[1])]

    def close(self) -> None:
        if self.done != self._printed:  # an adaptive run's last round, or a stop: the count it ended at
            self._print_line(time.monotonic())
        if self.faults:
            self.out.write("arena: faults by bot and kind: " + "; ".join(self.fault_summary()) + "\n")
            self.out.flush()


def _check_log_file(path: Path) -> None:
    """A run.log that is a named pipe or a device (itself or through a link) would be opened
    for writing and wait for a reader for ever: refused, as the lock file is."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return  # made now (a dangling link's target too, as open() would)
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # a folder fails in open(): "in the way", as before
        raise ArenaError(f"{path} is a pipe or a device, not a log file; remove it (it is made again) and rerun")


def setup_logging(results: Path, console: TextIO, *, fresh: bool = False) -> None:
    """One run log file plus the console, fed by every worker (multiprocessing-logging).

    run.log keeps the history of every run on the folder; ``fresh`` starts it over."""
    import multiprocessing_logging

    root = logging.getLogger()
    close_run_logging()
    root.setLevel(logging.INFO)
    _check_log_file(results / "run.log")
    fh = logging.FileHandler(results / "run.log", mode="w" if fresh else "a")
    fh.setFormatter(logging.Formatter("%(asctime)s %(processName)s %(levelname)s %(message)s"))
    ch = logging.StreamHandler(console)
    ch.setLevel(logging.WARNING)
    # Ray's own loggers (ray.init's notice that it turned token auth on, ...) go to run.log only
    ch.addFilter(lambda record: not getattr(record, MATCH_FAULT, False) and record.name.split(".")[0] != "ray")
    ch.setFormatter(_OneLine())
    # Only our two handlers are wrapped (install_mp_handler would wrap every handler of the
    # root logger, others' and earlier wrappers too, each with a thread that is never stopped:
    # a process that runs many tournaments, a test suite for one, piled up thousands).
    for i, h in enumerate((fh, ch)):
        wrapper = multiprocessing_logging.MultiProcessingHandler(f"arena-log-{i}", sub_handler=h)
        wrapper._arena = True  # type: ignore[attr-defined]
        root.addHandler(wrapper)
        _direct_in_this_process(wrapper)


def close_run_logging() -> None:
    """Remove and close the handlers ``setup_logging`` added, side by side: each waits up to
    0.2 s for its receiving thread to notice, and one after the other they delayed every run's
    end (and the next run's start in the same process) by up to 0.4 s."""
    root = logging.getLogger()
    ours = [h for h in list(root.handlers) if getattr(h, "_arena", False)]
    for h in ours:
        root.removeHandler(h)
    closing = [threading.Thread(target=_close_quietly, args=(h,), name="close-run-log") for h in ours]
    for t in closing:
        t.start()
    for t in closing:
        t.join()


def _close_quietly(handler: logging.Handler) -> None:
    """run.log on a disk that went read-only (or full) cannot flush its last lines: the run has
    said why it stopped; a thread's traceback after that line helps no one."""
    with contextlib.suppress(OSError):
        handler.close()


atexit.register(close_run_logging)  # before logging's own shutdown, which closes them one by one


def _no_worker_left() -> None:
    """At exit, stop any worker process still alive instead of waiting for it forever
    (multiprocessing joins its children at exit, and an idle worker waits for a match)."""
    for child in mp.active_children():
        if child.name.startswith("worker-"):
            child.terminate()
            child.join(5)
            if child.is_alive():
                child.kill()
                child.join(5)


atexit.register(_no_worker_left)  # runs before multiprocessing's own exit function, which joins


def _direct_in_this_process(wrapper: Any) -> None:
    """This process's own records skip the queue (only forked workers use it): the parent's
    lines reach run.log and the console even if a killed worker jammed the queue, and the
    parent never waits at exit for a queue feeder that cannot write."""
    pid, queued = os.getpid(), wrapper.emit

    def emit(record: logging.LogRecord) -> None:
        if os.getpid() == pid:
            wrapper.sub_handler.handle(record)  # its filters, under its lock
        else:
            queued(record)

    wrapper.emit = emit


class _OneLine(logging.Formatter):
    """The console gets one line per record; tracebacks go to run.log only."""

    def format(self, record: logging.LogRecord) -> str:
        lines = record.getMessage().splitlines() or [""]
        return "arena: " + lines[0] + (" (traceback in run.log)" if record.exc_info else "")


class _Stop(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a closed terminal, a dropped ssh connection): stop as Ctrl-C does."""


def _on_sigterm(*_: Any) -> None:
    raise _Stop()


@dataclass
class Plan:
    """What a run would do: matches to play, stored ones kept, stored ones no longer counted."""

    schedule: list[Any]
    play: list[Any]
    keep: list[Any]
    drop: list[str]
    roster_news: str = ""  # the roster against the folder's previous run, with its match count
    provisional: bool = False  # no deal secret yet: the run draws it, and its match ids differ
    adaptive: list[Any] = field(default_factory=list)  # AdaptivePlan of each adaptive entry: its race so far
    forgotten: int = 0  # with --fresh: the matches the store holds, which the run deletes
    forgotten_of: str = ""  # the tournament they belong to (maybe another one, in a folder given by mistake)


def plan_run(tournament: Any, *, fresh: bool = False) -> Plan:
    """`arena run --dry-run`: compare the tournament file and bot files with the store; writes nothing."""
    from arena.tournament.adaptive import has_adaptive, stored_outcomes
    from arena.tournament.roster import resolve_bots
    from arena.tournament.schedule import build_schedule
    from arena.tournament.store import DB_NAME, ResultStore, StoreError, lost_store

    entries = resolve_bots(tournament)
    db = Path(tournament.results_dir) / DB_NAME
    lost = None if fresh else lost_store(db.parent)
    if lost:
        raise ArenaError(lost)
    stored: set[str] = set()
    revealed: set[tuple[str, int, int]] = set()
    outcomes: dict[str, Any] = {}
    before: list[dict[str, Any]] = []
    previous = 0
    settings_news = ""
    secret = "0" * 64  # a folder without a store has no secret yet: every match is to play
    plans: list[Any] = []
    forgotten, forgotten_of = 0, ""
    if db.exists():
        store = ResultStore(db.parent)
        try:
            if not fresh:
                store.claim(tournament.name)
            else:
                forgotten = store.match_count()
                forgotten_of = str((store.tournament() or {}).get("name") or "")
            if tournament.deals != "public":
                secret = store.deal_secret()
            if not fresh:
                stored = store.completed_ids() - set(store.altered())  # a run plays altered ones again
                before, previous = store.bots(), _previous_scheduled(store)
                settings_news = settings_changes(store.tournament(), _config_json(tournament))
            revealed = store.revealed_deals()
            if has_adaptive(tournament) and not fresh:
                outcomes = stored_outcomes(store)
        except StoreError as exc:
            raise ArenaError(str(exc)) from None
        finally:
            store.close()
    schedule = build_schedule(
        tournament,
        entries,
        None if tournament.deals == "public" else secret,
        revealed=revealed,
        stored=stored,
        results=outcomes,
        plans=plans,
    )
    wanted = {m.match_id for m in schedule}
    keep = [m for m in schedule if m.match_id in stored]
    if not keep:  # nothing stored still counts (new deals, a new entry): no old settings to warn of
        settings_news = ""
    return Plan(
        schedule=schedule,
        play=[m for m in schedule if m.match_id not in stored],
        keep=keep,
        drop=sorted(stored - wanted),
        roster_news=joined_news(
            with_match_count(roster_changes(before, entries, kept=keep), previous, len(schedule)),
            settings_news,
        ),
        provisional=tournament.deals != "public" and not db.exists(),
        adaptive=plans,
        forgotten=forgotten,
        forgotten_of=forgotten_of,
    )


def _previous_scheduled(store: Any) -> int:
    """How many matches the folder's previous run scheduled (0 if none or unreadable)."""
    from arena.tournament.store import StoreError

    try:
        return store.progress()[0] if store.has_schedule() else 0
    except StoreError:
        return 0


# settings that are not part of a match's identity (arena.tournament.schedule.match_key): a change
# keeps the matches stored under the old ones, so it is said
_UNKEYED_SETTINGS = (("time_control", "time control"), ("limits", "limits"))


def settings_changes(previous: Any, config: dict[str, Any]) -> str:
    """'time control changed (startup_s 10 -> 30): the matches stored under the old settings
    still count; ...' against the config the folder's previous run recorded ('' if the same,
    or if none was recorded)."""
    old = previous.get("config") if isinstance(previous, dict) else None  # store.tournament()'s
    if not isinstance(old, dict):
        return ""

    def shown(v: Any) -> str:
        return "none" if v is None else f"{v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)

    parts = []
    for key, what in _UNKEYED_SETTINGS:
        a, b = old.get(key), config.get(key)
        if not isinstance(a, dict) or not isinstance(b, dict) or a == b:
            continue
        diffs = [f"{k} {shown(a.get(k))} -> {shown(b.get(k))}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        parts.append(f"{what} changed ({', '.join(diffs)})")
    if not parts:
        return ""
    return "; ".join(parts) + ": the matches stored under the old settings still count; --fresh plays them all again"


def joined_news(*news: str) -> str:
    return "; ".join(n for n in news if n)


def with_match_count(news: str, previous: int, scheduled: int) -> str:
    """A roster change says what it does to the size of the run: bot files dropped into a
    globbed folder can multiply it (136 -> 960 matches)."""
    if not news or not previous or previous == scheduled:
        return news
    return f"{news}; {scheduled} matches scheduled, was {previous} ({scheduled / previous:.1f}x)"


def roster_changes(before: list[dict[str, Any]], entries: list[Any], shown: int = 5, kept: Iterable[Any] = ()) -> str:
    """'bot d left; bot e joined; bot c changed (new sha256)': the roster against the one the
    store registered last time ('' if the same, or if nothing was registered). ``kept``: the
    scheduled matches already stored; a bot changed back to a version that played them before
    is told they count again (match ids name the bots' SHA-256, so they are that version's)."""
    if not before:
        return ""
    old = {b["name"]: b["sha256"] for b in before}
    new = {e.name: e.sha256 for e in entries}
    changed = sorted(n for n in old.keys() & new.keys() if old[n] != new[n])
    counted = {n: sum(n in m.bots for m in kept) for n in changed} if changed else {}
    back = [n for n in changed if counted[n]]

    def names(items: list[str]) -> str:
        return ", ".join(items[:shown]) + (f" and {len(items) - shown} more" if len(items) > shown else "")

    parts = []
    again = [n for n in changed if n not in back]
    for what, items in (
        ("left (no longer counted)", sorted(old.keys() - new.keys())),
        ("joined", sorted(new.keys() - old.keys())),
        (f"changed ({'its' if len(again) == 1 else 'their'} matches are played again)", again),
    ):
        if items:
            parts.append(f"{'bot' if len(items) == 1 else 'bots'} {names(items)} {what}")
    for n in back[:shown]:  # e.g. an edit undone: nothing of that version is played again
        parts.append(
            f"bot {n} changed back to a version played before ({counted[n]} of its stored matches count again)"
        )
    return "; ".join(parts)


def make_results_folder(results: Path, tournament: Any) -> None:
    """Create the results folder, or say in one line why it cannot be (a full disk is left
    to the caller's full-disk message)."""
    import errno

    try:
        results.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise ArenaError(
            f"{tournament.source or 'tournament'}: results: cannot create the folder {results} "
            f"({exc.strerror or exc}); give a folder you can write, e.g. results: results/{tournament.name}"
        ) from None


def get_safe_level(asked_by: str) -> str:
    """How to get a level safe for untrusted bots on this machine (self-tests the safe levels):
    choose the one that passes here instead of the level ``asked_by`` names, or, if none passes,
    what this machine lacks."""
    from arena.match.detect import safe_level_here

    level, missing = safe_level_here()
    if level is None:
        then = {"-": "--sandbox auto", "S": "unset SANDBOX_LEVEL", "'": "'sandbox: auto'"}[asked_by[0]]
        auto = asked_by == "'sandbox: auto'"
        return f"{missing} for a safe level" + ("" if auto else f", then ask for it: {then} instead of {asked_by}")
    if asked_by.startswith("--sandbox"):
        return f"give --sandbox auto (takes {level} here, safe) or --sandbox {level} instead of {asked_by}"
    if asked_by.startswith("SANDBOX_LEVEL"):
        return f"unset SANDBOX_LEVEL (auto takes {level} here, safe) or set SANDBOX_LEVEL={level} instead of {asked_by}"
    return f"set 'sandbox: auto' (takes {level} here, safe) or 'sandbox: {level}' instead of {asked_by}"


def asked_level(tournament: Any, sandbox_level: str | None) -> str:
    """Where the level in force was asked for: the --sandbox option, SANDBOX_LEVEL, or the file."""
    if sandbox_level and sandbox_level != "auto":
        return f"--sandbox {sandbox_level}"
    if tournament.sandbox == "auto" and os.environ.get("SANDBOX_LEVEL", "auto") not in ("", "auto"):
        return f"SANDBOX_LEVEL={os.environ['SANDBOX_LEVEL']}"
    return f"'sandbox: {tournament.sandbox}'"


def require_safe_sandbox(
    sandbox: Any,
    tournament: Any,
    *,
    where: str | None = None,
    fix: str | None = None,
    sandbox_level: str | None = None,
) -> None:
    """Refuse a sandbox level that is not safe for untrusted bots, unless the file trusts its bots.
    ``where`` and ``fix`` replace the file's name and the fixes (a ladder accepts no trust_bots);
    ``sandbox_level`` is the command's --sandbox, if any."""
    if sandbox.safe or tournament.trust_bots:
        return
    why = "; ".join(sandbox.details.get("unsafe", [])) or "not proven safe"
    fix = fix or (
        f"{get_safe_level(asked_level(tournament, sandbox_level))}, "
        "or add 'trust_bots: true' to the tournament file if you wrote or trust every bot in it"
    )
    raise ArenaError(
        f"{where or tournament.source or 'tournament'}: sandbox level {sandbox.level} is not safe for untrusted "
        f"bots ({why}); {fix}"
    )


def run_tournament(
    tournament: Any,
    *,
    fresh: bool = False,
    workers: int | None = None,
    sandbox_level: str | None = None,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    resume_hint: str = "",
    executor: str = "local",
    ray_address: str | None = None,
    display: Any = None,
    publish: Callable[[RunSummary], None] | None = None,
    before_play: Callable[[Path, int], None] | None = None,
) -> RunSummary:
    """Play every match of the schedule not yet in the store, then rate and report.

    ``executor`` ``local`` plays on a pool of forked processes; ``ray`` on a Ray
    cluster at ``ray_address`` (None: a local Ray instance), see arena/tournament/ray_executor.py.
    ``display(total, err)`` makes the progress display (default: plain ``Progress`` lines).
    The results folder is locked for the whole run (``publish``, called at the end,
    included: after an interruption too, so the report files show the matches kept; a second
    Ctrl-C there leaves them as ``before_play`` marked them). ``before_play(results, n)`` runs
    once the lock is held, before ``n`` > 0 matches are played. SIGTERM and SIGHUP stop the run
    as Ctrl-C does; stopped before anything was stored, a results folder this run created is
    removed again.
    """
    if executor not in ("local", "ray"):
        raise ArenaError(f"unknown executor {executor!r}; choose local or ray")
    if executor == "ray":
        from arena.tournament.ray_executor import check_ray

        check_ray(ray_address)  # before anything is written or reset (--fresh)
    from arena.tournament.folder_lock import FolderLock
    from arena.tournament.roster import hold_entries, resolve_bots
    from arena.tournament.schedule import check_schedule

    entries = resolve_bots(tournament)
    check_schedule(tournament, entries)  # config errors before anything is written
    held = hold_entries(entries)  # `arena cache prune` keeps what this run plays, to its end
    results = Path(tournament.results_dir)
    new_folder = not results.exists()
    make_results_folder(results, tournament)
    in_main = threading.current_thread() is threading.main_thread()
    # SIGHUP as SIGTERM (a closed terminal), unless ignored on purpose (nohup)
    stops = [s for s in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(s) != signal.SIG_IGN] if in_main else []
    old_handlers = [signal.signal(s, this_process_only(_on_sigterm)) for s in stops]
    try:
        with FolderLock(results):
            try:
                summary = _run_locked(
                    tournament,
                    entries,
                    results,
                    fresh=fresh,
                    workers=workers,
                    sandbox_level=sandbox_level,
                    err=err,
                    resume_hint=resume_hint,
                    executor=executor,
                    ray_address=ray_address,
                    display=display,
                    before_play=before_play,
                )
            except KeyboardInterrupt:
                forget_unstarted(results, new_folder)
                raise
            if publish is not None and not summary.interrupted:
                publish(summary)
            elif publish is not None:  # the pages show what was kept, marked incomplete
                try:
                    err.write(
                        f"arena: writing the leaderboard files of the {summary.counted} of "
                        f"{summary.scheduled} matches kept (Ctrl-C again skips)\n"
                    )
                    publish(summary)
                except KeyboardInterrupt:
                    pass
    finally:
        for sig, old in zip(stops, old_handlers):
            signal.signal(sig, old)
        for h in held:
            h.release()
    return summary


def forget_unstarted(results: Path, new_folder: bool) -> bool:
    """A run stopped while starting leaves no trace: the results folder it made is removed if it
    stores no match. True if removed."""
    if new_folder and _nothing_stored(results):
        shutil.rmtree(results, ignore_errors=True)
        return True
    return False


def _nothing_stored(results: Path) -> bool:
    """Whether the results folder holds no stored match (read only; unsure counts as stored)."""
    import sqlite3

    from arena.tournament.store import DB_NAME

    db = results / DB_NAME
    if not db.exists():
        return True
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 0
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return "no such table" in str(exc)


def _run_locked(
    tournament: Any,
    entries: list[Any],
    results: Path,
    *,
    fresh: bool,
    workers: int | None,
    sandbox_level: str | None,
    err: TextIO,
    resume_hint: str,
    executor: str,
    ray_address: str | None,
    display: Any = None,
    before_play: Callable[[Path, int], None] | None = None,
) -> RunSummary:
    from arena.match.detect import open_sandbox
    from arena.tournament import fair_play
    from arena.tournament.adaptive import clear_state, has_adaptive, stored_outcomes, write_state
    from arena.tournament.roster import snapshot_bots
    from arena.tournament.schedule import build_schedule
    from arena.tournament.store import ResultStore, StoreError, lost_store

    level_lines = io.StringIO()  # printed once the run is under way
    lost = None if fresh else lost_store(results)
    if lost:  # a deleted or truncated store: never replayed unasked
        raise ArenaError(lost)
    sandbox = open_sandbox(sandbox_level or tournament.sandbox, level_lines)
    require_safe_sandbox(sandbox, tournament, sandbox_level=sandbox_level)  # before anything is stored or reset
    store = ResultStore(results)
    if fresh:
        store.reset()
        shutil.rmtree(results / "logs", ignore_errors=True)  # the bots' stderr of the runs forgotten
    try:
        store.claim(tournament.name)
        secret = None if tournament.deals == "public" else store.deal_secret()
        revealed = store.revealed_deals()
    except StoreError as exc:
        raise ArenaError(str(exc)) from None
    entries = snapshot_bots(entries, results)
    # Deals public or secret give other deal seeds, hence other matches: switching is a
    # change of the tournament like any other, no mixing possible. Deals shown on replay
    # pages are replaced for groups that have not finished them (fair_play).
    schedule = build_schedule(
        tournament,
        entries,
        secret,
        revealed=revealed,
        stored=store.completed_ids() - set(store.altered()) if revealed else (),
    )
    if tournament.deals == "public":
        err.write(
            f"arena: deals are PUBLIC (deals: public, seed {tournament.seed}): any bot can "
            "compute every hand; for research, not for competition\n"
        )
    done = store.completed_ids()
    kept = [m for m in schedule if m.match_id in done]
    changes = roster_changes(store.bots(), entries, kept=kept)
    roster_news = joined_news(
        with_match_count(changes, _previous_scheduled(store), len(schedule)),
        # only matches the new schedule still counts were played under the old settings
        settings_changes(store.tournament(), _config_json(tournament)) if kept else "",
    )
    store.init_tournament(tournament.name, _config_json(tournament), [e.to_json() for e in entries])
    altered = store.forget_altered()  # first: a hand-set sandbox fault is an alteration too
    store.forget_harness_failures()
    adaptive = has_adaptive(tournament)
    plans: list[Any] = []
    if adaptive:  # its next round depends on the results stored (and kept) so far
        schedule = build_schedule(
            tournament,
            entries,
            secret,
            revealed=revealed,
            stored=_kept(store, revealed),
            results=stored_outcomes(store),
            plans=plans,
        )
        write_state(results, plans)  # where the race stands, for a leaderboard read while it runs
    else:  # an earlier file's race is no part of this tournament's leaderboards
        clear_state(results)
    store.set_schedule([(m.match_id, m.index) for m in schedule])
    err.write(level_lines.getvalue())
    err.write(fair_play.process_line(tournament))
    err.write(fair_play.replay_line(tournament, len(revealed), fair_play.redealt(tournament, schedule, secret)))
    if altered:  # hand-edited rows: not results; the schedule decides which to play again
        err.write(
            f"arena: {len(altered)} stored matches were altered after they were stored (e.g. {altered[0]}); "
            "dropped, they are played again\n"
        )
    done_ids = store.completed_ids()
    pending = [m for m in schedule if m.match_id not in done_ids]
    summary = RunSummary(results=results, scheduled=len(schedule), already_done=len(schedule) - len(pending))
    setup_logging(results, err, fresh=fresh)
    (results / "logs").mkdir(exist_ok=True)  # here, not in each worker: an obstacle is one error
    for mid in altered:
        log.info("match %s was altered after it was stored; dropped, played again", mid)
    summary.sandbox_level = sandbox.level
    n_workers = max(1, min(worker_count(tournament, workers), len(pending) or 1))
    next_round = _NextRound(tournament, entries, secret, store, plans, pending, revealed) if adaptive else None
    if adaptive:  # later rounds may be larger than the first
        n_workers = max(1, worker_count(tournament, workers))
    if executor == "ray":  # workers: auto = one per CPU of the cluster, not of this machine (0)
        n_workers = workers or (0 if getattr(tournament, "workers", "auto") == "auto" else n_workers)
    if roster_news:  # a bot whose file vanished from a glob must not leave unnoticed
        err.write(f"arena: since the last run: {roster_news}\n")
        log.info("since the last run: %s", roster_news)
    idle = sorted({e.name for e in entries} - {name for m in schedule for name in m.bots})
    if idle:  # every game lists its bots and none names these: a forgotten entry, most likely
        shown = ", ".join(idle[:5]) + (f" and {len(idle) - 5} more" if len(idle) > 5 else "")
        where = tournament.source or "the tournament file"
        err.write(
            f"arena: warning: {where}: {len(idle)} roster bot(s) play in no game ({shown}): "
            "add them to a game's bots list, or remove them from bots\n"
        )
        log.info("roster bots that play in no game: %s", ", ".join(idle))
    if summary.already_done:
        err.write(f"arena: resuming: {summary.already_done} of {len(schedule)} matches already played\n")
    log.info(
        "tournament %s: %d matches scheduled, %d to play, %d workers, sandbox %s; bots: %s",
        tournament.name,
        len(schedule),
        len(pending),
        n_workers,
        sandbox.level,
        ", ".join(f"{e.name} {e.sha256[:12]}" for e in entries),
    )
    if pending and before_play is not None:
        before_play(results, len(pending))
    if pending or adaptive:
        ctx = {
            "results": results,
            "entries": {e.name: e for e in entries},
            "sandbox": sandbox,
            "limits": limits_from(tournament),
            "tc": time_control_from(tournament),
            "fresh": bool(getattr(tournament, "fresh_processes", False)),
            "name": tournament.name,
            "deal_memory": bool(getattr(tournament, "allow_deal_memory", False)),
            "warm_bots": getattr(tournament, "warm_bots", 64),
            "trust_bots": bool(getattr(tournament, "trust_bots", False)),  # each Ray node checks its own level
            "parent_pid": os.getpid(),
        }
        ctx["display"] = display or Progress
        _play_pending(
            pending,
            n_workers,
            ctx,
            summary,
            err,
            resume_hint,
            executor=executor,
            ray_address=ray_address,
            sandbox_level=sandbox_level or tournament.sandbox,
            next_round=next_round,
        )
    if next_round is not None:
        next_round.finish(results, replan=summary.interrupted)
        schedule = next_round.schedule or schedule  # the rounds played after the first need baselines too
        summary.adaptive_open = next_round.open_entries()
    if not summary.interrupted:
        _luck_baselines(
            store,
            schedule,
            getattr(tournament, "luck_rollouts", 0),
            summary,
            err,
            resume_hint,
            max(1, min(worker_count(tournament, workers), os.cpu_count() or 1)),
        )
    summary.scheduled, summary.counted = store.progress()
    store.close()
    if summary.counted < summary.scheduled and not summary.interrupted:
        log.warning("incomplete: %d of %d matches stored", summary.counted, summary.scheduled)
    return summary


def _kept(store: Any, revealed: Any) -> set[str]:
    """The stored matches that count as played for fair play (none needed while nothing is revealed)."""
    return store.completed_ids() - set(store.altered()) if revealed else set()


class _NextRound:
    """schedule: adaptive: called when every match handed out is played, it plans the next
    round from the stored results and returns its matches ([] when no entry has a round to
    play, decided or capped, or when a round makes no progress: matches the harness could not
    play are tried again by the next run). The pool keeps its workers and warm bots across rounds."""

    def __init__(
        self,
        tournament: Any,
        entries: list[Any],
        secret: str | None,
        store: Any,
        plans: list[Any],
        pending: list[Any],
        revealed: Any = (),
    ) -> None:
        self.tournament, self.entries, self.secret, self.store, self.plans = tournament, entries, secret, store, plans
        self.revealed = revealed  # deals shown on replay pages: replaced as in a round robin (fair_play)
        self.tried = {m.match_id for m in pending}
        self.scheduled = 0
        self.schedule: list[Any] | None = None  # every round's matches, as last planned

    def _plan(self) -> list[Any]:
        """The schedule (every round) planned from the results stored now: the plans replaced,
        the store's schedule and ``schedule`` set to it."""
        from arena.tournament.adaptive import stored_outcomes
        from arena.tournament.schedule import build_schedule

        plans: list[Any] = []  # filled in full before it replaces the last plans: an interruption
        schedule = build_schedule(  # while planning leaves every entry's last plan to finish()
            self.tournament,
            self.entries,
            self.secret,
            revealed=self.revealed,
            stored=_kept(self.store, self.revealed),
            results=stored_outcomes(self.store),
            plans=plans,
        )
        self.plans[:] = plans
        self.store.set_schedule([(m.match_id, m.index) for m in schedule])
        self.schedule = schedule
        return schedule

    def __call__(self) -> list[Any]:
        schedule = self._plan()
        done = self.store.completed_ids()
        more = [m for m in schedule if m.match_id not in done]
        if {m.match_id for m in more} <= self.tried:
            return []
        self.tried |= {m.match_id for m in more}
        return more

    def open_entries(self) -> list[str]:
        """The entries whose race this run did not finish (stopped between or within rounds)."""
        from arena.tournament.adaptive import still_playing

        return still_playing(self.plans)

    def finish(self, results: Path, replan: bool = False) -> None:
        """Record where each race stands. ``replan``: the run was stopped, maybe after a round
        whose results no plan has read yet; plan once more so the leaderboards show them (a
        stop in between keeps the last plan, which a resumed run replans anyway)."""
        from arena.tournament.adaptive import write_state

        if replan:
            with contextlib.suppress(KeyboardInterrupt):
                self._plan()
        write_state(results, self.plans)
        for p in self.plans:
            log.info(
                "adaptive %s (%d players): %s after %d matches (cap %d)", p.key, p.players, p.status, p.matches, p.cap
            )


def _luck_baselines(
    store: Any, schedule: list[Any], rollouts: int, summary: RunSummary, err: TextIO, resume_hint: str, workers: int = 1
) -> None:
    """Compute the deals' missing luck baselines (arena.luck.baselines) after the matches, on
    as many processes as the run's workers: never while bots are timed. The results are stored already; a failure here
    only leaves the luck-adjusted figure unavailable, and Ctrl-C stops the run as usual."""
    from arena.luck import baselines as luck

    if rollouts < 1:
        return
    started = time.monotonic()
    try:
        from arena.tournament.step_progress import StepProgress

        added = luck.fill(
            store,
            schedule,
            rollouts,
            progress=StepProgress(
                err,
                "luck baselines",
                "jobs",
                intro=" (deals, reference deals, matches with builtin players; Ctrl-C stops, what is done is kept)",
            ),
            workers=workers,
        )
    except KeyboardInterrupt:
        summary.interrupted = True
        err.write(
            "\narena: interrupted while computing the luck baselines; every match is kept, finished baselines too\n"
        )
        if resume_hint:
            err.write(f"arena: resume with: {resume_hint}\n")
        return
    except Exception as exc:  # noqa: BLE001 - an optional figure must not cost the run its report
        log.warning("luck baselines not computed (%s: %s); luck-adjusted places unavailable", type(exc).__name__, exc)
        err.write(
            f"arena: warning: luck baselines not computed ({type(exc).__name__}: {exc}); "
            "the leaderboards show luck-adjusted places as n/a\n"
        )
        return
    if added:
        log.info("luck baselines: %d jobs computed in %.1f s", added, time.monotonic() - started)


def _play_pending(
    pending: list[Any],
    n_workers: int,
    ctx: dict[str, Any],
    summary: RunSummary,
    err: TextIO,
    resume_hint: str,
    *,
    executor: str = "local",
    ray_address: str | None = None,
    sandbox_level: str = "auto",
    next_round: Callable[[], list[Any]] | None = None,
) -> None:
    progress = ctx["display"](len(pending), err)
    grow = _grower(progress, next_round)
    try:
        if executor == "ray":
            from arena.tournament.ray_executor import ray_backend, ray_session

            batch = pending or (grow() if grow is not None else [])  # its actors are as many as it needs
            if batch:
                with ray_session(ray_address):
                    backend = ray_backend(ctx, sandbox_level=sandbox_level, store=store_in_driver(ctx, summary))
                    pool = _Pool(ctx, summary, progress, backend)
                    pool.run(batch, backend.size(n_workers, len(batch)), _between_rounds(pool, grow))
        else:
            pool = _Pool(ctx, summary, progress)
            pool.run(pending, n_workers, _between_rounds(pool, grow))
    except WorkersLost as exc:  # the run ends incomplete: what it finished is stored and published
        log.error("%s", exc)
        summary.stopped = str(exc)
    except KeyboardInterrupt:
        summary.interrupted = True
        log.info(
            "interrupted; matches in flight are dropped, finished ones are kept%s",
            f"; resume with: {resume_hint}" if resume_hint else "",
        )
        try:  # after SIGHUP the terminal may be gone: the lines above are in run.log
            progress.close()
            err.write("\narena: interrupted; matches in flight are dropped, finished ones are kept\n")
            if resume_hint:
                err.write(f"arena: resume with: {resume_hint}\n")
        except OSError:
            pass
        return
    progress.close()


def _grower(progress: Any, next_round: Callable[[], list[Any]] | None) -> Callable[[], list[Any]] | None:
    """``next_round`` (an adaptive schedule's) with the display's total raised by what it returns."""
    if next_round is None:
        return None

    progress.open_ended = True

    def grow() -> list[Any]:
        batch = next_round()
        if batch:
            if hasattr(progress, "grow"):
                progress.grow(len(batch))
            else:
                progress.total += len(batch)
        return batch

    return grow


def _between_rounds(pool: _Pool, grow: Callable[[], list[Any]] | None) -> Callable[[deque], None] | None:
    """The pool's ``top_up`` for an adaptive schedule: once every match handed out is played
    (the queue empty, no worker busy), the next round's matches, planned from the stored results."""
    if grow is None:
        return None

    def top_up(queue: deque) -> None:
        if not queue and not pool._busy():
            queue.extend(grow())

    return top_up


@dataclass
class _Process:
    proc: Any  # multiprocessing.Process
    conn: Any  # the parent's end of its pipe
    playing: Any  # shared memory: the number of the match the worker is playing, 0 between
    up: Any  # shared memory: 1 once the worker has set itself up (its store is open)
    started: float  # time.monotonic() at its start
    hung: bool = False  # killed for not setting itself up in time


# A forked worker that has not opened its store by then is stuck: a lock another thread of the
# parent held at the fork (SQLite's own, inside a connection a garbage collection closed on a
# thread) stays held in the child for ever. It is killed and another takes its place.
WORKER_SETUP_LIMIT_S = 60.0


class LocalBackend:
    """Worker processes on this machine (forked: multiprocessing-logging forwards their records),
    each fed over its own pipe, each telling through a shared counter which match it is playing.
    A dead one (kill -9, the OOM killer, a crash) is noticed through its process sentinel."""

    prefetch = 2  # matches a worker holds at most: the one it plays and the next (it starts its bots)
    spread_tail = True
    ready_at_start = True

    def __init__(self, ctx: dict[str, Any]) -> None:
        self.ctx = ctx
        self.mp = mp.get_context("fork")
        self.procs: dict[int, _Process] = {}
        self.next_wid = 0

    def start(self) -> int:
        parent, child = self.mp.Pipe(duplex=True)
        wid = self.next_wid
        self.next_wid += 1
        playing = self.mp.RawValue("q", 0)
        up = self.mp.RawValue("b", 0)
        proc = self.mp.Process(
            target=_worker_main,
            args=(wid, child, dict(self.ctx, playing=playing, up=up)),
            name=f"worker-{wid}",
            daemon=False,
        )
        with held_while_starting():
            proc.start()
        child.close()
        self.procs[wid] = _Process(proc, parent, playing, up, time.monotonic())
        return wid

    def send(self, wid: int, match: MatchSpec) -> None:
        self.procs[wid].conn.send(match)

    def wait(self, timeout_s: float) -> list[Event]:
        from multiprocessing.connection import wait

        ready = wait(
            [p.conn for p in self.procs.values()] + [p.proc.sentinel for p in self.procs.values()], timeout=timeout_s
        )
        events: list[Event] = []
        for wid, p in list(self.procs.items()):
            if p.conn in ready:
                events.extend(self._receive(wid, p))
        self._kill_hung()
        for wid, p in list(self.procs.items()):
            if p.proc.exitcode is not None or (p.proc.sentinel in ready and not p.proc.is_alive()):
                events.extend(self._buried(wid, p))
        return events

    def _kill_hung(self) -> None:
        now = time.monotonic()
        for wid, p in self.procs.items():
            if p.up.value or p.hung or now - p.started < WORKER_SETUP_LIMIT_S:
                continue
            log.error(
                "worker-%d did not set itself up in %.0f s (stuck at its start); it is killed and another "
                "takes its place",
                wid,
                WORKER_SETUP_LIMIT_S,
            )
            p.hung = True
            p.proc.kill()
            p.proc.join(timeout=5)

    def _receive(self, wid: int, p: _Process) -> list[Event]:
        got: list[Event] = []
        try:
            while p.conn.poll():
                got.append(Replied(wid, p.conn.recv()))
        except (EOFError, OSError):
            pass  # the worker is gone: _buried reports it
        return got

    def _buried(self, wid: int, p: _Process) -> list[Event]:
        events = self._receive(wid, p)  # replies sent just before dying still count
        p.proc.join(timeout=1)
        del self.procs[wid]
        p.conn.close()
        code = p.proc.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        if code and free_log_queues():
            log.warning("worker-%d died while sending a log record; its queue is freed, the record is lost", wid)
        playing = p.playing.value or None
        if p.hung:
            how = f"stuck at its start, killed after {WORKER_SETUP_LIMIT_S:.0f} s"
        elif playing is None:
            log.error("worker-%d died (%s) between matches", wid, how)
        events.append(Lost(wid, f"worker-{wid} died ({how})", playing))
        return events

    def keep_dying(self, deaths: int) -> str:
        return "workers keep dying between matches; see run.log in the results folder"

    def lost_all(self, left: int) -> str | None:
        return None  # a worker started here is there at once

    def stop(self, *, kill: bool) -> None:
        procs = list(self.procs.values())
        if kill:  # after Ctrl-C/SIGTERM or an error: each worker closes its bots and exits (SIGTERM)
            for p in procs:
                if p.proc.is_alive():
                    p.proc.terminate()
            for p in procs:
                p.proc.join(timeout=5)
                if p.proc.is_alive():
                    p.proc.kill()
                    p.proc.join(timeout=5)
            return
        for p in procs:
            try:
                p.conn.send(None)
            except OSError:
                pass
        for p in procs:
            p.proc.join(timeout=30)
            if p.proc.is_alive():
                p.proc.terminate()
                p.proc.join(timeout=5)
            p.conn.close()


class _Pool:
    """A tournament's local play: the supervisor (arena/tournament/supervisor.py) over local worker
    processes, each reply counted in the run's summary and display. ``run(pending, n_workers,
    top_up)``: ``top_up(queue)``, if given, is called before each dispatch and may add matches to the
    queue or clear it (arena duel feeds its deals so, an adaptive schedule its rounds)."""

    PREFETCH = LocalBackend.prefetch

    def __init__(
        self, ctx: dict[str, Any], summary: RunSummary, progress: Progress, backend: Backend | None = None
    ) -> None:
        self.ctx = ctx
        self.summary = summary
        self.progress = progress
        self.backend = backend
        self.supervisor: MatchSupervisor | None = None

    def _busy(self) -> bool:
        return self.supervisor is not None and self.supervisor.busy()

    def run(self, pending: list[Any], n_workers: int, top_up: Callable[[deque], None] | None = None) -> None:
        from arena.tournament.store import ResultStore

        def stored(match: MatchSpec) -> bool:
            with ResultStore(self.ctx["results"]) as store:
                return match.match_id in store.completed_ids()

        self.supervisor = MatchSupervisor(
            self.backend or LocalBackend(self.ctx),
            workers=n_workers,
            retries=Retries(self.summary.given_up),
            stored=stored,
        )
        self.supervisor.submit(*pending)
        try:
            # closed on the way out: Ctrl-C or DiskFull here stops the workers at once, not when collected
            with contextlib.closing(self.supervisor.stream(top_up)) as replies:
                for match, reply in replies:
                    self._count(match, reply)
        except BaseException:
            self.supervisor.stop(kill=True)  # a no-op unless a second Ctrl-C cut the stream's own short
            raise

    def _count(self, match: MatchSpec, reply: Reply) -> None:
        if isinstance(reply, Played):
            self.summary.played += 1
            self.summary.faults += len(reply.faults)
            self.progress.update(match.match_id, list(reply.faults), reply.reasons)
        elif isinstance(reply, HarnessFailed):
            self.summary.harness_failures.append(f"{match.match_id}: {reply.why}")
        elif isinstance(reply, NoSpace):
            from arena.tournament.store import no_space_left

            folder = Path(self.ctx["results"])
            if not no_space_left(folder) and (why := unwritable(folder)) is not None:
                raise ResultsReadOnly(folder, why)
            raise DiskFull(folder, reply.why)
        # Raised: given up after its tries (summary.given_up says so)


def store_in_driver(ctx: dict[str, Any], summary: RunSummary) -> Callable[[dict[str, Any]], Reply]:
    """For workers that send their records back (Ray actors): each one stored here, logged as a local
    worker logs it, and answered as one would (``Played``, or ``HarnessFailed``: not stored)."""
    from arena.tournament.store import ResultStore

    store = ResultStore(ctx["results"])
    levels: set[str] = set()

    def store_record(record: dict[str, Any]) -> Reply:
        levels.add(record["sandbox"]["level"])  # detected per node: may differ from this machine's
        summary.sandbox_level = ", ".join(sorted(levels))
        failure = is_harness_failure(record)
        if failure is not None:
            log.warning(
                "match %s: the harness could not play it: %s; not stored, the next run plays it",
                record["match_id"],
                failure,
            )
            return HarnessFailed(record["match_id"], failure)
        return _played(record, store.record_match(record))

    return store_record


def _config_json(tournament: Any) -> dict[str, Any]:
    if hasattr(tournament, "model_dump"):
        return tournament.model_dump(mode="json")
    return dict(tournament)
