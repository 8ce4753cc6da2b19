"""Ctrl-C, a closed terminal and SIGTERM, for every `arena` command.

A second or more of imports on a busy machine must not end in a traceback or in silence: from
``while_loading()`` until ``hand_over()`` a SIGINT, SIGHUP or SIGTERM prints one line and exits
130 with nothing written. Only when started as the `arena` command: a program that imports
arena keeps its own handlers. After ``hand_over()`` all three raise KeyboardInterrupt, which the
command's guard turns into that same line, after the command's own clean-up (a half-written
file removed); `run`, `duel` and `serve` install their own stops on top. A process forked from
the command (a pool's worker) keeps SIGTERM's default: ``terminate()`` ends it as before.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
_Code = TypeVar("_Code")  # an exit code, as sys.exit takes it


def _interrupted_early(*_: object) -> None:
    os.write(2, b"arena: interrupted\n")
    os._exit(130)


def _hung_up(*_: object) -> None:
    """SIGHUP (a closed terminal, a dropped ssh connection) stops a command as Ctrl-C does."""
    raise KeyboardInterrupt


def this_process_only(handler: Callable[[int, Any], Any]) -> Callable[[int, Any], Any]:
    """``handler`` for a signal in the process that sets it; a process forked from it that has
    not set its own yet (a pool's worker in its first moments, when the pool stops it) dies of
    the signal as by default, instead of raising the parent's KeyboardInterrupt inside its fork
    hooks ("Exception ignored in ... _after_at_fork_child_reinit_locks") and living on."""
    pid = os.getpid()

    def handle(signum: int, frame: Any) -> Any:
        if os.getpid() != pid:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return None
        return handler(signum, frame)

    return handle


# the handlers ``held_while_starting`` stands in for (None outside it); a child forked inside it
# inherits them, and ``take_held`` puts back those the child did not set itself
_held_for: dict[int, Any] | None = None


def _record(pending: list[int]) -> Callable[[int, Any], None]:
    def record(signum: int, _frame: Any) -> None:
        pending.append(signum)

    record.held = True  # type: ignore[attr-defined]
    return record


@contextlib.contextmanager
def held_while_starting(method: str = "fork") -> Iterator[None]:
    """Hold Ctrl-C, SIGTERM and SIGHUP while this thread starts a child process (``Process.start``).
    Handled inside the start, a handler's KeyboardInterrupt is raised in the fork hooks (logging's:
    "Exception ignored in ... _releaseLock" on the console, the stop lost), or leaves a spawned
    child without its data (an EOFError traceback). Held, it is handled once the start returned.

    Two holds: this thread's signal mask, which the child inherits (fork and exec keep it), and,
    since another thread of the process may take the signal and Python then runs the handler in
    the main thread all the same, a handler that only records it meanwhile. The child takes its
    signals with ``take_held()`` once its own handlers are set. ``method``: the start method
    ("spawn" starts multiprocessing's resource tracker first: its start lets SIGINT and SIGTERM in)."""
    global _held_for
    if method != "fork":
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    pending: list[int] = []
    saved: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread() and _held_for is None:
        record = _record(pending)
        for sig in STOP_SIGNALS:
            handler = signal.getsignal(sig)
            if callable(handler):  # SIG_IGN and SIG_DFL act in C: no Python code runs in a hook
                saved[sig] = signal.signal(sig, record)
        _held_for = saved
    try:
        yield
    finally:
        for num, handler in saved.items():
            signal.signal(num, handler)
        if saved:
            _held_for = None
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        for num in dict.fromkeys(pending):  # once each, as the kernel merges a pending signal
            signal.raise_signal(num)


def take_held() -> None:
    """In a child started under ``held_while_starting``, its own handlers set: the parent's handlers
    back where the child set none, and the signals let in (one sent meanwhile is handled now)."""
    global _held_for
    for sig, handler in (_held_for or {}).items():
        if getattr(signal.getsignal(sig), "held", False):
            signal.signal(sig, handler)
    _held_for = None
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def as_worker() -> None:
    """A worker process started under ``held_while_starting``: Ctrl-C and a closed terminal are
    for its parent to act on (a worker of its own would print a KeyboardInterrupt traceback
    each), SIGTERM ends it (``terminate()``), and the held signals are let in."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    take_held()


def held_pool(ctx: Any, processes: int) -> Any:
    """``ctx.Pool(processes)`` started under ``held_while_starting``, of workers set ``as_worker``
    (``arena bench``'s pools: a Ctrl-C while they start, or while they work, stops the command
    in one line)."""
    with held_while_starting(ctx.get_start_method()):
        return ctx.Pool(processes, initializer=as_worker)


def _stop(*_: object) -> None:
    raise KeyboardInterrupt


def _started_as_arena() -> bool:
    if "--multiprocessing-fork" in getattr(sys, "orig_argv", ()):
        # a child spawned by the command (the ladder's luck process) runs the `arena` script again
        # to import it: it keeps the default handlers, or a SIGTERM to the whole process group
        # (`systemctl stop`, `timeout`) would print "arena: interrupted" once more from it
        return False
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return (
        os.path.basename(sys.argv[0] if sys.argv else "") == "arena" or getattr(spec, "name", None) == "arena.__main__"
    )


def while_loading() -> None:
    if _started_as_arena():
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _interrupted_early)
        for sig in (signal.SIGHUP, signal.SIGTERM):
            if signal.getsignal(sig) == signal.SIG_DFL:  # nohup's SIG_IGN is kept
                signal.signal(sig, _interrupted_early)


def settle(code: _Code) -> _Code:
    """``code``, the command's exit code; 130 (it was interrupted): a repeated Ctrl-C, SIGTERM or
    SIGHUP must not cut its exit's clean-up (bots killed, logs closed) with a traceback or a
    death by the signal, so from here they are ignored."""
    if code == 130 and threading.current_thread() is threading.main_thread():
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
    return code


def hand_over() -> None:
    """From here a KeyboardInterrupt reaches the command's guard, which says it in one line."""
    if signal.getsignal(signal.SIGINT) is _interrupted_early:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGHUP) is _interrupted_early:
        signal.signal(signal.SIGHUP, _hung_up)
    if signal.getsignal(signal.SIGTERM) is _interrupted_early:
        signal.signal(signal.SIGTERM, this_process_only(_stop))
