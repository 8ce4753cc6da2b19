"""P6, luck: how many matches a bot's mean place needs for a given confidence.

    python benchmarks/luck.py [--deals 200] [--rollouts 32] [--game tightwad]

Each game's sample heuristic plays against random bots, in process (bots loaded as in
benchmarks/bot_strength.py), in every seat s of every deal d: place p(d, s) (0 = best).
Matches needed for a given confidence interval scale with the variance of what one
match contributes, so for each scheme we report the variance per match relative to
independent deals (a fresh deal and a random seat per match):

* rotation: the seats of one deal are played together (the arena's duplicate format);
  a group of n matches counts n times;
* control variate: p(d, s) - b(d, s) + mean_s b(d, s), where b(d, s) is the mean place
  of seat s over ``rollouts`` random playouts of deal d (every seat random), computed in
  process at engine speed: a fixed reference policy, independent of the bots;
* both.
* heuristic control variate: p(d, s) - h(d, s) + H, where h(d, s) is the mean place of
  the game's heuristic in seat s with random bots in the others, over ``rollouts`` games
  of deal d whose seeds no measured match uses, and H the mean of h over every deal and
  seat (one constant for all bots). Unlike b, h does not sum to a constant over the
  seats, so it also carries information beyond rotation;
* rotation and heuristic control variate.

Unbiasedness check: the heuristic playing a random action with probability 0, 0.3 and
0.6 (bots of known strength order): the plain and adjusted mean places agree within
their 95% intervals and keep the order.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bot_strength import HEURISTICS, RANDOM_BOT, load_bot, play_game  # noqa: E402

from games import REGISTRY  # noqa: E402
from games.rng import DealRng  # noqa: E402
from games.simulate import play_randomly  # noqa: E402

SETUPS = {"tightwad": 3, "divers-weights": 2, "palace": 4}
Z95 = 1.959963984540054


def seat_baseline(game: str, players: int, deal_seed: int, rollouts: int,
                  options: dict[str, Any] | None = None) -> list[float]:
    """b(d, s): mean place of each seat over random playouts of the deal (deterministic)."""
    spec = REGISTRY[game]
    rng = DealRng(deal_seed ^ 0x5EED)
    total = [0.0] * players
    for _ in range(rollouts):
        state = spec.new_game(players, deal_seed, options or {})
        play_randomly(state, rng)
        for s, p in enumerate(state.result().places):
            total[s] += p
    return [t / rollouts for t in total]


def heuristic_baseline(game: str, deal_seed: int, rollouts: int, ref: Any, randoms: list[Any],
                       options: dict[str, Any] | None = None) -> list[float]:
    """h(d, s): the heuristic's mean place in each seat of the deal against random bots, over
    games whose bots' seeds (from ``match_seed``) differ from every measured match's."""
    players = len(randoms) + 1
    out = []
    for s in range(players):
        bots = randoms[:s] + [ref] + randoms[s:]
        total = sum(play_game(game, bots, deal_seed, options,
                              match_seed=(1 << 40) + deal_seed * 4096 + s * 256 + r).places[s]
                    for r in range(rollouts))
        out.append(total / rollouts)
    return out


class Noisy:
    """A loaded bot that plays a uniformly random legal action with probability ``eps``."""

    def __init__(self, bot: Any, eps: float, seed: int) -> None:
        self.bot, self.eps, self.rng = bot, eps, random.Random(seed)
        self.name = f"{bot.name}@{eps}"

    def start(self, msg: dict[str, Any]) -> Any:
        return self.bot.start(msg)

    def act(self, observation: dict[str, Any], match: Any) -> int:
        if self.eps and self.rng.random() < self.eps:
            return self.rng.randrange(len(observation["legal_actions"]))
        return self.bot.act(observation, match)


def _var(xs: list[float]) -> float:
    m = sum(xs) / len(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def _mean_ci(xs: list[float]) -> tuple[float, float]:
    m = sum(xs) / len(xs)
    return m, Z95 * math.sqrt(_var(xs) / len(xs))


def measure(game: str, deals: int = 200, rollouts: int = 32, first_seed: int = 90_000,
            eps_levels: tuple[float, ...] = (0.0, 0.3, 0.6)) -> dict[str, Any]:
    players = SETUPS[game]
    hero = load_bot(HEURISTICS[game])
    randoms = [load_bot(RANDOM_BOT) for _ in range(players - 1)]
    seeds = [first_seed + d for d in range(deals)]
    base = {d: seat_baseline(game, players, d, rollouts) for d in seeds}
    ref = load_bot(HEURISTICS[game])        # its own copy: its random draws are its own
    href = {d: heuristic_baseline(game, d, rollouts, ref, randoms) for d in seeds}
    h_mean = sum(sum(h) for h in href.values()) / (len(seeds) * players)
    out: dict[str, Any] = {"game": game, "players": players, "deals": deals, "rollouts": rollouts,
                           "levels": []}
    for eps in eps_levels:
        bot = Noisy(hero, eps, seed=int(eps * 1000) + 1)
        plain: dict[int, list[float]] = {}
        adjusted: dict[int, list[float]] = {}
        adjusted_h: dict[int, list[float]] = {}
        for d in seeds:
            b = base[d]
            mean_b = sum(b) / players
            for s in range(players):
                bots = randoms[:s] + [bot] + randoms[s:]
                place = play_game(game, bots, d, match_seed=d * 16 + s).places[s]
                plain.setdefault(d, []).append(place)
                adjusted.setdefault(d, []).append(place - b[s] + mean_b)
                adjusted_h.setdefault(d, []).append(place - href[d][s] + h_mean)
        flat_p = [x for d in seeds for x in plain[d]]
        flat_a = [x for d in seeds for x in adjusted[d]]
        v_ind = _var(flat_p) or float("nan")   # no variance at all: no ratio to report
        rot = players * _var([sum(plain[d]) / players for d in seeds])
        cv = _var(flat_a)
        both = players * _var([sum(adjusted[d]) / players for d in seeds])
        flat_h = [x for d in seeds for x in adjusted_h[d]]
        cv_h = _var(flat_h)
        both_h = players * _var([sum(adjusted_h[d]) / players for d in seeds])
        mp, cp = _mean_ci(flat_p)
        ma, ca = _mean_ci(flat_a)
        mh, ch = _mean_ci(flat_h)
        out["levels"].append({
            "eps": eps, "matches": len(flat_p),
            "plain_mean_place": round(mp + 1, 4), "plain_ci95": round(cp, 4),
            "adjusted_mean_place": round(ma + 1, 4), "adjusted_ci95": round(ca, 4),
            "heuristic_adjusted_mean_place": round(mh + 1, 4), "heuristic_adjusted_ci95": round(ch, 4),
            "agree": abs(mp - ma) <= math.hypot(cp, ca) and abs(mp - mh) <= math.hypot(cp, ch),
            "matches_ratio": {"rotation": round(rot / v_ind, 3),
                              "control_variate": round(cv / v_ind, 3),
                              "rotation_and_cv": round(both / v_ind, 3),
                              "heuristic_cv": round(cv_h / v_ind, 3),
                              "rotation_and_heuristic_cv": round(both_h / v_ind, 3)},
        })
    means = [lv["adjusted_mean_place"] for lv in out["levels"]]
    means_h = [lv["heuristic_adjusted_mean_place"] for lv in out["levels"]]
    out["order_holds"] = means == sorted(means) and means_h == sorted(means_h)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--rollouts", type=int, default=32)
    ap.add_argument("--game", choices=sorted(SETUPS), action="append")
    a = ap.parse_args()
    for game in a.game or list(SETUPS):
        print(json.dumps(measure(game, a.deals, a.rollouts), indent=1))


if __name__ == "__main__":
    main()
