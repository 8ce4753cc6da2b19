"""The luck-adjusted mean place is unbiased: bots of known strength, in process.

Bots: the reference rule policy playing a uniformly random action with probability 0, 0.3
and 0.6 (strength known: each noisier level is weaker), each in every seat of every deal
against random players, as a duplicate schedule seats them. The adjusted mean place must
agree with the plain one within their intervals and keep the order; and over fresh deals,
the correction ``h(d, s) - eta_s`` must have mean zero in every seat.
"""

from __future__ import annotations

import math

from arena.report.luck import adjust
from arena.report.ratings import compute_ratings
from arena.tournament.luck import Baselines, Config, reference_target, summarize
from arena.tournament.store import ResultRow
from games import REGISTRY
from games.reference import (REFERENCE, play_out, random_policy, reference_deal_seed,
                             seat_baselines)
from games.rng import DealRng, derive_seed

GAME, PLAYERS, ROLLOUTS = "tightwad", 3, 8
LEVELS = (0.0, 0.3, 0.6)


def noisy(eps: float):
    ref = REFERENCE[GAME]

    def policy(state, seat, rng):
        if rng.randbelow(1000) < eps * 1000:
            return random_policy(state, seat, rng)
        return ref(state, seat, rng)
    return policy


def _key() -> tuple[str, int, str, str]:
    return Config(GAME, PLAYERS, REGISTRY[GAME].resolve_options(PLAYERS, {}), ()).key


def _reference(deals: int) -> dict:
    rows = [tuple(seat_baselines(GAME, PLAYERS, {}, reference_deal_seed(GAME, PLAYERS, k), 1))
            for k in range(reference_target(GAME, deals))]
    return {_key(): rows}


def test_baselines_are_a_function_of_the_deal_alone():
    a = seat_baselines(GAME, PLAYERS, {}, 12345, 4)
    assert a == seat_baselines(GAME, PLAYERS, {"decision_cap": 100_000}, 12345, 4)
    assert len(a) == PLAYERS and all(0 <= x <= PLAYERS - 1 for x in a)
    others = [seat_baselines(GAME, PLAYERS, {}, seed, 4) for seed in range(20)]
    assert len({tuple(o) for o in others}) > 1          # deals differ, and so do their baselines
    assert reference_deal_seed(GAME, PLAYERS, 0) != reference_deal_seed(GAME, PLAYERS, 1)


def test_the_correction_has_mean_zero_in_every_seat_over_fresh_deals():
    deals = 150
    eta, cov, _ = summarize(_reference(deals)[_key()])
    fresh = [seat_baselines(GAME, PLAYERS, {}, derive_seed("fresh deals", d), ROLLOUTS) for d in range(deals)]
    for s in range(PLAYERS):
        xs = [h[s] for h in fresh]
        m = sum(xs) / deals
        var = sum((x - m) ** 2 for x in xs) / (deals - 1) / deals + cov[s][s]
        # four standard errors: a wrong eta (or a baseline that leaks the bots) fails, chance does not
        assert abs(m - eta[s]) < 4 * math.sqrt(var), (s, m, eta[s])


def test_bots_of_known_strength_plain_and_adjusted_agree_and_keep_their_order():
    deals = 60
    spec = REGISTRY[GAME]
    key = _key()
    rows, by_match, index = [], {}, 0
    for d in range(deals):
        seed = derive_seed("known strength deals", d)
        h = tuple(seat_baselines(GAME, PLAYERS, {}, seed, ROLLOUTS))
        for level, eps in enumerate(LEVELS):
            for seat in range(PLAYERS):
                policies = [random_policy] * PLAYERS
                policies[seat] = noisy(eps)
                rng = DealRng(derive_seed("known strength play", d, level, seat))
                state = play_out(spec.new_game(PLAYERS, seed, {}), policies, rng)
                bots = tuple(f"eps{eps}" if s == seat else f"random{s}" for s in range(PLAYERS))
                mid = f"{GAME}/p{PLAYERS}/d{d}/r{level * PLAYERS + seat}/{index:016x}"
                places = state.result().places
                rows.append(ResultRow(mid, index, GAME, PLAYERS, bots, places, (0,) * PLAYERS,
                                      (None,) * PLAYERS, (None,) * PLAYERS, False, False))
                by_match[mid] = (key, h)
                index += 1
    report = compute_ratings(rows)
    adjusted = adjust(report, rows, Baselines(by_match, {key: summarize(_reference(deals)[key])}, ROLLOUTS))
    assert adjusted.luck["available"] is True
    plain, adj = [], []
    for eps in LEVELS:
        s = adjusted.scope(GAME).standing(f"eps{eps}")
        assert s.mean_place == report.scope(GAME).standing(f"eps{eps}").mean_place
        assert abs(s.adjusted_place - s.mean_place) <= math.hypot(s.mean_place_ci95, s.adjusted_place_ci95)
        plain.append(s.mean_place)
        adj.append(s.adjusted_place)
    assert plain == sorted(plain) and adj == sorted(adj)      # stronger bots place better, both ways
    assert plain[0] < plain[-1] - 0.2                          # and the levels are really apart
