"""`arena matches`: stored match ids findable by bot, game and fault kind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import support

HERE = Path(__file__).resolve().parent
RANDOM = HERE / "bots" / "random_player.py"
ILLEGAL = support.BOTS / "illegal_answer.py"


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("matches")
    for name, src in (("alpha", RANDOM), ("beta", RANDOM), ("illegal", ILLEGAL)):
        (tmp / f"{name}.py").write_text(src.read_text())
    (tmp / "t.yaml").write_text(f"""
name: t
seed: 3
bots: [{tmp / "alpha.py"}, {tmp / "beta.py"}, {tmp / "illegal.py"}]
games:
  - {{id: tightwad, players: [3], deals: 1}}
  - {{id: divers-weights, players: [2], deals: 1}}
workers: 1
sandbox: none
trust_bots: true
results: {tmp / "results"}
""")
    out = arena("run", str(tmp / "t.yaml"), cwd=tmp)
    assert "Traceback" not in out.stderr, out.stderr
    return tmp / "results"


def ids(text: str) -> list[str]:
    return [
        line.split()[0]
        for line in text.splitlines()[2:]
        if line.strip() and not line.startswith(" ") and "matches;" not in line
    ]


def test_every_stored_match_is_listed_with_an_id_replay_takes(results):
    out = arena("matches", str(results), cwd=results)
    assert out.returncode == 0, out.stderr
    listed = ids(out.stdout.split("\n\n")[0])
    assert len(listed) == 3 * 1 + 3 * 2  # tightwad: 1 group x 3 rotations; divers 2p: 3 pairs x 2 rotations
    replay = arena("replay", str(results), listed[0], "--quiet", cwd=results)
    assert replay.returncode == 0 and "replay ok" in replay.stdout


def test_filters_narrow_by_bot_game_and_fault(results):
    by_game = ids(arena("matches", str(results), "--game", "divers-weights", cwd=results).stdout.split("\n\n")[0])
    assert len(by_game) == 6 and all("divers-weights" in i for i in by_game)
    by_bot = arena("matches", str(results), "--bot", "alpha", cwd=results).stdout.split("\n\n")[0]
    assert len(ids(by_bot)) == 3 + 4 and all("alpha" in line for line in by_bot.splitlines()[2:])
    faults = arena("matches", str(results), "--fault", "illegal", cwd=results).stdout.split("\n\n")[0]
    assert len(ids(faults)) == 3 + 4 and all(
        "illegal: illegal (" in line and "is not legal" in line for line in faults.splitlines()[2:]
    )
    none = arena("matches", str(results), "--bot", "alpha", "--fault", "any", cwd=results)
    assert none.returncode == 0 and "no stored match fits" in none.stdout


def test_an_unknown_id_points_to_arena_matches(results):
    out = arena("replay", str(results), "nope", cwd=results)
    assert out.returncode != 0 and f"arena matches {results}" in out.stderr
    assert "Traceback" not in out.stderr


def test_an_unknown_bot_is_an_error_naming_the_known_ones(results):
    out = arena("matches", str(results), "--bot", "alpah", cwd=results)
    assert out.returncode == 2 and out.stdout == "", out.stdout
    assert out.stderr.strip().splitlines() == [
        f"arena: error: --bot alpah: no such bot in {results}; did you mean 'alpha'? (bots: alpha, beta, illegal)"
    ]
    nobody = arena("matches", str(results), "--bot", "nobody", cwd=results)
    assert nobody.returncode == 2 and "(bots: alpha, beta, illegal)" in nobody.stderr
    # a known bot without a match that fits is no error: the filter just found nothing
    none = arena("matches", str(results), "--bot", "alpha", "--fault", "timeout", cwd=results)
    assert none.returncode == 0 and "no stored match fits" in none.stdout
