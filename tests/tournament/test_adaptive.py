"""schedule: adaptive without bot processes: the race's statistics, the planner's determinism
(any interruption resumes to the same matches and results), and one-line errors for bad
settings. The end-to-end runs with real bots are in test_adaptive_run.py."""

from __future__ import annotations

import hashlib
import random
import re
import statistics
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.stats.ranking import PairRace, boundary, deal_set_sample, pair_share
from arena.tournament.adaptive import draw_round
from arena.tournament.config import ConfigError, parse_tournament
from arena.tournament.load import load_tournament
from arena.tournament.roster import BotEntry
from arena.tournament.schedule import build_schedule
from tests.tournament.tournament_fixtures import make_project


def test_pair_share_counts_ties_half() -> None:
    assert pair_share([0, 1, 1], 0, [1, 2]) == 1.0
    assert pair_share([0, 1, 1], 1, [0, 2]) == 0.25
    sample = deal_set_sample("a", [(("a", "b"), (0, 1)), (("b", "a"), (0, 1))])
    assert sample == 0.5


def _feed(race: PairRace, diffs: dict[tuple[str, str], tuple[float, float]], rounds: int) -> None:
    """Paired samples alternating between two values per pair."""
    for i in range(rounds):
        for (a, b), (x, y) in diffs.items():
            race.add_pair(a, b, x if i % 2 else y)


def test_a_race_decides_clear_pairs_and_not_equal_bots() -> None:
    race = PairRace(("a", "b", "c"), confidence=0.95)
    assert race.active() == ["a", "b", "c"]  # no samples: nothing decided
    _feed(race, {("a", "b"): (0.5, 0.3), ("b", "c"): (0.5, 0.3), ("a", "c"): (0.9, 0.7)}, 30)
    assert race.done() and race.ranking() == ["a", "b", "c"]
    assert race.decided_pairs() == [("a", "b"), ("a", "c"), ("b", "c")]
    same = PairRace(("a", "b"), confidence=0.95)
    _feed(same, {("a", "b"): (0.4, -0.4)}, 400)
    assert same.active() == ["a", "b"] and same.decided_pairs() == []


def test_decided_pairs_join_by_transitivity() -> None:
    """a > b and b > c decide the whole order, though a and c never met."""
    race = PairRace(("c", "a", "b"), confidence=0.9)
    _feed(race, {("a", "b"): (0.6, 0.4), ("c", "b"): (-0.6, -0.4)}, 20)
    assert race.done() and race.ranking() == ["a", "b", "c"]
    assert race.pair_samples("a", "c") == 0 and race.rank_range("a") == (1, 1)


def test_top_k_decides_only_the_first_places_and_stops_asking_for_the_rest() -> None:
    race = PairRace(("a", "b", "c", "d"), confidence=0.9, top=1)
    _feed(race, {("a", x): (0.7, 0.5) for x in "bcd"} | {("b", "c"): (0.2, -0.2), ("c", "d"): (0.2, -0.2)}, 30)
    race.refresh()
    assert race.done() and race.useful() == {}
    assert [s["ranks"] for s in race.summary()][0] == [1, 1]


def test_useful_pairs_are_the_ones_that_decide_the_target_order() -> None:
    """Top 1: the estimated leader against each other bot (the others need not meet); a decided
    pair is no longer played. Before any data every rating ties and the names order them."""
    race = PairRace(("a", "b", "c"), confidence=0.9, top=1)
    assert race.useful() == {"a": ["b", "c"], "b": ["a"], "c": ["a"]}
    _feed(race, {("a", "b"): (0.7, 0.5), ("a", "c"): (0.05, -0.05), ("c", "b"): (0.7, 0.5)}, 20)
    assert race.useful() == {"a": ["c"], "c": ["a"]}
    whole = PairRace(tuple("abcd"), confidence=0.9)  # the whole ranking: each bot and the next
    assert whole.useful() == {"a": ["b"], "b": ["a", "c"], "c": ["b", "d"], "d": ["c"]}
    top2 = PairRace(tuple("abcde"), confidence=0.9, top=2)  # 1-2, then the second against the rest
    assert top2.useful() == {"a": ["b"], "b": ["a", "c", "d", "e"], "c": ["b"], "d": ["b"], "e": ["b"]}


def test_a_pair_learns_from_the_opponents_both_met() -> None:
    """a and c never meet; each meets b: the fitted ratings order a and c with the variance of
    both paths, and the pair is decided although it has no paired sample of its own."""
    race = PairRace(("a", "b", "c"), confidence=0.95)
    _feed(race, {("a", "b"): (0.3, 0.1), ("b", "c"): (0.3, 0.1)}, 40)
    assert race.pair_samples("a", "c") == 0 and ("a", "c") in race.decided_pairs()
    fit = race.fit()
    assert fit.rating[0] - fit.rating[2] == pytest.approx(0.4, abs=1e-4)  # the ridge pulls a little
    assert fit.se(0, 2) == pytest.approx(fit.se(0, 1) * 2**0.5, rel=1e-3)  # two independent paths


def test_the_margin_bounds_the_wrong_decisions_beyond_it() -> None:
    """Bots exactly the margin apart, the worst case the margin covers, checked after every
    sample: the share of races that decide the pair the wrong way stays below 1 - confidence;
    the same pair is decided much sooner with the margin than without (equal bots, which the
    margin does not cover, are then decided either way round: test above, without it)."""
    rng = random.Random(11)
    races, looks, wrong, used = 300, 300, 0, []
    for _ in range(races):
        race = PairRace(("a", "b"), confidence=0.9, horizon=looks, margin=0.1)
        for k in range(looks):
            race.add_pair("a", "b", 0.1 + rng.choice((-0.5, -0.25, 0.0, 0.25, 0.5)))
            if not race.active():
                wrong += race.ranking()[0] == "b"
                used.append(k + 1)
                break
    assert wrong / races < 0.1
    strict = []
    for _ in range(40):
        race = PairRace(("a", "b"), confidence=0.9, horizon=looks)
        for k in range(looks):
            race.add_pair("a", "b", 0.1 + rng.choice((-0.5, -0.25, 0.0, 0.25, 0.5)))
            if not race.active():
                break
        strict.append(k + 1)
    assert statistics.fmean(used) < 0.7 * statistics.fmean(strict)


def test_a_deal_set_gives_every_pair_of_its_group_a_paired_sample() -> None:
    race = PairRace(("a", "b", "c"))
    race.add([(("a", "b", "c"), (0, 1, 2)), (("b", "c", "a"), (0, 2, 1)), (("c", "a", "b"), (0, 1, 2))])
    assert [race.pair_samples(x, y) for x, y in (("a", "b"), ("a", "c"), ("b", "c"))] == [1, 1, 1]
    shares = {s["bot"]: s["score"] for s in race.summary()}
    assert shares == pytest.approx({"a": 2 / 3, "b": 0.5, "c": 1 / 3})
    assert race.pairs[(0, 1)].mean == pytest.approx(1 / 6)  # a's share minus b's
    with pytest.raises(ValueError):
        race.add_pair("a", "b", 1.5)


def test_the_boundary_covers_every_look_up_to_the_horizon() -> None:
    """Equal bots (paired samples symmetric about 0), checked after every sample: the share of
    races that ever decide the pair, either way, stays below 1 - confidence (a bound for one
    look, z = 1.28, would decide about half of them)."""
    assert boundary(0.05, 100) < boundary(0.05, 10_000) and boundary(0.05, 100) > 1.65
    rng = random.Random(5)
    races, looks, decided = 200, 200, 0
    for _ in range(races):
        race = PairRace(("a", "b"), confidence=0.8, horizon=looks)
        for _ in range(looks):
            race.add_pair("a", "b", rng.choice((-0.5, -0.25, 0.0, 0.25, 0.5)))
            if not race.active():  # two bots: both decided once the pair is
                decided += 1
                break
    assert decided / races < 0.2


@pytest.mark.parametrize("bad", [{"confidence": 1.0}, {"confidence": 0.0}, {"top": 0}, {"top": 3}])
def test_race_refuses_bad_settings(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        PairRace(("a", "b", "c"), **bad)


def test_rounds_group_only_useful_pairs() -> None:
    names = tuple(f"b{i}" for i in range(8))
    race = PairRace(names, confidence=0.9)
    one = draw_round(7, "tightwad", 3, 4, race)
    assert one == draw_round(7, "tightwad", 3, 4, race)
    assert one != draw_round(7, "tightwad", 3, 5, race)
    seen = [b for members, _ in one for b in members]
    assert set(seen) == set(names)  # every bot with a useful pair plays
    useful = race.useful()
    for members, _ in one:
        assert len(set(members)) == 3 and list(members) == sorted(members)
        assert any(y in useful.get(x, ()) for x in members for y in members)
    # b0 surely ahead of everyone, b1 of everyone else: only the pairs among b2..b7 are open
    _feed(race, {("b0", x): (0.9, 0.7) for x in names[1:]} | {("b1", x): (0.9, 0.7) for x in names[2:]}, 20)
    for number in range(20):
        for members, _ in draw_round(7, "tightwad", 3, number, race):
            assert sum(m in ("b0", "b1") for m in members) <= 1  # at most a filler
            open_pairs = [
                (x, y) for x in members for y in members if x < y and "b0" not in (x, y) and "b1" not in (x, y)
            ]
            assert open_pairs


def test_groups_are_drawn_at_random_among_useful_pairs() -> None:
    """With top 1 and no data, b0 (first by name while every rating ties) forms a useful pair
    with every other bot: over many rounds it meets each about equally often."""
    names = tuple(f"b{i}" for i in range(7))
    race = PairRace(names, top=1)
    met = {n: 0 for n in names[1:]}
    for number in range(1500):
        for members, _ in draw_round(1, "x", 3, number, race):
            if "b0" in members:
                for m in members:
                    if m != "b0":
                        met[m] += 1
    assert max(met.values()) - min(met.values()) < 0.15 * statistics.fmean(met.values())


# ---- the planner on the real schedule, with synthetic results -----------------------------

STRENGTH = {f"bot{i}": 1.0 - 0.6 * i for i in range(4)}


def _fake_places(match: Any) -> tuple[int, ...]:
    """A deterministic result per match: strength plus luck from the match's content hash."""
    luck = hashlib.sha256(match.key.encode()).digest()
    score = [STRENGTH[b] + luck[s] / 255 for s, b in enumerate(match.bots)]
    order = sorted(range(len(score)), key=lambda s: -score[s])
    places = [0] * len(score)
    for place, seat in enumerate(order):
        places[seat] = place
    return tuple(places)


def _tournament(adaptive: dict[str, Any] | None = None, deals: int = 40) -> Any:
    entry: dict[str, Any] = {"id": "tightwad", "players": 3, "deals": deals, "schedule": "adaptive"}
    if adaptive is not None:
        entry["adaptive"] = adaptive
    return parse_tournament({"name": "t", "seed": 11, "bots": ["bots/*.py"], "games": [entry], "deals": "public"})


ROSTER = [BotEntry(n, Path(f"/x/{n}.py"), hashlib.sha256(n.encode()).hexdigest(), "python") for n in STRENGTH]


def _run(tournament: Any, pick: Any) -> tuple[list[Any], dict[str, tuple], list[Any]]:
    """Play the schedule as `arena run` does: plan, play what ``pick`` chooses of the pending
    matches (an interrupted run plays only some), plan again, until nothing is pending."""
    stored: dict[str, tuple] = {}
    while True:
        plans: list[Any] = []
        schedule = build_schedule(tournament, ROSTER, results=stored, plans=plans)
        pending = [m for m in schedule if m.match_id not in stored]
        if not pending:
            return schedule, stored, plans
        for m in pick(pending):
            stored[m.match_id] = (m.bots, _fake_places(m))


def test_adaptive_stops_when_decided_with_the_true_order() -> None:
    schedule, stored, plans = _run(_tournament({"confidence": 0.9}), lambda pending: pending)
    (p,) = plans
    assert p.status == "decided"
    assert p.race.ranking() == list(STRENGTH)
    assert len(schedule) == p.matches < p.cap == 4 * 3 * 40
    assert sorted(m.index for m in schedule) == list(range(len(schedule)))


def test_adaptive_stops_at_its_cap() -> None:
    schedule, _, plans = _run(_tournament({"confidence": 0.999}, deals=2), lambda pending: pending)
    assert plans[0].status == "cap" and 20 < len(schedule) <= 24 == plans[0].cap


@settings(max_examples=10)
@given(st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=40))
def test_any_interruptions_resume_to_the_same_matches_and_results(cuts: list[int]) -> None:
    """However a run is cut (a few matches of the pending ones each time, in any order), it ends
    with the schedule, results and decisions of an uninterrupted run."""
    t = _tournament({"confidence": 0.8, "top": 1}, deals=6)
    whole = _run(t, lambda pending: pending)
    it = iter(cuts)

    def some(pending: list[Any]) -> list[Any]:
        k = next(it, len(pending))
        return pending[::-1][:k]  # the last ones first: order must not matter

    cut = _run(t, some)
    assert [m.to_json() for m in cut[0]] == [m.to_json() for m in whole[0]]
    assert cut[1] == whole[1]
    assert cut[2][0].to_json() == whole[2][0].to_json()


def test_round_robin_entries_ignore_results() -> None:
    t = parse_tournament(
        {
            "name": "t",
            "seed": 11,
            "bots": ["bots/*.py"],
            "deals": "public",
            "games": [{"id": "tightwad", "players": 3, "deals": 2}],
        }
    )
    plain = build_schedule(t, ROSTER)
    assert build_schedule(t, ROSTER, results={m.match_id: (m.bots, (0, 1, 2)) for m in plain}) == plain


# ---- bad settings: one line, naming the file, the field and the fix -----------------------

BASE = """\
name: t
seed: 1
bots: [bots/*.py]
games:
  - {id: tightwad, players: 3, deals: 2, schedule: adaptive, SETTINGS}
"""

BAD = [
    (
        "confidence-one",
        "adaptive: {confidence: 1}",
        "games[0].adaptive.confidence",
        ["less than 1", "confidence: 0.95"],
    ),
    ("confidence-half", "adaptive: {confidence: 0.5}", "games[0].adaptive.confidence", ["greater than 0.5"]),
    ("confidence-word", "adaptive: {confidence: high}", "games[0].adaptive.confidence", ["expected a number"]),
    ("top-zero", "adaptive: {top: 0}", "games[0].adaptive.top", ["at least 1", "top: 3"]),
    ("top-all", "adaptive: {top: 5}", "games[0].adaptive.top", ["needs more than 5 bots", "top: 3 or less"]),
    ("margin-big", "adaptive: {margin: 0.6}", "games[0].adaptive.margin", ["0.5", "margin: 0.05"]),
    ("margin-negative", "adaptive: {margin: -0.1}", "games[0].adaptive.margin", ["0", "margin: 0.05"]),
    (
        "typo",
        "adaptive: {confidense: 0.9}",
        "games[0].adaptive.confidense",
        ["unknown key", "did you mean 'confidence'?"],
    ),
    ("not-adaptive", "adaptive: {top: 1}, schedule: round-robin", None, []),
    ("two-counts", "adaptive: {top: 1}", "games[0].players", ["one player count", "players: 3"]),
    # a cap below one deal set scheduled nothing: "Complete: all 0 scheduled matches", exit 0
    ("cap-below-a-deal-set", "max_matches: 2", "games[0].max_matches", ["holds none", "max_matches: 3 or more"]),
]


@pytest.mark.parametrize("name,settings_text,field,expected", BAD, ids=[b[0] for b in BAD])
def test_bad_adaptive_settings_give_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    settings_text: str,
    field: str | None,
    expected: list[str],
) -> None:
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    text = BASE.replace("SETTINGS", settings_text)
    if name == "not-adaptive":
        text = text.replace("schedule: adaptive, ", "")
        field, expected = "games[0].adaptive", ["only apply to an adaptive schedule", "schedule: adaptive"]
    if name == "two-counts":
        text = text.replace("players: 3", "players: [3, 4]")
    (tmp_path / "tournaments").mkdir(exist_ok=True)
    (tmp_path / "tournaments" / "bad.yaml").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_tournament("tournaments/bad.yaml")
    message = str(err.value)
    assert "\n" not in message
    assert re.match(re.escape(f"tournaments/bad.yaml: {field}") + "[:,] ", message), message
    for piece in expected:
        assert piece in message, f"{piece!r} not in {message!r}"


def test_a_revealed_deal_is_replaced_for_adaptive_groups_that_have_not_finished_it() -> None:
    """Fair play holds in adaptive rounds as in a round robin: with secret deals, a group that
    has not stored every rotation of a deal shown on a replay page plays a replacement deal;
    finished groups keep theirs, and the run still plans and decides from the replacements."""
    t = parse_tournament(
        {
            "name": "t",
            "seed": 11,
            "bots": ["bots/*.py"],
            "games": [
                {"id": "tightwad", "players": 3, "deals": 40, "schedule": "adaptive", "adaptive": {"confidence": 0.9}}
            ],
        }
    )
    secret = "ab" * 32
    stored: dict[str, tuple] = {}
    first = build_schedule(t, ROSTER, secret, results=stored)
    assert {m.deal for m in first} == {0}
    finished, unfinished = first[:3], first[3:]  # one group of round 0 stored, the others not
    assert {m.group for m in finished} == {0} and unfinished
    for m in finished:
        stored[m.match_id] = (m.bots, _fake_places(m))
    revealed = {("tightwad", 3, first[0].deal_seed)}  # deal 0 shown on a replay page
    again = build_schedule(t, ROSTER, secret, revealed=revealed, stored=set(stored), results=stored)
    kept = {m.match_id for m in again if m.deal_seed == first[0].deal_seed}
    assert kept == {m.match_id for m in finished}  # the finished group keeps its deal
    replaced = [m for m in again if m.deal == 0 and m.match_id not in kept]
    assert len(replaced) == len(unfinished) and all(m.deal_seed != first[0].deal_seed for m in replaced)
    assert len({m.deal_seed for m in replaced}) == 1  # one replacement deal, all rotations of it
    # played to the end with the replacements, every match is planned again identically
    while True:
        plans: list[Any] = []
        schedule = build_schedule(t, ROSTER, secret, revealed=revealed, stored=set(stored), results=stored, plans=plans)
        pending = [m for m in schedule if m.match_id not in stored]
        if not pending:
            break
        for m in pending:
            stored[m.match_id] = (m.bots, _fake_places(m))
    assert plans[0].status == "decided"
    assert not [m for m in schedule if m.deal_seed == first[0].deal_seed and m.match_id not in kept]


def test_the_planner_starts_from_its_last_plan_only_while_its_results_stand() -> None:
    """A later call may start from the remembered rounds, but only if every one of their stored
    results is unchanged: the plan is always the one a replay from the start gives."""
    from arena.tournament import adaptive

    names = ("a", "b", "c", "d")
    strength = {"a": 3, "b": 2, "c": 1, "d": 0}

    def outcome_with(flip: int | None) -> Any:
        def outcome(number: int, members: tuple[str, ...]) -> list[tuple[tuple[str, ...], tuple[int, ...]]]:
            out = []
            for r in range(3):
                seats = tuple(members[(s + r) % 3] for s in range(3))
                luck = [hashlib.sha256(f"{number}{b}{r}".encode()).digest()[0] / 64 for b in seats]
                score = [strength[b] + x for b, x in zip(seats, luck)]
                if number == flip:  # one round's results changed: the weakest bot won them
                    score = [-v for v in score]
                order = sorted(range(3), key=lambda s: -score[s])
                out.append((seats, tuple(order.index(s) for s in range(3))))
            return out

        return outcome

    def fresh(flip: int | None) -> dict[str, Any]:
        adaptive._MEMO.clear()
        return adaptive.plan(
            names, 3, confidence=0.8, top=None, seed=1, key="k", game="g", cap=600, outcome=outcome_with(flip)
        ).to_json()

    first = fresh(None)
    assert first["rounds"] > 2
    again = adaptive.plan(
        names, 3, confidence=0.8, top=None, seed=1, key="k", game="g", cap=600, outcome=outcome_with(None)
    ).to_json()
    assert again == first
    changed = adaptive.plan(
        names, 3, confidence=0.8, top=None, seed=1, key="k", game="g", cap=600, outcome=outcome_with(1)
    ).to_json()
    assert changed == fresh(1) and changed != first


def _state_entry() -> dict[str, Any]:
    standing = {"bot": "a", "rating": 0.1, "score": 0.6, "low": 0.4, "high": 0.8, "samples": 4}
    return {
        "key": "tightwad",
        "game": "tightwad",
        "players": 3,
        "confidence": 0.95,
        "top": None,
        "margin": 0.05,
        "status": "cap",
        "rounds": 4,
        "matches": 12,
        "matches_rated": 12,
        "cap": 12,
        "standings": [standing | {"ranks": [1, 2], "decided": False}],
        "decided_pairs": [],
    }


@pytest.mark.parametrize("standing", [7, "rating", None, ["rating"]], ids=["int", "str", "null", "list"])
def test_a_malformed_standing_in_adaptive_json_is_ignored_not_a_crash(tmp_path: Path, standing: Any) -> None:
    """A standing that is no mapping made ``"rating" in s`` raise (TypeError: exit 70 from
    `arena leaderboard`); a malformed file is to be ignored."""
    import json

    from arena.tournament.adaptive import STATE_FORMAT, read_state

    good = _state_entry()
    bad = _state_entry()
    bad["standings"] = [standing]
    odd_top = _state_entry() | {"top": True}
    data = {"format": STATE_FORMAT, "version": 1, "entries": [good, bad, odd_top]}
    (tmp_path / "adaptive.json").write_text(json.dumps(data))
    assert read_state(tmp_path) == [good]
