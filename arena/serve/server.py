"""`arena serve`: lock the data folder, check the sandbox, register the bundled bots,
fork the matchmaker, serve the pages and the API with uvicorn.

The data folder holds ``ladder.sqlite`` (accounts, bots, versions, deal sets),
``results.sqlite`` and ``deal-secret`` (the tournament results store), ``bots/<sha256>/``
(every version's code as it plays), ``run.log`` (the matchmaker and its workers) and
``server.log``. One server per data folder: the folder lock of `arena run` refuses a
second one (and an `arena run` on it).
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from arena.errors import ArenaError, MachineTrouble
from arena.interrupts import this_process_only
from arena.serve.db import LadderDB, data_folder
from arena.serve.ladder import Ladder, load_ladder
from arena.serve.matchmaker import BUILTIN_PREFIX

LEFT_THE_FILE = 2  # bots.retired of a bundled bot the ladder file no longer lists (1: retired on its page)


def import_bundled(ladder: Ladder, data: Path) -> list[str]:
    """Register the ladder file's bots (owned by the organiser) as playing versions, their code
    copied into the data folder; a changed file becomes a new version. A bundled bot the file no
    longer lists is retired (its results kept), and plays again once listed again, unless it was
    retired on its page. Returns their names."""
    from arena.tournament.roster import resolve_bots, snapshot_bots

    db = LadderDB(data)
    db.rehome_versions()  # a moved or restored data folder plays its own copies
    names = []
    for e in snapshot_bots(resolve_bots(ladder.tournament, forfeits=False), data):
        bot = db.one("SELECT * FROM bots WHERE name = ?", e.name)
        if bot is not None and bot["owner_id"] is None and bot["retired"] == LEFT_THE_FILE:
            db.run("UPDATE bots SET retired = 0 WHERE id = ?", bot["id"])
        if bot is None:
            bot_id = db.run("INSERT INTO bots (name, owner_id, created) VALUES (?, NULL, ?)", e.name, time.time())
        elif bot["owner_id"] is not None:
            raise ArenaError(
                f"{ladder.source}: bots: {e.name!r} is the name of an uploaded bot in {data}; "
                "rename the bundled bot's file or give it a name: in the ladder file"
            )
        else:
            bot_id = bot["id"]
        last = db.one("SELECT sha256 FROM versions WHERE bot_id = ? ORDER BY n DESC LIMIT 1", bot_id)
        if last is None or last["sha256"] != e.sha256:
            path = f"{BUILTIN_PREFIX}{e.builtin}" if e.kind == "builtin" else str(e.path)
            db.add_version(bot_id, e.sha256, path, e.kind, "ok")
        names.append(e.name)
    db.run(
        f"UPDATE bots SET retired = ? WHERE owner_id IS NULL AND retired = 0 AND name NOT IN ({','.join('?' * len(names))})",
        LEFT_THE_FILE,
        *names,
    )
    return names


def open_ladder(ladder: Ladder, data: Path, err: TextIO) -> Any:
    """Everything before serving: the sandbox (safe for untrusted bots, or a one-line refusal),
    the results store and its deal secret, the bundled bots. Returns the sandbox."""
    from arena.match.detect import open_sandbox
    from arena.serve.db import reported
    from arena.tournament.store import ResultStore, StoreError

    sandbox = open_sandbox(ladder.tournament.sandbox, err)
    require_safe_sandbox(sandbox, ladder)
    try:
        store = ResultStore(data)
        store.claim(ladder.tournament.name, "give the ladder its own --data folder")
        store.deal_secret()
    except StoreError as exc:
        raise ArenaError(str(exc)) from None
    with reported(data):
        import_bundled(ladder, data)
    return sandbox


def require_safe_sandbox(sandbox: Any, ladder: Ladder) -> None:
    """`arena run`'s refusal, with only the fixes a ladder file accepts (not trust_bots: a ladder
    refuses it)."""
    from arena.tournament.runner import asked_level, get_safe_level
    from arena.tournament.runner import require_safe_sandbox as refuse

    if sandbox.safe:
        return
    fix = get_safe_level(asked_level(ladder.tournament, None))
    refuse(sandbox, ladder.tournament, where=f"{ladder.source}: sandbox", fix=f"a ladder runs uploaded bots: {fix}")


def lock_data(data: Path) -> Any:
    from arena.tournament.folder_lock import FolderLock

    lock = FolderLock(
        data_folder(data), holder="another arena server (or arena run)", elsewhere="give another --data folder"
    )
    lock.acquire()  # FolderBusy: one line
    return lock


def check_address(host: str, port: int) -> None:
    """Say in one line, before anything starts, that the address cannot be served."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ArenaError(
            f"--host {host}: not an address of this machine ({exc.strerror}); e.g. --host 127.0.0.1"
        ) from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRNOTAVAIL:  # another port would not help
                raise ArenaError(
                    f"--host {host}: not an address of this machine ({exc.strerror}); e.g. --host 127.0.0.1"
                ) from None
            raise ArenaError(
                f"--host {host} --port {port}: cannot listen there ({exc.strerror}); "
                "choose another --port, or stop what uses it"
            ) from None


def _watch(matchmaker: Any, server: Any) -> list[bool]:
    """Stop serving if the matchmaker dies: a ladder that no longer plays must not look alive
    (a supervisor such as systemd then starts it again). Returns a flag set when it did."""
    import threading

    stopped: list[bool] = []

    def watch() -> None:
        while not server.should_exit:
            if not matchmaker.is_alive():
                logging.getLogger("arena.serve").error("the matchmaker stopped (exit code %s)", matchmaker.exitcode)
                stopped.append(True)
                server.should_exit = True
                return
            time.sleep(0.5)

    threading.Thread(target=watch, name="matchmaker-watch", daemon=True).start()
    return stopped


def _refusal(matchmaker: Any) -> ArenaError | None:
    """The one line of the ArenaError that stopped the matchmaker, if it sent one, with its exit code."""
    found = None
    try:
        while matchmaker.news.poll(0):
            news = matchmaker.news.recv()
            if news[0] == "error":
                _, message, code = news
                found = MachineTrouble(message) if code == MachineTrouble.exit_code else ArenaError(message)
    except (EOFError, OSError):
        pass
    return found


def _await_start(matchmaker: Any, folder: Path) -> None:
    """Wait until the matchmaker can play (with Ray: Ray started or reached); its refusal is raised."""
    while not matchmaker.news.poll(0.2):
        if not matchmaker.is_alive():  # its pool's processes may hold the pipe open: no EOF then
            break
    try:
        news = matchmaker.news.recv() if matchmaker.news.poll(0) else ("gone",)
    except (EOFError, OSError):
        news = ("gone",)
    if news[0] == "ready":
        return
    if news[0] == "error":
        _, message, code = news
        raise MachineTrouble(message) if code == MachineTrouble.exit_code else ArenaError(message)
    matchmaker.join(5)
    raise ArenaError(
        f"the matchmaker stopped while starting (exit code {matchmaker.exitcode}); "
        f"the reason is in {folder / 'run.log'}"
    )


def _console(stream: TextIO, level: int) -> logging.Handler:
    console = logging.StreamHandler(stream)
    console.setLevel(level)
    console.setFormatter(logging.Formatter("arena serve: %(levelname)s %(message)s"))
    return console


class _Stops:
    """SIGTERM and SIGHUP (unless ignored, as nohup does) stop `arena serve` as Ctrl-C does."""

    def __init__(self) -> None:
        self.caught: list[int] = []
        self.server: Any = None
        self.old: dict[int, Any] = {}
        self.active = threading.current_thread() is threading.main_thread()  # else its caller's handlers
        for sig in (signal.SIGTERM, signal.SIGHUP) if self.active else ():
            if signal.getsignal(sig) != signal.SIG_IGN:
                self.old[sig] = signal.signal(sig, this_process_only(self._interrupt))

    def _interrupt(self, *_: Any) -> None:  # while starting
        raise KeyboardInterrupt

    def serving(self, server: Any) -> None:
        """While uvicorn serves, a signal only asks it to stop: no exception inside its event loop.
        It holds SIGINT and SIGTERM itself and raises them again here once it has shut down; an
        ignored SIGINT stops it too, so it counts as an interruption."""
        self.server = server
        for sig in (signal.SIGINT, *self.old) if self.active else ():
            self.old.setdefault(sig, signal.getsignal(sig))
            signal.signal(sig, this_process_only(self._note))

    def _note(self, sig: int, _frame: Any) -> None:
        self.caught.append(sig)
        self.server.should_exit = True

    def restore(self) -> None:
        for sig, old in self.old.items():
            signal.signal(sig, old)


def serve(
    ladder_file: str,
    *,
    host: str,
    port: int,
    data: str | os.PathLike[str],
    workers: int | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    err: TextIO = sys.stderr,
) -> None:
    """Run the ladder until Ctrl-C, SIGTERM or SIGHUP; then stop the server, the matchmaker and its
    workers and raise KeyboardInterrupt (the guard's "arena: interrupted", exit 130)."""
    import uvicorn

    from arena.serve.app import Ladderside, create_app
    from arena.serve.http_limits import header_timed
    from arena.serve.matchmaker import start_matchmaker

    ladder = load_ladder(ladder_file)
    if executor == "ray":
        from arena.tournament.ray_executor import check_ray

        check_ray(ray_address)  # before the server says it serves
    folder = Path(data).resolve()
    lock = lock_data(folder)
    try:
        check_address(host, port)
    except ArenaError:
        lock.release()
        raise
    matchmaker = None
    side: Ladderside | None = None
    stops = _Stops()
    try:
        sandbox = open_ladder(ladder, folder, err)
        matchmaker = start_matchmaker(
            ladder, folder, sandbox, workers, executor, ray_address
        )  # forked before any thread starts
        _await_start(matchmaker, folder)  # a ladder that cannot play (Ray unreachable) never serves
        handler = logging.FileHandler(folder / "server.log")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logging.getLogger("arena.serve").addHandler(handler)
        logging.getLogger("arena.serve").setLevel(logging.INFO)
        # the multipart parser warns of each malformed upload (answered 400): no console noise
        logging.getLogger("python_multipart").addHandler(logging.NullHandler())
        logging.getLogger("python_multipart").propagate = False
        side = Ladderside(ladder, folder, sandbox, inline=False, executor=executor)
        err.write(f"arena: ladder {ladder.name} on http://{host}:{port}/ (data in {folder}); Ctrl-C stops\n")
        err.flush()
        # uvicorn's own lines go to server.log; the console gets only its errors (a client's
        # garbage request is a warning: per-request noise from anyone who can connect)
        uv = logging.getLogger("uvicorn.error")
        uv.handlers[:] = [handler, _console(err, logging.ERROR)]
        uv.propagate = False
        server = uvicorn.Server(
            uvicorn.Config(
                create_app(side),
                host=host,
                port=port,
                http=header_timed(ladder.settings.header_timeout_s),
                log_level="warning",
                access_log=False,
                log_config=None,
            )
        )
        stopped = _watch(matchmaker, server)
        import gc

        gc.collect()
        gc.freeze()  # what start-up made lives on: the collector's full passes skip it (shorter pauses)
        stops.serving(server)
        server.run()
        side.close()
        if stopped:
            refusal = _refusal(matchmaker)
            if refusal is not None:
                raise refusal
            raise ArenaError(
                f"the matchmaker stopped (exit code {matchmaker.exitcode}; see {folder / 'run.log'}), "
                "so the server stopped too; start it again (finished matches are kept)"
            )
        if stops.caught:
            raise KeyboardInterrupt
    finally:
        stops.restore()
        if side is not None:
            side.close()  # before the exit kills the bots of a check in flight
        if matchmaker is not None and matchmaker.is_alive():
            matchmaker.terminate()
            matchmaker.join(15)
            if matchmaker.is_alive():
                matchmaker.kill()
        lock.release()
