"""docs/rl.md works as written: its Python example runs, and its training command
(at a tiny size) trains, evaluates and exports the same bot `arena export-bot` writes."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "rl.md").read_text(encoding="utf-8")

pytest.importorskip("pettingzoo", reason="pettingzoo not installed: pip install -e '.[rl]'")


def test_the_environment_example_runs():
    block = re.search(r"```python\n(.*?)```", DOC, re.S).group(1)
    exec(compile(block, "docs/rl.md", "exec"), {})


def test_the_training_command_trains_measures_and_exports(tmp_path):
    cmd = re.search(r"^python (examples/train_linear.py .*?)\n\s*(--out .*)$", DOC, re.M)
    args = shlex.split(cmd.group(1).rstrip("\\ ")) + shlex.split(cmd.group(2))
    args = [a.replace("results/rl/", f"{tmp_path}/") for a in args]
    games = args.index("--games")
    args[games + 1] = "40"  # the documented run trains on 5000; the pipeline is what is tested here
    res = subprocess.run(
        [sys.executable, *args, "--eval-games", "20"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr
    assert "linear policy vs random, 20 games: win rate" in res.stdout
    assert "random vs random, 20 games" in res.stdout
    # a long training is never silent: counts with totals on stderr, first and last at least
    lines = res.stderr.splitlines()
    for what, total in (("train", 40), ("evaluate linear policy", 20), ("evaluate random", 20)):
        assert f"{what}: 0 of {total} games" in lines, res.stderr
        assert any(ln.startswith(f"{what}: {total} of {total} games (100%), ") for ln in lines), res.stderr
    assert "games" not in res.stdout.split("trained on")[0]  # stdout: the results only
    policy, bot = tmp_path / "tightwad3-policy.json", tmp_path / "tightwad3-bot.py"
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena",
            "export-bot",
            str(policy),
            "-o",
            str(tmp_path / "b.py"),
            "--name",
            "linear-tightwad",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "b.py").read_text() == bot.read_text()


def _train(tmp_path, *args):
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "train_linear.py"), "--games", "2", "--eval-games", "4", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--players", "2"], "--players 2: tightwad takes 3 to 10 players; give --players 3 to 10"),
        (["--option", "bidding=yes"], "--option 'bidding=yes': the value is not JSON"),
        (["--option", "bidding"], "--option 'bidding': expected KEY=JSON"),
        (["--option", "nosuch=1"], "option 'nosuch': unknown option"),
        (["--games", "0"], "argument --games: 0 is below 1"),
        (["--out", "missing/p.json"], "--out missing/p.json: the folder missing does not exist"),
        (["--export", "missing/b.py"], "--export missing/b.py: the folder missing does not exist"),
    ],
)
def test_the_training_script_refuses_bad_input_in_one_line(tmp_path, args, named):
    res = _train(tmp_path, *args)
    assert res.returncode == 2, res.stderr
    assert res.stderr.splitlines() == [res.stderr.strip()] and named in res.stderr, res.stderr
    assert res.stdout == "" and not (tmp_path / "missing").exists()  # refused before training, nothing made


def test_the_training_script_prints_readable_intervals(tmp_path):
    res = _train(tmp_path, "--out", "p.json")
    assert res.returncode == 0, res.stderr
    pct, num = r"\d+\.\d%", r"\d+\.\d{3}"
    line = rf"win rate {pct} \[{pct}, {pct}\] 95%, mean place {num} \[{num}, {num}\] 95%$"
    assert len(re.findall(line, res.stdout, re.M)) == 2, res.stdout
    assert (tmp_path / "p.json").is_file()


def test_an_interval_never_reaches_below_zero():
    """With no win, the Wilson bound's rounding printed -0.0%."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_linear", ROOT / "examples" / "train_linear.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lo, hi = module.wilson(0, 20)
    assert lo == 0.0 and f"{lo:.1%}" == "0.0%" and 0 < hi < 1


def test_the_bot_folder_example_plays_the_policy_it_saved(tmp_path, monkeypatch):
    """The numpy bot-folder example of docs/rl.md, run in process (botkit's `run` stubbed): its
    `choose` picks what `LinearPolicy.choose` picks on real environment observations."""
    import types

    import numpy as np

    from arena.bot_helper import botkit
    from arena.rl import encoding
    from arena.rl.env import env
    from arena.rl.policy import LinearPolicy

    blocks = re.findall(r"```python\n(.*?)```", DOC, re.S)
    save = next(b for b in blocks if "np.savez(" in b)
    main = next(b for b in blocks if "import encoding" in b)
    rng = np.random.default_rng(1)
    policy = LinearPolicy("tightwad", 3)
    policy.weights = rng.normal(size=policy.weights.shape)
    policy.bias = rng.normal(size=policy.bias.shape)
    (tmp_path / "bots" / "mlp").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    exec(compile(save, "docs/rl.md", "exec"), {"np": np, "policy": policy})
    caught = {}
    fake = types.ModuleType("botkit")
    fake.run = lambda choose, name=None: caught.update(choose=choose)
    fake.simple_choice = botkit.simple_choice
    monkeypatch.setitem(sys.modules, "botkit", fake)
    monkeypatch.setitem(sys.modules, "encoding", encoding)
    exec(compile(main, "docs/rl.md", "exec"), {"__file__": str(tmp_path / "bots" / "mlp" / "main.py")})
    choose = caught["choose"]
    match = types.SimpleNamespace(game="tightwad", players=3)
    e = env("tightwad", players=3)
    decisions = 0
    for seed in range(3):
        e.reset(seed=seed)
        for agent in e.agent_iter():
            obs, _, term, trunc, info = e.last()
            if term or trunc:
                e.step(None)
                continue
            view = info["observation"]
            assert choose(view, match) == policy.choose(view)
            decisions += 1
            e.step(policy.best_slot(obs["observation"], obs["action_mask"]))
    assert decisions > 20


def test_training_without_out_or_export_says_the_policy_is_not_saved(tmp_path):
    """The README's row ran `python examples/train_linear.py` alone, then `arena export-bot
    POLICY.json`: there was no POLICY.json, and nothing had said so."""
    res = _train(tmp_path)
    assert res.returncode == 0, res.stderr
    assert "no --out or --export: the policy is measured, then not saved" in res.stderr.splitlines()[0]
    assert "not saved" not in _train(tmp_path, "--out", "p.json").stderr
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "`python examples/train_linear.py --out policy.json`, then `arena export-bot policy.json" in readme
