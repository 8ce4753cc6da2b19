"""The schedule: counts, duplicate rotations, seeds, ids, order, sampled balance."""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournament.config import ConfigError, Tournament, parse_tournament
from arena.tournament.roster import BotEntry
from arena.tournament.schedule import MatchSpec, build_schedule, check_schedule, deal_seed, draw_groups
from games.rng import derive_seed

SPRING_GAMES = [
    {"id": "tightwad", "players": [3, 4], "deals": 4},
    {"id": "divers-weights", "players": [2, 4], "deals": 4, "options": {"bidding": False}},
    {"id": "palace", "players": [4], "deals": 2},
]


def bots(n: int) -> list[BotEntry]:
    return [BotEntry(f"bot{i:02d}", Path(f"/x/bot{i:02d}.py"), "0" * 64, "python") for i in range(n)]


def tournament(games: list[dict[str, Any]], seed: int = 2026, deals: str = "public") -> Tournament:
    """Public deals by default: these tests pin the documented derivation from the seed."""
    return parse_tournament({"name": "t", "seed": seed, "bots": ["bots/*.py"], "games": games, "deals": deals})


def groups_of(schedule: list[MatchSpec]) -> dict[tuple[str, int, int], list[MatchSpec]]:
    out: dict[tuple[str, int, int], list[MatchSpec]] = defaultdict(list)
    for m in schedule:
        out[(m.match_id.split("/")[0], m.players, m.group)].append(m)
    return out


# ---- round robin -------------------------------------------------------------


def test_round_robin_count_matches_formula() -> None:
    t = tournament([{"id": "tightwad", "players": [3, 4], "deals": 4}])
    s = build_schedule(t, bots(5))
    assert len(s) == math.comb(5, 3) * 4 * 3 + math.comb(5, 4) * 4 * 4 == 200
    assert Counter(m.players for m in s) == {3: 120, 4: 80}


def test_spring_count_and_unique_ids() -> None:
    s = build_schedule(tournament(SPRING_GAMES), bots(5))
    assert len(s) == 200 + (10 * 4 * 2 + 5 * 4 * 4) + 5 * 2 * 4
    assert len({m.match_id for m in s}) == len(s)
    assert len({m.match_seed for m in s}) == len(s)
    assert [m.index for m in s] == list(range(len(s)))


def test_every_group_is_a_combination_once() -> None:
    s = build_schedule(tournament([{"id": "palace", "players": [2, 3], "deals": 1}]), bots(6))
    for p in (2, 3):
        sets = Counter(frozenset(ms[0].bots) for (_, q, _), ms in groups_of(s).items() if q == p)
        assert set(sets) == {frozenset(c) for c in itertools.combinations([b.name for b in bots(6)], p)}
        assert set(sets.values()) == {1}


def test_every_bot_holds_every_hand_of_a_deal_once() -> None:
    s = build_schedule(tournament(SPRING_GAMES), bots(5))
    for (_, p, _), matches in groups_of(s).items():
        members = set(matches[0].bots)
        deals = defaultdict(list)
        for m in matches:
            assert set(m.bots) == members and len(m.bots) == p
            deals[m.deal].append(m)
        for same_deal in deals.values():
            assert sorted(m.rotation for m in same_deal) == list(range(p))
            for seat in range(p):  # each hand (seat) is held by each member once
                assert sorted(m.bots[seat] for m in same_deal) == sorted(members)
            for bot in members:
                assert sorted(m.bots.index(bot) for m in same_deal) == list(range(p))


def test_deal_seed_shared_by_rotations_and_groups_not_by_deals() -> None:
    s = build_schedule(tournament(SPRING_GAMES), bots(5))
    by_deal: dict[tuple[str, int, int], set[int]] = defaultdict(set)
    for m in s:
        by_deal[(m.match_id.split("/")[0], m.players, m.deal)].add(m.deal_seed)
    assert all(len(seeds) == 1 for seeds in by_deal.values())  # every group, every rotation
    all_seeds = [next(iter(v)) for v in by_deal.values()]
    assert len(set(all_seeds)) == len(all_seeds)  # different deals, counts, games differ


def test_seeds_follow_the_documented_derivation() -> None:
    t = tournament(SPRING_GAMES)
    for m in build_schedule(t, bots(4)):
        options = json.dumps(m.options, sort_keys=True, separators=(",", ":"))
        assert m.deal_seed == derive_seed(2026, m.game, m.players, options, m.deal)
        assert m.deal_seed == deal_seed(2026, m.game, m.players, m.options, m.deal)
        assert m.match_seed == derive_seed(2026, m.match_id)


def test_golden_ids_and_seeds() -> None:
    """Pinned values: a change here changes every published deal and result."""
    s = build_schedule(tournament(SPRING_GAMES), bots(5))
    first = s[0]
    assert first.match_id == "tightwad/p3/d00/r0/c07e7f152b42dd64"
    assert first.deal_seed == 8733178078469210695
    assert first.match_seed == 7841361183042091769
    m = next(m for m in s if (m.game, m.players, m.group, m.deal, m.rotation) == ("tightwad", 3, 2, 1, 2))
    assert m.match_seed == derive_seed(2026, m.match_id)
    assert set(m.bots) == {"bot00", "bot01", "bot04"}  # combinations order: (0,1,2), (0,1,3), (0,1,4)
    dw = next(m for m in s if m.game == "divers-weights" and m.players == 2 and m.deal == 0)
    assert dw.options == {"hands": None, "target": None, "bidding": False, "decision_cap": 100000}
    assert dw.deal_seed == derive_seed(
        2026, "divers-weights", 2, '{"bidding":false,"decision_cap":100000,"hands":null,"target":null}', 0
    )


def test_pinned_seating_of_a_group() -> None:
    s = build_schedule(tournament(SPRING_GAMES), bots(5))
    assert [m.bots for m in s[:6]] == [
        ("bot02", "bot00", "bot01"),
        ("bot00", "bot01", "bot02"),
        ("bot01", "bot02", "bot00"),
        ("bot03", "bot01", "bot00"),
        ("bot01", "bot00", "bot03"),
        ("bot00", "bot03", "bot01"),
    ]


def test_match_id_matches_fields() -> None:
    for m in build_schedule(tournament(SPRING_GAMES), bots(4)):
        assert m.match_id == f"{m.game}/p{m.players}/d{m.deal:02d}/r{m.rotation}/{m.key[:16]}"


def test_adding_a_bot_keeps_every_existing_match_and_its_name() -> None:
    """Issue 11: ids were group numbers that shifted with the roster, so a resume
    after adding a bot mixed up matches. Now a match is named by its content."""
    t = tournament(SPRING_GAMES)
    before = {m.match_id: m for m in build_schedule(t, bots(5))}
    after = {m.match_id: m for m in build_schedule(t, bots(6))}
    assert set(before) < set(after)
    new = [m for mid, m in after.items() if mid not in before]
    assert new and all("bot05" in m.bots for m in new)
    for mid, m in before.items():
        assert (after[mid].bots, after[mid].deal_seed) == (m.bots, m.deal_seed)


def test_a_changed_bot_file_renames_only_its_matches() -> None:
    t = tournament(SPRING_GAMES)
    old = build_schedule(t, bots(5))
    changed = [BotEntry(b.name, b.path, "1" * 64 if b.name == "bot03" else b.sha256, "python") for b in bots(5)]
    new = build_schedule(t, changed)
    assert [m.bots for m in old] == [m.bots for m in new]
    for a, b in zip(old, new):
        assert (a.match_id == b.match_id) == ("bot03" not in a.bots)


def test_deterministic_and_independent_of_roster_order() -> None:
    t = tournament(SPRING_GAMES)
    a = build_schedule(t, bots(5))
    b = build_schedule(t, list(reversed(bots(5))))
    c = build_schedule(tournament(SPRING_GAMES), bots(5))
    assert a == b == c


def test_other_seed_other_deals() -> None:
    a = build_schedule(tournament(SPRING_GAMES, seed=1), bots(4))
    b = build_schedule(tournament(SPRING_GAMES, seed=2), bots(4))
    assert not {m.match_id for m in a} & {m.match_id for m in b}
    assert not {m.deal_seed for m in a} & {m.deal_seed for m in b}


def test_options_change_the_deal_seed_and_are_resolved() -> None:
    plain = build_schedule(tournament([{"id": "divers-weights", "players": 2, "deals": 1}]), bots(2))
    bid = build_schedule(
        tournament([{"id": "divers-weights", "players": 2, "deals": 1, "options": {"bidding": True}}]), bots(2)
    )
    assert plain[0].options["bidding"] is False and bid[0].options["bidding"] is True
    assert plain[0].deal_seed != bid[0].deal_seed
    explicit = build_schedule(
        tournament([{"id": "divers-weights", "players": 2, "deals": 1, "options": {"bidding": False}}]), bots(2)
    )
    assert explicit[0].deal_seed == plain[0].deal_seed  # a default spelled out is the same game


def test_order_is_deal_then_game_then_group() -> None:
    s = build_schedule(tournament(SPRING_GAMES), bots(5))
    keys = [(m.deal, [g["id"] for g in SPRING_GAMES].index(m.game), m.players, m.group, m.rotation) for m in s]
    assert keys == sorted(keys)
    last_first_deal = max(m.index for m in s if m.deal == 0)
    first_second_deal = min(m.index for m in s if m.deal == 1)
    assert last_first_deal < first_second_deal


def test_label_names_the_entry_in_ids() -> None:
    t = tournament(
        [
            {"id": "divers-weights", "players": 2, "deals": 1},
            {"id": "divers-weights", "label": "dw-bid", "players": 2, "deals": 1, "options": {"bidding": True}},
        ]
    )
    s = build_schedule(t, bots(3))
    assert {m.match_id.split("/")[0] for m in s} == {"divers-weights", "dw-bid"}
    assert {m.game for m in s} == {"divers-weights"}
    assert len({m.match_id for m in s}) == len(s) == 2 * 3 * 2


def test_match_spec_is_frozen_and_json_ready() -> None:
    m = build_schedule(tournament(SPRING_GAMES), bots(4))[0]
    with pytest.raises(AttributeError):
        m.deal = 3  # type: ignore[misc]
    assert json.loads(json.dumps(m.to_json()))["bots"] == list(m.bots)
    hash(m)


# ---- checks -------------------------------------------------------------------


def test_too_few_bots_for_a_player_count() -> None:
    t = tournament([{"id": "palace", "players": [2, 5], "deals": 1}])
    with pytest.raises(ConfigError) as err:
        build_schedule(t, bots(4))
    assert "games[0].players" in str(err.value) and "needs at least 5 bots" in str(err.value)


def test_too_big_round_robin_suggests_sampled() -> None:
    t = tournament([{"id": "tightwad", "players": [3, 4], "deals": 4}])
    with pytest.raises(ConfigError) as err:
        check_schedule(t, bots(12))  # 220*12 + 495*16 = 10560 matches
    text = str(err.value)
    assert "games[0].schedule" in text and "10560 matches" in text and "schedule: sampled" in text
    assert "matches_per_bot" in text
    big = tournament([{"id": "tightwad", "players": [3, 4], "deals": 4, "max_matches": 20000}])
    assert len(build_schedule(big, bots(12))) == 10560


# ---- sampled --------------------------------------------------------------------


def sampled(n: int, p: int, deals: int, mpb: int, seed: int = 7) -> list[MatchSpec]:
    t = tournament(
        [{"id": "palace", "players": [p], "deals": deals, "schedule": "sampled", "matches_per_bot": mpb}], seed=seed
    )
    return build_schedule(t, bots(n))


@settings(max_examples=25)
@given(
    n=st.integers(3, 14),
    p=st.integers(2, 5),
    deals=st.integers(1, 3),
    mpb=st.integers(1, 80),
    seed=st.integers(0, 2**32),
)
def test_sampled_balance(n: int, p: int, deals: int, mpb: int, seed: int) -> None:
    p = min(p, n)
    s = sampled(n, p, deals, mpb, seed)
    plays = Counter(b for m in s for b in m.bots)
    names = [b.name for b in bots(n)]
    assert set(plays) == set(names)  # everyone plays
    # Plays differ by at most one group (one group = `deals` deals in all p rotations).
    assert max(plays.values()) - min(plays.values()) <= deals * p
    # Each bot plays about matches_per_bot: never a whole group short.
    assert min(plays.values()) >= mpb - deals * p
    groups = {}
    for m in s:
        groups.setdefault(m.group, frozenset(m.bots))
    met = Counter(pair for g in groups.values() for pair in itertools.combinations(sorted(g), 2))
    counts = [met[pair] for pair in itertools.combinations(names, 2)]
    assert max(counts) - min(counts) <= 3, counts
    # Duplicate structure holds within each drawn group.
    for (_, _, _), matches in groups_of(s).items():
        by_deal = defaultdict(list)
        for m in matches:
            by_deal[m.deal].append(m)
        assert len(by_deal) == deals
        for same in by_deal.values():
            assert len({m.deal_seed for m in same}) == 1
            for seat in range(p):
                assert len({m.bots[seat] for m in same}) == p


def test_sampled_measured_balance_on_a_large_field() -> None:
    s = sampled(40, 4, 2, 64)
    plays = Counter(b for m in s for b in m.bots)
    assert max(plays.values()) - min(plays.values()) <= 8
    assert 56 <= min(plays.values()) and max(plays.values()) <= 72


def test_sampled_is_deterministic_and_seed_dependent() -> None:
    assert sampled(9, 3, 1, 30) == sampled(9, 3, 1, 30)
    assert [m.bots for m in sampled(9, 3, 1, 30, seed=1)] != [m.bots for m in sampled(9, 3, 1, 30, seed=2)]


def test_sampled_repeated_group_plays_new_deals() -> None:
    s = sampled(3, 2, 2, 40)  # only 3 possible pairs, drawn many times
    seen: dict[frozenset[str], set[int]] = defaultdict(set)
    for m in s:
        seen[frozenset(m.bots)].add(m.deal)
    # Every draw of the same pair plays deals the earlier draws did not.
    groups_per_pair = Counter(frozenset(ms[0].bots) for ms in groups_of(s).values())
    for pair, count in groups_per_pair.items():
        assert len(seen[pair]) == 2 * count
    assert len({m.match_id for m in s}) == len(s)


def test_draw_groups_keeps_group_counts_within_one() -> None:
    names = [f"b{i}" for i in range(10)]
    groups = draw_groups(1, "k", names, 4, 23)
    assert all(len(set(g)) == 4 for g in groups)
    counts = Counter(b for g in groups for b in g)
    assert max(counts.values()) - min(counts.values()) <= 1
    assert sum(counts.values()) == 23 * 4


# ---- secret deals ------------------------------------------------------------


def test_secret_deals_need_the_secret_and_come_only_from_it() -> None:
    t = tournament(SPRING_GAMES, deals="secret")
    with pytest.raises(ValueError, match="deal secret"):
        build_schedule(t, bots(4))
    one, again = build_schedule(t, bots(4), "ab" * 32), build_schedule(t, bots(4), "ab" * 32)
    other = build_schedule(t, bots(4), "cd" * 32)
    public = build_schedule(tournament(SPRING_GAMES), bots(4))
    assert one == again  # resume and replay: same secret, same deals
    # the same seats and groups: only the seeds differ, and with them the content-named ids
    shape = [(m.game, m.players, m.group, m.deal, m.rotation, m.bots) for m in one]
    assert shape == [(m.game, m.players, m.group, m.deal, m.rotation, m.bots) for m in other]
    assert shape == [(m.game, m.players, m.group, m.deal, m.rotation, m.bots) for m in public]
    assert not {m.match_id for m in one} & ({m.match_id for m in other} | {m.match_id for m in public})
    for a, b, p in zip(one, other, public):
        assert len({a.deal_seed, b.deal_seed, p.deal_seed}) == 3
        assert len({a.match_seed, b.match_seed, p.match_seed}) == 3
    # duplicate format kept: every rotation and group of a deal plays the same secret deal
    by_deal = defaultdict(set)
    for m in one:
        by_deal[(m.game, m.players, m.deal)].add(m.deal_seed)
    assert all(len(seeds) == 1 for seeds in by_deal.values())


# ---- gauntlet -------------------------------------------------------------------


def gauntlet(players: list[int], gauntlet_bots: list[str], deals: int = 2, **extra: Any) -> Tournament:
    return tournament(
        [
            {
                "id": "palace",
                "players": players,
                "deals": deals,
                "schedule": "gauntlet",
                "gauntlet": gauntlet_bots,
                **extra,
            }
        ]
    )


def test_a_gauntlet_is_the_round_robins_matches_with_exactly_one_gauntlet_bot() -> None:
    field = bots(6)
    g = build_schedule(gauntlet([2, 3], ["bot02", "bot05"]), field)
    rr = build_schedule(tournament([{"id": "palace", "players": [2, 3], "deals": 2}]), field)
    chosen = {"bot02", "bot05"}
    # same ids (and so the same deals and seating): a round robin turned gauntlet keeps what it played
    assert {m.match_id for m in g} == {m.match_id for m in rr if len(chosen & set(m.bots)) == 1}
    by_id = {m.match_id: m for m in rr}
    for m in g:
        assert (m.bots, m.deal_seed, m.match_seed) == (
            by_id[m.match_id].bots,
            by_id[m.match_id].deal_seed,
            by_id[m.match_id].match_seed,
        )
    assert len(g) == sum(2 * math.comb(4, p - 1) * 2 * p for p in (2, 3)) == 2 * 4 * 2 * 2 + 2 * 6 * 2 * 3
    assert [m.index for m in g] == list(range(len(g)))
    # each gauntlet bot meets every group of the field once, holding every hand of each deal once
    for p in (2, 3):
        for bot in chosen:
            groups = Counter(
                frozenset(ms[0].bots) - {bot} for (_, q, _), ms in groups_of(g).items() if q == p and bot in ms[0].bots
            )
            others = [b.name for b in field if b.name not in chosen]
            assert set(groups) == {frozenset(c) for c in itertools.combinations(others, p - 1)}
            assert set(groups.values()) == {1}
    for ms in groups_of(g).values():
        assert len(ms) == 2 * ms[0].players
        for d in (0, 1):
            seats = [m.bots for m in ms if m.deal == d]
            for s in range(ms[0].players):
                assert sorted(b[s] for b in seats) == sorted(ms[0].bots)


def test_a_gauntlet_entry_leaves_the_other_entries_and_the_stored_config_alone() -> None:
    plain = tournament(SPRING_GAMES)
    mixed = tournament(
        SPRING_GAMES
        + [
            {
                "id": "tightwad",
                "label": "tw-gauntlet",
                "players": 3,
                "deals": 1,
                "schedule": "gauntlet",
                "gauntlet": ["bot00"],
            }
        ]
    )
    a = build_schedule(plain, bots(5))
    b = [m for m in build_schedule(mixed, bots(5)) if not m.match_id.startswith("tw-gauntlet/")]
    assert [(m.match_id, m.bots, m.deal_seed, m.match_seed) for m in a] == [
        (m.match_id, m.bots, m.deal_seed, m.match_seed) for m in b
    ]
    assert "gauntlet" not in json.dumps(plain.model_dump())


@pytest.mark.parametrize(
    "entry,where,says",
    [
        ({"gauntlet": ["bot00"]}, "games[0].gauntlet", "only applies to a gauntlet schedule"),
        ({"schedule": "gauntlet"}, "games[0].gauntlet", "add e.g. gauntlet: [mybot]"),
        ({"schedule": "gauntlet", "gauntlet": []}, "games[0].gauntlet", "one or more bot names"),
        ({"schedule": "gauntlet", "gauntlet": ["bot00", "bot00"]}, "games[0].gauntlet[1]", "listed twice"),
        ({"schedule": "gauntlet", "gauntlet": ["botO1"]}, "games[0].gauntlet[0]", "did you mean 'bot01'?"),
        (
            {"schedule": "gauntlet", "gauntlet": ["bot00", "bot01", "bot02"]},
            "games[0].gauntlet",
            "needs a field of at least 2 bots",
        ),
        (
            {"schedule": "gauntlet", "gauntlet": ["bot00"], "deals": 100},
            "games[0].schedule",
            "more than max_matches 2000",
        ),
        ({"schedule": "gantlet"}, "games[0].schedule", "did you mean 'gauntlet'?"),
    ],
)
def test_gauntlet_mistakes_are_one_line_naming_the_field(entry: dict, where: str, says: str) -> None:
    with pytest.raises(ConfigError) as err:
        t = tournament([{"id": "tightwad", "players": 3, "deals": 2, **entry}])
        check_schedule(t, bots(4) if "deals" not in entry else bots(40))
    text = str(err.value)
    assert f"{where}:" in text and says in text and "\n" not in text
