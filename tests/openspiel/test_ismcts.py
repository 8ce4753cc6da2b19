"""OpenSpiel's ISMCTS as an opponent: the bot folder and the strength benchmark's pieces."""

from __future__ import annotations

import importlib.util
import json
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
    assert copy == (ROOT / "arena" / "openspiel" / "__init__.py").read_text(encoding="utf-8"), (
        "cp arena/openspiel/__init__.py bots/openspiel_ismcts/decktet_openspiel.py"
    )


@pytest.mark.parametrize("game,players", [("divers-weights", 2), ("tightwad", 3)])
def test_the_bot_plays_whole_games_from_observations_alone(game, players):
    """Observations through JSON, as over the protocol; every action it returns is legal
    (the engine raises otherwise) and the game ends."""
    bots = [bs.load_bot(BOT)] + [bs.load_bot(ROOT / "bots" / "random_bot.py") for _ in range(players - 1)]
    bots[0].name = "ismcts-4sims"
    res = bs.play_game(game, bots, 5, roundtrip=True)
    assert sorted(res.places)[0] == 0 and bots[0].decisions > 3


def _bot_module():
    """The bot's main.py namespace (its choose's globals), loaded as a benchmark loads it."""
    return bs.load_bot(BOT).choose.__globals__


def _match(kit, game, players, name, move_s):
    state = bs.REGISTRY[game].new_game(players, 3)
    names = [name] + ["other"] * (players - 1)
    msg = bs.start_message(state, game, 0, 11, names)
    msg["time_control"] = (
        {} if move_s is None else {"startup_s": 10.0, "move_s": move_s, "bank_s": None, "grace_s": 0.05}
    )
    return state, kit.Match(msg)


@pytest.mark.parametrize(
    "name,move_s,expected",
    [
        ("ismcts", 1.0, (0.5, None, 1.0)),  # half the move time, in CPU
        ("ismcts", 3.0, (1.5, None, 3.0)),
        ("ismcts", None, (0.5, None, None)),  # no time control: the default
        ("ismcts", 10 * 365 * 24 * 3600.0, (0.5, None, None)),  # --no-timeouts
        ("ismcts-0.2s", 1.0, (0.2, None, 1.0)),
        ("ismcts_40sims", 2.0, (float("inf"), 40, 2.0)),
    ],
)
def test_the_budget_follows_the_time_control_unless_the_name_sets_it(name, move_s, expected):
    ns = _bot_module()
    kit = bs.load_bot(BOT).botkit
    _, match = _match(kit, "tightwad", 3, name, move_s)
    assert ns["budget_of"](match) == expected


def _root_state(ns, game, players, seed=5):
    import pyspiel

    import arena.openspiel  # noqa: F401

    params = {"players": players}
    if game != "tightwad":
        params["simultaneous"] = False
    g = pyspiel.load_game(ns["bridge"].NAMES[game], params)
    engine = bs.REGISTRY[game].new_game(players, seed)
    while len(engine.legal_actions(engine.to_move()[0])) < 2:
        engine.apply(engine.to_move()[0], 0)
    obs = json.loads(json.dumps(engine.observation(engine.to_move()[0])))
    return g, ns["bridge"].state_from_observation(g, obs, "", 1), obs


def test_a_named_simulation_count_is_what_it_runs():
    import numpy as np

    ns = _bot_module()
    g, state, obs = _root_state(ns, "divers-weights", 2)
    bot = ns["BudgetISMCTS"](g, np.random.RandomState(0))
    action = bot.choose(state, float("inf"), 3, None)
    assert bot.last_sims == 3 and bot.stops == 0
    assert action in state.legal_actions()


def test_the_timer_stops_a_simulation_past_the_hard_share_and_drops_it():
    """A simulation still running at the hard stop: the timer stops it, it leaves no trace in the
    tree, and the bot still answers a legal move."""
    import time

    import numpy as np

    ns = _bot_module()
    ns["WALL_SHARE"] = 1e6  # the soft stop never: the first simulation starts, whatever the load
    g, state, obs = _root_state(ns, "palace", 4)
    bot = ns["BudgetISMCTS"](g, np.random.RandomState(0))
    rollout = bot.run_simulation

    def slow_simulation(*args):  # surely past the stop, however fast the machine runs a rollout
        time.sleep(10)
        return rollout(*args)

    bot.run_simulation = slow_simulation
    # a move time long enough that the stop cannot fire before the first simulation starts (at
    # 0.002 s a CI machine under load reached the loop late: the timer had fired, none started)
    action = bot.choose(state, 10.0, None, 1.0)
    assert (bot.last_sims, bot.stops) == (0, 1)
    assert bot._root_node.total_visits <= 0 and not bot._root_node.child_info
    assert action in state.legal_actions()
    assert bot.pace > 0  # the stopped simulation's time sets the pace of the next decision


def test_the_timer_outside_a_simulation_only_ends_the_search():
    """Fired between two simulations (a real match crashed on it), the timer raises nothing."""
    ns = _bot_module()
    clock = ns["_Clock"]
    clock.in_simulation, clock.expired = False, False
    ns["_alarm"](14, None)
    assert clock.expired
    clock.in_simulation, clock.expired = True, False
    with pytest.raises(ns["OutOfTime"]):
        ns["_alarm"](14, None)
    assert not clock.in_simulation


def test_no_simulation_starts_that_the_last_decision_says_cannot_end_in_time():
    import numpy as np

    ns = _bot_module()
    g, state, obs = _root_state(ns, "tightwad", 3)
    bot = ns["BudgetISMCTS"](g, np.random.RandomState(0))
    bot.pace = 5.0  # the last decision's slowest simulation: longer than half of move_s
    action = bot.choose(state, 10.0, None, 1.0)
    assert (bot.last_sims, bot.stops) == (0, 0)
    assert action in state.legal_actions()
    assert bot.pace == 2.5  # halved: a later decision tries again


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
        return {
            "game": "tightwad",
            "players": 2,
            "deal": deal,
            "rotation": rot,
            "budget_s": 0.1,
            "search_place": s,
            "ismcts_place": i,
            "cpu_s": {"search": 1.0, "ismcts": 1.0},
            "decisions": {"search": 10, "ismcts": 10},
            "ismcts_sims": 40,
            "ismcts_searches": 10,
        }

    rows = [
        row(1, 0, 1, 2),
        row(1, 1, 1, 2),
        row(2, 0, 2, 1),
        row(2, 1, 1, 2),
        row(3, 0, 2, 1),
        row(1, 0, 2, 1),
    ]  # deal 1 rotation 0 again (two runs over one deal): counted once
    (t,) = bench.summary(rows)
    assert t["deals"] == 2 and t["matches"] == 4
    assert t["diff"] == pytest.approx(-0.5)  # deal 1: -1, deal 2: 0
    assert t["ismcts_sims_per_search"] == 4.0
