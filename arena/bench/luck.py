"""P6, luck: how many matches a bot's mean place needs for a given confidence.

    python -m arena.bench.luck [--deals 200] [--rollouts 32] [--game tightwad]
                              [--aivat-rollouts N] [--no-heuristic-cv] [--replays 4]
                              [--first-seed 90000]
    python -m arena.bench.luck --calibrate [--deals 400] [--game palace]
    python -m arena.bench.luck --ceiling-only [--deals 300] [--replays 4] [--first-seed 200000]

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
* rotation and heuristic control variate;
* leaderboard: rotation and the leaderboards' own adjustment (arena/report/luck.py) when the
  random opponents are the arena's builtin random players (``{builtin: random}``, whose
  policy the arena knows): p(d, s) - beta * (h(d, s) - eta_s) - a(d, s), where h is the
  reference rule policy's baseline (arena/luck/reference.py, the leaderboards' default
  ``luck_rollouts`` games per seat), eta_s its mean over ``reference_target(game, deals)``
  reference deals, beta the game's fixed coefficient (``arena.luck.reference.luck_beta``; the
  variance of the eta estimate is counted), and a(d, s) the AIVAT correction of the random
  seats' decisions and of the chance events (``arena.luck.aivat.aivat_corrections``, the
  same function and value as the leaderboards; only where ``arena.luck.aivat.has_aivat`` or
  ``has_chance_aivat``).
  ``leaderboard_bot_programs``: the same with a(d, s) of the chance events alone, what the
  leaderboards give when the random opponents are bot programs (their policy unknown to
  the arena);
  ``leaderboard_beta1`` (diagnostic): without a, beta = 1, the scheme before the
  coefficient; ``leaderboard_eta_exact`` (diagnostic): ``leaderboard_bot_programs`` as if eta
  were known exactly;
* rotation and AIVAT: p(d, s) - a(d, s).

Ceiling (diagnostic, ``ceiling``): each deal is replayed with ``replays`` independent match
seeds (the heuristic in every seat, eps 0); the between-deal variance of the rotated mean
place over the total is the share of rotation's variance that *any* function of the deal
(any baseline, any beta) could remove; ``matches_ratio_floor`` is rotation's ratio times
what is left, the best a deal-based correction can do.

Calibration (``--calibrate``): the fixed coefficients ``arena.luck.reference.LUCK_BETA``, measured
on deals 500000.. (disjoint from every measured deal): see ``calibrate``.

Unbiasedness check: the heuristic playing a random action with probability 0, 0.3 and
0.6 (bots of known strength order): the plain and adjusted mean places agree within
their 95% intervals and keep the order.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from typing import Any

from arena.bench.bot_strength import HEURISTICS, RANDOM_BOT, load_bot, play_game, start_message
from arena.luck.aivat import AIVAT_ROLLOUTS, aivat_corrections, has_aivat, has_chance_aivat
from arena.luck.baselines import DEFAULT_REFERENCE_PER_DEAL, DEFAULT_ROLLOUTS, REFERENCE_PER_DEAL, reference_target
from arena.luck.reference import luck_beta, reference_deal_seed
from arena.luck.reference import seat_baselines as reference_baselines
from games import REGISTRY
from games.rng import DealRng
from games.simulate import play_randomly

SETUPS = {"tightwad": 3, "divers-weights": 2, "palace": 4}
Z95 = 1.959963984540054


def seat_baseline(
    game: str, players: int, deal_seed: int, rollouts: int, options: dict[str, Any] | None = None
) -> list[float]:
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


def heuristic_baseline(
    game: str, deal_seed: int, rollouts: int, ref: Any, randoms: list[Any], options: dict[str, Any] | None = None
) -> list[float]:
    """h(d, s): the heuristic's mean place in each seat of the deal against random bots, over
    games whose bots' seeds (from ``match_seed``) differ from every measured match's."""
    players = len(randoms) + 1
    out = []
    for s in range(players):
        bots = randoms[:s] + [ref] + randoms[s:]
        total = sum(
            play_game(game, bots, deal_seed, options, match_seed=(1 << 40) + deal_seed * 4096 + s * 256 + r).places[s]
            for r in range(rollouts)
        )
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


def _eta(game: str, players: int, deals: int) -> tuple[list[float], float]:
    """The leaderboard's population means of the reference baseline per seat (one game per seat
    of each of ``reference_target(game, deals)`` reference deals), and the variance of their mean
    over the seats (what a bot sitting every seat equally carries from this estimate)."""
    rows = [
        reference_baselines(game, players, {}, reference_deal_seed(game, players, k), 1)
        for k in range(reference_target(game, deals))
    ]
    k = len(rows)
    eta = [sum(r[s] for r in rows) / k for s in range(players)]
    return eta, _var([sum(r) / players for r in rows]) / k


def play_recorded(
    game: str, bots: list[Any], deal_seed: int, match_seed: int
) -> tuple[tuple[int, ...], list[tuple[int, int]]]:
    """One game as ``bot_strength.play_game``: the places and the decisions (seat, action)."""
    state = REGISTRY[game].new_game(len(bots), deal_seed)
    names = [b.name for b in bots]
    matches = [b.start(start_message(state, game, s, match_seed, names)) for s, b in enumerate(bots)]
    decisions = []
    while not state.is_over():
        for seat in tuple(state.to_move()):
            if state.is_over() or seat not in state.to_move():
                break
            action = bots[seat].act(state.observation(seat), matches[seat])
            decisions.append((seat, action))
            state.apply(seat, action)
    return state.result().places, decisions


def _cov(xs: list[float], ys: list[float]) -> float:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (len(xs) - 1)


def _ratio_ci(
    seeds: list[int],
    plain: dict[int, list[float]],
    per: dict[int, list[float]],
    players: int,
    extra: float,
    boot: int = 400,
) -> list[float]:
    """95% bootstrap interval (deals resampled) of a rotated scheme's matches ratio against
    independent deals (``extra``: eta's variance, held fixed)."""
    rng = random.Random(20261202)
    k = len(seeds)
    out = []
    for _ in range(boot):
        pick = [seeds[rng.randrange(k)] for _ in range(k)]
        v_ind = _var([x for d in pick for x in plain[d]])
        if v_ind > 0:
            out.append((players * _var([sum(per[d]) / players for d in pick]) + k * players * extra) / v_ind)
    out.sort()
    return [round(out[int(0.025 * len(out))], 3), round(out[int(0.975 * len(out)) - 1], 3)] if out else []


def _between_share(per_deal: list[list[float]]) -> float:
    """Share of the variance of one replay's rotated mean place that is between deals:
    (Var of the deal means - mean within-deal variance / R) / Var of one replay."""
    r = len(per_deal[0])
    within = sum(_var(x) for x in per_deal) / len(per_deal)
    between = _var([sum(x) / r for x in per_deal]) - within / r
    total = between + within
    return between / total if total > 0 else 0.0  # (an estimate: it can fall below 0 by chance)


def ceiling(per_deal: list[list[float]], boot: int = 400) -> dict[str, Any]:
    """The between-deal share of the rotated mean place's variance (``_between_share``), with a
    95% bootstrap interval over deals: what no deal-based correction can exceed."""
    share = _between_share(per_deal)
    rng = random.Random(20261201)
    shares = sorted(_between_share([per_deal[rng.randrange(len(per_deal))] for _ in per_deal]) for _ in range(boot))
    return {
        "between_share": round(share, 3),
        "between_share_ci95": [round(shares[int(0.025 * boot)], 3), round(shares[int(0.975 * boot)], 3)],
        "replays": len(per_deal[0]),
    }


def replayed(
    game: str,
    players: int,
    seeds: list[int],
    first: dict[int, list[float]],
    replays: int,
    hero: Any,
    randoms: list[Any],
) -> list[list[float]]:
    """Per deal, the heuristic's rotated mean place in ``replays`` plays of it: the measured one
    (``first``) and ``replays - 1`` more with match seeds no other play uses."""
    out = []
    for d in seeds:
        plays = [sum(first[d]) / players]
        for r in range(1, replays):
            plays.append(
                sum(
                    play_game(
                        game, randoms[:s] + [hero] + randoms[s:], d, None, match_seed=(1 << 41) + d * 4096 + r * 64 + s
                    ).places[s]
                    for s in range(players)
                )
                / players
            )
        out.append(plays)
    return out


def measure_ceiling(game: str, deals: int = 200, first_seed: int = 90_000, replays: int = 4) -> dict[str, Any]:
    """The ceiling alone (no scheme, no baseline), on more deals than ``measure`` affords: the
    heuristic in every seat of each deal, ``replays`` plays of it; with rotation's matches ratio
    from the first play and the floor a deal-based correction cannot go under."""
    players = SETUPS[game]
    hero = load_bot(HEURISTICS[game])
    randoms = [load_bot(RANDOM_BOT) for _ in range(players - 1)]
    seeds = [first_seed + d for d in range(deals)]
    first = {
        d: [
            float(play_game(game, randoms[:s] + [hero] + randoms[s:], d, None, match_seed=d * 16 + s).places[s])
            for s in range(players)
        ]
        for d in seeds
    }
    rot = (
        players
        * _var([sum(first[d]) / players for d in seeds])
        / (_var([x for d in seeds for x in first[d]]) or float("nan"))
    )
    out = ceiling(replayed(game, players, seeds, first, replays, hero, randoms))
    out.update(
        game=game,
        players=players,
        deals=deals,
        first_seed=first_seed,
        rotation=round(rot, 3),
        matches_ratio_floor=round(rot * (1 - out["between_share"]), 3),
    )
    return out


CALIBRATE = {"tightwad": (3, 4), "divers-weights": (2, 3, 4), "palace": (2, 3, 4)}


def calibrate(
    game: str, players: int, deals: int = 400, first_seed: int = 500_000, rollouts: int = DEFAULT_ROLLOUTS
) -> dict[str, Any]:
    """The coefficient beta for ``arena.luck.reference.LUCK_BETA[(game, players)]``: the sample
    heuristic against random bots in every seat of ``deals`` deals from ``first_seed`` (no
    measured deal is among them), P its place averaged over the seats of a deal, H the same
    average of the leaderboards' baseline h (``rollouts`` games per seat), H1 that of a
    reference deal, K the reference deals per tournament deal:
    beta = Cov(P, H) / (Var(H) + Var(H1) / K), which minimises Var(P - beta H) + beta^2 Var(H1) / K,
    the per-deal variance of the rotated adjusted place with eta's error counted. ``gain``:
    the share of the rotated variance it removes on these deals (optimistic: fitted on them);
    ``beta`` is rounded, and 0 when ``gain`` is under 2%."""
    hero = load_bot(HEURISTICS[game])
    randoms = [load_bot(RANDOM_BOT) for _ in range(players - 1)]
    seeds = [first_seed + d for d in range(deals)]
    big_p, big_h = [], []
    for d in seeds:
        big_p.append(
            sum(
                play_game(game, randoms[:s] + [hero] + randoms[s:], d, None, match_seed=(5 << 40) + d * 64 + s).places[
                    s
                ]
                for s in range(players)
            )
            / players
        )
        big_h.append(sum(reference_baselines(game, players, {}, d, rollouts)) / players)
    per = REFERENCE_PER_DEAL.get(game, DEFAULT_REFERENCE_PER_DEAL)
    h1 = [
        sum(reference_baselines(game, players, {}, reference_deal_seed(game, players, k), 1)) / players
        for k in range(max(deals, 200))
    ]
    vp, vh, vh1, c = _var(big_p), _var(big_h), _var(h1), _cov(big_p, big_h)
    beta = c / (vh + vh1 / per)

    def gain(b: float) -> float:
        return 1 - (_var([p - b * h for p, h in zip(big_p, big_h)]) + b * b * vh1 / per) / vp

    rng = random.Random(7)
    boots = []
    for _ in range(400):
        idx = [rng.randrange(deals) for _ in range(deals)]
        bp, bh = [big_p[i] for i in idx], [big_h[i] for i in idx]
        boots.append(_cov(bp, bh) / (_var(bh) + vh1 / per))
    boots.sort()
    fixed = round(beta, 2) if gain(beta) >= 0.02 else 0.0
    return {
        "game": game,
        "players": players,
        "deals": deals,
        "first_seed": first_seed,
        "rollouts": rollouts,
        "reference_per_deal": per,
        "beta_fitted": round(beta, 3),
        "beta_ci95": [round(boots[10], 3), round(boots[389], 3)],
        "gain_fitted": round(gain(beta), 3),
        "gain_beta1": round(gain(1.0), 3),
        "corr": round(c / math.sqrt(vp * vh), 3),
        "beta": fixed,
    }


def measure(
    game: str,
    deals: int = 200,
    rollouts: int = 32,
    first_seed: int = 90_000,
    eps_levels: tuple[float, ...] = (0.0, 0.3, 0.6),
    *,
    heuristic_cv: bool = True,
    aivat_rollouts: int | None = None,
    replays: int = 4,
) -> dict[str, Any]:
    players = SETUPS[game]
    if aivat_rollouts is None:  # the leaderboards' own
        aivat_rollouts = AIVAT_ROLLOUTS.get(game, 0)
    hero = load_bot(HEURISTICS[game])
    randoms = [load_bot(RANDOM_BOT) for _ in range(players - 1)]
    seeds = [first_seed + d for d in range(deals)]
    base = {d: seat_baseline(game, players, d, rollouts) for d in seeds}
    ref = load_bot(HEURISTICS[game])  # its own copy: its random draws are its own
    if heuristic_cv:
        href = {d: heuristic_baseline(game, d, rollouts, ref, randoms) for d in seeds}
    else:
        href = {d: [0.0] * players for d in seeds}
    h_mean = sum(sum(h) for h in href.values()) / (len(seeds) * players)
    # the leaderboards' method: the reference rule policy's baseline, and its population means
    lb = {d: reference_baselines(game, players, {}, d, DEFAULT_ROLLOUTS) for d in seeds}
    eta, eta_var = _eta(game, players, deals)
    beta = luck_beta(game, players)
    out: dict[str, Any] = {
        "game": game,
        "players": players,
        "deals": deals,
        "rollouts": rollouts,
        "first_seed": first_seed,
        "aivat_rollouts": aivat_rollouts,
        "leaderboard_rollouts": DEFAULT_ROLLOUTS,
        "leaderboard_beta": beta,
        "reference_deals": reference_target(game, deals),
        "levels": [],
    }
    for eps in eps_levels:
        bot = Noisy(hero, eps, seed=int(eps * 1000) + 1)
        plain: dict[int, list[float]] = {}
        adjusted: dict[int, list[float]] = {}
        adjusted_h: dict[int, list[float]] = {}
        board: dict[int, list[float]] = {}
        board_files: dict[int, list[float]] = {}
        board1: dict[int, list[float]] = {}
        aivat_only: dict[int, list[float]] = {}
        for d in seeds:
            b = base[d]
            mean_b = sum(b) / players
            for s in range(players):
                bots = randoms[:s] + [bot] + randoms[s:]
                places, decisions = play_recorded(game, bots, d, d * 16 + s)
                place, corr, corr_programs = places[s], 0.0, 0.0
                # the random seats play the builtin's policy: their draws' terms, and the chance events'
                if has_aivat(game, players) or has_chance_aivat(game, players):
                    corr = aivat_corrections(
                        game,
                        players,
                        {},
                        d,
                        decisions,
                        frozenset(range(players)) - {s},
                        aivat_rollouts,
                        d * 16 + s,
                        only=s,
                    )[s]
                if has_chance_aivat(game, players):  # random bot programs: the chance events alone
                    corr_programs = aivat_corrections(
                        game, players, {}, d, decisions, frozenset(), aivat_rollouts, d * 16 + s, only=s
                    )[s]
                plain.setdefault(d, []).append(place)
                adjusted.setdefault(d, []).append(place - b[s] + mean_b)
                adjusted_h.setdefault(d, []).append(place - href[d][s] + h_mean)
                board.setdefault(d, []).append(place - beta * (lb[d][s] - eta[s]) - corr)
                board_files.setdefault(d, []).append(place - beta * (lb[d][s] - eta[s]) - corr_programs)
                board1.setdefault(d, []).append(place - lb[d][s] + eta[s])
                aivat_only.setdefault(d, []).append(place - corr)
        flat_p = [x for d in seeds for x in plain[d]]
        flat_a = [x for d in seeds for x in adjusted[d]]
        v_ind = _var(flat_p) or float("nan")  # no variance at all: no ratio to report
        n = len(flat_p)

        def rotated(per: dict[int, list[float]], extra: float = 0.0, n: int = n) -> float:
            # per-match variance of the mean when the seats of a deal are played together; ``extra``:
            # the variance of the eta estimate, which does not shrink with more matches
            return players * _var([sum(per[d]) / players for d in seeds]) + n * extra

        rot = rotated(plain)
        cv = _var(flat_a)
        both = rotated(adjusted)
        flat_h = [x for d in seeds for x in adjusted_h[d]]
        cv_h = _var(flat_h)
        both_h = rotated(adjusted_h)
        mp, cp = _mean_ci(flat_p)
        ma, ca = _mean_ci(flat_a)
        mh, ch = _mean_ci(flat_h)
        level = {
            "eps": eps,
            "matches": n,
            "plain_mean_place": round(mp + 1, 4),
            "plain_ci95": round(cp, 4),
            "adjusted_mean_place": round(ma + 1, 4),
            "adjusted_ci95": round(ca, 4),
            "matches_ratio": {
                "rotation": round(rot / v_ind, 3),
                "control_variate": round(cv / v_ind, 3),
                "rotation_and_cv": round(both / v_ind, 3),
                "leaderboard": round(rotated(board, beta * beta * eta_var) / v_ind, 3),
                # diagnostics, not schemes: as if eta were known exactly; beta = 1
                "leaderboard_eta_exact": round(rotated(board_files) / v_ind, 3),
                "leaderboard_beta1": round(rotated(board1, eta_var) / v_ind, 3),
                "leaderboard_bot_programs": round(rotated(board_files, beta * beta * eta_var) / v_ind, 3),
                "rotation_and_aivat": round(rotated(aivat_only) / v_ind, 3),
            },
            # how far a ratio from this many deals can be off: 95% bootstrap intervals over deals
            "matches_ratio_ci95": {
                name: _ratio_ci(seeds, plain, per, players, extra)
                for name, per, extra in (
                    ("rotation", plain, 0.0),
                    ("leaderboard", board, beta * beta * eta_var),
                    ("leaderboard_beta1", board1, eta_var),
                )
            },
        }
        agree = abs(mp - ma) <= math.hypot(cp, ca)
        for name, per, extra in (
            ("leaderboard", board, beta * beta * eta_var),
            ("aivat", aivat_only, 0.0),
            ("leaderboard_bot_programs", board_files, beta * beta * eta_var),
        ):
            m = sum(x for d in seeds for x in per[d]) / n
            half = Z95 * math.sqrt(rotated(per, extra) / n)
            level[f"{name}_mean_place"], level[f"{name}_ci95"] = round(m + 1, 4), round(half, 4)
            agree = agree and abs(mp - m) <= math.hypot(cp, half)
        if heuristic_cv:
            level["heuristic_adjusted_mean_place"] = round(mh + 1, 4)
            level["heuristic_adjusted_ci95"] = round(ch, 4)
            level["matches_ratio"]["heuristic_cv"] = round(cv_h / v_ind, 3)
            level["matches_ratio"]["rotation_and_heuristic_cv"] = round(both_h / v_ind, 3)
            agree = agree and abs(mp - mh) <= math.hypot(cp, ch)
        level["agree"] = agree
        if eps == 0.0 and replays > 1:
            ceil = ceiling(replayed(game, players, seeds, plain, replays, bot, randoms))
            ceil["matches_ratio_floor"] = round(rot / v_ind * (1 - ceil["between_share"]), 3)
            level["ceiling"] = ceil
        out["levels"].append(level)
    keys = ["adjusted_mean_place", "leaderboard_mean_place", "aivat_mean_place", "leaderboard_bot_programs_mean_place"]
    if heuristic_cv:
        keys.append("heuristic_adjusted_mean_place")
    out["order_holds"] = all([lv[k] for lv in out["levels"]] == sorted(lv[k] for lv in out["levels"]) for k in keys)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--rollouts", type=int, default=32)
    ap.add_argument(
        "--aivat-rollouts",
        type=int,
        default=None,
        help="playouts per AIVAT value where V is playouts (default: the leaderboards' own, "
        "arena.luck.aivat.AIVAT_ROLLOUTS; 0: none); a learned V (Palace) is always used",
    )
    ap.add_argument(
        "--no-heuristic-cv",
        action="store_true",
        help="skip the heuristic control variate (its baselines cost the most)",
    )
    ap.add_argument("--game", choices=sorted(SETUPS), action="append")
    ap.add_argument(
        "--replays",
        type=int,
        default=4,
        help="plays of each deal by the heuristic for the ceiling diagnostic (1: none)",
    )
    ap.add_argument("--first-seed", type=int, default=90_000)
    ap.add_argument(
        "--calibrate",
        action="store_true",
        help="print the coefficients for arena.luck.reference.LUCK_BETA (deals 500000..)",
    )
    ap.add_argument("--ceiling-only", action="store_true", help="only the ceiling diagnostic (cheap: use more deals)")
    a = ap.parse_args()
    if a.ceiling_only:
        for game in a.game or list(SETUPS):
            print(json.dumps(measure_ceiling(game, a.deals, a.first_seed, a.replays)), flush=True)
        return
    if a.calibrate:
        for game in a.game or list(CALIBRATE):
            for players in CALIBRATE[game]:
                print(json.dumps(calibrate(game, players, a.deals)), flush=True)
        return
    for game in a.game or list(SETUPS):
        print(
            json.dumps(
                measure(
                    game,
                    a.deals,
                    a.rollouts,
                    a.first_seed,
                    heuristic_cv=not a.no_heuristic_cv,
                    aivat_rollouts=a.aivat_rollouts,
                    replays=a.replays,
                ),
                indent=1,
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
