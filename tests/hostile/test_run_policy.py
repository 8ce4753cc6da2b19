"""`arena run` and an unsafe sandbox level: refused unless the tournament file trusts its bots;
the level is printed on every run and shown in every leaderboard format."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.match.detect import detect_sandbox, safe_level_here

ROOT = Path(__file__).resolve().parents[2]
BOT = """import json, random, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "tiny"}), flush=True)
    elif m["type"] == "act":
        print(random.choice(m["observation"]["legal_actions"])["id"], flush=True)
    elif m["type"] == "bye":
        break
"""


def tournament(tmp: Path, extra: str = "") -> Path:
    (tmp / "bots").mkdir(exist_ok=True)
    for name in ("alpha", "beta"):
        (tmp / "bots" / f"{name}.py").write_text(BOT)
    f = tmp / "t.yaml"
    f.write_text(
        "name: policy\nseed: 3\nbots: [bots/*.py]\n"
        "games:\n  - {id: divers-weights, players: 2, deals: 1}\n"
        f"workers: 1\nresults: {tmp / 'results'}\n{extra}"
    )
    return f


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SANDBOX_LEVEL", None)
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_unsafe_level_is_refused_without_trust_bots(tmp_path):
    r = arena("run", str(tournament(tmp_path)), "--sandbox", "rlimits", cwd=tmp_path)
    assert r.returncode != 0
    err = r.stderr.strip().splitlines()
    assert len(err) == 1, r.stderr  # one line: the level, why it is unsafe, the fix
    assert "sandbox level rlimits is not safe for untrusted bots" in err[0] and "trust_bots: true" in err[0]
    assert "t.yaml" in err[0]
    # the fix that applies on this machine: the safe level that passes here, else what is missing
    level, missing = safe_level_here()
    if level is not None:
        assert f"give --sandbox auto (takes {level} here, safe) or --sandbox {level}" in err[0]
        assert "install bubblewrap" not in err[0] and "run as root" not in err[0]
    else:
        assert missing in err[0]
    assert not list((tmp_path / "results").glob("**/leaderboard.*"))


@pytest.mark.parametrize(
    ("here", "asked", "said"),
    [
        (("full", ""), "--sandbox rlimits", "give --sandbox auto (takes full here, safe) or --sandbox full instead"),
        (("landlock", ""), "'sandbox: none'", "set 'sandbox: auto' (takes landlock here, safe) or 'sandbox: landlock'"),
        (("full", ""), "SANDBOX_LEVEL=rlimits", "unset SANDBOX_LEVEL (auto takes full here, safe)"),
        ((None, "install bubblewrap (apt-get install bubblewrap)"), "'sandbox: auto'", "install bubblewrap"),
        (
            (None, "run as root (landlock as root is safe)"),
            "'sandbox: rlimits'",
            "run as root (landlock as root is safe) for a safe level, then ask for it: 'sandbox: auto' instead",
        ),
    ],
)
def test_the_fix_for_an_unsafe_level_is_the_one_this_machine_allows(monkeypatch, here, asked, said):
    """With bubblewrap installed and run as root, "install bubblewrap or run as root" was no fix."""
    import arena.match.detect as detect
    from arena.tournament.runner import get_safe_level

    monkeypatch.setattr(detect, "safe_level_here", lambda: here)
    fix = get_safe_level(asked)
    assert fix.startswith(said), fix
    if here[0] is not None:
        assert "bubblewrap" not in fix and "root" not in fix


def test_where_the_level_was_asked_for(monkeypatch):
    from types import SimpleNamespace

    from arena.tournament.runner import asked_level

    monkeypatch.delenv("SANDBOX_LEVEL", raising=False)
    assert asked_level(SimpleNamespace(sandbox="auto"), "rlimits") == "--sandbox rlimits"
    assert asked_level(SimpleNamespace(sandbox="rlimits"), None) == "'sandbox: rlimits'"
    monkeypatch.setenv("SANDBOX_LEVEL", "none")
    assert asked_level(SimpleNamespace(sandbox="auto"), None) == "SANDBOX_LEVEL=none"
    assert asked_level(SimpleNamespace(sandbox="rlimits"), None) == "'sandbox: rlimits'"  # the file's level wins


@pytest.mark.slow
def test_trusted_bots_run_at_an_unsafe_level_and_every_leaderboard_says_so(tmp_path):
    r = arena("run", str(tournament(tmp_path, "trust_bots: true\n")), "--sandbox", "rlimits", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "arena: sandbox level rlimits (NOT safe for untrusted bots" in r.stderr
    res = tmp_path / "results"
    assert json.loads((res / "leaderboard.json").read_text())["sandbox"] == [{"level": "rlimits", "safe": False}]
    rows = list(csv.DictReader(io.StringIO((res / "leaderboard.csv").read_text())))
    assert rows and all(row["sandbox"] == "rlimits:unsafe" for row in rows)
    line = "Sandbox: rlimits (NOT safe for untrusted bots: the bots were trusted)."
    assert line in (res / "leaderboard.md").read_text() and line in (res / "leaderboard.html").read_text()
    assert line in r.stdout  # the terminal leaderboard
    lb = arena("leaderboard", str(res), cwd=tmp_path)
    assert line in lb.stdout


@pytest.mark.slow
def test_a_safe_level_runs_without_trust_bots(tmp_path):
    info = detect_sandbox("auto")
    if not info.safe:
        pytest.skip(
            f"no safe level here ({info.level}: {'; '.join(info.details['unsafe'])}); "
            "missing: bubblewrap, or root for landlock"
        )
    r = arena("run", str(tournament(tmp_path)), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"arena: sandbox level {info.level} (safe for untrusted bots)" in r.stderr
    board = json.loads((tmp_path / "results" / "leaderboard.json").read_text())
    assert board["sandbox"] == [{"level": info.level, "safe": True}]
