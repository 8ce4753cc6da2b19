"""The sample bots: legal answers everywhere, heuristics beat random, the Perl bot speaks the protocol.

Each heuristic bot plays its own game with its heuristic and the two other games
with short simple policies: those beat random, the heuristic beats them in its
own game, and in the spring field every heuristic ranks above random.

Python bots are loaded through benchmarks/bot_strength.py's fake botkit (the bot
files stay protocol programs); one test also runs each as a real process.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from games import REGISTRY
from games.rng import DealRng
from tests.games.variants import VARIANTS

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bot_strength", ROOT / "benchmarks" / "bot_strength.py")
assert _spec is not None and _spec.loader is not None
bs = importlib.util.module_from_spec(_spec)
sys.modules["bot_strength"] = bs
_spec.loader.exec_module(bs)

# The bundled sample bots by name: a bot a user adds to bots/ is not one of them.
SAMPLE_PY_BOTS = ("divers_heuristic.py", "palace_heuristic.py", "random_bot.py", "tightwad_heuristic.py")
PY_BOTS = [ROOT / "bots" / name for name in SAMPLE_PY_BOTS]
PERL_BOT = ROOT / "bots" / "perl_random.pl"
BOTKIT_DIR = ROOT / "arena" / "bot_helper"


def _legal_ids(obs: dict[str, Any]) -> list[int]:
    return [a["id"] for a in obs["legal_actions"]]


@pytest.mark.parametrize("path", PY_BOTS, ids=lambda p: p.name)
def test_bot_answers_legal_id_in_every_game_and_player_count(path: Path) -> None:
    """Random positions of every variant (C5 observations, JSON round trip): a legal id each time."""
    bot = bs.load_bot(path)
    asked = 0
    cpu_s = 0.0
    for k, (game, players, options) in enumerate(VARIANTS):
        for rep in range(2):
            seed = 1000 * k + rep
            state = REGISTRY[game].new_game(players, seed, options)
            names = [bot.name] * players
            matches = [bot.start(bs.start_message(state, game, s, seed, names)) for s in range(players)]
            rng = DealRng(seed)
            step = 0
            while not state.is_over():
                seat = state.to_move()[0]
                if step % 3 == 0 or game == "divers-weights":
                    obs = json.loads(json.dumps(state.observation(seat)))
                    t = time.process_time()
                    answer = bot.act(obs, matches[seat])
                    cpu_s += time.process_time() - t
                    assert answer in _legal_ids(obs), (path.name, game, players, options, seed, step)
                    asked += 1
                state.apply(seat, rng.randbelow(len(state.legal_actions(seat))))
                step += 1
    assert asked > 1000
    # no search hidden in a sample bot: well under 5 ms of CPU a decision (CPU time, which a
    # busy machine does not stretch as it does the wall clock)
    assert cpu_s / asked < 0.005


# (bot, game, players, games, first seed, required margin of mean place vs random seats)
STRENGTH = [
    ("tightwad_heuristic.py", "tightwad", 4, 40, 11_000, 0.5),
    ("divers_heuristic.py", "divers-weights", 2, 40, 12_000, 0.3),
    ("divers_heuristic.py", "divers-weights", 4, 24, 13_000, 0.5),
    ("palace_heuristic.py", "palace", 4, 16, 14_000, 0.5),
]


@pytest.mark.parametrize("bot,game,players,games,seed,margin", STRENGTH,
                         ids=[f"{g}-{n}p" for _, g, n, *_ in STRENGTH])
def test_heuristic_beats_random_in_its_game(bot: str, game: str, players: int, games: int,
                                            seed: int, margin: float) -> None:
    """Fixed seeds, rotating seat: the heuristic's mean place beats the random seats' by the margin."""
    s = bs.measure(ROOT / "bots" / bot, game, players, games, seed)
    assert s.mean_place + margin <= s.random_mean_place, s
    assert s.first_share > (0.5 if players == 2 else 1 / players), s


def test_random_bot_is_not_better_than_random() -> None:
    """Control for the strength test: the same measure finds no edge for the random bot itself."""
    s = bs.measure(bs.RANDOM_BOT, "tightwad", 4, 40, 11_000)
    assert abs(s.mean_place - s.random_mean_place) < 0.5, s


def test_same_seed_same_choices() -> None:
    """A bot's play depends only on its start seed: two runs of a match give one result."""
    for bot, game, players in (("divers_heuristic.py", "divers-weights", 3), ("palace_heuristic.py", "palace", 3),
                               ("tightwad_heuristic.py", "tightwad", 3), ("tightwad_heuristic.py", "palace", 3),
                               ("divers_heuristic.py", "tightwad", 4)):
        runs = []
        for _ in range(2):
            bots = [bs.load_bot(ROOT / "bots" / bot)] + [bs.load_bot(bs.RANDOM_BOT) for _ in range(players - 1)]
            runs.append(bs.play_game(game, bots, 77))
        assert runs[0] == runs[1], (bot, game)


# (bot, a game that is not its own, players, games, first seed)
SIMPLE = [
    ("tightwad_heuristic.py", "divers-weights", 2, 60, 31_000),
    ("tightwad_heuristic.py", "palace", 4, 40, 32_000),
    ("divers_heuristic.py", "tightwad", 4, 40, 33_000),
    ("divers_heuristic.py", "palace", 4, 40, 32_000),
    ("palace_heuristic.py", "tightwad", 4, 40, 33_000),
    ("palace_heuristic.py", "divers-weights", 4, 40, 34_000),
]


@pytest.mark.parametrize("bot,game,players,games,seed", SIMPLE, ids=[f"{b.split('_')[0]}-in-{g}" for b, g, *_ in SIMPLE])
def test_simple_policies_beat_random_in_the_other_games(bot: str, game: str, players: int, games: int,
                                                        seed: int) -> None:
    """A heuristic bot outside its own game still plays better than random (rotating seat, fixed seeds)."""
    s = bs.measure(ROOT / "bots" / bot, game, players, games, seed)
    assert s.mean_place + 0.3 <= s.random_mean_place, s


OWN = {"tightwad": "tightwad_heuristic.py", "divers-weights": "divers_heuristic.py", "palace": "palace_heuristic.py"}


@pytest.mark.parametrize("game,seed", [("tightwad", 21_000), ("divers-weights", 22_000), ("palace", 23_000)])
def test_each_heuristic_tops_its_own_game_against_the_simple_policies(game: str, seed: int) -> None:
    """4 players: the game's heuristic, the two other heuristic bots (simple policies here) and random.

    The game's heuristic has the best mean place, by a margin; random the worst.
    """
    names = [OWN[game]] + [b for g, b in OWN.items() if g != game] + ["random_bot.py"]
    places = bs.table_places([ROOT / "bots" / n for n in names], game, 80, seed)
    assert places[0] + 0.25 <= min(places[1:]), dict(zip(names, places))
    assert places[3] == max(places), dict(zip(names, places))


def test_spring_field_ranks_the_heuristics_above_random() -> None:
    """The spring tournament played in process (its own seed, schedule and deals): random last
    overall, and each heuristic first in its own game, in the leaderboard's TrueSkill order."""
    result = bs.play_field(bs.SPRING, deal_factor=1, roster=PY_BOTS)  # spring.yaml globs bots/*.py
    assert result.matches == 136 and result.capped == 0
    assert result.ranking()[-1] == "random_bot", result.ranking()
    for game, bot in OWN.items():
        ranking = result.ranking(game)
        if game == "palace":
            # 8 Palace matches per bot cannot separate the heuristics (each plays Palace
            # better than random); which one leads depends on the seating drawn.
            assert ranking.index(bot.removesuffix(".py")) < ranking.index("random_bot"), (game, ranking)
        else:
            assert ranking[0] == bot.removesuffix(".py"), (game, ranking)
    # One place per seat of the schedule (as the leaderboard's match counts: 52, 40, 8 each).
    schedule, _ = bs.field_schedule(bs.SPRING, 1, roster=PY_BOTS)
    seats = Counter((bot, m.game) for m in schedule for bot in m.bots)
    assert {(b, g): len(p) for b, per in result.places.items() for g, p in per.items()} == seats
    assert [seats[("random_bot", g)] for g in ("tightwad", "divers-weights", "palace")] == [52, 40, 8]


def test_palace_heuristic_breaks_a_cycle() -> None:
    """Two copies of a fixed Palace rule can pass the pile back and forth for ever; after
    LOOP_BREAK decisions a player the heuristic plays at random, so every game ends."""
    def capped(loop_break: int) -> int:
        bots = [bs.load_bot(ROOT / "bots" / "palace_heuristic.py") for _ in range(2)]
        for b in bots:
            b.choose.__globals__["LOOP_BREAK"] = loop_break
        return sum(bs.play_game("palace", bots, seed, {"decision_cap": 3000}).capped for seed in range(8))

    assert capped(10**9) > 0  # control: without the breaker some of these games cycle
    assert capped(500) == 0


def test_R_T3_R_T4_R_T5_tightwad_play_out_matches_the_engine() -> None:
    """The tightwad heuristic's rollout, fed the real hands, names the same loser and penalty as
    the engine when every seat plays the card the rollout plays (highest legal, else lowest)."""
    bot = bs.load_bot(ROOT / "bots" / "tightwad_heuristic.py")
    table, play_out = bot.choose.__globals__["table"], bot.choose.__globals__["play_out"]
    for seed in range(40):
        players = 3 + seed % 3
        state = REGISTRY["tightwad"].new_game(players, seed, {})
        t = table(bot.start(bs.start_message(state, "tightwad", 0, seed, ["x"] * players)))
        hands = [sorted(state.observation(s)["hand"], key=lambda c: -t[c][0]) for s in range(players)]
        expected = play_out(t, [h[:] for h in hands], 0, None, state.to_move()[0], players)
        while state.observation(0)["round"] == 1 and not state.is_over():
            seat = state.to_move()[0]
            obs = state.observation(seat)
            trick, h = obs["trick"], hands[seat]
            low = trick["plays"] and t[h[0]][0] < t[trick["plays"][trick["control"]]["card"]][0]
            card = h.pop() if low else h.pop(0)
            state.apply(seat, next(a["id"] for a in obs["legal_actions"] if a["card"] == card))
        points = state.observation(0)["penalty_points"]
        assert [s for s in range(players) if points[s]] == [expected[0]], seed
        assert points[expected[0]] == expected[1], seed


def test_fake_botkit_rejects_a_file_without_run(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def choose(observation, match):\n    return 0\n")
    with pytest.raises(ValueError, match="never called"):
        bs.load_bot(bad)


# ---- real processes over pipes --------------------------------------------------------


def _exchange(cmd: list[str], game: str, players: int, seed: int, env: dict[str, str] | None = None,
              seat: int = 0, max_acts: int = 10_000) -> tuple[str, list[int], int]:
    """Referee the bot in ``seat`` over pipes (random elsewhere): hello, start, acts, result, bye.

    Returns the bot's name, its answers and its exit code.
    """
    state = REGISTRY[game].new_game(players, seed, {})
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdin is not None and proc.stdout is not None

    def send(msg: dict[str, Any]) -> None:
        proc.stdin.write(json.dumps(msg) + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def receive() -> dict[str, Any]:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line, f"bot closed its output; stderr: {proc.stderr.read()}"  # type: ignore[union-attr]
        return json.loads(line)

    try:
        send({"type": "hello", "protocol": 1, "arena": "test"})
        hello = receive()
        assert hello["type"] == "hello" and isinstance(hello["name"], str)
        send(bs.start_message(state, game, seat, seed, ["bot"] * players))
        rng = DealRng(seed)
        answers: list[int] = []
        while not state.is_over() and len(answers) < max_acts:
            mover = state.to_move()[0]
            if mover == seat:
                obs = state.observation(seat)
                send({"type": "act", "decision": state.decisions, "time_left_s": None, "observation": obs})
                reply = receive()
                assert reply["type"] == "action" and reply["action"] in _legal_ids(obs), reply
                answers.append(reply["action"])
                state.apply(seat, reply["action"])
            else:
                state.apply(mover, rng.randbelow(len(state.legal_actions(mover))))
        if state.is_over():
            res = state.result()
            send({"type": "result", "match_id": "t", "seat": seat, "place": res.places[seat],
                  "places": list(res.places), "scores": list(res.scores), "capped": res.capped,
                  "faults": [None] * players})
        send({"type": "bye"})
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return hello["name"], answers, code


@pytest.mark.parametrize("game", sorted(REGISTRY))
def test_perl_bot_plays_over_pipes(game: str) -> None:
    """hello -> hello with a name, act -> a legal id (a whole game), bye -> exit 0; same seed, same answers."""
    if shutil.which("perl") is None:
        pytest.skip("perl is not installed")
    if subprocess.run(["perl", "-MJSON::PP", "-e1"], capture_output=True).returncode != 0:
        pytest.skip("perl lacks the core module JSON::PP")
    assert os.access(PERL_BOT, os.X_OK), "bots/perl_random.pl must be executable"
    assert PERL_BOT.read_text().startswith("#!/usr/bin/env perl\n")
    name, answers, code = _exchange([str(PERL_BOT)], game, 3, 5)
    assert name and answers and code == 0
    assert _exchange([str(PERL_BOT)], game, 3, 5)[1] == answers


@pytest.mark.parametrize("path", [p for p in PY_BOTS if p.stem.endswith("_heuristic")], ids=lambda p: p.name)
def test_python_bot_runs_as_a_process(path: Path) -> None:
    """The real botkit serves the bot file's protocol: it finishes a game of its own game."""
    game = {"tightwad": "tightwad", "divers": "divers-weights", "palace": "palace"}[path.stem.split("_")[0]]
    env = dict(os.environ, PYTHONPATH=str(BOTKIT_DIR))
    name, answers, code = _exchange([sys.executable, str(path)], game, 3, 9, env=env, seat=1)
    assert name == path.stem.replace("_", "-") and answers and code == 0
