"""A small run of benchmarks/duel_errors.py: simulated duels of in-process players of known
strength, sampled and tested exactly as `arena duel` does, keep within alpha and beta.
(The full measurement, 500 duels per setting, is quoted in docs/duel.md.)"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("duel_errors", ROOT / "benchmarks" / "duel_errors.py")
duel_errors = importlib.util.module_from_spec(_spec)
sys.modules["duel_errors"] = duel_errors
_spec.loader.exec_module(duel_errors)


def test_identical_players_average_zero_and_a_stronger_one_more():
    s = duel_errors.SETTINGS[1]  # divers-weights, two players head to head
    same = [duel_errors.play_deal(s, 0.0, 0.0, seed) for seed in range(60)]
    assert all(x in (-1.0, -0.5, 0.0, 0.5, 1.0) for x in same)
    mean, se = duel_errors.calibrate(s, 150)
    assert mean > 4 * se > 0  # the reference policy beats random head to head


def test_a_small_simulation_keeps_the_error_rates():
    s = duel_errors.SETTINGS[1]
    res = duel_errors.simulate(s, duels=30, margin=0.38, max_deals=400)
    for truth, r in res.items():
        assert r["capped"] == 0, r
        # alpha = beta = 0.05: 1.5 of 30 expected at most; 6 or more has probability < 0.8% even then
        assert r["errors"] <= 5, (truth, r)
        assert r["mean_deals"] > 1
    assert duel_errors.wilson(0, 40)[0] == 0.0 and duel_errors.wilson(40, 40)[1] == 1.0
