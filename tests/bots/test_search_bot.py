"""The reference search bot (bots/search/search_bot.py): legal answers within its budget in
every game and player count, its budget from its tournament name, a whole match inside the
`full` sandbox, and (slow) fixed-seed samples where it beats the Tightwad and Palace heuristics."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from games import REGISTRY
from games.rng import DealRng
from tests.games.variants import VARIANTS

ROOT = Path(__file__).resolve().parents[2]
SEARCH = ROOT / "bots" / "search" / "search_bot.py"
_spec = importlib.util.spec_from_file_location("bot_strength", ROOT / "benchmarks" / "bot_strength.py")
assert _spec is not None and _spec.loader is not None
bs = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("bot_strength", bs)
_spec.loader.exec_module(bs)


def named(name: str) -> Any:
    bot = bs.load_bot(SEARCH)
    bot.name = name
    return bot


def test_answers_legally_within_its_budget_in_every_game_and_player_count() -> None:
    """Budget 0.01 s (from the name): a legal id at sampled positions of every variant, each
    decision far inside a generous bound (one simulation past the budget at most)."""
    bot = named("search-0.01s")
    worst = 0.0
    for k, (game, players, options) in enumerate(VARIANTS):
        state = REGISTRY[game].new_game(players, 500 + k, options)
        names = ["search-0.01s"] * players
        matches = [bot.start(bs.start_message(state, game, s, 500 + k, names)) for s in range(players)]
        rng = DealRng(k)
        step = 0
        while not state.is_over() and step < 80:
            seat = state.to_move()[0]
            if step % 7 == 0:
                obs = json.loads(json.dumps(state.observation(seat)))
                t = time.process_time()
                answer = bot.act(obs, matches[seat])
                worst = max(worst, time.process_time() - t)
                assert answer in [a["id"] for a in obs["legal_actions"]], (game, players, options, step)
            state.apply(seat, rng.randbelow(len(state.legal_actions(seat))))
            step += 1
    assert worst < 1.0, worst


def test_divers_two_player_hands_of_the_other_seat_fit_its_plays() -> None:
    """Two-player Divers Weights: the hands the bot deals the other seat hold only cards this
    seat has not seen, its hidden choice included, and are weighted towards hands that explain
    the card it played earlier in the hand (under the bot's model of it) better than hands
    drawn uniformly do."""
    import math
    from random import Random

    from games.determinize import Determinizer

    ns = named("search-0.01s").choose.__globals__
    state = REGISTRY["divers-weights"].new_game(2, 4242, {})
    # trick 1: seat 1 plays the card the model values most for it, seat 0 its first card
    obs1 = state.observation(1)
    pool1 = [c for c in range(36) if c not in obs1["threshold"]]
    values1 = ns["card_values"](pool1, obs1["threshold"], 5, [], Random(3))
    best = max(obs1["hand"], key=lambda c: values1[c])
    state.apply(1, obs1["hand"].index(best))
    state.apply(0, 0)
    while state.to_move() != (0, 1):
        state.apply(state.to_move()[0], 0)  # the winner's prize
    state.apply(1, 2)  # trick 2: seat 1 chooses first, unseen by seat 0
    obs = json.loads(json.dumps(state.observation(0)))
    det = Determinizer(obs, state.options)
    memory: dict[str, Any] = {}
    model = ns["OtherSeat"](obs, det, memory, Random(5))
    unseen = set(det.pool)
    rnd = Random(7)
    for _ in range(200):
        s = det.sample(rnd)
        model.deal(s, rnd)
        assert len(s._hands[1]) == 3 and s._played[1] is not None
        assert set(s._hands[1]) | {s._played[1]} <= unseen
        assert sorted(s._hands[1] + [s._played[1]] + s._deck) == sorted(unseen)

    vals = memory["dw_past_values"][(1, 0)]
    played = obs["tricks"][0]["played"][1]
    tau = ns["MODEL_TAU"]

    def fit(hand: list[int]) -> float:  # the model's probability of the card played, from this hand
        held = hand + [played]
        return math.exp(vals[played] / tau) / sum(math.exp(vals[c] / tau) for c in held)

    pick = Random(11)
    weighted = []
    for _ in range(2000):
        i = min(ns["bisect"].bisect_left(model.cum, pick.random() * model.cum[-1]), len(model.hands) - 1)
        weighted.append(fit(model.hands[i]))
    uniform = [fit(pick.sample(sorted(unseen), 4)) for _ in range(2000)]
    assert sum(weighted) / len(weighted) > sum(uniform) / len(uniform) + 0.02


def test_divers_two_player_tree_keeps_a_card_apart_per_threshold() -> None:
    """Two-player Divers Weights: at a node of the tree, a card's statistics are kept per
    threshold total (a later trick is chosen for the threshold turned), and UCB counts a
    card as available only under the threshold it was seen with; without ``by_threshold``
    (every other game, player count and the bidding variant) a card has one entry."""
    from random import Random

    ns = named("search-0.01s").choose.__globals__
    states = []
    for seed in range(200):
        s = REGISTRY["divers-weights"].new_game(2, seed, {})
        total = sum(ns["RANK"][p] for p in s._threshold)
        if all(sum(ns["RANK"][p] for p in t._threshold) != total for t in states):
            states.append(s)
        if len(states) == 2:
            break
    stats: dict[Any, Any] = {}
    flat: dict[Any, Any] = {}
    rnd = Random(1)
    for s in states:
        for _ in range(len(s.moves(0))):  # each card of the hand expanded (and visited) once
            for node, by_threshold in ((stats, True), (flat, False)):
                _, st, _ = ns["_select"](node, s, 0, rnd, (), by_threshold)
                st[0] += 1
                st[1] += 0.5
    totals = {k[2] for k in stats}
    assert totals == {sum(ns["RANK"][p] for p in s._threshold) for s in states}
    assert len(stats) == sum(len(s.moves(0)) for s in states)
    assert len(flat) == len(set(states[0].moves(0)) | set(states[1].moves(0)))
    assert all(len(k) == 2 for k in flat)


def _hand_two_played_by_the_model(ns: dict[str, Any], follow: bool) -> float:
    """Seat 1 plays a whole Divers Weights hand choosing, at every trick, the card the bot's
    model values most (``follow``) or least; the share of random play the bot then expects
    from seat 1 at the next hand's first trick."""
    from random import Random

    from games.determinize import Determinizer

    state = REGISTRY["divers-weights"].new_game(2, 99, {})
    rnd = Random(1)
    while state.hand_no == 1:
        if state._phase == 1:  # a trick: seat 1 by the model's values, seat 0 its first card
            obs1 = state.observation(1)
            gone = set(obs1["threshold"] + obs1["discarded"] + [c for pr in obs1["prizes"] for c in pr])
            pool = [c for c in range(36) if c not in gone]
            vals = ns["card_values"](pool, obs1["threshold"], len(obs1["hand"]), obs1["prizes"][1], rnd, 400)
            pick = (max if follow else min)(obs1["hand"], key=lambda c: vals[c])
            state.apply(1, obs1["hand"].index(pick))
            state.apply(0, 0)
        else:
            state.apply(state.to_move()[0], 0)
    obs = json.loads(json.dumps(state.observation(0)))
    assert obs["previous_hand"] is not None
    return ns["OtherSeat"](obs, Determinizer(obs, state.options), {}, Random(2)).random_share


def test_divers_two_player_model_loses_weight_when_the_other_seat_plays_unlike_it() -> None:
    """After a hand where the other seat always played the card the model values most, the bot
    expects less random play from it than it did before any card was shown; after a hand where
    it always played the card the model values least, more."""
    ns = named("search-0.01s").choose.__globals__
    before = ns["MODEL_RANDOM"] + (1 - ns["MODEL_RANDOM"]) * (1 - ns["MODEL_PRIOR"])
    assert _hand_two_played_by_the_model(ns, True) < before < _hand_two_played_by_the_model(ns, False)


def test_budget_comes_from_the_tournament_name() -> None:
    ns: dict[str, Any] = {}
    captured: dict[str, Any] = {}
    kit = bs.fake_botkit(captured)
    sys.modules["botkit"] = kit
    try:
        exec(compile(SEARCH.read_text(), str(SEARCH), "exec"), ns)
    finally:
        sys.modules.pop("botkit", None)
    budget_of, sims_of = ns["budget_of"], ns["sims_of"]

    class M:
        seat = 1
        bots: list[str] = []

    for name, want in (("search-0.1s", 0.1), ("search_2s", 2.0), ("search-0.5s", 0.5),
                       ("search_bot", ns["DEFAULT_BUDGET_S"]), ("x-1.25s", 1.25)):
        M.bots = ["random_bot", name]
        assert budget_of(M) == want and sims_of(M) is None, name
    M.bots = ["random_bot", "search-400sims"]
    assert sims_of(M) == 400 and budget_of(M) == ns["DEFAULT_BUDGET_S"]


@pytest.mark.slow
@pytest.mark.parametrize("game,players", [("tightwad", 3), ("divers-weights", 2), ("palace", 2)])
def test_plays_a_whole_match_inside_the_full_sandbox(game: str, players: int) -> None:
    """Default budget (0.5 s of CPU), and its own wall-clock stop at half of move_s keeps it
    inside the time control (3 s here: this machine's load has reached 80 on 2 cores)."""
    from arena.match.sandbox import SandboxUnavailable
    from arena.match.detect import detect_sandbox

    try:
        detect_sandbox("full")
    except SandboxUnavailable as exc:
        pytest.skip(f"level full unavailable here: {exc}")
    res = subprocess.run([sys.executable, "-m", "arena", "play", game, str(SEARCH),
                          *(["random_bot"] * (players - 1)), "--seed", "2", "--json",
                          "--sandbox", "full", "--move-s", "3.0"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert [s["fault"] for s in doc["seats"]] == [None] * players, doc["seats"]
    assert "sandbox level full" in res.stderr


# (game, players, simulations a decision, deals, first deal seed)
# Divers Weights is left out: there the bot is not yet clearly stronger than divers_heuristic
# (docs/performance.md), and a test must not claim it.
STRENGTH = [
    ("tightwad", 4, 300, 8, 61_000),
    # Palace: 6 deals. On the first 3 alone the bot tied the heuristic (1.92 each) once its samples
    # followed the public history (issue 30); over 6: 1.79 against 2.04 (the old sampler: 2.0 / 2.2 on 5).
    ("palace", 4, 150, 6, 63_000),
]


@pytest.mark.slow
@pytest.mark.parametrize("game,players,sims,deals,seed", STRENGTH, ids=[s[0] for s in STRENGTH])
def test_beats_the_heuristic_on_fixed_deals(game: str, players: int, sims: int, deals: int, seed: int) -> None:
    """Duplicate: each deal in every seat rotation, the search bot with a fixed number of
    simulations (so the result does not depend on the machine) against the game's heuristic
    (and random bots at 4 players). Its mean place is better than the heuristic's."""
    name = f"search-{sims}sims"
    field = [named(name), bs.load_bot(bs.HEURISTICS[game]), bs.load_bot(bs.RANDOM_BOT),
             bs.load_bot(bs.RANDOM_BOT)][:players]
    total = [0.0] * players
    for d in range(deals):
        for r in range(players):
            order = [(s + r) % players for s in range(players)]  # seat s holds field[order[s]]
            res = bs.play_game(game, [field[k] for k in order], seed + d, match_seed=seed * 10 + d * players + r)
            for s, k in enumerate(order):
                total[k] += res.places[s] + 1
    mean = [t / (deals * players) for t in total]
    assert mean[0] < mean[1], dict(zip(["search", "heuristic", "random", "random"], mean))


def test_strength_table_plays_only_the_measured_fields_of_strength_yaml() -> None:
    """benchmarks/search_strength.py ``table`` picks, from tournaments/strength.yaml's round
    robin, exactly the groups the docs' table reports: one search bot with the heuristic and
    two random bots, or with the heuristic in every other seat; every rotation of each deal."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("search_strength", ROOT / "benchmarks" / "search_strength.py")
    assert spec is not None and spec.loader is not None
    ss = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ss)
    strength = ROOT / "tournaments" / "strength.yaml"
    mixed, _ = ss.table_matches(strength, "tightwad", 4, [0.5], 3)
    assert {frozenset(m["bots"]) for m in mixed} == {
        frozenset({"search-0.5s", "tightwad_heuristic", "random_bot", "random_twin"})}
    assert len(mixed) == 3 * 4 and len({m["deal_seed"] for m in mixed}) == 3
    copies, _ = ss.table_matches(strength, "tightwad-vs-heuristics", 4, [0.1, 2], 2)
    assert {frozenset(m["bots"]) for m in copies} == {
        frozenset({b, "tightwad_heuristic", "tightwad_heuristic_2", "tightwad_heuristic_3"})
        for b in ("search-0.1s", "search-2s")}
    assert len(copies) == 2 * 2 * 4
    duel, _ = ss.table_matches(strength, "divers-weights", 2, [0.5], 2)
    assert {frozenset(m["bots"]) for m in duel} == {frozenset({"search-0.5s", "divers_heuristic"}),
                                                    frozenset({"search-0.5s", "random_bot"})}
    # the heuristic's copies count as the heuristic in the table: search minus their mean
    assert ss.heuristic_copies("tightwad", ["search-0.5s", "tightwad_heuristic_3", "tightwad_heuristic",
                                            "tightwad_heuristic_x", "random_bot"]) == [
        "tightwad_heuristic_3", "tightwad_heuristic"]
