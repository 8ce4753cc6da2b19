"""Bot processes: start in a sandbox, line I/O with deadlines, typed faults, sure kill.

All I/O is non-blocking and polled in the caller's thread (no reader threads).
stdout is read only while the referee waits for a line; stderr is drained on
every poll into a ring buffer (``stderr_tail``) and a capped log file. When the
bot ends (or is killed), both pipes are read to EOF before they are closed, so
the last line a bot wrote before exiting always reaches its log.

Every ``BotFault`` raised here has already killed the bot's whole process tree,
so a late answer can never be mistaken for the next one; the ``BotProcess`` is
unusable afterwards (further calls raise the same fault again).

Start bots from a long-lived thread: bwrap's ``--die-with-parent`` (and so the
bot) dies when the *thread* that forked it exits.
"""

from __future__ import annotations

import errno
import math
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.match import protocol
from arena.match.bot_log import BotLog
from arena.match.faults import BotFault, FaultKind, shorten
from arena.match.sandbox import READY, Limits, SandboxInfo
from arena.match.sandbox import cgroup as _cgroup_mod
from arena.match.sandbox import launch as _launch
from arena.match.sandbox import procs as _procs
from arena.match.sandbox.procs import become_subreaper

__all__ = ["BotProcess", "Starting", "read_lines", "bot_command", "become_subreaper"]

_RING = 64 * 1024  # stderr tail kept in memory
_READ_CHUNK = 1 << 16
_ERR_PER_EVENT = 1 << 20  # stderr bytes drained per wake-up (a flood must not starve stdout)
_START_TIMEOUT = 30.0  # the sandbox's own start (not the bot's): generous for a busy machine
_EXIT_WAIT = 1.0  # after EOF/exit: how long to wait for the status
_DRAIN_BYTES = 4 << 20  # at the end: read at most this much more of stdout + stderr,
_DRAIN_S = 1.0  # for at most this long (a grandchild may hold the pipe open)
_TRANSIENT = ("Resource temporarily unavailable", "Can't fork", "cannot fork", "EAGAIN")

_spawn_lock = threading.RLock()  # Popen + registration vs. orphan sweeps
_LIVE: dict[int, BotProcess] = {}
_pending_cgroups: list[_cgroup_mod.BotCgroup] = []  # groups whose rmdir must be retried (lingering pid charges)

_IN, _OUT, _ERR, _EXIT = "in", "out", "err", "exit"


def bot_command(bot_file: Path | str) -> list[str]:
    """The argv that runs ``bot_file`` inside any sandbox level.

    A ``.py`` file runs under this very interpreter without site-packages (``-s -S``:
    ``-s`` alone would still expose the interpreter's global site-packages); the
    sandbox puts ``arena/bot_helper`` (botkit) and a copy of the ``games`` engines on
    PYTHONPATH. Anything else must be an
    executable (e.g. a ``#!/usr/bin/perl`` or ``#!/usr/bin/env node`` script).
    """
    p = os.path.realpath(bot_file)
    if os.path.isdir(p):  # a bot folder (arena.match.botfolder)
        from arena.match.botfolder import runtime

        return runtime(Path(p))[0]
    if p.endswith(".py"):
        return [_launch.interpreter(), "-s", "-S", p]
    if not os.access(p, os.X_OK):
        raise ValueError(f"{bot_file}: not a .py file and not executable")
    return [p]


# The line that names an error, where a language prints it before its stack: Java's
# "Exception in thread ..." / "Caused by: ..." / "java.lang.StackOverflowError", Rust's panic
_CAUSE = re.compile(
    r"^(?:Exception in thread .*|Caused by: .*|thread '.*' panicked at .*|(?:[\w$]+\.)*[\w$]*(?:Error|Exception)(?:: .*)?)$",
    re.M,
)


def stderr_cause(stderr: str, tail: str) -> str | None:
    """The last line of ``stderr`` naming an error, when the shown ``tail`` has none (a deep
    stack pushed it out: a Java StackOverflowError prints 1024 frames after its name)."""
    if _CAUSE.search(tail) or not stderr.endswith(tail):
        return None
    found = [m.group() for m in _CAUSE.finditer(stderr[: len(stderr) - len(tail)])]
    return shorten(found[-1], 300) if found else None


class _Transient(Exception):
    pass


class BotProcess:
    """One running bot. Create with :meth:`start`."""

    # set by _spawn (a started process has all of them)
    pid: int
    name: str
    sandbox: SandboxInfo
    limits: Limits
    argv: list[str]
    t_start: float
    startup_s: float
    _launch: _launch.Launch
    _cgroup: _cgroup_mod.BotCgroup | None
    _popen: subprocess.Popen[bytes]
    _start_ticks: int
    _in: int
    _out: int
    _err: int
    _pidfd: int | None
    _fdkind: dict[int, str]
    _poll: select.poll

    def __init__(self) -> None:  # use start()
        self._faulted: BotFault | None = None
        self._killed = False
        self._status: int | None = None  # waitstatus-derived exit code (Popen convention)
        self._final_cpu: float | None = None
        self._buf = bytearray()
        self._scan = 0
        self._since_send = 0
        self.stdout_bytes = 0
        self._tail = bytearray()
        self._log: BotLog | None = None
        self._next_cpu_check = 0.0
        self._main_exited = False
        self._known: dict[int, int] = {}
        # ponder off: stopped from each answer until resume(), so it computes on its own clock only
        self.pause_after_answer = False
        self._paused = ""  # how it is stopped now: "cgroup", "signal" or "" (running)
        self._groups: dict[int, int] | None = None  # bubblewrap: process groups to signal -> leader's start

    # ------------------------------------------------------------------ start
    @classmethod
    def start(
        cls,
        argv: list[str],
        *,
        bot_file: Path,
        name: str,
        sandbox: SandboxInfo,
        limits: Limits,
        log_path: Path | None = None,
        extra_ro: Sequence[Path] = (),
        env: dict[str, str] | None = None,
        log_ledger: Path | None = None,
    ) -> BotProcess:
        """Start ``argv`` (as seen inside the sandbox) and wait until the sandbox is up.

        Raises BotFault(SANDBOX) if the sandbox itself fails (transient EAGAIN-type
        failures are retried a few times first).
        """
        return cls.launch(
            argv,
            bot_file=bot_file,
            name=name,
            sandbox=sandbox,
            limits=limits,
            log_path=log_path,
            extra_ro=extra_ro,
            env=env,
            log_ledger=log_ledger,
        ).wait()

    @classmethod
    def launch(
        cls,
        argv: list[str],
        *,
        bot_file: Path,
        name: str,
        sandbox: SandboxInfo,
        limits: Limits,
        log_path: Path | None = None,
        extra_ro: Sequence[Path] = (),
        env: dict[str, str] | None = None,
        log_ledger: Path | None = None,
    ) -> Starting:
        """Spawn ``argv`` without waiting for its sandbox: ``wait()`` on the result finishes
        the start as :meth:`start` does. Several bots launched before any is waited for
        start side by side. Raises BotFault(SANDBOX) at once if the sandbox cannot be built."""
        return Starting(cls, (list(argv), Path(bot_file), name, sandbox, limits, log_path, extra_ro, env, log_ledger))

    @classmethod
    def _spawn(
        cls,
        argv: list[str],
        bot_file: Path,
        name: str,
        sandbox: SandboxInfo,
        limits: Limits,
        log_path: Path | None,
        extra_ro: Sequence[Path],
        env: dict[str, str] | None,
        log_ledger: Path | None,
    ) -> BotProcess:
        self = cls()
        self.name, self.sandbox, self.limits, self.argv = name, sandbox, limits, argv
        try:
            self._launch = _launch.build(sandbox, argv, bot_file=bot_file, limits=limits, extra_ro=extra_ro, env=env)
        except OSError as exc:
            if exc.errno == errno.EAGAIN:
                raise _Transient(str(exc)) from exc
            raise BotFault(FaultKind.SANDBOX, f"sandbox setup failed: {exc}", name=name, level=sandbox.level) from exc
        self._cgroup = self._launch.cgroup
        if log_path is not None:
            # Appended: one log per bot and worker keeps every process of the run, each
            # after its own header line; the cap is one budget per bot over all of them.
            self._log = BotLog(Path(log_path), name=name, cap_bytes=limits.stderr_log_kb * 1024, ledger=log_ledger)
        self.t_start = time.monotonic()
        with _spawn_lock:
            try:
                self._popen = subprocess.Popen(
                    self._launch.argv,
                    executable=self._launch.executable,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=self._launch.env,
                    cwd=self._launch.cwd,
                    pass_fds=self._launch.pass_fds,
                    close_fds=True,
                    start_new_session=True,
                    bufsize=0,
                )
            except OSError as exc:
                self._launch.close_fds()
                self._release()
                if exc.errno == errno.EAGAIN:
                    raise _Transient(str(exc)) from exc
                raise BotFault(
                    FaultKind.SANDBOX, f"cannot start sandbox: {exc}", name=name, level=sandbox.level
                ) from exc
            self._launch.close_fds()
            self.pid = self._popen.pid
            _LIVE[self.pid] = self
        self._start_ticks = _procs.start_ticks(self.pid) or _procs.boot_ticks_now()
        stdin, stdout, stderr = self._popen.stdin, self._popen.stdout, self._popen.stderr
        assert stdin is not None and stdout is not None and stderr is not None  # all three are PIPE
        self._in, self._out, self._err = stdin.fileno(), stdout.fileno(), stderr.fileno()
        for fd in (self._in, self._out, self._err):
            os.set_blocking(fd, False)
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (OSError, AttributeError):
            self._pidfd = None
        self._fdkind = {self._out: _OUT, self._err: _ERR}
        if self._pidfd is not None:
            self._fdkind[self._pidfd] = _EXIT
        self._poll = select.poll()
        for fd in self._fdkind:
            self._poll.register(fd, select.POLLIN)
        return self

    def _await_ready(self) -> BotProcess:
        """Wait for the sandbox's ready line; raises _Transient or BotFault(SANDBOX), the
        process killed, if it does not come."""
        name, sandbox = self.name, self.sandbox
        try:
            line, _ = self.read_line(time.monotonic() + _START_TIMEOUT)
            ok = line == READY.encode()
            why = "" if ok else f"unexpected first line {shorten(line, 80)!r}"
        except BotFault as exc:
            ok, why = False, exc.detail
        if not ok:
            err = self.stderr_tail(2000).strip()
            self._faulted = None
            self.kill()
            text = f"{err or why}"
            if any(t in text for t in _TRANSIENT):
                raise _Transient(text)
            raise BotFault(
                FaultKind.SANDBOX,
                f"sandbox failed to start: {shorten(text.splitlines()[-1] if text else why)}",
                name=name,
                level=sandbox.level,
                stderr=shorten(err, 2000),
            )
        self.startup_s = time.monotonic() - self.t_start
        if self._launch.bwrap:
            # bwrap's monitor may exit before its pid-1 init is reaped, which then re-parents
            # to us: remember that init (pid + start time, against pid reuse) for the kill
            self._known = {c: _procs.start_ticks(c) for c in _procs.children(self.pid)}
        return self

    # ------------------------------------------------------------------ I/O
    def send_line(self, line: bytes, deadline: float) -> None:
        """Write ``line`` + newline before ``deadline`` (monotonic); TIMEOUT if the bot won't read."""
        self._usable()
        if b"\n" in line:
            raise ValueError("a protocol line must not contain a newline")
        data = memoryview(bytes(line) + b"\n")
        self._since_send = 0
        wpoll = None
        woken = False  # stopped between its turns, and resumed here to read what its pipe cannot hold
        while data:
            try:
                n = os.write(self._in, data)
                data = data[n:]
                continue
            except BlockingIOError:
                if self._paused:
                    self.resume()
                    woken = True
            except (BrokenPipeError, ConnectionResetError):
                raise self._exit_fault("stdin closed (bot exited or closed its input)") from None
            now = time.monotonic()
            if now >= deadline:
                raise self._fault(
                    FaultKind.TIMEOUT,
                    "bot does not read its input (write blocked until deadline)",
                    unsent_bytes=len(data),
                )
            if wpoll is None:
                wpoll = select.poll()
                wpoll.register(self._in, select.POLLOUT)
                for fd, kind in self._fdkind.items():
                    if kind != _OUT:
                        wpoll.register(fd, select.POLLIN)
            for fd, ev in wpoll.poll(_ms(deadline - now)):
                kind = self._fdkind.get(fd, "")
                if kind == _ERR:
                    if self._drain_err():
                        wpoll.unregister(fd)
                elif kind == _EXIT:
                    raise self._exit_fault("exited while its input was being written")
                elif ev & (select.POLLERR | select.POLLHUP) and fd == self._in:
                    raise self._exit_fault("stdin closed (bot exited or closed its input)")
        if woken:
            self.pause()

    def read_line(self, deadline: float) -> tuple[bytes, float]:
        """The next line (without newline) and its monotonic arrival time, before ``deadline``.

        A line already buffered when called is accepted even past the deadline (the
        referee was late, not the bot); otherwise waiting stops at the deadline.
        """
        self._usable()
        line = self._take_line()
        if line is not None:
            return line, time.monotonic()
        if self._main_exited:
            raise self._exit_fault("exited")
        poll, kinds = self._poll.poll, self._fdkind
        while True:  # lean single-bot loop: latency matters here
            now = time.monotonic()
            if now >= deadline:
                partial = bytes(self._buf[:200])
                raise self._fault(
                    FaultKind.TIMEOUT,
                    "no answer before the deadline" + (f" (partial line {shorten(partial, 80)!r})" if partial else ""),
                )
            if now >= self._next_cpu_check:
                self._check_cpu(now)
            events = poll(_ms(deadline - now))
            t = time.monotonic()
            for fd, ev in events:
                kind = kinds.get(fd)
                if kind is not None:
                    self._on_event(kind, ev)
            line = self._take_line()
            if line is not None:
                if t > deadline:
                    raise self._fault(
                        FaultKind.TIMEOUT, "answer arrived after the deadline", late_ms=round((t - deadline) * 1000, 3)
                    )
                return line, t

    def say_bye(self, timeout_s: float = 0.2) -> None:
        """Send the goodbye (resumed first, so it can read it and exit); a bot that will not
        take it within ``timeout_s`` is not waited for: the kill that follows ends it."""
        if not self.input_open:
            return
        self.resume()
        try:
            self.send_line(protocol.encode(protocol.bye()), time.monotonic() + timeout_s)
        except BotFault:
            pass

    def alive(self) -> bool:
        """True while the bot's main process runs and no fault was raised."""
        if self._killed or self._faulted is not None:
            return False
        return not self._exited()

    def close_input(self) -> None:
        """Close its input (after the goodbye): it sees end of file and may exit while the
        caller goes on, e.g. to say goodbye to the other bots before waiting for any."""
        if self._killed or self._in < 0:
            return
        self.resume()  # it must run to see the end of file and exit
        try:
            if self._popen.stdin is not None:
                self._popen.stdin.close()
        except OSError:
            pass
        self._in = -1

    @property
    def input_open(self) -> bool:
        return not self._killed and self._in >= 0

    def close(self, grace_s: float = 0.5) -> None:
        """After the goodbye: close its input, wait up to ``grace_s`` for it to exit, then kill all.

        Meanwhile stderr goes to the log and stdout is read and dropped (output after the
        goodbye is no answer), so a bot blocked on a full pipe can still finish and exit.
        """
        if not self._killed:
            self.close_input()
            end = time.monotonic() + grace_s
            while not self._exited() and time.monotonic() < end:
                ev = self._poll.poll(_ms(end - time.monotonic()))
                for fd, _ in ev:
                    kind = self._fdkind.get(fd)
                    if kind == _ERR and self._drain_err():
                        self._unregister(fd)
                    elif kind == _OUT and self._discard(fd, _ERR_PER_EVENT) is None:
                        self._unregister(fd)
            if self._exited() and self._err >= 0:
                self._drain_err()  # its last lines (say, the last match's) are still in the pipe
        self.kill()

    def kill(self) -> None:
        """Kill the whole process tree (cgroup, PID namespace, descendants, escapees); idempotent."""
        if self._killed:
            return
        self._killed = True
        pid = self.pid if hasattr(self, "pid") else None
        try:
            # once reaped, the pid number may belong to a stranger: never use it as a root then
            roots = {pid} if pid is not None and self._status is None else set()
            if pid is not None and roots:  # snapshot first: a cgroup kill re-parents the tree to us and hides it
                roots |= _procs.descendants(pid)
            roots |= {p for p, t in self._known.items() if t and _procs.start_ticks(p) == t}
            if self._cgroup is not None:
                self._cgroup.kill()
            if pid is not None:
                with _spawn_lock:
                    _LIVE.pop(pid, None)
                    protect = set(_LIVE)
                    _procs.sweep(
                        roots,
                        protect=protect,
                        since_ticks=self._start_ticks,
                        orphans=not self._launch.bwrap,
                        keep={pid},
                    )
                    if roots and self._pidfd is None:
                        try:
                            os.killpg(pid, signal.SIGKILL)
                        except OSError:
                            pass
                self._reap(2.0)
                if self._launch.bwrap:
                    self._kill_orphaned_init()
            if self._cgroup is not None:
                self._cgroup.kill(0.5)
            self._drain_to_eof()
        finally:
            self._release()

    def _kill_orphaned_init(self) -> None:
        """Kill a sandbox init that the killed monitor left to us before it armed its own death signal."""
        with _spawn_lock:
            protect = set(_LIVE) | {p for bot in _LIVE.values() for p in bot._known}
            orphans = _procs.orphaned_inits(_launch.START_MARKER, protect=protect, since_ticks=self._start_ticks)
        if orphans:
            _procs.kill_pids(orphans)
            _procs.reap(orphans, timeout=0.5)

    def stderr_tail(self, n: int = 2000) -> str:
        """The last ``n`` characters the bot wrote to stderr."""
        if not self._killed:
            try:
                self._drain_err()
            except OSError:
                pass
        return bytes(self._tail[-4 * n :]).decode("utf-8", "replace")[-n:]

    def cpu_seconds(self) -> float:
        """CPU of the whole bot tree so far (cgroup accounting if any, else /proc + rusage)."""
        if self._cgroup is not None:
            v = self._cgroup.cpu_seconds()
            if v is not None:
                return v
        if self._killed or self._status is not None:
            return self._final_cpu or 0.0
        v = _procs.tree_cpu(self.pid)
        self._final_cpu = max(self._final_cpu or 0.0, v)
        return self._final_cpu

    @property
    def exit_code(self) -> int | None:
        """Exit status in Popen convention (negative = signal), once known."""
        return self._status

    # ------------------------------------------------------------------ internals
    def _usable(self) -> None:
        if self._faulted is not None:
            raise self._faulted
        if self._killed:
            raise BotFault(FaultKind.SANDBOX, "bot process already closed", name=self.name)

    def _fault(self, kind: FaultKind, detail: str, **extra: Any) -> BotFault:
        if self._faulted is not None:
            return self._faulted
        extra.setdefault("name", self.name)
        try:
            extra.setdefault("cpu_s", round(self.cpu_seconds(), 3))
            self._drain_err()
        except OSError:
            pass
        self.kill()
        tail = self.stderr_tail(2000)
        if tail and kind in (FaultKind.CRASH, FaultKind.RESOURCE, FaultKind.PROTOCOL):
            extra.setdefault("stderr_tail", tail)
            cause = stderr_cause(bytes(self._tail).decode("utf-8", "replace"), tail)
            if cause:
                extra.setdefault("stderr_cause", cause)
        self._faulted = BotFault(kind, detail, **extra)
        return self._faulted

    def _exited(self) -> bool:
        if self._status is not None:
            return True
        if self._pidfd is not None:
            if not _readable(self._pidfd, 0.0):
                return False
        self._reap(0)
        return self._status is not None

    def _reap(self, timeout: float) -> None:
        """Collect the main process's status and rusage (within ``timeout``)."""
        if self._status is not None or not hasattr(self, "_popen"):
            return
        end = time.monotonic() + timeout
        while True:
            try:
                pid, status, ru = os.wait4(self.pid, os.WNOHANG)
            except ChildProcessError:
                self._status = self._popen.returncode if self._popen.returncode is not None else -9
                return
            if pid == self.pid:
                self._status = os.waitstatus_to_exitcode(status)
                self._popen.returncode = self._status
                self._final_cpu = max(self._final_cpu or 0.0, ru.ru_utime + ru.ru_stime)
                return
            left = end - time.monotonic()
            if left <= 0:
                return
            if self._pidfd is not None:
                _readable(self._pidfd, left)
            else:
                time.sleep(min(left, 0.005))

    def _release(self) -> None:
        pidfd = getattr(self, "_pidfd", None)
        if pidfd is not None:
            try:
                os.close(pidfd)
            except OSError:
                pass
        if hasattr(self, "_popen"):
            for f in (self._popen.stdin, self._popen.stdout, self._popen.stderr):
                try:
                    if f is not None:
                        f.close()
                except OSError:
                    pass
        self._in = self._out = self._err = -1
        self._pidfd = None
        if self._log is not None:
            self._log.close()
            self._log = None
        la = getattr(self, "_launch", None)
        if la is not None:
            if la.cgroup is not None:
                if self._final_cpu is None:
                    self._final_cpu = la.cgroup.cpu_seconds()
                if not la.cgroup.remove(0.3):
                    _pending_cgroups.append(la.cgroup)
            if la.scratch is not None:
                shutil.rmtree(la.scratch, ignore_errors=True)
            la.scratch = None

    def _unregister(self, fd: int) -> None:
        try:
            self._poll.unregister(fd)
        except (KeyError, ValueError):
            pass
        self._fdkind.pop(fd, None)

    def _drain_err(self) -> bool:
        """Move available stderr into the ring and the capped log; True at EOF."""
        if self._err < 0:
            return True
        got = 0
        while got < _ERR_PER_EVENT:
            try:
                data = os.read(self._err, _READ_CHUNK)
            except BlockingIOError:
                return False
            if not data:
                return True
            got += len(data)
            self._keep_err(data)
        return False

    def _keep_err(self, data: bytes) -> None:
        self._tail += data
        if len(self._tail) > 2 * _RING:
            del self._tail[:-_RING]
        if self._log is not None:
            try:
                self._log.write(data)
            except OSError:
                pass  # a full disk or a removed folder never faults the bot

    def _discard(self, fd: int, budget: int) -> int | None:
        """Read and drop up to ``budget`` bytes of ``fd``; the count read, None at EOF."""
        got = 0
        while got < budget:
            try:
                data = os.read(fd, _READ_CHUNK)
            except BlockingIOError:
                return got
            except OSError:
                return None
            if not data:
                return None
            got += len(data)
        return got

    def _drain_to_eof(self) -> None:
        """Once the tree is dead: read both pipes to EOF, so the bot's last words reach the log.

        What a bot wrote just before it exited may still sit in the pipe, unread, when its
        exit is noticed. Bounded by ``_DRAIN_BYTES`` and ``_DRAIN_S``: a grandchild that
        escaped the kill could hold a pipe open, or keep writing, forever.
        """
        fds = {fd: kind for fd, kind in ((self._err, _ERR), (self._out, _OUT)) if fd >= 0}
        if not fds:
            return
        poll = select.poll()
        for fd in fds:
            poll.register(fd, select.POLLIN)
        budget, end = _DRAIN_BYTES, time.monotonic() + _DRAIN_S
        while fds and budget > 0:
            left = end - time.monotonic()
            if left <= 0:
                break
            for fd, _ in poll.poll(_ms(left)):
                if fd not in fds:
                    continue
                if fds[fd] == _ERR:
                    try:
                        data = os.read(fd, min(_READ_CHUNK, budget))
                    except BlockingIOError:
                        continue
                    except OSError:
                        data = b""
                    if data:
                        self._keep_err(data)
                    n = len(data) if data else None
                else:  # stdout after the end is no answer: read only to reach EOF
                    n = self._discard(fd, min(_READ_CHUNK, budget))
                if n is None:
                    poll.unregister(fd)
                    del fds[fd]
                else:
                    budget -= n

    def _read_out(self) -> bool:
        """Append available stdout to the buffer; True at EOF. Bounded by the line cap."""
        cap = self.limits.stdout_line_kb * 1024
        while len(self._buf) <= cap:  # the buffer starts at the current line
            try:
                data = os.read(self._out, _READ_CHUNK)
            except BlockingIOError:
                return False
            if not data:
                return True
            self._buf += data
            self._since_send += len(data)
            self.stdout_bytes += len(data)
            if b"\n" in data:
                return False
        return False

    def _take_line(self) -> bytes | None:
        """A complete line from the buffer, or None; PROTOCOL/RESOURCE on abuse."""
        cap = self.limits.stdout_line_kb * 1024
        i = self._buf.find(b"\n", self._scan)
        if i < 0:
            self._scan = len(self._buf)
            if len(self._buf) > cap:
                raise self._fault(
                    FaultKind.PROTOCOL,
                    f"line over {self.limits.stdout_line_kb} KiB: {shorten(bytes(self._buf[:200]), 120)!r}",
                    limit="line",
                )
            if self._since_send > 4 * cap:
                raise self._fault(
                    FaultKind.RESOURCE,
                    f"output flood: more than {4 * self.limits.stdout_line_kb} KiB since the last request",
                    limit="output",
                )
            return None
        if i > cap:
            raise self._fault(
                FaultKind.PROTOCOL,
                f"line over {self.limits.stdout_line_kb} KiB: {shorten(bytes(self._buf[:200]), 120)!r}",
                limit="line",
            )
        if self._since_send > 4 * cap:
            raise self._fault(
                FaultKind.RESOURCE,
                f"output flood: more than {4 * self.limits.stdout_line_kb} KiB since the last request",
                limit="output",
            )
        line = bytes(self._buf[:i])
        del self._buf[: i + 1]
        self._scan = 0
        if self.pause_after_answer:
            self.pause()
        return line

    def pause(self) -> None:
        """Stop all its processes until :meth:`resume` (its cgroup frozen, else its process group
        stopped): between its turns it takes no CPU from the bots whose clock runs."""
        if self._paused or self._killed or self._status is not None or self._main_exited:
            return
        if self._cgroup is not None and self._cgroup.freeze(True):
            self._paused = "cgroup"
            return
        for group in self._signal_groups():
            try:
                os.killpg(group, signal.SIGSTOP)
                self._paused = "signal"
            except OSError:
                pass

    def resume(self) -> None:
        """Undo :meth:`pause` (before a request, a goodbye or a kill); idempotent."""
        how, self._paused = self._paused, ""
        if how == "cgroup" and self._cgroup is not None:
            self._cgroup.freeze(False)
        elif how == "signal" and self._status is None:
            for group in self._signal_groups():
                try:
                    os.killpg(group, signal.SIGCONT)
                except OSError:
                    pass

    def _signal_groups(self) -> list[int]:
        """The process groups a pause signals: its own and, under bubblewrap (whose
        ``--new-session`` gives the sandbox's init and the bot a session of their own), the
        groups of the processes inside, found once and each still led by the same process."""
        if not self._launch.bwrap:
            return [self.pid]
        if self._groups is None:
            self._groups = {}
            for p in _procs.descendants(self.pid):
                try:
                    if os.getpgid(p) == p:  # a group leader: the sandbox's init, or a setsid child
                        self._groups[p] = _procs.start_ticks(p)
                except OSError:
                    pass
        return [self.pid, *(g for g, t in self._groups.items() if t and _procs.start_ticks(g) == t)]

    def _check_cpu(self, now: float) -> None:
        if now < self._next_cpu_check:
            return
        self._next_cpu_check = now + (0.25 if self._cgroup is not None else 0.5)
        if self._status is None and self.cpu_seconds() >= self.limits.cpu_s:
            raise self._fault(
                FaultKind.RESOURCE, f"CPU limit of {self.limits.cpu_s} s used up (whole process tree)", limit="cpu"
            )

    def _exit_fault(self, why: str) -> BotFault:
        """Classify the end of the bot: resource limit, or crash with its status."""
        if self._faulted is not None:
            return self._faulted
        self._reap(_EXIT_WAIT)
        rc = self._status
        try:
            self._drain_err()
        except OSError:
            pass
        tail = bytes(self._tail[-8192:]).decode("utf-8", "replace")
        cpu = self.cpu_seconds()
        sig = None
        if rc is not None and rc < 0:
            sig = -rc
        elif rc is not None and rc > 128 and self._launch.bwrap:
            sig = rc - 128  # bwrap folds a signal death into 128+N
        extra = {"exit_code": rc, "signal": _signame(sig), "cpu_s": round(cpu, 3)}
        cg = self._cgroup
        if cg is not None and cg.oom_kills() > 0:
            return self._fault(FaultKind.RESOURCE, "memory limit (OOM killed)", limit="memory", **extra)
        if sig == signal.SIGXCPU or cpu >= self.limits.cpu_s * 0.98:
            return self._fault(FaultKind.RESOURCE, f"CPU limit of {self.limits.cpu_s} s", limit="cpu", **extra)
        last = tail[-3000:]
        if "MemoryError" in last or "Cannot allocate memory" in last or "out of memory" in last.lower():
            return self._fault(FaultKind.RESOURCE, "memory limit (allocation failed)", limit="memory", **extra)
        if cg is not None and cg.pids_max_hits() > 0:
            return self._fault(
                FaultKind.RESOURCE, f"process/thread limit of {self.limits.processes}", limit="processes", **extra
            )
        if "nproc" in self._launch.rlimits and (
            "Resource temporarily unavailable" in last or "can't start new thread" in last
        ):
            # the bot's own uid is capped by RLIMIT_NPROC (landlock as root without a cgroup)
            return self._fault(
                FaultKind.RESOURCE, f"process/thread limit of {self.limits.processes}", limit="processes", **extra
            )
        if "can't start new thread" in last:  # no pids cap here: stacks and arenas hit RLIMIT_AS
            return self._fault(FaultKind.RESOURCE, "memory limit (thread creation failed)", limit="memory", **extra)
        if sig == signal.SIGXFSZ or "File too large" in last:
            return self._fault(
                FaultKind.RESOURCE, f"file size limit of {self.limits.file_mb} MiB", limit="file", **extra
            )
        if rc is None:
            return self._fault(FaultKind.CRASH, f"{why}; process still running, killed", **extra)
        how = f"signal {extra['signal']}" if sig else f"exit code {rc}"
        return self._fault(FaultKind.CRASH, f"{why} ({how})", **extra)

    def _on_event(self, kind: str, ev: int) -> None:
        """Handle one poll event; may raise BotFault."""
        if kind == _OUT:
            if self._read_out():
                self._unregister(self._out)
                if self._buf.find(b"\n", self._scan) < 0:
                    raise self._exit_fault("closed its output")
        elif kind == _ERR:
            if self._drain_err():
                self._unregister(self._err)
        elif kind == _EXIT:
            # the answer may still sit in the pipe: take it before declaring the death
            if _OUT in self._fdkind.values():
                self._read_out()
            self._main_exited = True
            if self._buf.find(b"\n", self._scan) < 0:
                raise self._exit_fault("exited")
            if self._pidfd is not None:
                self._unregister(self._pidfd)

    def __del__(self) -> None:
        try:
            if not self._killed and hasattr(self, "_popen"):
                self.kill()
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass


def _signame(sig: int | None) -> str | None:
    if sig is None:
        return None
    try:
        return signal.Signals(sig).name
    except ValueError:
        return str(sig)


_MAX_POLL_MS = 3_600_000  # poll() takes a C int; the callers loop until their deadline anyway


def _readable(fd: int, timeout_s: float) -> bool:
    """Whether ``fd`` becomes readable within ``timeout_s``. poll(), never select():
    select() cannot watch a descriptor numbered 1024 or more, which a worker with a
    few hundred warm bots reaches."""
    p = select.poll()
    p.register(fd, select.POLLIN)
    return bool(p.poll(_ms(timeout_s)))


def _ms(seconds: float) -> int:
    return min(_MAX_POLL_MS, max(0, math.ceil(seconds * 1000)))


Reply = tuple[bytes, float] | BotFault  # a line and its arrival time, or the bot's fault


def _wait(reqs: list[tuple[BotProcess, float]], poll: Any = None) -> list[Reply]:
    """Core of read_lines: one poll over all bots, each with its own deadline."""
    out: list[Reply | None] = [None] * len(reqs)
    pending: dict[int, tuple[BotProcess, float]] = {}
    now = time.monotonic()
    for i, (bot, deadline) in enumerate(reqs):
        try:
            bot._usable()
            line = bot._take_line()
            if line is not None:
                out[i] = (line, now)  # already buffered: the referee was late, not the bot
            elif bot._main_exited:
                raise bot._exit_fault("exited")
            else:
                pending[i] = (bot, deadline)
        except BotFault as f:
            out[i] = f
    if not pending:
        return _filled(out)
    fdmap: dict[int, tuple[int, str]] = {}
    temp = poll is None or len(pending) > 1
    if temp:
        poll = select.poll()
        for i, (bot, _) in pending.items():
            for fd, kind in bot._fdkind.items():
                poll.register(fd, select.POLLIN)
                fdmap[fd] = (i, kind)
    else:
        ((i, (bot, _)),) = pending.items()
        fdmap = {fd: (i, kind) for fd, kind in bot._fdkind.items()}

    def drop(i: int) -> None:
        pending.pop(i, None)
        for fd, (j, _) in list(fdmap.items()):
            if j == i:
                fdmap.pop(fd)
                if temp:  # the bot's own persistent poll keeps its fds
                    try:
                        poll.unregister(fd)
                    except (KeyError, ValueError):
                        pass

    while pending:
        now = time.monotonic()
        for i, (bot, deadline) in list(pending.items()):
            try:
                if now >= deadline:
                    partial = bytes(bot._buf[:200])
                    raise bot._fault(
                        FaultKind.TIMEOUT,
                        "no answer before the deadline"
                        + (f" (partial line {shorten(partial, 80)!r})" if partial else ""),
                    )
                bot._check_cpu(now)
            except BotFault as f:
                out[i] = f
                drop(i)
        if not pending:
            break
        first = min(d for _, d in pending.values())
        events = poll.poll(_ms(first - now))
        t = time.monotonic()
        for fd, ev in events:
            if fd not in fdmap:
                continue
            i, kind = fdmap[fd]
            if i not in pending:
                continue
            bot, deadline = pending[i]
            try:
                if bot._fdkind.get(fd) is None:  # unregistered meanwhile (EOF)
                    fdmap.pop(fd, None)
                    try:
                        poll.unregister(fd)
                    except (KeyError, ValueError):
                        pass
                    continue
                bot._on_event(kind, ev)
                if bot._fdkind.get(fd) is None:
                    fdmap.pop(fd, None)
                    try:
                        poll.unregister(fd)
                    except (KeyError, ValueError):
                        pass
                line = bot._take_line()
                if line is not None:
                    if t > deadline:
                        raise bot._fault(
                            FaultKind.TIMEOUT,
                            "answer arrived after the deadline",
                            late_ms=round((t - deadline) * 1000, 3),
                        )
                    out[i] = (line, t)
                    drop(i)
            except BotFault as f:
                out[i] = f
                drop(i)
    return _filled(out)


def _filled(out: list[Reply | None]) -> list[Reply]:
    """Every request answered (a line or a fault): the loop above leaves none pending."""
    assert all(r is not None for r in out)
    return [r for r in out if r is not None]


def read_lines(requests: list[tuple[BotProcess, float]]) -> list[tuple[bytes, float] | BotFault]:
    """Multiplexed read for simultaneous decisions: one poll over all bots, each with its own
    deadline. Returns, in order, ``(line, arrival)`` or the BotFault of that bot (already killed)."""
    return _wait(list(requests))


def _retry_pending_cgroups() -> None:
    for cg in list(_pending_cgroups):
        if cg.remove(0):
            _pending_cgroups.remove(cg)


def kill_every_bot() -> None:
    """Kill every bot process still registered: at the interpreter's exit, and from a worker's
    SIGTERM handler before ``os._exit`` (which runs no atexit hook)."""
    for bot in list(_LIVE.values()):
        try:
            # still registered although marked killed: a signal handler (this exit's) ran inside
            # its kill before the tree was swept; sweep it now, or its children outlive us, stopped
            bot._killed = False
            bot.kill()
        except Exception:  # noqa: BLE001
            pass
    for cg in list(_pending_cgroups):
        cg.remove(1.5)


import atexit  # noqa: E402

atexit.register(kill_every_bot)

if sys.platform != "linux":  # pragma: no cover
    raise ImportError("arena.match.process needs Linux")


class Starting:
    """A bot process on its way up (see ``BotProcess.launch``): spawned, its sandbox not yet
    confirmed. ``wait`` returns the ready ``BotProcess``, retrying transient failures (a
    fork refused under load) as ``BotProcess.start`` does; ``abandon`` kills it unwaited."""

    def __init__(self, cls: type[BotProcess], args: tuple[Any, ...]) -> None:
        become_subreaper()
        _retry_pending_cgroups()
        self._cls, self._args, self._error = cls, args, ""
        self._proc: BotProcess | None = None
        try:
            self._proc = cls._spawn(*args)
        except _Transient as exc:
            self._error = str(exc)

    def wait(self) -> BotProcess:
        proc, last = self._proc, self._error
        self._proc = None
        delays = iter((0.1, 0.4, 1.0))
        while True:
            if proc is not None:
                try:
                    return proc._await_ready()
                except _Transient as exc:
                    last = str(exc)
            delay = next(delays, None)
            if delay is None:
                name, sandbox = self._args[2], self._args[3]
                raise BotFault(
                    FaultKind.SANDBOX,
                    f"sandbox start failed after retries: {shorten(last)}",
                    name=name,
                    level=sandbox.level,
                )
            time.sleep(delay)
            try:
                proc = self._cls._spawn(*self._args)
            except _Transient as exc:
                last, proc = str(exc), None

    def abandon(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
