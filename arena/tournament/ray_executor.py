"""Play a tournament's pending matches on a Ray cluster (`arena run --executor ray`).

Workers are Ray actors, possibly on other machines: they see neither the driver's
files nor its results store. So each actor receives the bots by content through Ray's
object store (files and bot folders, checked against their SHA-256), unpacks them into
its node's cache keyed by that hash and installs bot folders' requirements there
(arena.tournament.bot_shipping), detects the sandbox of its own node, and keeps its bots
warm across matches (arena.tournament.match_player, as the local workers do), starting
the bot processes of the match it will play next while one plays. Records come back to
the driver, which stores them.

The driver supervises the actors as the local pool supervises its workers: a dead
actor is replaced in the same run and its match played again (``MAX_TRIES`` tries,
shared with the local pool through ``retries.Retries``), a harness exception comes
back with its traceback for run.log, and a cluster left without workers stops the
run, incomplete, in one line (``WorkersLost``).

Ray is optional: this module imports it only inside ``play_on_ray``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import shutil
import socket
import tempfile
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.errors import ArenaError, WorkersLost
from arena.match.bot_log import append_within, ledger_path
from arena.tournament.bot_shipping import BotShippingError, pack_bots, unpack_bots  # noqa: F401 - re-exported
from arena.tournament.retries import MAX_TRIES, Retries, seats_text

log = logging.getLogger("arena.ray")

RAY_MISSING = "--executor ray needs Ray: pip install 'decktet-arena[ray]'"
IN_FLIGHT_PER_WORKER = 2  # one playing, one queued: the actor never waits for the driver
CLOSE_GRACE_S = 5.0  # after Ctrl-C: time for running matches to end before actors are killed
SLOW_START_WARN_S = 60.0  # no worker ready by then: say so (a busy or scaling cluster)
REPLACE_WAIT_S = 120.0  # every worker lost and none back by then: the run stops, in one line
REPLACE_WAIT_ENV = "ARENA_RAY_REPLACE_WAIT_S"  # overrides REPLACE_WAIT_S (docs/cluster.md)


COPIES_PREFIX = "arena-ray-"  # + <actor pid>-: a worker's folder for its bots' stderr logs


def require_ray() -> None:
    """Raise the one-line ``ArenaError`` if Ray is not installed (without importing it)."""
    if importlib.util.find_spec("ray") is None:
        raise ArenaError(RAY_MISSING)


# ---- the actor --------------------------------------------------------------------


def _sweep_stale_copies() -> None:
    """Remove the folders of workers on this node that died without closing (killed, node lost)."""
    from arena.match.sandbox.launch import sweep_dead_owner_dirs

    sweep_dead_owner_dirs(COPIES_PREFIX)


def _detect_sandbox(level: str) -> Any:
    from arena.match.detect import detect_sandbox

    return detect_sandbox(level)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


class BotWorker:
    """One Ray worker (wrapped by ``ray.remote`` in ``play_on_ray``): its bots, its sandbox.

    A failure while setting up is kept and reported by ``ready()`` rather than
    raised, so the driver can say in one line which node failed and why. An
    exception while playing is returned with its traceback (``play``), so the
    driver can log it and play the match again.
    """

    def __init__(self, packed: Mapping[str, Mapping[str, Any]], settings: Mapping[str, Any]) -> None:
        from arena import __version__

        self.error: str | None = None
        self.sandbox_level = ""
        self.node: dict[str, str] = {}
        self.player: Any = None
        self.closed = threading.Event()
        self._new_player: Callable[[], Any] | None = None
        t0 = time.monotonic()
        # the sandbox self-test (mostly waiting on its test processes) runs beside the unpacking
        # and the imports: both are on the way of the first match
        background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-detect")
        detecting = background.submit(_detect_sandbox, settings["sandbox_level"])
        background.shutdown(wait=False)
        _sweep_stale_copies()
        self.tmp = Path(tempfile.mkdtemp(prefix=f"{COPIES_PREFIX}{os.getpid()}-"))
        try:
            if settings["version"] != __version__:
                raise ArenaError(
                    f"this node has decktet-arena {__version__}, the driver "
                    f"{settings['version']}; install the same version everywhere"
                )
            entries = unpack_bots(packed)  # into this node's cache, by content hash
            self._setup(entries, settings, detecting)
        except Exception as exc:  # noqa: BLE001 - reported by ready()
            self.error = _one_line(exc)
        self.setup_s = time.monotonic() - t0

    def _setup(self, entries: dict[str, Any], settings: Mapping[str, Any], detecting: Future) -> None:
        from arena.match.sandbox import become_subreaper
        from arena.tournament.match_player import MatchPlayer

        sandbox = detecting.result()  # SandboxUnavailable names the reason
        if not sandbox.safe and not settings.get("trust_bots", False):
            # each node detects its own level: the driver's bubblewrap says nothing of this node's
            why = "; ".join(sandbox.details.get("unsafe", [])) or "not proven safe"
            raise ArenaError(
                f"no sandbox level safe for untrusted bots on this node (best: {sandbox.level}: {why}); "
                "install bubblewrap on every node (docs/cluster.md), or set trust_bots: true "
                "if you trust every bot"
            )
        become_subreaper()
        self.sandbox_level = sandbox.level
        log_dir = self.tmp / "logs"
        log_dir.mkdir()

        def new_player() -> MatchPlayer:
            return MatchPlayer(
                entries,
                sandbox=sandbox,
                limits=settings["limits"],
                time_control=settings["tc"],
                log_dir=log_dir,
                fresh=settings["fresh"],
                tournament=settings["name"],
                warm_bots=settings.get("warm_bots", 64),
                deal_memory=settings.get("deal_memory", False),
            )

        self._new_player = new_player
        self.player = new_player()

    def _where(self) -> dict[str, str]:
        """This worker's host, and its Ray node's id and address when it runs in an actor."""
        if not self.node:
            node = {"host": socket.gethostname()}
            try:
                import ray

                if ray.is_initialized():  # inside an actor; elsewhere (tests) asking would start Ray
                    node.update(ip=ray.util.get_node_ip_address(), id=ray.get_runtime_context().get_node_id())
            except Exception:  # noqa: BLE001 - the host name is enough
                pass
            self.node = node
        return self.node

    def ready(self) -> dict[str, Any]:
        """Where this worker runs, its sandbox level, and its set-up error if any."""
        node = self._where()
        where = node["host"] + (f" ({node['ip']}, node {node['id'][:8]})" if "id" in node else "")
        return {
            "host": where,
            "pid": os.getpid(),
            "sandbox": self.sandbox_level,
            "error": self.error,
            "setup_s": round(self.setup_s, 2),
        }

    def play(self, match: Any, upcoming: Any = None) -> dict[str, Any]:
        """Play one match and return its record, or ``{"harness_error": one line,
        "traceback": text}`` if the harness raised (the bots are then restarted:
        they may be in any state). ``upcoming``, the match the driver will send this
        worker next, lets the bot processes it needs start during this one, as the
        local pool's workers do."""
        if self.player is None:
            raise ArenaError(f"worker not set up: {self.error}")
        try:
            record = self.player.play(match, upcoming)
            record["node"] = dict(self._where())  # which machine played it (docs/cluster.md)
            return record
        except Exception as exc:  # noqa: BLE001 - the driver logs it and plays the match again
            failure = {"harness_error": _one_line(exc), "traceback": traceback.format_exc()}
            try:
                self.player.close()
            except Exception:  # noqa: BLE001 - a fresh player is what matters
                pass
            assert self._new_player is not None
            self.player = self._new_player()
            return failure

    def watch(self) -> str:
        """Returns only when the worker closes: run in its own thread (concurrency group
        ``watch``), so the driver's pending call fails the moment the actor dies, busy or idle."""
        self.closed.wait()
        return "closed"

    def close(self) -> dict[str, bytes]:
        """Stop the bots, remove the temporary folder; returns the bots' stderr logs."""
        logs: dict[str, bytes] = {}
        self.closed.set()
        if self.player is not None:
            self.player.close()
            for path in sorted((self.tmp / "logs").glob("*")):
                if path.is_file():
                    logs[path.name] = path.read_bytes()
            self.player = None
        shutil.rmtree(self.tmp, ignore_errors=True)
        return logs


# ---- the driver -------------------------------------------------------------------


def play_on_ray(
    pending: list[Any],
    ctx: dict[str, Any],
    on_record: Callable[[dict], None],
    *,
    address: str | None,
    workers: int,
    sandbox_level: str,
    retry: Callable[[Any, str], bool] | None = None,
    replace_wait_s: float | None = None,
    top_up: Callable[[deque], None] | None = None,
) -> None:
    """Play ``pending`` matches on Ray actors, calling ``on_record(record)`` here for each one.

    ``ctx`` is the runner's (entries, limits, tc, fresh, name, results, sandbox).
    ``address`` None starts a local Ray instance unless one is already initialised
    in this process (then it is used and left running). ``workers`` actors of one
    CPU each; 0 means one per CPU of the cluster.

    The actors are supervised as the local pool's workers are: an actor that dies
    (killed, out of memory, its node lost), busy or idle, is noticed at once and
    replaced while work is left; the match it was playing goes back to the queue if
    ``retry(match, why)`` says so (``retries.Retries``: ``MAX_TRIES`` tries, then given
    up), the match queued behind it goes back uncounted. A harness exception in an
    actor is logged with its traceback and the match is retried the same way.
    If no worker is left and none can start again within ``replace_wait_s``
    (the cluster lost its nodes), or actors keep dying with no match in flight
    (``MAX_TRIES`` per worker), ``WorkersLost`` says so in one line; finished
    matches are stored. On KeyboardInterrupt: queued matches are cancelled, actors
    stopped, and the KeyboardInterrupt is raised again. ``top_up(queue)``, if given, is called
    before each dispatch and may add matches (the local pool's hook: `arena serve`'s matchmaker).
    """
    require_ray()
    import ray

    from arena import __version__

    if not pending:
        return
    if retry is None:
        retry = Retries([]).again
    packed = pack_bots(ctx["entries"])
    settings = {
        "version": __version__,
        "sandbox_level": sandbox_level,
        "limits": ctx["limits"],
        "tc": ctx["tc"],
        "fresh": ctx["fresh"],
        "name": ctx["name"],
        "warm_bots": ctx.get("warm_bots", 64),
        "deal_memory": ctx.get("deal_memory", False),
        "trust_bots": bool(ctx.get("trust_bots", False)),
    }
    if replace_wait_s is None:
        replace_wait_s = _replace_wait_s()
    owns = not ray.is_initialized()
    if owns:
        _check_reachable(address)
        t0 = time.monotonic()
        try:
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.WARNING,
                configure_logging=False,
            )
        except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; the user needs one line
            raise ArenaError(
                f"cannot start or reach Ray at {address or 'a new local instance'}: {_brief(exc)}; check --ray-address"
            ) from None
        log.info("ray: connected in %.1f s", time.monotonic() - t0)
    driver_sandbox = ctx.get("sandbox")
    pool = _Pool(ray, on_record, retry, ctx["entries"], getattr(driver_sandbox, "level", None), replace_wait_s)
    finished = False
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        n = min(len(pending), workers if workers > 0 else max(cpus, 1))
        if n > cpus:
            log.warning(
                "ray: %d workers asked for, the cluster has %d CPUs now: the others start when CPUs free up", n, cpus
            )
        # its own thread for watch(), so a call to it is pending while the actor lives, busy or idle
        worker_cls = ray.remote(num_cpus=1, max_restarts=0, concurrency_groups={"watch": 1})(BotWorker)
        packed_ref = ray.put(packed)
        pool.start(lambda: worker_cls.remote(packed_ref, settings), n)
        log.info("ray: %d workers for %d matches (cluster CPUs: %d)", n, len(pending), cpus)
        pool.run(deque(pending), top_up)
        finished = True
    except KeyboardInterrupt:
        pool.cancel_in_flight()
        raise
    finally:
        # after a normal end the bots close at leisure; after Ctrl-C or an error, promptly
        pool.shutdown(
            ctx["results"], grace_s=60.0 if finished else CLOSE_GRACE_S, stderr_cap=ctx["limits"].stderr_log_kb * 1024
        )
        if owns:
            ray.shutdown()


def _replace_wait_s() -> float:
    """How long a run with no live worker waits for one to start again (``ARENA_RAY_REPLACE_WAIT_S``)."""
    text = os.environ.get(REPLACE_WAIT_ENV, "").strip()
    if not text:
        return REPLACE_WAIT_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1e6:
        raise ArenaError(f"{REPLACE_WAIT_ENV}={text!r} is not a number of seconds; set it to e.g. 120, or unset it")
    return value


def _check_reachable(address: str | None, timeout_s: float = 5.0) -> None:
    """Fail fast on a HOST:PORT nobody listens on (Ray itself retries for minutes)."""
    if not address or "://" in address or address == "auto":
        return
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ArenaError(
            f"cannot reach Ray at {address}: {exc.strerror or exc}; is `ray start --head` "
            "running there? check --ray-address"
        ) from None


@dataclass
class _Actor:
    """One actor as the driver sees it."""

    index: int
    handle: Any
    ready_ref: Any = None  # pending until it has started
    watch_ref: Any = None  # pending while it lives
    where: str = "?"
    live: bool = False  # started and set up: gets matches
    up: bool = False  # said ready, set up or not: it has a folder to remove at close
    in_flight: list[tuple[Any, Any]] = field(default_factory=list)  # (play ref, match), oldest (playing) first
    reserved: Any = None  # the match it gets next, announced with its last play call


class _Pool:
    """The driver's view of the actors: which are starting, live, and what each has in flight.

    Every actor has a pending ``watch()`` call, which fails the moment the actor
    dies; the driver then puts its matches back in the queue and starts another.
    """

    def __init__(
        self,
        ray: Any,
        on_record: Callable[[dict], None],
        retry: Callable[[Any, str], bool],
        entries: Mapping[str, Any],
        driver_level: str | None,
        replace_wait_s: float,
    ) -> None:
        self.ray = ray
        self.driver_level = driver_level
        self.on_record = on_record
        self.retry = retry
        self.replace_wait_s = replace_wait_s
        self.paths = {name: str(e.path) for name, e in entries.items()}
        self.new_actor: Callable[[], Any] = lambda: None
        self.n = 0
        self.actors: dict[int, _Actor] = {}  # not known dead
        self.all_handles: list[Any] = []  # every actor started, for the final kill
        self.refs: dict[Any, tuple[str, _Actor, Any]] = {}  # pending ref -> (ready|watch|play, actor, match)
        self.lost = 0
        self.idle_deaths = 0  # died with no match in flight, or while starting
        self.none_live_since: float | None = None  # since when no worker is live, after a loss

    def start(self, new_actor: Callable[[], Any], n: int) -> None:
        self.new_actor = new_actor
        self.n = n
        for _ in range(n):
            self._spawn()

    def _spawn(self) -> int:
        i = len(self.all_handles)
        handle = self.new_actor()
        self.all_handles.append(handle)
        a = _Actor(i, handle)
        a.ready_ref = handle.ready.remote()
        a.watch_ref = handle.watch.options(concurrency_group="watch").remote()
        self.refs[a.ready_ref] = ("ready", a, None)
        self.refs[a.watch_ref] = ("watch", a, None)
        self.actors[i] = a
        return i

    def _live(self) -> list[_Actor]:
        return [a for a in self.actors.values() if a.live]

    def _busy(self) -> bool:
        return any(a.in_flight or a.reserved is not None for a in self.actors.values())

    def run(self, queue: deque, top_up: Callable[[deque], None] | None = None) -> None:
        """Feed matches with backpressure until every one is played, retried or given up."""
        t0 = time.monotonic()
        warned_slow = False
        while True:
            if top_up is not None:
                top_up(queue)
            self._fill(queue)
            if not queue and not self._busy():
                break
            if not self.actors:
                raise self._all_lost(queue, "none could be started again")
            done, _ = self.ray.wait(list(self.refs), num_returns=1, timeout=1.0)
            for ref in done:
                if ref not in self.refs:
                    continue  # belonged to an actor handled as dead in this round
                kind, a, match = self.refs.pop(ref)
                if kind == "ready":
                    self._on_ready(a, ref, queue)
                elif kind == "watch":
                    self._on_watch(a, ref, queue)
                else:
                    self._on_result(a, ref, match, queue)
            if self._live():
                self.none_live_since = None
            elif self.none_live_since is not None and time.monotonic() - self.none_live_since > self.replace_wait_s:
                raise self._all_lost(queue, f"none could start again in {self.replace_wait_s:.0f} s")
            if not warned_slow and self.lost == 0 and not self._live() and time.monotonic() - t0 > SLOW_START_WARN_S:
                warned_slow = True
                log.warning(
                    "ray: no worker ready after %.0f s: is the cluster busy or still scaling up?", SLOW_START_WARN_S
                )

    def _all_lost(self, queue: deque, why: str) -> WorkersLost:
        try:
            res, free = self.ray.cluster_resources(), self.ray.available_resources()
            cpus = f"cluster CPUs: {int(res.get('CPU', 0))}, free: {int(free.get('CPU', 0))}"
        except Exception:  # noqa: BLE001 - the cluster itself may be gone
            cpus = "cluster unreachable"
        left = len(queue) + sum(len(a.in_flight) + (a.reserved is not None) for a in self.actors.values())
        return WorkersLost(
            f"every Ray worker was lost ({self.lost} in all) and {why} ({cpus}); {left} matches "
            "not played; the finished ones are stored: run the same command again to resume"
        )

    def _fill(self, queue: deque) -> None:
        """Keep ``IN_FLIGHT_PER_WORKER`` matches with each live actor. Each call names the
        match that actor gets after it (reserved for it), so the bot processes that match
        needs start while the one before plays (match_player's spares)."""
        for a in sorted(self._live(), key=lambda a: len(a.in_flight)):
            while (queue or a.reserved is not None) and len(a.in_flight) < IN_FLIGHT_PER_WORKER:
                match = a.reserved if a.reserved is not None else queue.popleft()
                a.reserved = queue.popleft() if queue else None
                ref = a.handle.play.remote(match, a.reserved)
                a.in_flight.append((ref, match))
                self.refs[ref] = ("play", a, match)

    def _unreserve(self, a: _Actor, queue: deque) -> None:
        """The match reserved for ``a`` goes back to the front of the queue, uncounted."""
        if a.reserved is not None:
            queue.appendleft(a.reserved)
            a.reserved = None

    def _on_ready(self, a: _Actor, ref: Any, queue: deque) -> None:
        a.ready_ref = None
        try:
            info = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            self._lost(a, f"failed to start: {_brief(exc)}", queue, exc)
            return
        a.where = f"{info['host']} pid {info['pid']}"
        a.up = True
        if info["error"]:
            raise ArenaError(f"Ray worker on {info['host']}: {info['error']}")
        log.info(
            "ray: worker %d ready on %s, sandbox %s (its set-up: %.1f s)",
            a.index,
            a.where,
            info["sandbox"],
            info.get("setup_s", 0.0),
        )
        if self.driver_level and info["sandbox"] != self.driver_level:
            log.warning(
                "ray: worker %d on %s runs bots at sandbox level %s (this machine: %s); "
                "pass --sandbox LEVEL to require one level everywhere",
                a.index,
                info["host"],
                info["sandbox"],
                self.driver_level,
            )
        a.live = True

    def _on_watch(self, a: _Actor, ref: Any, queue: deque) -> None:
        a.watch_ref = None
        try:
            self.ray.get(ref)
            why = "closed while the run needed it"
            exc: BaseException | None = None
        except self.ray.exceptions.RayError as err:
            why, exc = _brief(err), err
        self._lost(a, why, queue, exc)

    def _on_result(self, a: _Actor, ref: Any, match: Any, queue: deque) -> None:
        try:
            record = self.ray.get(ref)
        except self.ray.exceptions.RayTaskError as exc:
            # an exception that escaped play(): replace the actor, its bots may be in any state
            a.in_flight = [(r, m) for r, m in a.in_flight if r != ref]
            self._harness_raised(a, match, _brief(exc), str(exc), queue)
            self._lost(a, "its harness raised", queue, None, count_try=False)  # the next match did not fail
            return
        except self.ray.exceptions.RayError as exc:
            self._lost(a, _brief(exc), queue, exc)  # ``ref`` is still in flight: it goes back too
            return
        a.in_flight = [(r, m) for r, m in a.in_flight if r != ref]
        self._record(a, match, record, queue)

    def _record(self, a: _Actor, match: Any, record: dict[str, Any], queue: deque) -> None:
        if "harness_error" in record:
            self._harness_raised(a, match, record["harness_error"], record.get("traceback", ""), queue)
            return
        for bot in record.get("bots", []):
            # the bot ran from the worker's copy; the record names the driver's file (same SHA-256)
            if bot.get("name") in self.paths:
                bot["path"] = self.paths[bot["name"]]
        self.on_record(record)

    def _harness_raised(self, a: _Actor, match: Any, brief: str, trace: str, queue: deque) -> None:
        log.error(
            "match %s (%s): the harness raised %s on Ray worker %d (%s) (traceback in run.log)\n%s",
            match.match_id,
            seats_text(match.bots),
            brief,
            a.index,
            a.where,
            trace.rstrip(),
        )
        if self.retry(match, f"the harness raised {brief}"):
            queue.appendleft(match)

    def _lost(self, a: _Actor, why: str, queue: deque, exc: BaseException | None, *, count_try: bool = True) -> None:
        """Actor ``a`` is dead (or must go): keep what it finished, requeue the rest, replace it."""
        if self.actors.pop(a.index, None) is None:
            return
        self.lost += 1
        for ref in (a.ready_ref, a.watch_ref):
            self.refs.pop(ref, None)
        finished: list[tuple[Any, Any]] = []
        if a.in_flight:  # records that came back just before it died still count
            refs = [r for r, _ in a.in_flight]
            done, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
            for r, m in a.in_flight:
                self.refs.pop(r, None)
                if r in done:
                    try:
                        finished.append((m, self.ray.get(r)))
                    except self.ray.exceptions.RayError:
                        pass
        got = {m.match_id for m, _ in finished}
        unplayed = [m for _, m in a.in_flight if m.match_id not in got]
        a.in_flight = []
        self._unreserve(a, queue)
        try:
            self.ray.kill(a.handle, no_restart=True)  # if it still runs, its bots may be in any state
        except Exception:  # noqa: BLE001 - already gone
            pass
        fate = f"{len(unplayed)} matches in flight go back to the queue" if unplayed else "it had no match in flight"
        log.error("ray: worker %d (%s) died: %s; %s", a.index, a.where, why.rstrip("."), fate)
        if exc is not None:
            log.info("ray: worker %d: the error in full:\n%s", a.index, exc)
        for match, record in finished:
            self._record(a, match, record, queue)
        if unplayed:
            # the oldest was playing when it died: that one counts a try; the others had not started
            for match in reversed(unplayed[1:] if count_try else unplayed):
                queue.appendleft(match)
            if count_try and self.retry(unplayed[0], f"Ray worker {a.index} ({a.where}) died: {why.rstrip('.')}"):
                queue.appendleft(unplayed[0])
        elif count_try:  # not a worker removed on purpose
            self.idle_deaths += 1
            if self.idle_deaths > MAX_TRIES * max(1, self.n):
                raise WorkersLost(
                    f"Ray workers keep dying between matches or while starting ({self.idle_deaths} "
                    "so far); see run.log in the results folder; the finished matches are stored: "
                    "run the same command again to resume"
                )
        if not self._live() and self.none_live_since is None:
            self.none_live_since = time.monotonic()
        if queue or self._busy():
            log.info("ray: worker %d starts in place of worker %d", self._spawn(), a.index)

    def cancel_in_flight(self) -> None:
        """Cancel every match not yet started (running ones finish: Ray cannot interrupt them)."""
        for ref, (kind, _a, _m) in list(self.refs.items()):
            if kind != "play":
                continue
            try:
                self.ray.cancel(ref)
            except Exception:  # noqa: BLE001 - best effort
                pass
        for a in self.actors.values():
            a.in_flight = []
            a.reserved = None

    def shutdown(self, results: Path, *, grace_s: float, stderr_cap: int = 256 << 10) -> None:
        """Close every set-up worker's bots (keeping their stderr logs), then kill all actors."""
        closing = {a.handle.close.remote(): a for a in self.actors.values() if a.up}
        end = time.monotonic() + grace_s
        while closing and time.monotonic() < end:
            done, _ = self.ray.wait(list(closing), num_returns=1, timeout=max(0.0, end - time.monotonic()))
            for ref in done:
                a = closing.pop(ref)
                try:
                    logs = self.ray.get(ref)
                except self.ray.exceptions.RayError:
                    continue
                if not logs:
                    continue
                folder = Path(results) / "logs" / f"ray-{a.index}"
                folder.mkdir(parents=True, exist_ok=True)
                for name, data in logs.items():  # each node capped its own; the cap is per bot over all
                    bot = Path(name).name.removesuffix(".stderr.log")
                    append_within(
                        folder / Path(name).name, data, ledger=ledger_path(folder, bot), cap_bytes=stderr_cap, name=bot
                    )
        for a in closing.values():
            log.warning("ray: worker %d (%s) did not close in %.0f s; killed", a.index, a.where, grace_s)
        log.info("ray: workers closed in %.1f s", time.monotonic() - end + grace_s)
        for handle in self.all_handles:
            try:
                self.ray.kill(handle, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.actors.clear()
        self.refs.clear()


def _brief(exc: BaseException) -> str:
    """One line of a Ray error: its root cause (the last ``...Error: ...`` line) if shown, else its first line."""
    lines = [ln.strip() for ln in re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).splitlines() if ln.strip()]
    if not lines:
        return type(exc).__name__
    return lines[-1] if re.match(r"^[\w.]+(Error|Exception)\b", lines[-1]) else lines[0]
