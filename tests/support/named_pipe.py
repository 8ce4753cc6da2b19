"""Reading (or writing) a named pipe nothing writes to (or reads) must fail at once: ``open``
would wait for the other end for ever. ``error_within`` runs the call in a thread, so a call
that waits fails the test (and is released) instead of hanging the suite."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest


def error_within(seconds: float, pipe: Path, error: type[BaseException], call: Callable[[], object]) -> str:
    """The text of the ``error`` that ``call`` raises; fails if it still waits on ``pipe`` after ``seconds``."""
    got: list[str] = []
    worker = threading.Thread(target=lambda: got.append(str(pytest.raises(error, call).value)))
    worker.start()
    worker.join(seconds)
    if worker.is_alive():  # stuck in open(): be its other end (O_RDWR: either) so that it ends, then fail
        os.close(os.open(pipe, os.O_RDWR | os.O_NONBLOCK))
        worker.join()
        pytest.fail(f"{pipe.name}: waited for the other end of the pipe")
    return got[0]
