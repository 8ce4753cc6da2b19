"""Ctrl-C, a closed terminal or SIGTERM in the first moments of an `arena` command: one line,
exit 130, nothing written (it printed a KeyboardInterrupt traceback, or ended silently on
SIGHUP and SIGTERM). And SIGTERM to a short command later on: the same line, not a silent 143.

The signal arrives at a chosen point, not after a guessed delay: a ``sitecustomize`` in the
child's path sends it to the child itself when a given module is first imported.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tournament.test_trust import make_bot, tour

ROOT = Path(__file__).resolve().parents[2]

TRIPWIRE = """
import os, signal, sys

class _Tripwire:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["ARENA_TEST_TRIP_ON"]:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), getattr(signal, os.environ["ARENA_TEST_TRIP_SIGNAL"]))
        return None

sys.meta_path.insert(0, _Tripwire())
"""


def run_tripped(tmp_path: Path, module: str, sig: str, *args: str) -> subprocess.CompletedProcess:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(TRIPWIRE)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]),
        ARENA_TEST_TRIP_ON=module,
        ARENA_TEST_TRIP_SIGNAL=sig,
    )
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("sig", ["SIGINT", "SIGHUP", "SIGTERM"])
@pytest.mark.parametrize("module", ["click", "arena.tournament.config"])  # while arena.cli loads
def test_an_interrupt_while_loading_is_one_line_and_exit_130(tmp_path, sig, module):
    path = tour(tmp_path, [make_bot(tmp_path / "b", "a"), make_bot(tmp_path / "b", "c", tag="c")])
    res = run_tripped(tmp_path, module, sig, "run", str(path))
    assert res.returncode == 130, res.stderr
    assert res.stderr.strip() == "arena: interrupted", res.stderr
    assert not (tmp_path / "res").exists()


@pytest.mark.parametrize("sig", ["SIGINT", "SIGHUP", "SIGTERM"])
def test_an_interrupt_while_the_run_starts_leaves_no_results_folder(tmp_path, sig):
    # arena.match.detect is first imported once the results folder is made and locked
    path = tour(tmp_path, [make_bot(tmp_path / "b", "a"), make_bot(tmp_path / "b", "c", tag="c")])
    res = run_tripped(tmp_path, "arena.match.detect", sig, "run", str(path))
    assert res.returncode == 130, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert lines == ["arena: interrupted"], res.stderr
    assert not (tmp_path / "res").exists()


def test_sigterm_to_a_short_command_is_one_line_and_exit_130_with_its_files_whole(tmp_path):
    path = tour(tmp_path, [make_bot(tmp_path / "b", "a"), make_bot(tmp_path / "b", "c", tag="c")])
    done = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path)], cwd=tmp_path, capture_output=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    board = tmp_path / "res" / "leaderboard.md"
    before = board.read_bytes()
    # trueskill is first imported once `arena leaderboard` rates the stored matches
    res = run_tripped(tmp_path, "trueskill", "SIGTERM", "leaderboard", str(tmp_path / "res"), "--write")
    assert res.returncode == 130, res.stderr
    assert res.stderr.strip() == "arena: interrupted", res.stderr
    assert board.read_bytes() == before
    assert not [p.name for p in (tmp_path / "res").iterdir() if "tmp" in p.name]


def test_a_results_folder_that_was_there_is_kept(tmp_path):
    path = tour(tmp_path, [make_bot(tmp_path / "b", "a"), make_bot(tmp_path / "b", "c", tag="c")])
    (tmp_path / "res").mkdir()
    (tmp_path / "res" / "notes.txt").write_text("mine")
    res = run_tripped(tmp_path, "arena.match.detect", "SIGINT", "run", str(path))
    assert res.returncode == 130, res.stderr
    assert (tmp_path / "res" / "notes.txt").read_text() == "mine"


@pytest.mark.slow
def test_nohup_keeps_sighup_ignored(tmp_path):
    # `nohup arena run ...`: SIGHUP ignored on purpose stays ignored, the run completes
    path = tour(tmp_path, [make_bot(tmp_path / "b", "a"), make_bot(tmp_path / "b", "c", tag="c")])
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(TRIPWIRE)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]),
        ARENA_TEST_TRIP_ON="arena.match.detect",
        ARENA_TEST_TRIP_SIGNAL="SIGHUP",
    )
    res = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )
    assert res.returncode == 0, res.stderr


def test_a_stop_handler_acts_only_in_its_own_process_and_a_fresh_fork_dies_of_the_signal():
    """A pool stopping a worker in its first moments (before the worker sets its own handlers)
    ran the parent's handler there: a KeyboardInterrupt in the fork's hooks, printed as an
    ignored exception with a traceback, and the worker lived on."""
    import time

    from arena.interrupts import this_process_only

    calls: list[int] = []
    old = signal.signal(signal.SIGUSR1, this_process_only(lambda sig, _frame: calls.append(sig)))
    try:
        pid = os.fork()
        if pid == 0:  # the fresh fork, still with its parent's handler
            os.kill(os.getpid(), signal.SIGUSR1)
            time.sleep(5)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGUSR1
        os.kill(os.getpid(), signal.SIGUSR1)
        assert calls == [signal.SIGUSR1]
    finally:
        signal.signal(signal.SIGUSR1, old)


def _duel_args(tmp_path: Path, max_matches: int) -> list[str]:
    new = make_bot(tmp_path / "b", "new", tag="new")
    old = make_bot(tmp_path / "b", "old", tag="old")
    return ["duel", "divers-weights", str(new), str(old), "--results", "res", "--sandbox", "none", "--trust-bots"] + [
        "--max-matches",
        str(max_matches),
    ]


@pytest.mark.parametrize("sig", ["SIGINT", "SIGHUP", "SIGTERM"])
def test_a_duel_interrupted_while_it_starts_leaves_no_results_folder(tmp_path, sig):
    """It left a results folder holding only its lock, as `arena run` no longer does."""
    res = run_tripped(tmp_path, "arena.match.detect", sig, *_duel_args(tmp_path, 40))
    assert res.returncode == 130, res.stderr
    assert res.stderr.splitlines()[-1] == "arena: interrupted", res.stderr
    assert "resume with" not in res.stderr  # nothing to resume
    assert not (tmp_path / "res").exists()


def test_a_duel_interrupted_before_its_first_match_says_how_to_resume_what_is_kept(tmp_path):
    """A rerun stopped before it played anything printed no "resume with" line, though the
    folder held the earlier run's matches."""
    first = subprocess.run(
        [sys.executable, "-m", "arena", *_duel_args(tmp_path, 4)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert first.returncode in (0, 3), first.stderr  # decided, or capped after 4 matches
    res = run_tripped(tmp_path, "arena.match.detect", "SIGINT", *_duel_args(tmp_path, 40))
    assert res.returncode == 130, res.stderr
    assert "arena: resume with: arena duel divers-weights" in res.stderr
    assert "--max-matches 40" in res.stderr
    assert (tmp_path / "res" / "results.sqlite").exists()
