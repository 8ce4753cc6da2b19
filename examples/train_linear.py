"""Train a linear policy against random play with REINFORCE (numpy only), measure it, export it.

    pip install -e '.[rl]'
    python examples/train_linear.py --game tightwad --players 3 --games 5000 \\
        --out results/rl/tightwad3-policy.json --export results/rl/tightwad3-bot.py

One seat learns; the others play uniformly at random over the legal slots of
the environment's action mask. The learning seat rotates every game. After
training, the greedy policy and a random player each sit in the learning seat
for the same evaluation deals (seeds the training never saw), and the script
prints both win rates (first place, shared first place included) and mean
places (0 = first) with 95% intervals. docs/rl.md shows a run.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

try:
    import numpy as np

    from arena.rl.env import DecktetEnv
    from arena.rl.policy import LinearPolicy
except ImportError as err:  # the rl extra is not installed: one line, not a traceback
    sys.exit(f"train_linear.py: error: {err.name or err} is missing; install the rl extra: pip install -e '.[rl]'")

from arena.rl.bridge import export_bot

EVAL_SEED = 10**9  # evaluation deals start here; training deals count up from 0


class UsageError(Exception):
    """Bad input: printed as one line naming the option and the fix, exit status 2."""


class OneLineParser(argparse.ArgumentParser):
    """argparse's errors in one line (without the usage block above them)."""

    def error(self, message: str):
        raise UsageError(message)


def play(
    env: DecktetEnv,
    deal: int,
    learner: str,
    rng: np.random.Generator,
    choose=None,
    policy: LinearPolicy | None = None,
    trajectory: list | None = None,
) -> int:
    """One game; returns the learner's place. ``choose(x, mask)`` picks the learner's slots;
    with ``trajectory`` the policy samples its softmax and records (x, legal, pick, probs)."""
    env.reset(seed=deal)
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            if agent == learner:
                place = info["result"]["places"][int(learner.split("_")[1])]
            env.step(None)
            continue
        mask = obs["action_mask"]
        legal = np.flatnonzero(mask)
        if agent != learner:
            slot = int(rng.choice(legal))
        elif trajectory is not None:
            x = obs["observation"]
            p = policy.probabilities(x, legal)
            k = int(rng.choice(len(legal), p=p))
            trajectory.append((x, legal, k, p))
            slot = int(legal[k])
        else:
            slot = choose(obs["observation"], mask)
        env.step(slot)
    return place


class Progress:
    """'train: 1200 of 5000 games (24%), 31 s' on stderr at most every ``every_s`` seconds, and
    the last count: a run of many minutes is never silent, and stdout keeps only the results."""

    def __init__(self, what: str, total: int, every_s: float = 5.0, clock=time.monotonic) -> None:
        self.what, self.total, self.every_s, self.clock = what, total, every_s, clock
        self.started = self.last = clock()
        print(f"{what}: 0 of {total} games", file=sys.stderr, flush=True)

    def __call__(self, done: int) -> None:
        now = self.clock()
        if done < self.total and now - self.last < self.every_s:
            return
        self.last = now
        print(
            f"{self.what}: {done} of {self.total} games ({100 * done // self.total}%), {now - self.started:.0f} s",
            file=sys.stderr,
            flush=True,
        )


def train(env: DecktetEnv, policy: LinearPolicy, games: int, lr: float, seed: int, progress=None) -> None:
    """REINFORCE with a running-mean baseline; the reward is the env's (+1 first .. -1 last).
    ``progress(done)`` after each game."""
    rng = np.random.default_rng(seed)
    n = env.players
    baseline = 0.0
    for game in range(games):
        if progress is not None and game:
            progress(game)
        learner = f"player_{game % n}"
        traj: list = []
        place = play(env, game, learner, rng, policy=policy, trajectory=traj)
        reward = 1.0 - 2.0 * place / (n - 1)
        advantage = reward - baseline
        baseline += 0.01 * (reward - baseline)
        for x, legal, k, p in traj:
            g = -p
            g[k] += 1.0
            policy.weights[legal] += (lr * advantage) * np.outer(g, x)
            policy.bias[legal] += (lr * advantage) * g
    if progress is not None:
        progress(games)


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    p = wins / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(c - h, 0.0), min(c + h, 1.0)  # rounding put 0 wins at -0.0%


def evaluate(env: DecktetEnv, choose, games: int, seed: int, progress=None) -> dict:
    rng = np.random.default_rng(seed)
    places = []
    for g in range(games):
        places.append(play(env, EVAL_SEED + g, f"player_{g % env.players}", rng, choose=choose))
        if progress is not None:
            progress(g + 1)
    wins = sum(1 for p in places if p == 0)
    mean = float(np.mean(places))  # 0 = first, as docs/performance.md
    half = 1.96 * float(np.std(places, ddof=1)) / math.sqrt(games)
    lo, hi = wilson(wins, games)
    return {
        "games": games,
        "win_rate": wins / games,
        "win_ci95": [lo, hi],
        "mean_place": mean,
        "mean_place_ci95": [max(mean - half, 0.0), min(mean + half, env.players - 1.0)],
    }


def game_options(game: str, players: int, pairs: list[str]) -> dict:
    """The ``--option KEY=JSON`` pairs as the game's options for ``players`` seats, checked
    here (one line naming the option and the fix) rather than deep in the environment."""
    from games import GameError, get_game

    spec = get_game(game)
    if not spec.min_players <= players <= spec.max_players:
        raise UsageError(
            f"--players {players}: {game} takes {spec.min_players} to {spec.max_players} players; "
            f"give --players {spec.min_players} to {spec.max_players}"
        )
    options = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--option {pair!r}: expected KEY=JSON, e.g. --option bidding=true")
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            raise UsageError(
                f"--option {pair!r}: the value is not JSON; give true, false, a number or a quoted "
                f"string, e.g. --option {key}=true"
            ) from None
    try:
        spec.resolve_options(players, options)
    except GameError as err:
        raise UsageError(f"--option: {err}; fix or drop that --option") from None
    return options


def writable(option: str, path: Path | None) -> None:
    """Refuse, before hours of training, a file whose folder is missing: a typo in the path
    would otherwise create folders wherever it points (as root, anywhere)."""
    if path is None:
        return
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a folder; give a file path, e.g. {path / 'policy.json'}")
    if not path.parent.is_dir():
        raise UsageError(f"{option} {path}: the folder {path.parent} does not exist; create it first (mkdir -p)")


def at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}")
        return value

    return parse


def interval(lo: float, hi: float, fmt: str) -> str:
    return f"[{lo:{fmt}}, {hi:{fmt}}] 95%"


def main(argv: list[str] | None = None) -> int:
    try:
        return run(argv)
    except UsageError as err:
        print(f"train_linear.py: error: {err}", file=sys.stderr)
        return 2


def run(argv: list[str] | None) -> int:
    ap = OneLineParser(description=__doc__.split("\n")[0])
    ap.add_argument("--game", default="tightwad", choices=["tightwad", "divers-weights", "palace"])
    ap.add_argument("--players", type=int, default=3)
    ap.add_argument(
        "--option", action="append", default=[], metavar="KEY=JSON", help="a game option, e.g. --option bidding=true"
    )
    ap.add_argument("--games", type=at_least(1), default=5000, help="training games (seeded: the same run every time)")
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--eval-games", type=at_least(2), default=2000)
    ap.add_argument("--seed", type=at_least(0), default=0)
    ap.add_argument("--out", type=Path, help="write the policy JSON here (its folder must exist)")
    ap.add_argument("--export", type=Path, help="write an arena bot file here (its folder must exist)")
    args = ap.parse_args(argv)
    options = game_options(args.game, args.players, args.option)
    writable("--out", args.out)
    writable("--export", args.export)
    if not args.out and not args.export:  # minutes of training, then nothing to export
        print("train_linear.py: no --out or --export: the policy is measured, then not saved", file=sys.stderr)

    env = DecktetEnv(args.game, args.players, options)
    policy = LinearPolicy(args.game, args.players)
    t0 = time.monotonic()
    train(env, policy, args.games, args.lr, args.seed, progress=Progress("train", args.games))
    print(f"trained on {args.games} games in {time.monotonic() - t0:.0f} s")

    def rng_choice(seed: int):
        rng = np.random.default_rng(seed)
        return lambda x, mask: int(rng.choice(np.flatnonzero(mask)))

    for label, choose in (("linear policy", policy.best_slot), ("random", rng_choice(args.seed + 1))):
        r = evaluate(
            env, choose, args.eval_games, args.seed + 2, progress=Progress(f"evaluate {label}", args.eval_games)
        )
        print(
            f"{label:>13} vs random, {r['games']} games: win rate {r['win_rate']:.1%} "
            f"{interval(*r['win_ci95'], '.1%')}, mean place {r['mean_place']:.3f} "
            f"{interval(*r['mean_place_ci95'], '.3f')}"
        )
    if args.out:
        try:
            args.out.write_text(json.dumps(policy.to_json()))
        except OSError as err:
            raise UsageError(
                f"--out {args.out}: cannot write it ({err.strerror or err}); give a writable path"
            ) from None
        print(f"policy: {args.out}")
    if args.export:
        try:
            export_bot(policy.to_json(), args.export, name=f"linear-{args.game}")
        except ValueError as err:
            raise UsageError(f"--export {err}; give a writable path") from None
        print(f"bot: {args.export} (try: arena check {args.export})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
