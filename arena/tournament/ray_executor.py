"""Play matches on a Ray cluster (`arena run --executor ray`, `arena serve --executor ray`).

Workers are Ray actors, possibly on other machines: they see neither the driver's
files nor its results store. So each actor receives the bots by content through Ray's
object store (files and bot folders, checked against their SHA-256), unpacks them into
its node's cache keyed by that hash and installs bot folders' requirements there
(arena.tournament.bot_shipping), detects the sandbox of its own node, and keeps its bots
warm across matches (arena.tournament.match_player, as the local workers do), starting
the bot processes of the match it will play next while one plays. Records come back to
the driver, which stores them.

The actors are a backend (``RayBackend``) of the one supervisor of matches
(arena/tournament/supervisor.py), as the local worker processes are: a dead actor is
replaced in the same run and its match played again (``MAX_TRIES`` tries), a harness
exception comes back with its traceback for run.log, and a cluster left without workers
stops the run, incomplete, in one line (``WorkersLost``). What is Ray's is here: starting
and reaching Ray (``ray_session``), the actor (``BotWorker``), object refs turned into the
supervisor's events, the records stored as they come back, the bots' stderr logs collected
at the end.

Ray is optional: this module imports it only inside functions.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.match.bot_log import append_within, ledger_path
from arena.records.replies import Raised, Reply
from arena.tournament.bot_shipping import BotShippingError, pack_bots, unpack_bots  # noqa: F401 - re-exported
from arena.tournament.retries import seats_text
from arena.tournament.supervisor import Event, Lost, Ready, Replied

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
    """One Ray worker (wrapped by ``ray.remote`` in ``ray_backend``): its bots, its sandbox.

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
        from arena.match.sandbox.launch import remove_bot_lib

        remove_bot_lib()  # the bots' copy of the engines: ray.kill follows, and runs no atexit hook
        return logs


# ---- the driver -------------------------------------------------------------------


def connect(address: str | None) -> bool:
    """Start a local Ray instance (``address`` None) or reach a cluster, unless this process has
    Ray initialised already (a caller's: then it is used and left running). True: this call started
    it, and the caller shuts it down (``ray_session``)."""
    require_ray()
    import ray

    if ray.is_initialized():
        return False
    target, given_by = check_address(address)
    _notices_to_run_log()
    before = _signal_handlers()
    children = _children_now()
    t0 = time.monotonic()
    try:
        ray.init(
            address=target,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
            configure_logging=False,
        )
    except BaseException as exc:
        _stop_half_started(ray, children)  # its local processes must not outlive us
        if isinstance(exc, SystemExit) and exc.code == signal.SIGTERM:
            raise KeyboardInterrupt from None  # Ray's own SIGTERM handler, while ray.init ran
        if not isinstance(exc, Exception):
            raise
        fix = f"check {given_by}" if given_by else "see run.log"
        raise ArenaError(
            f"cannot start or reach Ray at {target or 'a new local instance'}: {_brief(exc)}; {fix}"
        ) from None
    finally:
        # ray.init puts its own SIGTERM handlers in place (a C++ one prints a crash dump and kills the
        # process): the run's own stops must stay in force, so a SIGTERM ends it as Ctrl-C does
        _restore_signal_handlers(before)
    log.info("ray: connected in %.1f s", time.monotonic() - t0)
    return True


def _children_now() -> set[tuple[int, int]]:
    """This process's descendants now: (pid, start ticks)."""
    from arena.match.sandbox import procs

    return {(pid, procs.start_ticks(pid)) for pid in procs.descendants(os.getpid())}


def _stop_half_started(ray: Any, before: set[tuple[int, int]]) -> None:
    """After a ``ray.init`` that failed or was interrupted (a SIGTERM or Ctrl-C while it started a
    local instance): Ray's shutdown stops the node it knows of, and the processes it started before
    it knew its node are killed, as every descendant of this process not in ``before``. Left alone,
    Ray's dashboard and runtime-env agents ran on for a minute after the arena had exited."""
    from arena.match.sandbox import procs

    started = {pid for pid in procs.descendants(os.getpid()) if (pid, procs.start_ticks(pid)) not in before}
    with contextlib.suppress(Exception):
        ray.shutdown()
    procs.kill_pids(started)
    procs.reap(started, timeout=1.0)


_STOP_SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT")


def _signal_handlers() -> dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}  # only the main thread sets handlers; Ray sets none from here either
    found = {getattr(signal, name): signal.getsignal(getattr(signal, name)) for name in _STOP_SIGNALS}
    return {sig: handler for sig, handler in found.items() if handler is not None}


def _restore_signal_handlers(handlers: Mapping[int, Any]) -> None:
    for sig, handler in handlers.items():
        signal.signal(sig, handler)  # sets the C-level handler again even when Python's is unchanged


def _notices_to_run_log() -> None:
    """Ray's driver prints the cluster's notices ("(raylet) A worker died ...") to stdout, colour
    codes and all, amid the progress lines; the arena reports lost workers itself, so they go to
    run.log only. So do the records of Ray's own loggers (ray.init's "Token authentication is
    enabled ..."), which its handler printed on stderr: they reach the run's handlers, whose
    console leaves them out (``setup_logging``)."""
    ray_logger = logging.getLogger("ray")
    for handler in list(ray_logger.handlers):
        ray_logger.removeHandler(handler)
    ray_logger.propagate = True
    try:
        from ray._private import worker as ray_worker
    except ImportError:  # another Ray: its notices stay where it prints them
        return
    if getattr(ray_worker, "print_to_stdstream", None) is None:
        return

    def to_run_log(data: Mapping[str, Any], ignore_prefix: bool = False) -> None:
        for line in data.get("lines", []):
            text = _ANSI.sub("", str(line)).rstrip()
            if text:
                log.info("ray (%s): %s", data.get("pid", "?"), text)

    ray_worker.print_to_stdstream = to_run_log


@contextlib.contextmanager
def ray_session(address: str | None) -> Iterator[None]:
    """Ray for the length of a ``with``: started or reached by ``connect``, shut down after if it started it."""
    owns = connect(address)
    try:
        yield
    finally:
        if owns:
            import ray

            ray.shutdown()


def ray_backend(
    ctx: dict[str, Any],
    *,
    sandbox_level: str,
    store: Callable[[dict[str, Any]], Reply],
    replace_wait_s: float | None = None,
) -> RayBackend:
    """The Ray actors of one run, as a backend of ``MatchSupervisor`` (Ray initialised: ``ray_session``).

    ``ctx`` is the runner's (entries, limits, tc, fresh, name, results, sandbox). Each actor gets
    the bots by content and detects its own node's sandbox (``sandbox_level``); ``store(record)``
    stores a record that came back, here, and says what was made of it (``Played``,
    ``HarnessFailed``)."""
    require_ray()
    import ray

    from arena import __version__

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
    packed = pack_bots(ctx["entries"])
    # asked first, before this run's actors: Ray's state accessor, first made after actors came and
    # went and a local pool forked in this process, was seen to hang (a test's sequence)
    cpus = int(ray.cluster_resources().get("CPU", 0))
    packed_ref = ray.put(packed)
    # its own thread for watch(), so a call to it is pending while the actor lives, busy or idle
    worker_cls = ray.remote(num_cpus=1, max_restarts=0, concurrency_groups={"watch": 1})(BotWorker)
    return RayBackend(
        ray,
        lambda: worker_cls.remote(packed_ref, settings),
        store=store,
        entries=ctx["entries"],
        driver_level=getattr(ctx.get("sandbox"), "level", None),
        results=ctx["results"],
        stderr_cap=ctx["limits"].stderr_log_kb * 1024,
        replace_wait_s=_replace_wait_s() if replace_wait_s is None else replace_wait_s,
        cpus=cpus,
    )


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


def check_ray(address: str | None) -> None:
    """Everything about Ray that can be refused before a run writes or resets anything: Ray
    installed, ``ARENA_RAY_REPLACE_WAIT_S``, and the address (``check_address``)."""
    require_ray()
    _replace_wait_s()
    check_address(address)


def ray_target(address: str | None) -> tuple[str | None, str]:
    """The address ray.init is to join and what gave it ("--ray-address", "RAY_ADDRESS"; None and
    "": a new local instance), refused in one line when it cannot be an address."""
    env = os.environ.get("RAY_ADDRESS", "").strip()
    if address is not None and not address.strip():
        raise ArenaError(
            "--ray-address is empty; give the Ray head's HOST:PORT (e.g. 10.0.0.5:6379) or auto, "
            "or leave the option out for a new local Ray instance"
        )
    if (address is None or address.strip() == "auto") and env:  # ray.init uses RAY_ADDRESS then
        target, given_by = env, "RAY_ADDRESS"
    elif address is None:
        return None, ""
    else:
        target, given_by = address.strip(), "--ray-address"
    if target in ("auto", "local") or "://" in target:
        return target, given_by
    host, sep, port = target.rpartition(":")
    if not sep or not host.strip("[]") or not port.isdigit() or not 0 < int(port) < 65536:
        fix = (
            "set RAY_ADDRESS to the Ray head's HOST:PORT (e.g. 10.0.0.5:6379), or unset it"
            if given_by == "RAY_ADDRESS"
            else "give the Ray head's HOST:PORT (e.g. 10.0.0.5:6379) or auto"
        )
        shown = f"RAY_ADDRESS={target!r}" if given_by == "RAY_ADDRESS" else f"--ray-address {target!r}"
        raise ArenaError(f"{shown} is not a Ray address (HOST:PORT); {fix}")
    return target, given_by


def check_address(address: str | None) -> tuple[str | None, str]:
    """``ray_target``, then, for a HOST:PORT, that a Ray head answers there: Ray itself retries a
    dead address or a port that is not its GCS for minutes, printing C++ warnings. Returns
    ``ray_target``'s answer."""
    target, given_by = ray_target(address)
    if target is not None:
        _check_reachable(target, given_by)
        _probe_gcs(target, given_by)
    return target, given_by


def _check_reachable(address: str | None, given_by: str = "--ray-address", timeout_s: float = 5.0) -> None:
    """Fail fast on a HOST:PORT nobody listens on (Ray itself retries for minutes)."""
    if not address or "://" in address or address in ("auto", "local"):
        return
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ArenaError(
            f"cannot reach Ray at {address} ({given_by}): {exc.strerror or exc}; is `ray start --head` "
            f"running there? check {given_by}"
        ) from None


GCS_PROBE_S = 2.0  # how long a HOST:PORT has to answer as a Ray head's GCS (Ray waits about thrice that)
# In a child process: Ray's GCS client prints its C++ warnings on stderr and keeps threads,
# neither of which belongs in the driver (nor in `arena serve` before it forks its matchmaker).
_PROBE = """
import sys
try:
    from ray._raylet import InnerGcsClient
    probe = InnerGcsClient.standalone
except (ImportError, AttributeError):
    sys.exit(0)  # another Ray version: ray.init decides
try:  # token auth on here and no token: Ray's client aborts the process (a failed check), never raises
    from ray._raylet import AuthenticationMode, AuthenticationTokenLoader, get_authentication_mode
    if get_authentication_mode() == AuthenticationMode.TOKEN and not AuthenticationTokenLoader.instance().has_token(
        ignore_auth_mode=True
    ):
        print("no token rpc_code: no-token")
        sys.exit(3)
except (ImportError, AttributeError):
    pass  # a Ray without token auth
try:
    probe(sys.argv[1], None, int(sys.argv[2]))
except Exception as exc:
    print(f"{type(exc).__name__}: {exc} rpc_code: {getattr(exc, 'rpc_code', '?')}".replace(chr(10), " "))
    sys.exit(3)
"""
_probed: set[str] = set()  # addresses that answered as a GCS in this process


def _probe_gcs(address: str, given_by: str) -> None:
    """Refuse in one line, within seconds, a HOST:PORT that is not a Ray head's GCS port (a raylet's
    port, another service, a listener that never answers)."""
    if "://" in address or address in ("auto", "local") or address in _probed:
        return
    env = dict(os.environ)
    env.setdefault("RAY_gcs_rpc_server_connect_timeout_s", str(int(GCS_PROBE_S)))
    try:
        res = subprocess.run(
            [sys.executable, "-c", _PROBE, address, str(int(GCS_PROBE_S * 1000))],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            timeout=4 * GCS_PROBE_S + 30,  # Python and Ray's imports on a busy machine
        )
    except subprocess.TimeoutExpired:
        why = f"no answer in {4 * GCS_PROBE_S + 30:.0f} s"
    else:
        if res.returncode == 0:
            _probed.add(address)
            return
        if res.returncode != 3:  # the probe itself failed (killed, out of memory): ray.init decides
            return
        why = res.stdout.strip() or "no answer"
    if "rpc_code: no-token" in why:
        raise ArenaError(
            f"RAY_AUTH_MODE=token is set on this machine but Ray finds no token to join {address} ({given_by}) "
            "with; put the Ray head's token in ~/.ray/auth_token or RAY_AUTH_TOKEN (docs/cluster.md)"
        )
    if "rpc_code: 16" in why or "Authentication" in why:
        # a driver sends a token only with RAY_AUTH_MODE=token: a token file alone is not enough
        fix = (
            "this machine's token is not the head's: put the head's token in ~/.ray/auth_token or RAY_AUTH_TOKEN"
            if os.environ.get("RAY_AUTH_MODE", "").strip().lower() == "token"
            else "set RAY_AUTH_MODE=token on this machine, with the head's token in ~/.ray/auth_token or RAY_AUTH_TOKEN"
        )
        raise ArenaError(
            f"the Ray head at {address} ({given_by}) requires its token (Ray's token auth); {fix} (docs/cluster.md)"
        )
    detail = "it answers, but not as a Ray head" if "rpc_code: 12" in why else "nothing there answers as a Ray head"
    raise ArenaError(
        f"cannot reach Ray at {address} ({given_by}): {detail}; give the head's GCS port (the --port of "
        f"`ray start --head`, 6379 by default): check {given_by}"
    )


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
    sent: int = 0  # matches the supervisor handed it, numbered as the supervisor counts
    held: deque[tuple[int, Any]] = field(default_factory=deque)  # handed over, not yet called: (number, match)
    in_flight: list[tuple[Any, int, Any]] = field(default_factory=list)  # (play ref, number, match), oldest first


class RayBackend:
    """Ray actors, possibly on other machines, as a backend of ``MatchSupervisor``: what is Ray's here
    (starting actors, turning object refs into events, storing the records that come back, collecting
    the bots' stderr logs at the end); dispatch, retries and lost workers are the supervisor's.

    Every actor has a pending ``watch()`` call, which fails the moment the actor dies, busy or idle:
    that is its ``Lost``. An actor takes matches once set up (``Ready``). It holds two play calls
    (one playing, one queued: it never waits for the driver) and the match after them, which is named
    in the second call (``upcoming``) so that its bot processes start while the one before plays.
    """

    prefetch = IN_FLIGHT_PER_WORKER + 1  # the play calls, and the match announced with the last of them
    spread_tail = False
    ready_at_start = False

    def __init__(
        self,
        ray: Any,
        new_actor: Callable[[], Any],
        *,
        store: Callable[[dict[str, Any]], Reply],
        entries: Mapping[str, Any],
        driver_level: str | None,
        results: Path,
        stderr_cap: int,
        replace_wait_s: float,
        cpus: int = 0,
    ) -> None:
        self.ray = ray
        self.cpus = cpus  # the cluster's, when the run started
        self.new_actor = new_actor
        self.store = store
        self.paths = {name: str(e.path) for name, e in entries.items()}
        self.driver_level = driver_level
        self.results = Path(results)
        self.stderr_cap = stderr_cap
        self.replace_wait_s = replace_wait_s
        self.actors: dict[int, _Actor] = {}  # not known dead
        self.all_handles: list[Any] = []  # every actor started, for the final kill
        self.refs: dict[Any, tuple[str, _Actor, Any]] = {}  # pending ref -> (ready|watch|play, actor, match)
        self.lost = 0
        self.replaced: deque[int] = deque()  # lost actors not yet replaced
        self.t0: float | None = None
        self.warned_slow = False
        self.none_live_since: float | None = None  # since when no worker is live, after a loss

    def size(self, workers: int, matches: int) -> int:
        """How many actors for ``matches`` matches: ``workers``, 0 meaning one per CPU of the cluster."""
        cpus = self.cpus
        n = max(1, min(matches, workers if workers > 0 else max(cpus, 1)))
        if n > cpus:
            log.warning(
                "ray: %d workers asked for, the cluster has %d CPUs now: the others start when CPUs free up", n, cpus
            )
        log.info("ray: %d workers for %d matches (cluster CPUs: %d)", n, matches, cpus)
        return n

    # ---- the supervisor's backend --------------------------------------------------------

    def start(self) -> int:
        i = len(self.all_handles)
        handle = self.new_actor()
        self.all_handles.append(handle)
        a = _Actor(i, handle)
        a.ready_ref = handle.ready.remote()
        a.watch_ref = handle.watch.options(concurrency_group="watch").remote()
        self.refs[a.ready_ref] = ("ready", a, None)
        self.refs[a.watch_ref] = ("watch", a, None)
        self.actors[i] = a
        if self.t0 is None:
            self.t0 = time.monotonic()
        if self.replaced:
            log.info("ray: worker %d starts in place of worker %d", i, self.replaced.popleft())
        return i

    def send(self, wid: int, match: Any) -> None:
        a = self.actors.get(wid)
        if a is None:
            raise OSError(f"Ray worker {wid} is gone")
        a.sent += 1
        a.held.append((a.sent, match))

    def wait(self, timeout_s: float) -> list[Event]:
        self._call()
        events: list[Event] = []
        if not self.refs:
            time.sleep(timeout_s)
            return events
        done, _ = self.ray.wait(list(self.refs), num_returns=1, timeout=timeout_s)
        for ref in done:
            if ref not in self.refs:
                continue  # belonged to an actor handled as dead in this round
            kind, a, match = self.refs.pop(ref)
            if kind == "ready":
                self._on_ready(a, ref, events)
            elif kind == "watch":
                self._on_watch(a, ref, events)
            else:
                self._on_result(a, ref, match, events)
        if any(a.live for a in self.actors.values()):
            self.none_live_since = None
        elif not self.warned_slow and self.lost == 0 and time.monotonic() - (self.t0 or 0.0) > SLOW_START_WARN_S:
            self.warned_slow = True
            log.warning(
                "ray: no worker ready after %.0f s: is the cluster busy or still scaling up?", SLOW_START_WARN_S
            )
        return events

    def stop(self, *, kill: bool) -> None:
        """After a normal end the bots close at leisure; after Ctrl-C or an error, promptly (matches
        not started are cancelled; running ones finish: Ray cannot interrupt them)."""
        if kill:
            for ref, (kind, _a, _m) in list(self.refs.items()):
                if kind == "play":
                    try:
                        self.ray.cancel(ref)
                    except Exception:  # noqa: BLE001 - best effort
                        pass
        self._shutdown(grace_s=CLOSE_GRACE_S if kill else 60.0)

    def keep_dying(self, deaths: int) -> str:
        return (
            f"Ray workers keep dying between matches or while starting ({deaths} so far); see run.log in the "
            "results folder; the finished matches are stored: run the same command again to resume"
        )

    def lost_all(self, left: int) -> str | None:
        if self.none_live_since is None or time.monotonic() - self.none_live_since <= self.replace_wait_s:
            return None
        try:
            res, free = self.ray.cluster_resources(), self.ray.available_resources()
            cpus = f"cluster CPUs: {int(res.get('CPU', 0))}, free: {int(free.get('CPU', 0))}"
        except Exception:  # noqa: BLE001 - the cluster itself may be gone
            cpus = "cluster unreachable"
        return (
            f"every Ray worker was lost ({self.lost} in all) and none could start again in "
            f"{self.replace_wait_s:.0f} s ({cpus}); {left} matches not played; the finished ones are stored: "
            "run the same command again to resume"
        )

    # ---- refs to events ------------------------------------------------------------------

    def _call(self) -> None:
        """Turn the matches handed to each live actor into play calls, two in flight at most; each call
        names the match that actor plays after it, if handed over already (match_player's spares)."""
        for a in self.actors.values():
            while a.live and a.held and len(a.in_flight) < IN_FLIGHT_PER_WORKER:
                number, match = a.held.popleft()
                ref = a.handle.play.remote(match, a.held[0][1] if a.held else None)
                a.in_flight.append((ref, number, match))
                self.refs[ref] = ("play", a, match)

    def _on_ready(self, a: _Actor, ref: Any, events: list[Event]) -> None:
        a.ready_ref = None
        try:
            info = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            missing = _ARENA_MISSING.search(_ANSI.sub("", str(exc)))
            if missing:  # every worker on that node would die the same way: another try cannot help
                from arena import __version__

                raise ArenaError(
                    f"Ray worker on {_node_of(exc)}: {missing.group(0)}: this node has no decktet-arena "
                    f"{__version__} (the driver's); install the same version everywhere (docs/cluster.md)"
                ) from None
            self._lose(a, f"failed to start: {_brief(exc)}", exc, events)
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
        events.append(Ready(a.index))

    def _on_watch(self, a: _Actor, ref: Any, events: list[Event]) -> None:
        a.watch_ref = None
        try:
            self.ray.get(ref)
            why = "closed while the run needed it"
            exc: BaseException | None = None
        except self.ray.exceptions.RayError as err:
            why, exc = _brief(err), err
        self._lose(a, why, exc, events)

    def _on_result(self, a: _Actor, ref: Any, match: Any, events: list[Event]) -> None:
        try:
            record = self.ray.get(ref)
        except self.ray.exceptions.RayTaskError as exc:
            # an exception that escaped play(): replace the actor, its bots may be in any state
            a.in_flight = [e for e in a.in_flight if e[0] != ref]
            events.append(Replied(a.index, self._harness_raised(a, match, _brief(exc), str(exc))))
            self._lose(a, "its harness raised", None, events, on_purpose=True)  # the next match did not fail
            return
        except self.ray.exceptions.RayError as exc:
            self._lose(a, _brief(exc), exc, events)  # ``ref`` is still in flight: it goes back too
            return
        a.in_flight = [e for e in a.in_flight if e[0] != ref]
        events.append(self._replied(a, match, record))

    def _replied(self, a: _Actor, match: Any, record: dict[str, Any]) -> Replied[Reply]:
        if "harness_error" in record:
            return Replied(
                a.index, self._harness_raised(a, match, record["harness_error"], record.get("traceback", ""))
            )
        for bot in record.get("bots", []):
            # the bot ran from the worker's copy; the record names the driver's file (same SHA-256)
            if bot.get("name") in self.paths:
                bot["path"] = self.paths[bot["name"]]
        return Replied(a.index, self.store(record))

    def _harness_raised(self, a: _Actor, match: Any, brief: str, trace: str) -> Raised:
        log.error(
            "match %s (%s): the harness raised %s on Ray worker %d (%s) (traceback in run.log)\n%s",
            match.match_id,
            seats_text(match.bots),
            brief,
            a.index,
            a.where,
            trace.rstrip(),
        )
        return Raised(match.match_id, brief)

    def _lose(
        self, a: _Actor, why: str, exc: BaseException | None, events: list[Event], *, on_purpose: bool = False
    ) -> None:
        """Actor ``a`` is dead (or must go): what it finished is replied, then its loss (the
        supervisor puts the rest back in the queue and starts another)."""
        if self.actors.pop(a.index, None) is None:
            return
        self.lost += 1
        for ref in (a.ready_ref, a.watch_ref):
            self.refs.pop(ref, None)
        finished: list[tuple[Any, Any]] = []
        if a.in_flight:  # records that came back just before it died still count
            refs = [r for r, _, _ in a.in_flight]
            done, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
            for r, _, m in a.in_flight:
                self.refs.pop(r, None)
                if r in done:
                    try:
                        finished.append((m, self.ray.get(r)))
                    except self.ray.exceptions.RayError:
                        pass
        got = {m.match_id for m, _ in finished}
        unplayed = [(n, m) for _, n, m in a.in_flight if m.match_id not in got]
        a.in_flight = []
        a.held.clear()
        try:
            self.ray.kill(a.handle, no_restart=True)  # if it still runs, its bots may be in any state
        except Exception:  # noqa: BLE001 - already gone
            pass
        fate = f"{len(unplayed)} matches in flight go back to the queue" if unplayed else "it had no match in flight"
        log.error("ray: worker %d (%s) died: %s; %s", a.index, a.where, why.rstrip("."), fate)
        if exc is not None:
            log.info("ray: worker %d: the error in full:\n%s", a.index, exc)
        for match, record in finished:
            events.append(self._replied(a, match, record))
        # the oldest in flight was playing when it died: that one counts a try; the others had not started
        playing = unplayed[0][0] if unplayed else None
        events.append(Lost(a.index, f"Ray worker {a.index} ({a.where}) died: {why.rstrip('.')}", playing, on_purpose))
        if not any(x.live for x in self.actors.values()) and self.none_live_since is None:
            self.none_live_since = time.monotonic()
        self.replaced.append(a.index)

    # ---- the end ---------------------------------------------------------------------------

    def _shutdown(self, *, grace_s: float) -> None:
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
                folder = self.results / "logs" / f"ray-{a.index}"
                folder.mkdir(parents=True, exist_ok=True)
                for name, data in logs.items():  # each node capped its own; the cap is per bot over all
                    bot = Path(name).name.removesuffix(".stderr.log")
                    append_within(
                        folder / Path(name).name,
                        data,
                        ledger=ledger_path(folder, bot),
                        cap_bytes=self.stderr_cap,
                        name=bot,
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
        self.all_handles.clear()
        gc.collect()  # Ray's refs and handles left in cycles go here, not in a process the local pool forks later


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# a node without decktet-arena (or with a version lacking one of its modules) cannot load BotWorker
_ARENA_MISSING = re.compile(r"ModuleNotFoundError: No module named '(arena)(\.[\w.]+)?'")


def _node_of(exc: BaseException) -> str:
    """Where the actor of a Ray error ran: its node's address and id, as far as Ray tells."""
    ip = re.search(r"\bip=([^,\s)]+)", _ANSI.sub("", str(exc)))
    node = ""
    try:
        from ray._private import state

        info = state.actors(getattr(exc, "actor_id", None)) or {}
        node = str(info.get("Address", {}).get("NodeID") or "")
    except Exception:  # noqa: BLE001 - a private API of Ray's: the address alone will do
        pass
    where = ip.group(1) if ip else "a Ray node"
    return f"{where} (node {node[:8]})" if node else where


def _brief(exc: BaseException) -> str:
    """One line of a Ray error: its root cause (the last ``...Error: ...`` line) if shown, else its first line."""
    lines = [ln.strip() for ln in _ANSI.sub("", str(exc)).splitlines() if ln.strip()]
    if not lines:
        return type(exc).__name__
    return lines[-1] if re.match(r"^[\w.]+(Error|Exception)\b", lines[-1]) else lines[0]
