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

import numpy as np

from arena.rl.bridge import export_bot
from arena.rl.env import DecktetEnv
from arena.rl.policy import LinearPolicy

EVAL_SEED = 10**9  # evaluation deals start here; training deals count up from 0


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
    return c - h, c + h


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
        "mean_place_ci95": [mean - half, mean + half],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--game", default="tightwad", choices=["tightwad", "divers-weights", "palace"])
    ap.add_argument("--players", type=int, default=3)
    ap.add_argument(
        "--option", action="append", default=[], metavar="KEY=JSON", help="a game option, e.g. --option bidding=true"
    )
    ap.add_argument("--games", type=int, default=5000, help="training games (seeded: the same run every time)")
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--eval-games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="write the policy JSON here")
    ap.add_argument("--export", type=Path, help="write an arena bot file here")
    args = ap.parse_args(argv)
    options = {}
    for pair in args.option:
        key, _, raw = pair.partition("=")
        options[key] = json.loads(raw)

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
            f"(95% {r['win_ci95'][0]:.1%}-{r['win_ci95'][1]:.1%}), mean place {r['mean_place']:.3f} "
            f"(95% {r['mean_place_ci95'][0]:.3f}-{r['mean_place_ci95'][1]:.3f})"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(policy.to_json()))
        print(f"policy: {args.out}")
    if args.export:
        args.export.parent.mkdir(parents=True, exist_ok=True)
        export_bot(policy.to_json(), args.export, name=f"linear-{args.game}")
        print(f"bot: {args.export} (try: arena check {args.export})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
