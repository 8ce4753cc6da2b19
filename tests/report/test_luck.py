"""The luck-adjusted mean place is unbiased: bots of known strength, in process.

Bots: the reference rule policy playing a uniformly random action with probability 0, 0.3
and 0.6 (strength known: each noisier level is weaker), each in every seat of every deal
against random players, as a duplicate schedule seats them. The adjusted mean place must
agree with the plain one within their intervals and keep the order; and over fresh deals,
the correction ``h(d, s) - eta_s`` must have mean zero in every seat (so does any fixed
multiple ``beta * (h - eta)``). Two-player Divers Weights has a correction (beta > 0);
three-player Tightwad has none (beta 0: the adjusted place is the plain one, exactly).
"""

from __future__ import annotations

import math

import pytest

from arena.luck import reference
from arena.luck.baselines import Baselines, Config, reference_target, summarize
from arena.luck.reference import REFERENCE, luck_beta, play_out, random_policy, reference_deal_seed, seat_baselines
from arena.report.luck import adjust
from arena.report.ratings import compute_ratings
from arena.tournament.store import ResultRow
from games import REGISTRY
from games.rng import DealRng, derive_seed

GAME, PLAYERS, ROLLOUTS = "tightwad", 3, 8
LEVELS = (0.0, 0.3, 0.6)
CONFIGS = (("tightwad", 3), ("divers-weights", 2))


def noisy(eps: float, game: str = GAME):
    ref = REFERENCE[game]

    def policy(state, seat, rng):
        if rng.randbelow(1000) < eps * 1000:
            return random_policy(state, seat, rng)
        return ref(state, seat, rng)

    return policy


def _key(game: str = GAME, players: int = PLAYERS) -> tuple[str, int, str, str]:
    return Config(game, players, REGISTRY[game].resolve_options(players, {}), ()).key


def _reference(deals: int, game: str = GAME, players: int = PLAYERS) -> dict:
    rows = [
        tuple(seat_baselines(game, players, {}, reference_deal_seed(game, players, k), 1))
        for k in range(reference_target(game, deals))
    ]
    return {_key(game, players): rows}


def test_the_calibrated_coefficients_are_fixed_numbers_in_range():
    assert luck_beta("divers-weights", 2) > 0 and luck_beta("tightwad", 3) == 0
    assert luck_beta("tightwad", 99) == 0  # not calibrated: no correction
    assert all(0 <= b <= 1.5 for b in reference.LUCK_BETA.values())


def test_baselines_are_a_function_of_the_deal_alone():
    a = seat_baselines(GAME, PLAYERS, {}, 12345, 4)
    assert a == seat_baselines(GAME, PLAYERS, {"decision_cap": 100_000}, 12345, 4)
    assert len(a) == PLAYERS and all(0 <= x <= PLAYERS - 1 for x in a)
    others = [seat_baselines(GAME, PLAYERS, {}, seed, 4) for seed in range(20)]
    assert len({tuple(o) for o in others}) > 1  # deals differ, and so do their baselines
    assert reference_deal_seed(GAME, PLAYERS, 0) != reference_deal_seed(GAME, PLAYERS, 1)


@pytest.mark.slow
@pytest.mark.parametrize("game,players", CONFIGS)
def test_the_correction_has_mean_zero_in_every_seat_over_fresh_deals(game, players):
    deals = 80  # fewer deals, a wider bound: still far tighter than the gap a wrong eta or a leaking baseline makes
    eta, cov, _ = summarize(_reference(deals, game, players)[_key(game, players)])
    fresh = [seat_baselines(game, players, {}, derive_seed("fresh deals", d), ROLLOUTS) for d in range(deals)]
    for s in range(players):
        xs = [h[s] for h in fresh]
        m = sum(xs) / deals
        var = sum((x - m) ** 2 for x in xs) / (deals - 1) / deals + cov[s][s]
        # four standard errors: a wrong eta (or a baseline that leaks the bots) fails, chance does not
        assert abs(m - eta[s]) < 4 * math.sqrt(var), (s, m, eta[s])


def _known_strength(game: str, players: int, deals: int = 60, label: str = "known strength"):
    """Result rows of the noisy reference policies in every seat of ``deals`` deals against
    random players, and the stored baselines they would have."""
    spec = REGISTRY[game]
    key = _key(game, players)
    rows, by_match, index = [], {}, 0
    for d in range(deals):
        seed = derive_seed(f"{label} deals", d)
        h = tuple(seat_baselines(game, players, {}, seed, ROLLOUTS))
        for level, eps in enumerate(LEVELS):
            for seat in range(players):
                policies = [random_policy] * players
                policies[seat] = noisy(eps, game)
                rng = DealRng(derive_seed(f"{label} play", d, level, seat))
                state = play_out(spec.new_game(players, seed, {}), policies, rng)
                bots = tuple(f"eps{eps}" if s == seat else f"random{s}" for s in range(players))
                mid = f"{game}/p{players}/d{d}/r{level * players + seat}/{index:016x}"
                places = state.result().places
                rows.append(
                    ResultRow(
                        mid,
                        index,
                        game,
                        players,
                        bots,
                        places,
                        (0,) * players,
                        (None,) * players,
                        (None,) * players,
                        False,
                        False,
                    )
                )
                by_match[mid] = (key, h)
                index += 1
    return rows, Baselines(by_match, {key: summarize(_reference(deals, game, players)[key])}, ROLLOUTS)


@pytest.mark.parametrize("game,players", CONFIGS)
def test_bots_of_known_strength_plain_and_adjusted_agree_and_keep_their_order(game, players):
    rows, baselines = _known_strength(game, players)
    report = compute_ratings(rows)
    adjusted = adjust(report, rows, baselines)
    assert adjusted.luck["available"] is True
    assert adjusted.luck["beta"] == [{"game": game, "players": players, "beta": luck_beta(game, players)}]
    plain, adj = [], []
    for eps in LEVELS:
        s = adjusted.scope(game).standing(f"eps{eps}")
        assert s.mean_place == report.scope(game).standing(f"eps{eps}").mean_place
        assert abs(s.adjusted_place - s.mean_place) <= math.hypot(s.mean_place_ci95, s.adjusted_place_ci95)
        if luck_beta(game, players) == 0:  # no correction: the plain figure and interval, exactly
            assert (s.adjusted_place, s.adjusted_place_ci95) == (s.mean_place, s.mean_place_ci95)
        else:
            assert s.adjusted_place != s.mean_place
        plain.append(s.mean_place)
        adj.append(s.adjusted_place)
    assert plain == sorted(plain) and adj == sorted(adj)  # stronger bots place better, both ways
    assert plain[0] < plain[-1] - 0.05  # and the levels are really apart


def test_the_adjusted_place_is_the_plain_one_minus_beta_times_the_correction(monkeypatch):
    """The figure and its interval, recomputed by hand for a coefficient set here: each seat's
    place minus beta * (h - eta), clustered by deal, plus beta^2 times eta's variance."""
    game, players, beta = "divers-weights", 2, 0.4
    monkeypatch.setitem(reference.LUCK_BETA, (game, players), beta)
    rows, baselines = _known_strength(game, players, deals=12, label="by hand")
    key = _key(game, players)
    eta, cov, _ = baselines.eta[key]
    got = adjust(compute_ratings(rows), rows, baselines).scope(game).standing("eps0.3")
    per_deal: dict[str, list[float]] = {}
    weights = [0, 0]
    for row in rows:
        if "eps0.3" in row.bots:
            seat = row.bots.index("eps0.3")
            h = baselines.by_match[row.match_id][1]
            deal = row.match_id.split("/r")[0]
            per_deal.setdefault(deal, []).append(row.places[seat] + 1 - beta * (h[seat] - eta[seat]))
            weights[seat] += 1
    n = sum(len(v) for v in per_deal.values())
    k = len(per_deal)
    mean = sum(sum(v) for v in per_deal.values()) / n
    var = k / (k - 1) * sum((sum(v) - mean * len(v)) ** 2 for v in per_deal.values()) / n**2
    var += beta**2 * sum(weights[a] * weights[b] * cov[a][b] for a in range(2) for b in range(2)) / n**2
    assert got.adjusted_place == pytest.approx(mean, abs=1e-12)
    from arena.report.ratings import t95

    assert got.adjusted_place_ci95 == pytest.approx(t95(k - 1) * math.sqrt(var), rel=1e-9)


def test_a_configuration_without_a_correction_needs_no_baseline():
    rows, _ = _known_strength("tightwad", 3, deals=6, label="no baselines")
    report = compute_ratings(rows)
    adjusted = adjust(report, rows, Baselines({}, {}, ROLLOUTS))  # nothing stored
    assert adjusted.luck["available"] is True
    for s in adjusted.scope("tightwad").standings:
        assert (s.adjusted_place, s.adjusted_place_ci95) == (s.mean_place, s.mean_place_ci95)
    # whereas a configuration with a correction and no stored baseline has no figure
    rows, _ = _known_strength("divers-weights", 2, deals=6, label="no baselines")
    adjusted = adjust(compute_ratings(rows), rows, Baselines({}, {}, ROLLOUTS))
    assert adjusted.luck["available"] is False
    assert all(s.adjusted_place is None for s in adjusted.scope("divers-weights").standings)
