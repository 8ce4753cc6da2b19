"""Exported bots: a policy trained in-process becomes a bot file that plays real matches
through the arena (sandboxed, stdlib + botkit only) and chooses exactly what the policy chooses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.rl import encoding as E
from arena.rl.bridge import FORMAT, bot_source, check_policy, load_policy
from games import get_game

ROOT = Path(__file__).resolve().parents[2]


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def _policy_json(game: str, players: int, seed: int) -> dict:
    np = pytest.importorskip("numpy", reason="numpy not installed: pip install -e '.[rl]'")
    from arena.rl.policy import LinearPolicy

    rng = np.random.default_rng(seed)
    p = LinearPolicy(game, players)
    p.weights = rng.normal(size=p.weights.shape)
    p.bias = rng.normal(size=p.bias.shape)
    return p.to_json()


@pytest.mark.slow
@pytest.mark.parametrize(
    "game,players,options",
    [
        ("tightwad", 3, []),
        ("divers-weights", 2, ["--option", "bidding=true"]),
        # Greedy policies can pass a Palace pile back and forth for ever: cap the decisions (C4).
        ("palace", 3, ["--option", "decision_cap=400"]),
    ],
)
def test_exported_bots_play_a_real_match_choosing_what_the_policies_choose(tmp_path, game, players, options):
    pytest.importorskip("numpy", reason="numpy not installed: pip install -e '.[rl]'")
    from arena.rl.policy import LinearPolicy

    policies, bots = [], []
    for seat in range(players):
        doc = _policy_json(game, players, seed=100 + seat)
        path = tmp_path / f"policy{seat}.json"
        path.write_text(json.dumps(doc))
        bot = tmp_path / f"bot{seat}.py"
        res = arena("export-bot", str(path), "-o", str(bot), "--name", f"lin{seat}")
        assert res.returncode == 0, res.stderr
        policies.append(LinearPolicy.from_json(json.loads(path.read_text())))
        bots.append(str(bot))
    res = arena("play", game, *bots, *options, "--seed", "5", "--json", "--sandbox", "auto")
    assert res.returncode == 0, res.stderr
    record = json.loads(res.stdout)
    assert all(f is None for f in record["faults"]), record["faults"]
    # Replay the match on the engine and ask each in-process policy what it would play.
    state = get_game(game).new_game(players, record["deal_seed"], record["options"])
    assert record["decisions"]
    for d in record["decisions"]:
        seat = d["seat"]
        assert d["action"] == policies[seat].choose(state.observation(seat)), f"decision {d['n']}"
        state.apply(seat, d["action"])
    assert state.is_over() and list(state.result().places) == record["result"]["places"]


@pytest.mark.slow
def test_an_exported_bot_passes_arena_check(tmp_path):
    # check also deals it games it was not trained for: it falls back to botkit.simple_choice.
    bot = tmp_path / "bot.py"
    bot.write_text(bot_source(_policy_json("tightwad", 4, seed=1), name="lin"))
    res = arena("check", str(bot))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "RESULT: PASS" in res.stdout and "FAIL" not in res.stdout


def _small_policy() -> dict:
    rows, cols = E.ACTION_SIZE["tightwad"], E.obs_size("tightwad", 3)
    return {
        "format": FORMAT,
        "version": 1,
        "game": "tightwad",
        "players": 3,
        "weights": [[0.0] * cols for _ in range(rows)],
        "bias": [0.0] * rows,
    }


@pytest.mark.parametrize(
    "change,field",
    [
        (lambda d: d.update(format="other"), "format"),
        (lambda d: d.update(game="chess"), "game"),
        (lambda d: d.update(players=11), "players"),
        (lambda d: d.update(players="3"), "players"),
        (lambda d: d["weights"].pop(), "weights"),
        (lambda d: d["weights"][3].append(1.0), "weights"),
        (lambda d: d["weights"][0].__setitem__(0, float("nan")), "weights"),
        (lambda d: d["weights"][0].__setitem__(0, "1"), "weights"),
        (lambda d: d["bias"].__setitem__(0, True), "bias"),
        (lambda d: d.update(bias={}), "bias"),
    ],
)
def test_a_bad_policy_is_refused_naming_the_field(change, field):
    doc = _small_policy()
    check_policy(doc)
    change(doc)
    with pytest.raises(ValueError, match=f"field '{field}'"):
        check_policy(doc, "p.json")


def test_an_edited_player_count_is_named_not_the_weights():
    """A policy for 3 players with `players` edited to 4 was refused naming 'weights', which were
    fine; the error now names `players` and the count the weights were trained for."""
    doc = _small_policy()
    doc["players"] = 4
    with pytest.raises(ValueError, match="field 'players': 4, but the weights are for tightwad with 3 players"):
        check_policy(doc, "p.json")
    doc = _small_policy()
    doc["weights"][3].append(1.0)  # rows of two lengths: the weights are broken, and said to be
    with pytest.raises(ValueError, match="field 'weights'"):
        check_policy(doc, "p.json")


def test_export_bot_command_refuses_bad_files_in_one_line(tmp_path):
    cases = {"notjson.json": "{not json", "list.json": "[1, 2]", "deep.json": "[" * 100_000}
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        res = arena("export-bot", str(tmp_path / name), "-o", str(tmp_path / "bot.py"))
        assert res.returncode == 2, res.stderr
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("arena: error: ") and name in lines[0], res.stderr
    res = arena("export-bot", str(tmp_path / "missing.json"), "-o", str(tmp_path / "bot.py"))
    assert res.returncode == 2 and "cannot read it" in res.stderr
    assert not (tmp_path / "bot.py").exists()


def test_load_policy_bounds_a_pipe_dev_zero_and_a_huge_integer(tmp_path, monkeypatch):
    """A named pipe nothing writes to hung `arena export-bot` in open(); /dev/zero (its size is 0
    to stat) was read into memory without end; an integer of 5,000 digits said Python's words
    without the file's name."""
    import os

    import arena.rl.bridge as bridge
    from tests.support.named_pipe import error_within

    pipe = tmp_path / "pipe.json"
    os.mkfifo(pipe)
    said = error_within(10, pipe, ValueError, lambda: load_policy(pipe))
    assert said == f"{pipe}: not a regular file (a pipe, a device or a folder); give the policy file itself"
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    with pytest.raises(ValueError, match=r"zero.json: not a regular file"):
        load_policy(tmp_path / "zero.json")
    (tmp_path / "big.json").write_text('{"format": ' + "9" * 5000 + "}")
    with pytest.raises(ValueError, match=r"big.json: not a JSON policy file \(Exceeds the limit"):
        load_policy(tmp_path / "big.json")
    monkeypatch.setattr(bridge, "MAX_POLICY_BYTES", 1000)
    (tmp_path / "long.json").write_text(" " * 1001)
    with pytest.raises(ValueError, match=r"long.json: more than a policy may have \(1000 bytes\)"):
        load_policy(tmp_path / "long.json")


def test_load_policy_round_trips_and_the_bot_source_compiles(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(_small_policy()))
    doc = load_policy(path)
    source = bot_source(doc, name="zero")
    compile(source, "bot.py", "exec")
    assert "POLICY = _json.loads(" in source and "def encode(" in source


def test_export_into_a_folder_that_does_not_exist_says_to_create_it(tmp_path):
    """'No such file or directory' did not say which part was missing nor the fix
    (train_linear.py already says it for its --out and --export)."""
    from arena.rl.bridge import export_bot

    out = tmp_path / "bots" / "mine.py"
    with pytest.raises(ValueError) as err:
        export_bot(_policy_json("tightwad", 3, 0), out)
    assert str(err.value) == f"{out}: the folder {out.parent} does not exist; create it first (mkdir -p {out.parent})"
