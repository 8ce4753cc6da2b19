"""The root conftest.py's session check sees a process a test started and left running, and only
the processes of this test process's own tree (multiprocessing's interpreter helpers aside)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

import conftest


def test_a_process_left_running_is_named_until_it_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        assert child.pid in conftest._leftovers()
        assert "time.sleep(120)" in conftest._leftovers()[child.pid]
    finally:
        child.kill()
        child.wait()
    assert child.pid not in conftest._leftovers()


def test_multiprocessing_helpers_are_not_counted() -> None:
    import multiprocessing.resource_tracker as tracker

    tracker.ensure_running()  # lives as long as this interpreter, by design
    assert tracker._resource_tracker._pid is not None
    assert tracker._resource_tracker._pid not in conftest._leftovers()


@pytest.mark.filterwarnings("ignore:.*left SIGHUP ignored")
def test_a_test_that_ignores_sighup_leaves_it_ignored() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as a worker's set-up does, in this process


def test_the_next_test_starts_with_sighup_at_its_default() -> None:
    # runs after the one above (one file, one process: --dist loadfile keeps their order)
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL
