"""P9's arithmetic: how the adaptive schedule and the round robins are compared at an equal
correct-order rate, both ways (figures are never asserted here: docs/performance.md)."""

from __future__ import annotations

import math

import pytest

from arena.bench import adaptive_ranking as p9


def _result(adaptive: tuple[int, bool], rr: dict[int, tuple[int, bool]], curve: dict[float, tuple[int, bool]]) -> dict:
    return {
        "adaptive_matches": adaptive[0],
        "adaptive_ok": adaptive[1],
        "round_robin": {d: {"matches": m, "ok": ok} for d, (m, ok) in rr.items()},
        "curve": {c: {"matches": m, "ok": ok} for c, (m, ok) in curve.items()},
    }


def test_the_round_robin_is_interpolated_to_the_adaptive_rate_and_never_below_one_deal() -> None:
    rr = [(100, 0.5), (200, 0.9), (400, 1.0)]
    assert p9.equal_rate_matches(0.4, rr) == (100.0, 100)  # the 1-deal round robin already reaches it
    inter, reach = p9.equal_rate_matches(0.95, rr)
    assert inter == pytest.approx(200 * 2**0.5) and reach == 400  # half way, on log matches
    assert p9.equal_rate_matches(1.0, [(100, 0.5), (200, 0.9)]) == (math.inf, None)


def test_the_adaptive_schedule_is_interpolated_over_its_confidence_to_each_round_robin_rate() -> None:
    """Two trials: at confidence 0.8 one of them is wrong (rate 0.5, 100 matches), at 0.95 both
    are right (rate 1, 400 matches). A round robin right half the time is matched by the lowest
    confidence; one right 3 times in 4 lies half way (200 matches); one always right needs 0.95."""
    results = [
        _result((400, True), {1: (1000, True), 2: (2000, True), 4: (4000, True)}, {0.8: (100, True)}),
        _result((400, True), {1: (1000, False), 2: (2000, True), 4: (4000, True)}, {0.8: (100, False)}),
    ]
    points = p9.curve_points(results, 0.95)
    assert points == [(0.8, 0.5, 100.0), (0.95, 1.0, 400.0)]
    assert p9.adaptive_at_rate(0.5, points) == 100.0
    assert p9.adaptive_at_rate(0.75, points) == pytest.approx(200.0)
    assert p9.adaptive_at_rate(1.0, points) == pytest.approx(400.0)
    assert p9.adaptive_at_rate(1.0, points[:1]) is None  # no confidence measured reaches it
    saving = p9.savings_at_round_robin_rates(results, 0.95, (1, 2, 4))
    assert saving == {1: pytest.approx(10.0), 2: pytest.approx(5.0), 4: pytest.approx(10.0)}


def test_a_real_trial_runs_the_curve_on_the_same_deals() -> None:
    """The curve's runs play the main run's deals: at the main confidence it repeats the main
    run's matches and verdict exactly."""
    got = p9.trial((5, 0, 0.95, 1, (1,), (0.95, 0.6)))
    assert set(got["curve"]) == {0.95, 0.6}
    assert got["curve"][0.95] == {"matches": got["adaptive_matches"], "ok": got["adaptive_ok"]}
    assert 0 < got["curve"][0.6]["matches"] <= got["round_robin"][1]["matches"] == 10 * 3
