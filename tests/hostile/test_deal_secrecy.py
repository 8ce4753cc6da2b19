"""A real bot tries to predict the deal, inside a real tournament.

The attack (as found by a hostile entrant): everything in a deal seed is public except
the tournament seed, so search small tournament seeds, rebuild the deal with the game
engine (bundled into the bot: a bot is one file), and compare with its own hand. With
secret deals (the default) it must fail; with ``deals: public`` it must succeed, which
shows the test can see a successful attack.
"""

from __future__ import annotations

import csv
import io
import os
import stat
from pathlib import Path

import pytest

from arena.report.run import run_and_publish
from arena.tournament.load import load_tournament

ROOT = Path(__file__).resolve().parents[2]
SEED = 2026
ENGINE = ["games", "games.rng", "games.decktet", "games.core", "games.tightwad", "games.divers_weights", "games.palace"]

ATTACK = r'''
import importlib.abc, importlib.util, json, random, re, sys


class _Bundled(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports the game engine from SOURCES (the sandbox shows the bot only its own file)."""

    def find_spec(self, name, path=None, target=None):
        if name in SOURCES:
            return importlib.util.spec_from_loader(name, self, is_package=name == "games")

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(compile(SOURCES[module.__name__], module.__name__, "exec"), module.__dict__)


sys.meta_path.insert(0, _Bundled())
from games import get_game
from games.rng import derive_seed


def seen(obs):
    # the own hand alone (4 of 72 cards) matches a wrong seed once in about a million
    # guesses; with every seat's face-up cards (public before the swaps resolve) never
    return obs["hand"], [t["face_up"] for t in obs["tableaux"]]


def crack(start, obs):
    deal = int(re.search(r"/d(\d+)/", start["match_id"]).group(1))
    canon = json.dumps(start["options"], sort_keys=True, separators=(",", ":"))
    spec = get_game(start["game"])
    target = seen(obs)
    for guess in range(SEARCH):
        seed = derive_seed(guess, start["game"], start["players"], canon, deal)
        state = spec.new_game(start["players"], seed, start["options"])
        if seen(state.observation(start["seat"])) == target:
            others = [state.observation(s)["hand"] for s in range(start["players"])]
            return guess, others
    return None, None


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


start, tried = None, set()
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        say({"type": "hello", "name": "deal-cracker"})
    elif msg["type"] == "start":
        start = msg
    elif msg["type"] == "act":
        if start["match_id"] not in tried:
            tried.add(start["match_id"])
            guess, hands = crack(start, msg["observation"])
            if guess is None:
                print(f"ATTACK FAILED {start['match_id']}: no seed below {SEARCH}", file=sys.stderr, flush=True)
            else:
                print(f"CRACKED {start['match_id']} tournament seed {guess}: hands {hands}",
                      file=sys.stderr, flush=True)
        # a random legal action: always the first one can loop Palace to its decision cap (C4)
        say(random.choice(msg["observation"]["legal_actions"])["id"])
    elif msg["type"] == "bye":
        break
'''


def attacker(tmp: Path, search: int) -> Path:
    sources = {}
    for name in ENGINE:
        rel = "games/__init__.py" if name == "games" else name.replace(".", "/") + ".py"
        sources[name] = (ROOT / rel).read_text()
    path = tmp / "deal_cracker.py"
    path.write_text(f"SEARCH = {search}\nSOURCES = {sources!r}\n{ATTACK}")
    return path


def tournament(tmp: Path, name: str, bot: Path, extra: str = "") -> Path:
    random = ROOT / "bots" / "random_bot.py"
    path = tmp / f"{name}.yaml"
    path.write_text(f"""
name: {name}
seed: {SEED}
bots: [{bot}, {random}, {{path: {random}, name: random_two}}]
games:
  - {{id: palace, players: [3], deals: 1}}
time_control: {{startup_s: 20, move_s: 20}}
workers: 1
results: {tmp / ("results-" + name)}
{extra}""")
    return path


def run(path: Path):
    with open(os.devnull, "w") as devnull:
        return run_and_publish(load_tournament(path), out=devnull, err=devnull)


def attack_log(results: Path) -> str:
    logs = list((results / "logs").glob("worker-*/deal_cracker.stderr.log"))
    assert logs, "the attacker left no log"
    return "".join(p.read_text() for p in logs)


@pytest.mark.slow
def test_the_seed_search_attack_fails_on_secret_deals(tmp_path):
    bot = attacker(tmp_path, search=SEED + 500)
    summary = run(tournament(tmp_path, "secret", bot))
    assert summary.played == summary.scheduled == 3
    log = attack_log(summary.results)
    assert log.count("ATTACK FAILED") == 3, log
    assert "CRACKED" not in log
    secret = summary.results / "deal-secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert len(secret.read_text().strip()) == 64  # 256 bits
    assert "Deals: secret" in summary.leaderboard


@pytest.mark.slow
def test_the_same_attack_succeeds_when_deals_are_public(tmp_path):
    bot = attacker(tmp_path, search=SEED + 500)
    summary = run(tournament(tmp_path, "public", bot, extra="deals: public"))
    assert summary.played == 3
    log = attack_log(summary.results)
    assert log.count(f"tournament seed {SEED}") == 3, log
    # and every leaderboard format says so
    assert "Deals: PUBLIC" in summary.leaderboard
    files = {k: Path(p).read_text() for k, p in summary.reports.items()}
    assert "Deals: PUBLIC" in files["md"] and "Deals: PUBLIC" in files["html"]
    assert '"mode": "public"' in files["json"] and f'"seed": {SEED}' in files["json"]
    rows = list(csv.DictReader(io.StringIO(files["csv"])))
    assert rows and all(row["deals"] == f"public (seed {SEED})" for row in rows)
