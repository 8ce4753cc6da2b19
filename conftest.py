"""What every test folder shares (tests/<package> mirrors arena/<package>; helpers in tests/support).

- hypothesis profiles: property tests assert behaviour, never time, so no profile has a deadline
  (a wall-clock budget that a shared, busy machine breaks) or fails on slow data generation.
  ``CI`` set in the environment selects the ``ci`` profile: derandomized, so a CI run is repeatable,
  and no example database left behind.
- ``offline``/``shared``: pip without an index, finding only hand-written wheels, for the bot-folder
  tests (tests/match) and the shipping of folders to workers (tests/tournament).
- a session check that the tests leave none of their own processes running.
- each test starts with the default SIGINT, SIGHUP and SIGTERM dispositions (an ignored one would
  be inherited by the `arena` processes later tests start and signal).
"""

from __future__ import annotations

import os
import signal
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests import own_processes as own
from tests.support.bot_folders import tiny_wheel

# The processes the tests start (`arena`, workers, bots) read compiled modules, as on a user's
# machine: where the environment forbids writing them, every one of the suite's hundreds of
# processes compiles arena from source again (measured: tests/cli 59 s -> 47 s).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

_RELAXED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("default", **_RELAXED)
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, **_RELAXED)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheels, and the environments cache the module's tests share (pip runs once per pin)."""
    base = tmp_path_factory.mktemp("offline")
    wheels = base / "wheels"
    wheels.mkdir()
    tiny_wheel(wheels, "1.0")
    tiny_wheel(wheels, "2.0")
    return base


@pytest.fixture()
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared: Path) -> Path:
    """pip without an index or the machine's config, finding only the wheels of ``wheels/``."""
    monkeypatch.setenv("ARENA_BOT_ENVS", str(shared / "envs"))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(shared / "wheels"))
    return tmp_path


# multiprocessing's own helpers live as long as the interpreter that started them, by design.
_INTERPRETER_HELPERS = (b"multiprocessing.resource_tracker", b"multiprocessing.forkserver")
_LEFTOVER_GRACE_S = 10.0  # processes told to stop at a test's end may take a moment to go


def _cmdline(pid: int) -> bytes | None:
    """The process's command line (None: gone). A process in the middle of exec reads empty for
    a moment (a helper multiprocessing just started did, once in CI): read it again, briefly."""
    cmd = b""
    for _ in range(50):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            return None
        if cmd:
            break
        time.sleep(0.01)
    return cmd


def _leftovers() -> dict[int, str]:
    """This test process's running descendants (pid -> command line), interpreter helpers aside."""
    found = {}
    for pid in own.descendants(os.getpid()):
        cmd = _cmdline(pid)
        if cmd is None:
            continue
        if not any(helper in cmd for helper in _INTERPRETER_HELPERS):
            found[pid] = cmd.replace(b"\0", b" ").decode(errors="replace").strip()
    return found


def _children() -> set[tuple[int, int]]:
    """This process's direct children as (pid, start ticks): cheap enough to read after every test.

    Orphans of the bots a test played re-parent here (the referee is a child subreaper), so the root
    of anything a test leaves running is among them.
    """
    found = set()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                pids = f.read().split()
        except OSError:
            continue
        for pid in map(int, pids):
            st = own.stat(pid)
            if st is not None:
                found.add((pid, st[3]))
    return found


_first_seen: dict[tuple[int, int], str] = {}  # a child of this process -> the test after which it ran


@pytest.fixture(autouse=True)
def _note_new_children(request: pytest.FixtureRequest) -> Iterator[None]:
    """Remember which test each child process was first seen after, so that a leftover is named by its test."""
    yield
    for child in _children():
        _first_seen.setdefault(child, request.node.nodeid)


def _started_by(pid: int) -> str:
    """The test after which ``pid`` (or the child of this process it descends from) was first seen."""
    while pid > 1:
        st = own.stat(pid)
        if st is None:
            return "an unknown test"
        if (pid, st[3]) in _first_seen:
            return _first_seen[(pid, st[3])]
        if st[1] == os.getpid():
            return "the last test"
        pid = st[1]
    return "an unknown test"


@pytest.fixture(scope="session", autouse=True)
def no_processes_left_behind() -> Iterator[None]:
    """After the last test of this process: none of the processes the tests started still runs.

    Only this process's own descendants count (other suites share the machine). The failure names
    each one, and they are ended so that they do not outlive the run.
    """
    yield
    end = time.monotonic() + _LEFTOVER_GRACE_S
    while (left := _leftovers()) and time.monotonic() < end:
        time.sleep(0.2)
    named = {pid: f"{pid} ({_started_by(pid)}): {cmd[:200]}" for pid, cmd in left.items()}
    for pid in left:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    assert not left, "the tests left processes running: " + "; ".join(named.values())


_SIGNALS = {signal.SIGINT: signal.default_int_handler, signal.SIGHUP: signal.SIG_DFL, signal.SIGTERM: signal.SIG_DFL}


@pytest.fixture(autouse=True)
def default_signal_dispositions(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test starts with Python's own SIGINT, SIGHUP and SIGTERM dispositions.

    An ignored signal is inherited by every process a later test starts (exec keeps SIG_IGN), so a
    test that sends SIGINT or SIGHUP to an `arena` it started would see it ignored because of
    whatever ran before it in this process. A test that leaves one ignored is named in a warning.
    """
    for sig, default in _SIGNALS.items():
        if signal.getsignal(sig) == signal.SIG_IGN:
            signal.signal(sig, default)
    yield
    ignored = [sig.name for sig in _SIGNALS if signal.getsignal(sig) == signal.SIG_IGN]
    if ignored:
        warnings.warn(f"{request.node.nodeid} left {', '.join(ignored)} ignored in the test process", stacklevel=1)
