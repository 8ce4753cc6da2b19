"""Ctrl-C or a closed terminal in the first moments of an `arena` command: one line, exit 130,
nothing written (it printed a KeyboardInterrupt traceback, or ended silently on SIGHUP).

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


@pytest.mark.parametrize("sig", ["SIGINT", "SIGHUP"])
@pytest.mark.parametrize("module", ["click", "arena.tournament.config"])  # while arena.cli loads
def test_an_interrupt_while_loading_is_one_line_and_exit_130(tmp_path, sig, module):
    path = tour(tmp_path, [make_bot(tmp_path / "b", "a"), make_bot(tmp_path / "b", "c", tag="c")])
    res = run_tripped(tmp_path, module, sig, "run", str(path))
    assert res.returncode == 130, res.stderr
    assert res.stderr.strip() == "arena: interrupted", res.stderr
    assert not (tmp_path / "res").exists()


@pytest.mark.parametrize("sig", ["SIGINT", "SIGHUP"])
def test_an_interrupt_while_the_run_starts_leaves_no_results_folder(tmp_path, sig):
    # arena.match.detect is first imported once the results folder is made and locked
    path = tour(tmp_path, [make_bot(tmp_path / "b", "a"), make_bot(tmp_path / "b", "c", tag="c")])
    res = run_tripped(tmp_path, "arena.match.detect", sig, "run", str(path))
    assert res.returncode == 130, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert lines == ["arena: interrupted"], res.stderr
    assert not (tmp_path / "res").exists()


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
