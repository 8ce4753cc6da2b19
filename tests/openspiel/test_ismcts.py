"""OpenSpiel's ISMCTS as an opponent: the bot folder and the strength benchmark's pieces."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspiel", reason="open_spiel is not installed (pip install -e '.[openspiel]')")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bot_strength as bs  # noqa: E402

BOT = ROOT / "bots" / "openspiel_ismcts" / "main.py"


def _benchmark():
    spec = importlib.util.spec_from_file_location("openspiel_strength", ROOT / "benchmarks" / "openspiel_strength.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_bot_carries_the_bridge_verbatim():
    copy = BOT.with_name("decktet_openspiel.py").read_text(encoding="utf-8")
    assert copy == (ROOT / "arena" / "openspiel" / "__init__.py").read_text(encoding="utf-8"), \
        "cp arena/openspiel/__init__.py bots/openspiel_ismcts/decktet_openspiel.py"


@pytest.mark.parametrize("game,players", [("divers-weights", 2), ("tightwad", 3)])
def test_the_bot_plays_whole_games_from_observations_alone(game, players):
    """Observations through JSON, as over the protocol; every action it returns is legal
    (the engine raises otherwise) and the game ends."""
    bots = [bs.load_bot(BOT)] + [bs.load_bot(ROOT / "bots" / "random_bot.py") for _ in range(players - 1)]
    bots[0].name = "ismcts-4sims"
    res = bs.play_game(game, bots, 5, roundtrip=True)
    assert sorted(res.places)[0] == 0 and bots[0].decisions > 3


def test_the_benchmark_plays_a_duplicate_match_at_equal_budget():
    bench = _benchmark()
    row = bench.play_deal("divers-weights", 2, deal=bench.FIRST_DEAL, rotation=1, budget_s=0.005)
    assert sorted(row["places"]) in ([1, 2], [1, 1])
    assert row["search_place"] == row["places"][1] and row["ismcts_place"] == row["places"][0]
    assert row["decisions"]["search"] > 0 and row["ismcts_searches"] > 0
    assert row["ismcts_sims"] >= 2 * row["ismcts_searches"]  # the first simulation only expands the root


def test_the_summary_counts_only_deals_played_in_every_rotation():
    bench = _benchmark()

    def row(deal, rot, s, i):
        return {"game": "tightwad", "players": 2, "deal": deal, "rotation": rot, "budget_s": 0.1,
                "search_place": s, "ismcts_place": i, "cpu_s": {"search": 1.0, "ismcts": 1.0},
                "decisions": {"search": 10, "ismcts": 10}, "ismcts_sims": 40, "ismcts_searches": 10}

    rows = [row(1, 0, 1, 2), row(1, 1, 1, 2), row(2, 0, 2, 1), row(2, 1, 1, 2), row(3, 0, 2, 1)]
    (t,) = bench.summary(rows)
    assert t["deals"] == 2 and t["matches"] == 4
    assert t["diff"] == pytest.approx(-0.5)  # deal 1: -1, deal 2: 0
    assert t["ismcts_sims_per_search"] == 4.0
