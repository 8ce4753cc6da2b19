"""arena/stats/sequential.py on synthetic data: the test's error rates and decisions, the
GSPRT's statistic against its normal approximation, and the constrained MLE's invariants."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.stats.sequential import (
    SequentialTest,
    check_error_rates,
    constrained_mle,
    gsprt_llr,
    logistic_elo,
    logistic_score,
    mean_interval,
    normal_llr,
    regularised,
    sprt_bounds,
)


def run_tests(
    values: list[float], mu0: float, mu1: float, lo: float, hi: float, runs: int, seed: int
) -> dict[str | None, int]:
    """How often each decision comes when the samples are drawn uniformly from ``values``."""
    rng = random.Random(seed)
    out: dict[str | None, int] = {"H0": 0, "H1": 0, None: 0}
    for _ in range(runs):
        test = SequentialTest(mu0, mu1, 0.05, 0.05, lo, hi)
        status = test.extend(rng.choice(values) for _ in range(5000))
        out[status.decision] += 1
    return out


def test_error_rates_at_the_hypotheses_stay_within_alpha_and_beta():
    # mean exactly mu0 (H0 true) and exactly mu1 (H1 true): the worst cases for each error
    at_h0 = run_tests([-1, 0, 0, 1], 0.0, 0.3, -1, 1, runs=600, seed=1)
    at_h1 = run_tests([-1, 0, 1, 1, 0.5], 0.0, 0.3, -1, 1, runs=600, seed=2)
    assert at_h0[None] == at_h1[None] == 0
    # alpha = beta = 5%: 30 of 600 expected at worst; 42 or more has probability < 2% even then
    assert at_h0["H1"] <= 41 and at_h1["H0"] <= 41
    assert at_h0["H0"] >= 500 and at_h1["H1"] >= 500


def test_a_clear_difference_is_decided_in_a_few_samples():
    better = SequentialTest(0.0, 0.3, 0.05, 0.05, -3, 3)
    status = better.extend([1.0, 0.5, 1.5, 1.0, 0.75] * 20)
    assert status.decision == "H1" and status.n <= 25
    assert status.llr >= status.upper == pytest.approx(math.log(20))
    worse = SequentialTest(0.0, 0.3, 0.05, 0.05, -3, 3)
    status = worse.extend([-1.0, -0.5, -1.5, -1.0] * 20)
    assert status.decision == "H0" and status.n <= 25 and status.llr <= status.lower


def test_a_decided_test_refuses_more_samples_and_out_of_range_ones():
    test = SequentialTest(0.0, 0.5, 0.05, 0.05, -1, 1)
    with pytest.raises(ValueError):
        test.add(1.5)
    status = test.extend([1.0] * 100)
    assert status.decision == "H1" and test.status() is status
    with pytest.raises(ValueError):
        test.add(0.0)


@pytest.mark.parametrize("alpha, beta", [(0, 0.05), (0.5, 0.05), (0.05, 0.7), (0.05, -0.1), (math.nan, 0.1)])
def test_error_rates_outside_0_to_half_are_refused(alpha, beta):
    with pytest.raises(ValueError, match=r"outside \(0, 0.5\)"):
        check_error_rates(alpha, beta)


def test_bounds_are_walds_strict_ones():
    assert sprt_bounds(0.05, 0.1) == (pytest.approx(math.log(0.1)), pytest.approx(math.log(20)))


def test_gsprt_llr_matches_its_normal_approximation_for_many_samples():
    rng = random.Random(3)
    xs = [rng.choice([-1, -0.5, 0, 0.5, 1, 0.5, 0]) for _ in range(4000)]
    counts: dict[float, float] = {}
    for x in xs:
        counts[x] = counts.get(x, 0) + 1
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / len(xs)
    exact = gsprt_llr(counts, 0.08, 0.12, -1, 1)
    approx = normal_llr(len(xs), mean, var, 0.08, 0.12)
    assert exact == pytest.approx(approx, rel=0.05)
    assert gsprt_llr(counts, 0.12, 0.08, -1, 1) == pytest.approx(-exact)


@settings(max_examples=60)
@given(
    st.dictionaries(st.integers(-6, 6).map(lambda k: k / 2), st.integers(1, 30), min_size=1, max_size=8),
    st.floats(-2.9, 2.9),
)
def test_the_constrained_mle_is_a_distribution_with_the_asked_mean(counts, mu):
    values, n = regularised(counts, -3.0, 3.0)
    p = constrained_mle(values, n, mu)
    assert all(q >= 0 for q in p)
    assert sum(p) == pytest.approx(1.0, abs=1e-9)
    assert sum(a * q for a, q in zip(values, p)) == pytest.approx(mu, abs=1e-7)


def test_interval_and_elo_helpers():
    lo, hi = mean_interval(100, 0.5, 1.0)
    assert (lo, hi) == (pytest.approx(0.5 - 0.196, abs=1e-3), pytest.approx(0.5 + 0.196, abs=1e-3))
    assert mean_interval(1, 0.5, 0.0) == (-math.inf, math.inf)
    assert logistic_elo(logistic_score(120.0)) == pytest.approx(120.0)
    assert logistic_score(0.0) == 0.5 and logistic_elo(1.0) == math.inf


def test_wins_losses_draws_and_los_are_counted_by_sample():
    """fastchess's W-L-D and LOS: samples above, below and at 0; P(mean > 0) by the normal
    approximation (0.5 when the mean is 0, certain when every sample agrees)."""
    test = SequentialTest(0.0, 0.2, 0.05, 0.05, -2.0, 2.0)
    for x in (1.0, -0.5, 0.0, 0.75):
        status = test.add(x)
    assert (status.ahead, status.behind, status.n) == (2, 1, 4)
    se = math.sqrt(status.var / status.n)
    assert status.los == pytest.approx(0.5 * math.erfc(-status.mean / (se * math.sqrt(2))))
    assert 0.5 < status.los < 1.0
    even = SequentialTest(0.0, 0.2, 0.05, 0.05, -2.0, 2.0)
    assert even.status().los is None  # no samples: nothing to say
    for _ in range(3):
        last = even.add(0.0)
    assert last.los == 0.5 and (last.ahead, last.behind) == (0, 0)
    sure = SequentialTest(0.0, 0.2, 0.05, 0.05, -2.0, 2.0)
    sure.add(0.5)
    assert sure.add(0.5).los == 1.0


def test_head_to_head_deals_are_counted_as_fastchess_pentanomial():
    """A head-to-head deal's sample (OLD's mean place minus NEW's over both seat orders) is
    NEW's points over the pair minus 1: -1 is 0 of 2 points, 0.5 is a win and a tie."""
    from arena.tournament.duel import pentanomial

    test = SequentialTest(0.0, 0.2, 0.05, 0.05, -1.0, 1.0)
    for x in (-1.0, 0.5, 0.0, 0.5, 1.0, 0.0, 0.0, -0.5):
        status = test.add(x)
    assert pentanomial(status) == [1, 1, 3, 2, 1]
    assert status.counts == ((-1.0, 1), (-0.5, 1), (0.0, 3), (0.5, 2), (1.0, 1))


@pytest.mark.parametrize("seed", range(40))
def test_the_llr_shown_is_the_evidence_that_decides_even_with_unequal_bounds(seed):
    # alpha != beta, a mean between the hypotheses: both wealths grow, and the larger log
    # wealth may not be the one that reaches its bound first; the LLR shown must stay inside
    # the bounds until a decision and cross the bound of the hypothesis accepted
    rng = random.Random(seed)
    test = SequentialTest(0.0, 0.2, 0.01, 0.2, -3, 3)
    for _ in range(5000):
        status = test.add(rng.choice([-1, 0, 0, 1, 0.5, -0.5, 0.75]))
        if status.decision is None:
            assert status.lower < status.llr < status.upper
        else:
            break
    assert status.decision is not None
    if status.decision == "H1":
        assert status.llr == status.log_h1 >= status.upper
    else:
        assert status.llr == -status.log_h0 <= status.lower
