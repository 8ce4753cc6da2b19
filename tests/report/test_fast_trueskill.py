"""FastTrueSkill against the trueskill package: same ratings to 1e-9, same failures."""

from __future__ import annotations

import random

import pytest
import trueskill

from arena.report.ratings import RatingParams


def _package(env: trueskill.TrueSkill, ratings, ranks):  # type: ignore[no-untyped-def]
    groups = [(env.create_rating(mu, sigma),) for mu, sigma in ratings]
    return [(r.mu, r.sigma) for (r,) in env.rate(groups, ranks=ranks)]


@pytest.mark.parametrize(
    "overrides", [{}, {"sigma": 4.0, "draw_probability": 0.0}, {"beta": 9.0, "tau": 0.5, "draw_probability": 0.4}]
)
def test_random_results_rate_as_the_package_does(overrides: dict) -> None:
    params = RatingParams.from_dict(overrides)
    env, fast = params.env(), params.fast()
    rng = random.Random(20261201 + len(overrides))
    compared = failed = 0
    for _ in range(600):  # about 60 all tied, 240 with ties, 300 distinct places; each set of parameters
        n = rng.randint(2, 10)
        ratings = [(rng.uniform(-5, 55), rng.uniform(0.3, 10.0)) for _ in range(n)]
        # Mostly distinct places, often ties, sometimes everyone tied.
        style = rng.random()
        if style < 0.1:
            ranks = [0] * n
        elif style < 0.5:
            ranks = [rng.randint(0, n // 2) for _ in range(n)]
        else:
            ranks = rng.sample(range(n), n)
        try:
            want = _package(env, ratings, ranks)
        except FloatingPointError:
            with pytest.raises(FloatingPointError):
                fast.rate(ratings, ranks)
            failed += 1
            continue
        got = fast.rate(ratings, ranks)
        for (wm, ws), (gm, gs) in zip(want, got):
            assert abs(wm - gm) <= 1e-9 and abs(ws - gs) <= 1e-9, (ratings, ranks)
        compared += 1
    assert compared > 400


def test_a_chain_of_matches_stays_identical() -> None:
    """Errors would compound over a history; 1,500 matches of 50 bots (about 180 each) stay within 1e-9."""
    params = RatingParams()
    env, fast = params.env(), params.fast()
    rng = random.Random(7)
    bots = [f"b{i}" for i in range(50)]
    strength = {b: rng.gauss(0, 3) for b in bots}
    mine = {b: (params.mu, params.sigma) for b in bots}
    theirs = dict(mine)
    for _ in range(1500):
        seats = rng.sample(bots, rng.randint(2, 10))
        perf = [round(strength[b] + rng.gauss(0, 2)) for b in seats]
        ranks = [sum(q > p for q in perf) for p in perf]
        for bot, r in zip(seats, fast.rate([mine[b] for b in seats], ranks)):
            mine[bot] = r
        for bot, r in zip(seats, _package(env, [theirs[b] for b in seats], ranks)):
            theirs[bot] = r
    for bot in bots:
        assert abs(mine[bot][0] - theirs[bot][0]) <= 1e-9
        assert abs(mine[bot][1] - theirs[bot][1]) <= 1e-9


def test_fewer_than_two_seats_is_refused() -> None:
    with pytest.raises(ValueError):
        RatingParams().fast().rate([(25.0, 8.0)], [0])
