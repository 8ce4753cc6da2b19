"""Ctrl-C and a closed terminal while the `arena` command is still loading its modules.

A second or more of imports on a busy machine must not end in a traceback or in silence: from
``while_loading()`` until ``hand_over()`` a SIGINT or SIGHUP prints one line and exits 130 with
nothing written. Only when started as the `arena` command: a program that imports arena keeps
its own handlers. After ``hand_over()`` both raise KeyboardInterrupt, which the command's guard
turns into that same line.
"""

from __future__ import annotations

import os
import signal
import sys


def _interrupted_early(*_: object) -> None:
    os.write(2, b"arena: interrupted\n")
    os._exit(130)


def _hung_up(*_: object) -> None:
    """SIGHUP (a closed terminal, a dropped ssh connection) stops a command as Ctrl-C does."""
    raise KeyboardInterrupt


def _started_as_arena() -> bool:
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return (
        os.path.basename(sys.argv[0] if sys.argv else "") == "arena" or getattr(spec, "name", None) == "arena.__main__"
    )


def while_loading() -> None:
    if _started_as_arena():
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _interrupted_early)
        if signal.getsignal(signal.SIGHUP) == signal.SIG_DFL:  # nohup's SIG_IGN is kept
            signal.signal(signal.SIGHUP, _interrupted_early)


def hand_over() -> None:
    """From here a KeyboardInterrupt reaches the command's guard, which says it in one line."""
    if signal.getsignal(signal.SIGINT) is _interrupted_early:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGHUP) is _interrupted_early:
        signal.signal(signal.SIGHUP, _hung_up)
