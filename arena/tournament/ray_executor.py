"""Play a tournament's pending matches on a Ray cluster (`arena run --executor ray`).

Workers are Ray actors, possibly on other machines: they see neither the driver's
files nor its results store. So each actor receives the bots' bytes once (checked
against their SHA-256), writes them into its own temporary folder, detects the
sandbox of its own node and keeps its bots warm across matches (arena.tournament.match_player,
as the local workers do). Records come back to the driver, which stores them.

Ray is optional: this module imports it only inside ``play_on_ray``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import re
import shutil
import socket
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable, Mapping

from arena.errors import ArenaError

log = logging.getLogger("arena.ray")

RAY_MISSING = "--executor ray needs Ray: pip install 'decktet-arena[ray]'"
IN_FLIGHT_PER_WORKER = 2   # one playing, one queued: the actor never waits for the driver
CLOSE_GRACE_S = 5.0        # after Ctrl-C: time for running matches to end before actors are killed
SLOW_START_WARN_S = 60.0   # no worker ready by then: say so (a busy or scaling cluster)


COPIES_PREFIX = "arena-ray-"      # + <actor pid>-: a worker's bot copies and logs


class BotShippingError(ArenaError):
    """A bot file's bytes do not match the SHA-256 the tournament recorded."""


def require_ray() -> None:
    """Raise the one-line ``ArenaError`` if Ray is not installed (without importing it)."""
    if importlib.util.find_spec("ray") is None:
        raise ArenaError(RAY_MISSING)


# ---- shipping bot files ------------------------------------------------------------


def pack_bots(entries: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each bot's file read once on the driver: name -> {file, sha256, kind, data}.

    Refuses a file whose bytes no longer match the SHA-256 its entry recorded (it
    changed after the roster was read): results would not say which code played.
    """
    packed = {}
    for name, entry in entries.items():
        data = Path(entry.path).read_bytes()
        if hashlib.sha256(data).hexdigest() != entry.sha256:
            raise BotShippingError(f"{entry.path}: bot {name!r} changed while the tournament started "
                                   "(SHA-256 differs); run the command again")
        packed[name] = {"file": Path(entry.path).name, "sha256": entry.sha256, "kind": entry.kind, "data": data}
    return packed


def unpack_bots(packed: Mapping[str, Mapping[str, Any]], folder: Path) -> dict[str, Any]:
    """Write shipped bots as ``folder/<name>/<file name>`` and return their ``BotEntry``s.

    Names and SHA-256 stay those of the driver; a file whose bytes do not match
    its SHA-256, before or after writing, raises ``BotShippingError``.
    """
    from arena.tournament.config import SAFE_NAME
    from arena.tournament.roster import BotEntry, bot_kind, file_sha256

    entries = {}
    for name, bot in packed.items():
        file = str(bot["file"])
        if not SAFE_NAME.match(name) or file in ("", ".", "..") or "/" in file or "\0" in file:
            raise BotShippingError(f"refusing shipped bot {name!r} with file name {file!r}")
        data = bytes(bot["data"])
        if hashlib.sha256(data).hexdigest() != bot["sha256"]:
            raise BotShippingError(f"bot {name!r} ({file}) arrived with bytes that do not match its "
                                   f"SHA-256 {bot['sha256'][:12]}...; refusing to play it")
        path = folder / name / file
        path.parent.mkdir(parents=True)
        path.parent.chmod(0o755)  # the sandbox may run the bot under another uid
        path.write_bytes(data)
        path.chmod(0o755 if bot["kind"] == "executable" else 0o644)
        entry = BotEntry(name=name, path=path, sha256=file_sha256(path), kind=bot_kind(path) or "python")
        if entry.sha256 != bot["sha256"] or entry.kind != bot["kind"]:
            raise BotShippingError(f"bot {name!r} ({file}) changed while written to {path}; refusing to play it")
        entries[name] = entry
    return entries


# ---- the actor --------------------------------------------------------------------


def _sweep_stale_copies() -> None:
    """Remove the folders of workers on this node that died without closing (killed, node lost)."""
    from arena.match.sandbox.launch import sweep_dead_owner_dirs

    sweep_dead_owner_dirs(COPIES_PREFIX)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


class BotWorker:
    """One Ray worker (wrapped by ``ray.remote`` in ``play_on_ray``): its bots, its sandbox.

    A failure while setting up is kept and reported by ``ready()`` rather than
    raised, so the driver can say in one line which node failed and why.
    """

    def __init__(self, packed: Mapping[str, Mapping[str, Any]], settings: Mapping[str, Any]) -> None:
        from arena import __version__

        self.error: str | None = None
        self.sandbox_level = ""
        self.player: Any = None
        _sweep_stale_copies()
        self.tmp = Path(tempfile.mkdtemp(prefix=f"{COPIES_PREFIX}{os.getpid()}-"))
        try:
            if settings["version"] != __version__:
                raise ArenaError(f"this node has decktet-arena {__version__}, the driver "
                                 f"{settings['version']}; install the same version everywhere")
            entries = unpack_bots(packed, self.tmp / "bots")
            self._setup(entries, settings)
        except Exception as exc:  # noqa: BLE001 - reported by ready()
            self.error = _one_line(exc)

    def _setup(self, entries: dict[str, Any], settings: Mapping[str, Any]) -> None:
        from arena.tournament.match_player import MatchPlayer
        from arena.match.sandbox import become_subreaper
        from arena.match.sandbox.detect import detect_sandbox

        sandbox = detect_sandbox(settings["sandbox_level"])  # SandboxUnavailable names the reason
        become_subreaper()
        self.sandbox_level = sandbox.level
        log_dir = self.tmp / "logs"
        log_dir.mkdir()
        self.player = MatchPlayer(entries, sandbox=sandbox, limits=settings["limits"],
                                  time_control=settings["tc"], log_dir=log_dir, fresh=settings["fresh"],
                                  tournament=settings["name"], warm_bots=settings.get("warm_bots", 32))

    def ready(self) -> dict[str, Any]:
        """Where this worker runs, its sandbox level, and its set-up error if any."""
        where = socket.gethostname()
        try:
            import ray

            if ray.is_initialized():  # inside an actor; elsewhere (tests) asking would start Ray
                where += f" ({ray.util.get_node_ip_address()}, node {ray.get_runtime_context().get_node_id()[:8]})"
        except Exception:  # noqa: BLE001 - the host name is enough
            pass
        return {"host": where, "pid": os.getpid(), "sandbox": self.sandbox_level, "error": self.error}

    def play(self, match: Any) -> dict[str, Any]:
        """Play one match and return its record."""
        if self.player is None:
            raise ArenaError(f"worker not set up: {self.error}")
        return self.player.play(match)

    def close(self) -> dict[str, bytes]:
        """Stop the bots, remove the temporary folder; returns the bots' stderr logs."""
        logs: dict[str, bytes] = {}
        if self.player is not None:
            self.player.close()
            for path in sorted((self.tmp / "logs").glob("*")):
                if path.is_file():
                    logs[path.name] = path.read_bytes()
            self.player = None
        shutil.rmtree(self.tmp, ignore_errors=True)
        return logs


# ---- the driver -------------------------------------------------------------------


def play_on_ray(pending: list[Any], ctx: dict[str, Any], on_record: Callable[[dict], None],
                *, address: str | None, workers: int, sandbox_level: str) -> None:
    """Play ``pending`` matches on Ray actors, calling ``on_record(record)`` here for each one.

    ``ctx`` is the runner's (entries, limits, tc, fresh, name, results, sandbox).
    ``address`` None starts a local Ray instance unless one is already initialised
    in this process (then it is used and left running). ``workers`` actors of one
    CPU each; 0 means one per CPU of the cluster. Matches in flight on a lost
    actor are not recorded (a warning says so; the next run plays them). On
    KeyboardInterrupt: queued matches are cancelled, actors stopped, and the
    KeyboardInterrupt is raised again.
    """
    require_ray()
    import ray

    from arena import __version__

    if not pending:
        return
    packed = pack_bots(ctx["entries"])
    settings = {"version": __version__, "sandbox_level": sandbox_level, "limits": ctx["limits"],
                "tc": ctx["tc"], "fresh": ctx["fresh"], "name": ctx["name"],
                "warm_bots": ctx.get("warm_bots", 32)}
    owns = not ray.is_initialized()
    if owns:
        _check_reachable(address)
        t0 = time.monotonic()
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.WARNING, configure_logging=False)
        except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; the user needs one line
            raise ArenaError(f"cannot start or reach Ray at {address or 'a new local instance'}: "
                             f"{_brief(exc)}; check --ray-address") from None
        log.info("ray: connected in %.1f s", time.monotonic() - t0)
    driver_sandbox = ctx.get("sandbox")
    pool = _Pool(ray, on_record, ctx["entries"], getattr(driver_sandbox, "level", None))
    finished = False
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        n = min(len(pending), workers if workers > 0 else max(cpus, 1))
        if n > cpus:
            log.warning("ray: %d workers asked for, the cluster has %d CPUs now: the others start "
                        "when CPUs free up", n, cpus)
        worker_cls = ray.remote(num_cpus=1, max_restarts=0)(BotWorker)
        packed_ref = ray.put(packed)
        pool.start([worker_cls.remote(packed_ref, settings) for _ in range(n)])
        log.info("ray: %d workers for %d matches (cluster CPUs: %d)", n, len(pending), cpus)
        pool.run(deque(pending))
        finished = True
    except KeyboardInterrupt:
        pool.cancel_in_flight()
        raise
    finally:
        # after a normal end the bots close at leisure; after Ctrl-C or an error, promptly
        pool.shutdown(ctx["results"], grace_s=60.0 if finished else CLOSE_GRACE_S)
        if owns:
            ray.shutdown()


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
        raise ArenaError(f"cannot reach Ray at {address}: {exc.strerror or exc}; is `ray start --head` "
                         "running there? check --ray-address") from None


class _Pool:
    """The driver's view of the actors: which are ready, alive, and what each has in flight."""

    def __init__(self, ray: Any, on_record: Callable[[dict], None], entries: Mapping[str, Any],
                 driver_level: str | None) -> None:
        self.ray = ray
        self.driver_level = driver_level
        self.on_record = on_record
        self.paths = {name: str(e.path) for name, e in entries.items()}
        self.actors: list[Any] = []
        self.where: dict[int, str] = {}
        self.starting: dict[Any, int] = {}       # ready() ref -> actor index
        self.live: set[int] = set()
        self.up: set[int] = set()   # said ready, set up or not: they have a folder to remove at close
        self.load: dict[int, int] = {}
        self.in_flight: dict[Any, tuple[int, Any]] = {}  # play() ref -> (actor index, match)
        self.lost = 0
        self.dropped = 0  # matches that were in flight on a failed worker

    def start(self, actors: list[Any]) -> None:
        self.actors = actors
        self.starting = {a.ready.remote(): i for i, a in enumerate(actors)}

    def run(self, queue: deque) -> None:
        """Feed matches with backpressure until every one is played or no worker is left."""
        t0 = time.monotonic()
        warned_slow = False
        while True:
            self._fill(queue)
            if not self.in_flight and (not queue or (not self.live and not self.starting)):
                break
            waiting = list(self.in_flight) + list(self.starting)
            done, _ = self.ray.wait(waiting, num_returns=1, timeout=1.0)
            for ref in done:
                if ref in self.starting:
                    self._on_ready(ref)
                else:
                    self._on_result(ref)
            if not warned_slow and not self.live and time.monotonic() - t0 > SLOW_START_WARN_S:
                warned_slow = True
                log.warning("ray: no worker ready after %.0f s: is the cluster busy or still scaling up?",
                            SLOW_START_WARN_S)
        if queue:
            raise ArenaError(f"every Ray worker failed ({self.lost} lost); {len(queue) + self.dropped} matches "
                             "not played; the finished ones are stored: run the same command again to resume")
        if self.dropped:
            log.warning("ray: %d matches not played because their worker failed; run the same command "
                        "again to play them", self.dropped)

    def _fill(self, queue: deque) -> None:
        for i in sorted(self.live, key=lambda k: self.load[k]):
            while queue and self.load[i] < IN_FLIGHT_PER_WORKER:
                match = queue.popleft()
                self.in_flight[self.actors[i].play.remote(match)] = (i, match)
                self.load[i] += 1

    def _on_ready(self, ref: Any) -> None:
        i = self.starting.pop(ref)
        try:
            info = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            self.lost += 1
            log.warning("ray: worker %d failed to start: %s", i, _brief(exc))
            return
        self.where[i] = f"{info['host']} pid {info['pid']}"
        self.up.add(i)
        if info["error"]:
            raise ArenaError(f"Ray worker on {info['host']}: {info['error']}")
        log.info("ray: worker %d ready on %s, sandbox %s", i, self.where[i], info["sandbox"])
        if self.driver_level and info["sandbox"] != self.driver_level:
            log.warning("ray: worker %d on %s runs bots at sandbox level %s (this machine: %s); "
                        "pass --sandbox LEVEL to require one level everywhere",
                        i, info["host"], info["sandbox"], self.driver_level)
        self.live.add(i)
        self.load[i] = 0

    def _on_result(self, ref: Any) -> None:
        i, match = self.in_flight.pop(ref)
        self.load[i] -= 1
        try:
            record = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            if i in self.live:
                self.live.discard(i)
                self.up.discard(i)
                self.lost += 1
                log.warning("ray: worker %d (%s) failed: %s; its matches in flight are not recorded "
                            "(the next run plays them)", i, self.where.get(i, "?"), _brief(exc))
                self.ray.kill(self.actors[i], no_restart=True)  # its bots may be in any state
            log.info("ray: match %s: the worker's error in full (with its traceback):\n%s", match.match_id, exc)
            log.warning("ray: match %s not played (worker %d failed)", match.match_id, i)
            self.dropped += 1
            return
        for bot in record.get("bots", []):
            # the bot ran from the worker's copy; the record names the driver's file (same SHA-256)
            if bot.get("name") in self.paths:
                bot["path"] = self.paths[bot["name"]]
        self.on_record(record)

    def cancel_in_flight(self) -> None:
        """Cancel every match not yet started (running ones finish: Ray cannot interrupt them)."""
        for ref in list(self.in_flight):
            try:
                self.ray.cancel(ref)
            except Exception:  # noqa: BLE001 - best effort
                pass
        self.in_flight.clear()

    def shutdown(self, results: Path, *, grace_s: float) -> None:
        """Close every live worker's bots (keeping their stderr logs), then kill all actors."""
        closing = {self.actors[i].close.remote(): i for i in self.up}
        end = time.monotonic() + grace_s
        while closing and time.monotonic() < end:
            done, _ = self.ray.wait(list(closing), num_returns=1, timeout=max(0.0, end - time.monotonic()))
            for ref in done:
                i = closing.pop(ref)
                try:
                    logs = self.ray.get(ref)
                except self.ray.exceptions.RayError:
                    continue
                if not logs:
                    continue
                folder = Path(results) / "logs" / f"ray-{i}"
                folder.mkdir(parents=True, exist_ok=True)
                for name, data in logs.items():
                    (folder / Path(name).name).write_bytes(data)
        for i in closing.values():
            log.warning("ray: worker %d (%s) did not close in %.0f s; killed", i, self.where.get(i, "?"), grace_s)
        for actor in self.actors:
            try:
                self.ray.kill(actor, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.live.clear()
        self.up.clear()


def _brief(exc: BaseException) -> str:
    """One line of a Ray error: its root cause (the last ``...Error: ...`` line) if shown, else its first line."""
    lines = [ln.strip() for ln in re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).splitlines() if ln.strip()]
    if not lines:
        return type(exc).__name__
    return lines[-1] if re.match(r"^[\w.]+(Error|Exception)\b", lines[-1]) else lines[0]
