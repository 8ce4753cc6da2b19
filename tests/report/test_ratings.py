"""TrueSkill ratings, per-bot statistics and head-to-head from stored result rows."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import trueskill

from arena.report.ratings import (
    OVERALL,
    RatingParams,
    RatingReport,
    compute_ratings,
    deal_cluster,
    mean_place_interval,
    wilson_interval,
)
from arena.tournament.store import ResultRow, ResultStore
from tests.support.record_factory import make_record

BOTS = ("alpha", "bravo", "charlie", "delta")


def _places(perf: list[float]) -> list[int]:
    """Places from performances, highest first; equal performances share a place."""
    return [sum(1 for q in perf if q > p) for p in perf]


def _tournament(
    n: int = 90,
    seed: int = 3,
    strength: dict[str, float] | None = None,
    games: tuple[str, ...] = ("tightwad", "palace"),
) -> list[dict]:
    rng = random.Random(seed)
    strength = strength or {"alpha": 3.0, "bravo": 1.0, "charlie": 0.5, "delta": 0.0}
    recs = []
    for i in range(n):
        seats = rng.sample(BOTS, 3)
        perf = [round(strength[b] + rng.gauss(0, 1), 0) for b in seats]  # rounding makes ties
        recs.append(make_record(i, seats, _places(perf), game=games[i % len(games)]))
    return recs


def test_always_first_bot_has_the_best_conservative_rating() -> None:
    rng = random.Random(5)
    recs = []
    for i in range(40):
        others = rng.sample(BOTS[1:], 2)
        seats = ["alpha"] + others
        rng.shuffle(seats)
        rest = iter(rng.sample([1, 2], 2))
        places = [0 if b == "alpha" else next(rest) for b in seats]
        recs.append(make_record(i, seats, places, game=("tightwad", "palace")[i % 2]))
    report = compute_ratings(recs)
    for scope in report.scopes:
        top = scope.standings[0]
        assert top.name == "alpha" and top.rank == 1
        assert top.firsts == top.matches and top.mean_place == 1.0
        assert all(top.conservative > s.conservative for s in scope.standings[1:])
    assert [s.scope for s in report.scopes] == [OVERALL, "palace", "tightwad"]


def test_one_match_matches_trueskill_directly_and_ties_share_ranks() -> None:
    """C3: equal places are a tie; the rating call gets the places as ranks."""
    rec = make_record(0, ["a", "b", "c"], [0, 0, 2])
    report = compute_ratings([rec])
    env = trueskill.TrueSkill(mu=25, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.10)
    (ra,), (rb,), (rc,) = env.rate([(env.create_rating(),)] * 3, ranks=[0, 0, 2])
    scope = report.scope(OVERALL)
    for name, expected in (("a", ra), ("b", rb), ("c", rc)):
        got = scope.standing(name)
        assert got.mu == pytest.approx(expected.mu) and got.sigma == pytest.approx(expected.sigma)
    # The package's chain approximation makes tied updates nearly, not exactly, equal.
    assert abs(scope.standing("a").mu - scope.standing("b").mu) < 0.05
    assert scope.standing("b").mu - scope.standing("c").mu > 5
    assert scope.standing("a").firsts == scope.standing("b").firsts == 1
    assert scope.pair("a", "b").tied == 1 and scope.pair("a", "b").share is None
    assert scope.pair("a", "c").above == 1 and scope.pair("c", "b").below == 1


def test_overall_rates_all_games_in_index_order_on_shared_ratings() -> None:
    recs = [
        make_record(2, ["a", "b"], [1, 0], game="palace"),
        make_record(0, ["a", "b"], [0, 1], game="tightwad"),
        make_record(1, ["b", "c"], [0, 1], game="palace"),
    ]
    env = trueskill.TrueSkill()
    r = {n: env.create_rating() for n in "abc"}
    for seats, places in ((("a", "b"), [0, 1]), (("b", "c"), [0, 1]), (("a", "b"), [1, 0])):
        new = env.rate([(r[s],) for s in seats], ranks=places)
        for s, (rating,) in zip(seats, new):
            r[s] = rating
    overall = compute_ratings(recs).scope(OVERALL)
    for n in "abc":
        assert overall.standing(n).mu == pytest.approx(r[n].mu)
        assert overall.standing(n).sigma == pytest.approx(r[n].sigma)
    assert [h.index for h in overall.standing("b").history] == [0, 1, 2]
    palace = compute_ratings(recs).scope("palace")
    assert palace.rated == 2 and palace.standing("a").matches == 1


def test_input_order_does_not_matter() -> None:
    recs = _tournament()
    base = compute_ratings(recs).to_json()
    shuffled = recs[:]
    random.Random(9).shuffle(shuffled)
    assert compute_ratings(shuffled).to_json() == base
    assert compute_ratings(ResultRow.from_record(r) for r in reversed(recs)).to_json() == base


def test_same_report_from_stores_filled_in_different_orders(tmp_path: Path) -> None:
    """Like 1 worker vs many: completion order differs, the leaderboard must not."""
    recs = _tournament(60)
    reports = []
    for k, order in enumerate((recs, recs[::-1], recs[1::2] + recs[::2])):
        store = ResultStore(tmp_path / f"r{k}")
        for r in order:
            store.record_match(r)
        reports.append(json.dumps(compute_ratings(store.iter_results()).to_json()))
        store.close()
    assert reports[0] == reports[1] == reports[2]


def test_wilson_interval_hand_computed() -> None:
    # k=3, n=4, z=1.96: centre (0.75 + 0.4802) / 1.9604 = 0.627525,
    # half 1.96 / 1.9604 * sqrt(0.046875 + 0.060025) = 0.326890
    lo, hi = wilson_interval(3, 4)
    assert lo == pytest.approx(0.300635, abs=2e-5) and hi == pytest.approx(0.954414, abs=2e-5)
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0
    with pytest.raises(ValueError):
        wilson_interval(0, 0)


def test_head_to_head_small_hand_made_case() -> None:
    rows = [
        make_record(0, ["a", "b", "c"], [0, 1, 2]),  # a>b a>c b>c
        make_record(1, ["b", "a", "c"], [0, 1, 1]),  # b>a a=c b>c
        make_record(2, ["a", "b"], [0, 1]),  # a>b
        make_record(3, ["c", "a", "b"], [0, 2, 1]),  # c>a c>b b>a
        make_record(4, ["a", "b", "c"], [0, 0, 1]),  # a=b a>c b>c
        make_record(5, ["a", "b"], [0, 1]),  # a>b
    ]
    scope = compute_ratings(rows).scope(OVERALL)
    ab = scope.pair("a", "b")
    assert (ab.above, ab.below, ab.tied) == (3, 2, 1) and ab.meetings == 6
    assert ab.share == pytest.approx(0.6)
    assert ab.ci95 == pytest.approx(wilson_interval(3, 5))
    ba = scope.pair("b", "a")
    assert (ba.above, ba.below, ba.tied) == (2, 3, 1)
    ac = scope.pair("a", "c")
    assert (ac.above, ac.below, ac.tied) == (2, 1, 1)
    bc = scope.pair("b", "c")
    assert (bc.above, bc.below, bc.tied) == (3, 1, 0)
    assert bc.ci95 == pytest.approx((0.300635, 0.954414), abs=2e-5)
    assert [(h.bot, h.opponent) for h in scope.head_to_head] == [
        ("a", "b"),
        ("a", "c"),
        ("b", "a"),
        ("b", "c"),
        ("c", "a"),
        ("c", "b"),
    ]


def test_sandbox_fault_matches_are_skipped_but_counted() -> None:
    recs = _tournament(30)
    sandboxed = make_record(
        15,
        ["delta", "alpha", "bravo"],
        [0, 1, 2],
        faults=[None, {"kind": "sandbox", "detail": "bwrap failed"}, None],
        match_id="tightwad/sandboxed",
    )
    clean = compute_ratings(recs)
    mixed = compute_ratings(recs + [sandboxed])
    overall = mixed.scope(OVERALL)
    assert overall.skipped == 1 and overall.rated == 30 and overall.matches == 31
    for bot in BOTS:
        a, b = clean.scope(OVERALL).standing(bot), overall.standing(bot)
        assert (a.mu, a.sigma, a.matches, a.history) == (b.mu, b.sigma, b.matches, b.history)
    assert overall.standing("alpha").faults == {"sandbox": 1}
    assert overall.standing("delta").unrated == 1
    assert clean.scope(OVERALL).head_to_head == overall.head_to_head
    assert any(n.match_id == "tightwad/sandboxed" and n.reason == "sandbox" and n.bot == "alpha" for n in mixed.notable)


def test_bot_faults_count_and_rate_as_placed() -> None:
    recs = [
        make_record(0, ["a", "b", "c"], [0, 2, 1], faults=[None, {"kind": "timeout", "detail": "slow"}, None]),
        make_record(1, ["a", "b", "c"], [2, 0, 1], capped=True),
        make_record(
            2,
            ["a", "b", "c"],
            [0, 2, 2],
            faults=[None, {"kind": "crash", "detail": "exit 1"}, {"kind": "timeout", "detail": "slow"}],
        ),
    ]
    report = compute_ratings(recs)
    scope = report.scope(OVERALL)
    assert scope.rated == 3 and scope.skipped == 0
    assert scope.standing("b").faults == {"timeout": 1, "crash": 1}
    assert scope.standing("b").faults_total == 2
    assert scope.standing("a").mean_place == pytest.approx((1 + 3 + 1) / 3)  # 1-based
    assert [(n.index, n.reason, n.bot) for n in report.notable] == [
        (0, "timeout", "b"),
        (1, "capped", None),
        (2, "crash", "b"),
        (2, "timeout", "c"),
    ]


def test_history_follows_each_rated_match() -> None:
    recs = _tournament(40)
    report = compute_ratings(recs)
    for scope in report.scopes:
        for s in scope.standings:
            assert len(s.history) == s.matches
            assert [h.index for h in s.history] == sorted(h.index for h in s.history)
            # the history is kept as published, to six decimals
            assert (s.history[-1].mu, s.history[-1].sigma) == (round(s.mu, 6), round(s.sigma, 6))


def test_params_defaults_overrides_and_json() -> None:
    p = RatingParams.from_dict(None)
    assert (p.mu, p.sigma, p.beta, p.tau, p.draw_probability) == pytest.approx((25, 25 / 3, 25 / 6, 25 / 300, 0.10))
    q = RatingParams.from_dict({"sigma": 6, "draw_probability": 0.2})
    assert (q.beta, q.tau) == pytest.approx((3, 0.06))
    with pytest.raises(ValueError, match="unknown"):
        RatingParams.from_dict({"sgima": 1})
    with pytest.raises(ValueError):
        RatingParams.from_dict({"draw_probability": 1.5})
    recs = _tournament(20)
    report = compute_ratings(recs, {"mu": 30, "sigma": 10})
    data = report.to_json()
    assert data["rating"]["params"] == {"mu": 30.0, "sigma": 10.0, "beta": 5.0, "tau": 0.1, "draw_probability": 0.1}
    assert report.scope(OVERALL).standings[0].mu != compute_ratings(recs).scope(OVERALL).standings[0].mu


def test_to_json_shape_is_stable() -> None:
    report = compute_ratings(
        _tournament(20)
        + [make_record(20, ["alpha", "bravo"], [0, 1], faults=[None, {"kind": "illegal", "detail": "action 99"}])]
    )
    data = report.to_json()
    assert list(data) == [
        "format",
        "version",
        "complete",
        "scheduled",
        "counted",
        "rating",
        "deals",
        "scopes",
        "notable",
        "sandbox",
        "luck",
    ]
    assert (data["format"], data["version"]) == ("decktet-arena-leaderboard", 1)
    scope = data["scopes"][0]
    assert list(scope) == ["scope", "games", "matches", "rated", "skipped", "standings", "head_to_head"]
    assert list(scope["standings"][0]) == [
        "rank",
        "bot",
        "mu",
        "sigma",
        "conservative",
        "matches",
        "mean_place",
        "mean_place_ci95",
        "adjusted_place",
        "adjusted_place_ci95",
        "deals",
        "worst_place",
        "mean_place_interval",
        "adjusted_place_interval",
        "shared_rank",
        "tied",
        "firsts",
        "unrated",
        "faults_total",
        "faults",
        "history",
    ]
    assert list(scope["head_to_head"][0]) == ["bot", "opponent", "above", "below", "tied", "share", "ci95"]
    assert list(data["notable"][0]) == ["match_id", "index", "game", "reason", "seat", "bot", "detail"]
    assert json.loads(json.dumps(data)) == data


def _dealt(deals: int, places: dict[str, list[int]], players: int = 4) -> list:
    """``deals`` deals of one rotation each; ``places[bot][d]``: its 0-based place in deal d."""
    bots = sorted(places)
    return [
        make_record(d, bots, [places[b][d] for b in bots], match_id=f"tightwad/p{players}/d{d:02d}/r0/{d:016x}")
        for d in range(deals)
    ]


def test_an_interval_from_too_few_deals_is_not_claimed() -> None:
    from arena.report.leaderboard import format_mean_place, render_terminal

    # two deals with the same place: a t interval would say "2.00 ± 0.00"; two that differ,
    # "2.50 ± 6.35" on a 1-4 scale
    report = compute_ratings(_dealt(2, {"a": [1, 1], "b": [0, 3], "c": [2, 0], "d": [3, 2]}))
    by = {s.name: s for s in report.scope("tightwad").standings}
    assert by["a"].deals == 2 and by["a"].mean_place_ci95 == 0.0 and by["a"].mean_place_interval is None
    assert format_mean_place(by["a"]) == "2.00 (too few deals)"
    assert format_mean_place(by["b"]) == "2.50 (too few deals)" and by["b"].mean_place_ci95 > 6
    text = render_terminal(report)
    assert "± 0.00" not in text and "too few deals" in text
    data = report.to_json()["scopes"][1]["standings"]
    assert all(s["mean_place_interval"] is None and s["deals"] == 2 and s["worst_place"] == 4 for s in data)


def test_an_interval_is_clipped_to_the_places_1_to_the_table_size() -> None:
    from arena.report.leaderboard import format_mean_place

    # a is first in 5 of 6 deals and last once: mean 1.5, half-width ~1.3 -> from 0.2 unclipped
    report = compute_ratings(
        _dealt(6, {"a": [0, 0, 0, 0, 0, 3], "b": [1, 1, 1, 1, 1, 0], "c": [2, 2, 2, 2, 2, 1], "d": [3, 3, 3, 3, 3, 2]})
    )
    a = next(s for s in report.scope("tightwad").standings if s.name == "a")
    low, high = a.mean_place_interval
    assert a.mean_place - a.mean_place_ci95 < 1 and low == 1.0 and high == pytest.approx(1.5 + a.mean_place_ci95)
    assert format_mean_place(a) == f"1.50 [1.00, {high:.2f}]"
    assert all(
        1 <= s.mean_place_interval[0] <= s.mean_place_interval[1] <= 4 for s in report.scope("tightwad").standings
    )


def test_tied_bots_share_a_marked_rank() -> None:
    from arena.report.leaderboard import render_markdown, render_terminal

    # b, c and d each beat a fresh opponent once (x, y, z): identical ratings, pair by pair
    recs = [
        make_record(i, [w, l], [0, 1], game="divers-weights", match_id=f"divers-weights/p2/d{i:02d}/r0/{i:016x}")
        for i, (w, l) in enumerate([("b", "x"), ("c", "y"), ("d", "z")])
    ]
    report = compute_ratings(recs)
    scope = report.scope("divers-weights")
    assert [(s.name, s.rank, s.rank_label) for s in scope.standings] == [
        ("b", 1, "=1"),
        ("c", 2, "=1"),
        ("d", 3, "=1"),
        ("x", 4, "=4"),
        ("y", 5, "=4"),
        ("z", 6, "=4"),
    ]
    for text in (render_terminal(report), render_markdown(report)):
        assert "=1" in text and "=4" in text and "tied at rank" in text
    row = report.to_json()["scopes"][1]["standings"][2]
    assert (row["rank"], row["shared_rank"], row["tied"]) == (3, 1, True)  # rank keeps its meaning
    untied = compute_ratings(
        recs[:1] + [make_record(5, ["c", "b"], [0, 1], game="divers-weights", match_id="divers-weights/p2/d05/r0/5")]
    )
    assert not any(s.tied for s in untied.scope("divers-weights").standings)


def test_a_single_game_is_not_repeated_as_overall() -> None:
    from arena.report.html_report import render_html
    from arena.report.leaderboard import render_markdown, render_terminal

    one = compute_ratings(_dealt(2, {"a": [0, 1], "b": [1, 0], "c": [2, 2], "d": [3, 3]}))
    assert [s.scope for s in one.scopes] == [OVERALL, "tightwad"]  # the JSON keeps both
    assert "Overall" not in render_terminal(one) and "Tightwad\n" in render_terminal(one)
    assert "## Overall" not in render_markdown(one) and "## Tightwad" in render_markdown(one)
    assert "Overall" not in render_html(one)
    two = compute_ratings(
        _dealt(2, {"a": [0, 1], "b": [1, 0], "c": [2, 2], "d": [3, 3]})
        + [make_record(9, ["a", "b"], [0, 1], game="divers-weights", match_id="divers-weights/p2/d00/r0/9")]
    )
    assert "Overall" in render_terminal(two) and "## Overall" in render_markdown(two)


def test_standings_sorted_by_conservative_then_name() -> None:
    # zed and amy each beat a fresh opponent once: identical ratings, so name decides.
    recs = [make_record(0, ["zed", "x"], [0, 1]), make_record(1, ["amy", "y"], [0, 1])]
    scope = compute_ratings(recs).scope(OVERALL)
    assert [s.name for s in scope.standings] == ["amy", "zed", "x", "y"]
    assert [s.rank for s in scope.standings] == [1, 2, 3, 4]
    big = compute_ratings(_tournament(50)).scope(OVERALL)
    keys = [(-s.conservative, s.name) for s in big.standings]
    assert keys == sorted(keys)


def test_bot_in_two_seats_gets_mean_update_and_no_self_pair() -> None:
    rec = make_record(0, ["a", "b", "a"], [0, 1, 2])
    scope = compute_ratings([rec]).scope(OVERALL)
    env = trueskill.TrueSkill()
    (r0,), (r1,), (r2,) = env.rate([(env.create_rating(),)] * 3, ranks=[0, 1, 2])
    assert scope.standing("a").mu == pytest.approx((r0.mu + r2.mu) / 2)
    assert scope.standing("b").mu == pytest.approx(r1.mu)
    a = scope.standing("a")
    assert (a.matches, a.firsts, a.mean_place, len(a.history)) == (1, 1, 2.0, 1)
    with pytest.raises(KeyError):
        scope.pair("a", "a")
    assert (scope.pair("a", "b").above, scope.pair("a", "b").below) == (1, 1)


def test_duplicate_match_ids_are_refused() -> None:
    rec = make_record(0, ["a", "b"], [0, 1])
    with pytest.raises(ValueError, match="twice"):
        compute_ratings([rec, dict(rec)])


def test_empty_input_gives_an_empty_report() -> None:
    report = compute_ratings([])
    assert isinstance(report, RatingReport)
    assert [s.scope for s in report.scopes] == [OVERALL]
    assert report.scopes[0].standings == () and report.notable == ()


def test_unratable_match_is_skipped_and_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.report.ratings as ratings

    real = ratings._rate

    def flaky(env, params, groups, ranks):  # type: ignore[no-untyped-def]
        if ranks == [1, 0]:  # stands in for an extreme upset the float backend cannot rate
            raise FloatingPointError("Cannot calculate correctly")
        return real(env, params, groups, ranks)

    monkeypatch.setattr(ratings, "_rate", flaky)
    recs = [make_record(0, ["a", "b"], [0, 1]), make_record(1, ["a", "b"], [1, 0]), make_record(2, ["a", "b"], [0, 1])]
    report = compute_ratings(recs)
    overall = report.scope(OVERALL)
    assert (overall.rated, overall.skipped) == (2, 1)
    assert overall.standing("b").unrated == 1 and overall.standing("b").firsts == 0
    assert [(n.index, n.reason) for n in report.notable] == [(1, "numeric")]


# ---- the mean place's 95% interval --------------------------------------------------------


def test_a_deal_is_every_rotation_and_group_of_a_scheduled_id() -> None:
    assert deal_cluster("tightwad/p3/d07/r2/d57c3db0a37c6c77") == "tightwad/p3/d07"
    assert deal_cluster("dw4/p4/d11/r0/0123456789abcdef") == "dw4/p4/d11"
    for other in ("play/tightwad/3", "tightwad/p4/i0000001", "x/p3/d01/r0/NOTHEX"):
        assert deal_cluster(other) == other  # an id of no schedule is a deal of its own


def test_mean_place_interval_is_the_t_interval_over_deals_when_deals_are_alike() -> None:
    # four seats per deal: the cluster-robust interval reduces to t * sd(deal means) / sqrt(k)
    means = [1.25, 2.0, 1.5, 1.75, 2.5]
    half = mean_place_interval([(m * 4, 4) for m in means])
    m = sum(means) / 5
    sd = (sum((x - m) ** 2 for x in means) / 4) ** 0.5
    assert half == pytest.approx(2.776 * sd / 5**0.5)
    assert mean_place_interval([(6, 4)]) is None  # one deal: no interval
    assert mean_place_interval([]) is None
    assert mean_place_interval([(4, 4), (4, 4), (4, 4)]) == 0.0  # always first


def test_mean_place_interval_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    # a bot whose place depends on the deal (shared by the deal's three rotations) and on
    # chance: easy deals give it place 1 or 2, hard ones 2 or 3, so its true mean place is 2.0.
    # Over many tournaments of 12 deals the interval must hold 2.0 about 95% of the time.
    rng = random.Random(11)
    hits, trials = 0, 1000
    for _ in range(trials):
        deals = []
        for _ in range(12):
            low = 1 if rng.random() < 0.5 else 2
            deals.append((sum(low + rng.randint(0, 1) for _ in range(3)), 3))
        mean = sum(t for t, _ in deals) / 36
        hits += abs(mean - 2.0) <= mean_place_interval(deals)
    assert 0.90 <= hits / trials <= 0.99, hits / trials


def test_leaderboards_show_the_mean_place_with_its_interval() -> None:
    from arena.report.leaderboard import render_csv, render_json, render_markdown

    recs = []
    for i in range(18):  # 6 deals x 3 rotations, ids as the schedule gives them
        deal, rot = divmod(i, 3)
        order = {"alpha": 0, "bravo": 1 + deal % 2, "charlie": 2 - deal % 2}  # 0-based places
        bots = ["alpha", "bravo", "charlie"][rot:] + ["alpha", "bravo", "charlie"][:rot]
        recs.append(make_record(i, bots, [order[b] for b in bots], match_id=f"tightwad/p3/d{deal:02d}/r{rot}/{i:016x}"))
    report = compute_ratings(recs)
    by = {s.name: s for s in report.scope(OVERALL).standings}
    assert by["alpha"].mean_place == 1.0 and by["alpha"].mean_place_ci95 == 0.0
    # charlie is 3rd (1-based) on even deals, 2nd on odd ones: three seats per deal
    assert by["charlie"].mean_place == 2.5
    assert by["charlie"].mean_place_ci95 == pytest.approx(mean_place_interval([(9, 3), (6, 3)] * 3))
    assert by["charlie"].mean_place_ci95 == pytest.approx(2.571 * (0.3 / 6) ** 0.5)  # sd of 3,2,3,2,3,2
    md = render_markdown(report)
    half = by["charlie"].mean_place_ci95  # 2.50 ± 0.57 would reach 3.07 at a table of 3
    assert f"2.50 [{2.5 - half:.2f}, 3.00]" in md and "95% interval" in md
    assert "1.00 (same in all 6 deals)" in md and "± 0.00" not in md  # never a certain-looking ± 0
    data = json.loads(render_json(report))
    assert {s["bot"]: s["mean_place_ci95"] for s in data["scopes"][0]["standings"]}["alpha"] == 0.0
    header, *rows = render_csv(report).splitlines()
    assert "mean_place_ci95" in header.split(",") and len(rows) == 6
