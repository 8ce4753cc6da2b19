"""The ladder file and the matchmaker's choices, without processes."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.serve.ladder import load_ladder
from arena.serve.matchmaker import Standing, candidates_of, choose_deal_set, deal_set_matches
from arena.tournament.config import ConfigError
from tests.serve.ladder_fixtures import ROOT, ladder_file


def test_the_demo_ladder_loads():
    ladder = load_ladder(ROOT / "ladders" / "demo.yaml")
    assert ladder.name == "demo" and {g.id for g in ladder.tournament.games} == {"tightwad", "divers-weights", "palace"}


@pytest.mark.parametrize(
    "extra, field", [("  match_rate: -1\n", "ladder.match_rate"), ("  upload_bytes: 5\n", "ladder.upload_bytes")]
)
def test_a_bad_ladder_setting_is_one_line_naming_the_field(tmp_path, extra, field):
    with pytest.raises(ConfigError) as err:
        load_ladder(ladder_file(tmp_path, extra=extra))
    assert field in str(err.value) and "\n" not in str(err.value) and "ladder.yaml" in str(err.value)


def test_a_ladder_never_trusts_its_bots(tmp_path):
    path = ladder_file(tmp_path)
    path.write_text(path.read_text() + "trust_bots: true\n")
    with pytest.raises(ConfigError, match="trust_bots"):
        load_ladder(path)


def test_a_new_bot_seeds_the_next_deal_sets_until_it_has_its_first_matches():
    candidates = [(0, 3, "tightwad"), (1, 2, "palace")]
    old = {"overall": {b: Standing(25, 1.0, 100) for b in "abcd"}}
    scheduled = Counter({b: 100 for b in "abcd"})
    rng = random.Random(1)
    for _ in range(5):
        entry, players, bots = choose_deal_set(candidates, list("abcde"), old, scheduled, rng, new_bot_matches=10)
        assert "e" in bots
        for b in bots:
            scheduled[b] += players
            scheduled[(b, candidates[entry][2])] += players
    # it played both games: the game it had played least came next each time
    assert scheduled[("e", "tightwad")] and scheduled[("e", "palace")]


def test_then_the_least_certain_rating_gets_the_next_deal_set():
    ratings = {
        "overall": {
            "a": Standing(25, 1, 50),
            "b": Standing(25, 4, 50),
            "c": Standing(25, 1, 50),
            "d": Standing(25, 1, 50),
        }
    }
    scheduled = Counter({b: 50 for b in "abcd"})
    for seed in range(20):
        _, _, bots = choose_deal_set([(0, 2, "palace")], list("abcd"), ratings, scheduled, random.Random(seed), 10)
        assert "b" in bots


def test_no_deal_set_without_enough_bots():
    assert choose_deal_set([(0, 3, "tightwad")], ["a", "b"], {}, Counter(), random.Random(0), 5) is None


@settings(max_examples=30)
@given(players=st.integers(2, 4), set_id=st.integers(0, 10**6))
def test_a_deal_set_seats_every_bot_once_in_every_seat_on_one_deal(players, set_id):
    from arena.tournament.config import parse_tournament

    t = parse_tournament(
        {"name": "x", "seed": 1, "bots": ["a.py"], "games": [{"id": "palace", "players": [players], "deals": 1}]}
    )
    bots = [f"b{i}" for i in range(players)]
    matches = deal_set_matches(t, set_id, 0, players, bots, {b: "0" * 64 for b in bots}, "ab" * 32)
    assert len(matches) == players and len({m.match_id for m in matches}) == players
    assert len({m.deal_seed for m in matches}) == 1
    for seat in range(players):
        assert sorted(m.bots[seat] for m in matches) == sorted(bots)
    other = deal_set_matches(t, set_id, 0, players, bots, {b: "0" * 64 for b in bots}, "cd" * 32)
    assert {m.deal_seed for m in other} != {m.deal_seed for m in matches}  # the secret decides the deal


def test_candidates_are_every_game_and_seat_count():
    ladder = load_ladder(ROOT / "ladders" / "demo.yaml")
    assert sorted((p, g) for _, p, g in candidates_of(ladder.tournament)) == [
        (2, "divers-weights"),
        (3, "tightwad"),
        (4, "divers-weights"),
        (4, "palace"),
        (4, "tightwad"),
    ]


def test_ratings_follow_play_order_and_the_cache_rates_only_new_matches(tmp_path):
    from arena.serve.matchmaker import rate_in_play_order
    from arena.tournament.store import ResultStore
    from tests.support.record_factory import make_record

    store = ResultStore(tmp_path / "data")
    cache = tmp_path / "cache.json.z"
    rng = random.Random(5)
    bots = ["a.v1", "b.v1", "c.v1", "d.v1"]

    def add(n: int, start: int) -> None:
        for i in range(start, start + n):  # schedule indexes out of order, as deal sets finish
            seats = rng.sample(bots, 3)
            store.record_match(
                make_record(
                    10_000 - i * 7, seats, rng.sample(range(3), 3), match_id=f"tightwad/p3/d{i:02d}/r0/{i:016x}"
                )
            )

    def board(report):
        return {(s.scope, b.name): (b.mu, b.sigma, b.matches) for s in report.scopes for b in s.standings}

    add(30, 0)
    first = rate_in_play_order(store, cache)
    assert cache.exists() and board(first) == board(rate_in_play_order(store))
    add(10, 30)
    again = rate_in_play_order(store, cache)
    assert board(again) == board(rate_in_play_order(store))  # the same with or without the cache
    assert sum(b.matches for b in again.scopes[0].standings) == 40 * 3  # each match counted once
    store.close()


def test_bots_that_always_fault_cannot_keep_the_honest_bots_from_playing():
    """Sets where every seat faults are not rated: three such bots kept their high sigma and,
    nearest each other in mu, were dealt every set while the honest bots waited for good."""
    from arena.serve.matchmaker import RecentSets

    ratings = {
        "overall": {"h1": Standing(15, 1, 500), "h2": Standing(32, 1, 500), "h3": Standing(40, 1, 500)},
        "tightwad": {"h1": Standing(15, 1, 500), "h2": Standing(32, 1, 500), "h3": Standing(40, 1, 500)},
    }  # the faulting bots "x1".."x3": never rated (the default: mu 25, sigma 8.3)
    playing = ["h1", "h2", "h3", "x1", "x2", "x3"]
    scheduled = Counter({b: 500 for b in playing})
    rng = random.Random(3)

    def deal(sets: int, recent: RecentSets | None) -> Counter:
        seen: Counter = Counter()
        for _ in range(sets):
            _, _, bots = choose_deal_set(
                [(0, 3, "tightwad")], playing, ratings, scheduled, rng, 20, recent=recent.seats if recent else None
            )
            seen.update(bots)
            if recent:
                recent.add(bots)
        return seen

    assert all(deal(200, None)[h] == 0 for h in ("h1", "h2", "h3"))  # without the window: starved
    seen = deal(600, RecentSets(len(playing)))
    assert min(seen[h] for h in ("h1", "h2", "h3")) >= 600 * 3 / 6 / 2 * 0.8, seen  # near half a fair share or more


def _two_game_ladder(folder, divers_options: str = "{bidding: false}", with_divers: bool = True):
    path = folder / "ladder.yaml"
    divers = (
        f"""  - id: divers-weights
    players: [2]
    deals: 1
    options: {divers_options}
"""
        if with_divers
        else ""
    )
    path.write_text(f"""name: fixture
seed: 7
bots: [{{builtin: random, name: alpha}}, {{builtin: random, name: beta}}, {{builtin: random, name: gamma}}]
games:
  - id: tightwad
    players: [3]
    deals: 1
{divers}workers: 1
""")
    return load_ladder(path)


def test_editing_the_ladder_files_games_neither_replays_finished_sets_nor_stops_the_matchmaker(tmp_path):
    """Deal sets are stored by game entry index: with a game removed from the file the
    matchmaker raised IndexError at every start; with a game's options changed it queued every
    finished set of that game again; the luck process gave a finished set's matches another
    game's options. Finished sets stay finished; a set the file no longer deals is left."""
    from arena.serve.db import INDEX_STRIDE, LadderDB
    from arena.serve.luck import options_by_config, stored_schedule
    from arena.serve.matchmaker import Matchmaker
    from arena.serve.server import import_bundled
    from arena.tournament.store import ResultStore
    from tests.support.record_factory import make_record

    data = tmp_path / "data"
    data.mkdir()
    ladder = _two_game_ladder(tmp_path)
    import_bundled(ladder, data)
    db, store = LadderDB(data), ResultStore(data)
    secret = store.deal_secret()
    _, entries = Matchmaker(ladder, data, None).roster(db)
    sha = {b: e.sha256 for b, e in entries.items()}
    done_sets = [(0, 3, ["alpha.v1", "beta.v1", "gamma.v1"]), (1, 2, ["alpha.v1", "beta.v1"])]
    for entry, players, bots in done_sets:
        set_id = db.add_deal_set(entry, players, bots)
        for m in deal_set_matches(ladder.tournament, set_id, entry, players, bots, sha, secret):
            record = make_record(m.index, list(m.bots), list(range(players)), game=m.game, match_id=m.match_id)
            record.update(deal=set_id, rotation=m.index % INDEX_STRIDE, deal_seed=m.deal_seed)
            store.record_match(record)
    in_flight = db.add_deal_set(1, 2, ["beta.v1", "gamma.v1"])

    def pending(file) -> list[str]:
        return sorted(m.match_id for m in Matchmaker(file, data, None).unfinished(db, entries, secret, store))

    assert [mid.split("/")[:3] for mid in pending(ladder)] == [["divers-weights", "p2", f"d{in_flight:02d}"]] * 2
    assert pending(_two_game_ladder(tmp_path, with_divers=False)) == []  # was: IndexError
    rebid = pending(_two_game_ladder(tmp_path, divers_options="{bidding: true}"))
    assert [mid.split("/")[2] for mid in rebid] == [f"d{in_flight:02d}"] * 2  # was: the finished set's too
    with store.reading() as conn:
        no_divers = options_by_config(_two_game_ladder(tmp_path, with_divers=False).tournament)
        by_set = {i: {"hands": 3} for i in range(1, in_flight + 1)}  # the entries' options by set id
        specs = stored_schedule(conn, 10**9, no_divers, by_set)
    assert {s.game for s in specs} == {"tightwad"}  # a dropped game's matches are left out, not misread


def test_a_moved_or_restored_data_folder_plays_its_own_copies_of_the_bots(tmp_path):
    """Versions stored absolute paths into the data folder: restored from a backup elsewhere (or
    moved), with the old folder gone, every version's code looked gone and the ladder played no
    match at all, while its pages showed every bot as before."""
    import shutil

    pytest.importorskip("argon2")  # accounts hash passwords: the serve extra
    from arena.serve.accounts import add_user
    from arena.serve.db import LadderDB
    from arena.serve.matchmaker import Matchmaker
    from arena.serve.server import import_bundled
    from arena.tournament.roster import BotEntry, snapshot_bots
    from tests.serve.ladder_fixtures import BOTS

    ladder = load_ladder(ladder_file(tmp_path, programs=True))
    old, new = tmp_path / "old", tmp_path / "restored"
    old.mkdir()
    import_bundled(ladder, old)
    db = LadderDB(old)
    upload = snapshot_bots([BotEntry(name="up", path=BOTS / "upload_me.py", sha256="", kind="python")], old)[0]
    add_user(old, "ann", "a password of ann's")
    bot_id = db.run("INSERT INTO bots (name, owner_id, created) SELECT 'up', id, 0 FROM users WHERE name = 'ann'")
    db.add_version(bot_id, upload.sha256, upload.path, "python", "ok")
    playing = Matchmaker(ladder, old, None).roster(db)[0]
    assert playing == ["alpha.v1", "beta.v1", "gamma.v1", "up.v1"]

    shutil.copytree(old, new)
    shutil.rmtree(old)
    import_bundled(ladder, new)  # the server's start
    db = LadderDB(new)
    playing, entries = Matchmaker(ladder, new, None).roster(db)
    assert playing == ["alpha.v1", "beta.v1", "gamma.v1", "up.v1"]
    assert all(Path(e.path).is_relative_to(new) for e in entries.values())
    assert Path(db.one("SELECT path FROM versions WHERE bot_id = ?", bot_id)["path"]).is_file()


def test_a_ladder_db_older_than_the_results_store_never_deals_a_stored_deal_set_again(tmp_path):
    """ladder.sqlite restored from a backup older than results.sqlite (docs/ladder.md: a damaged
    ladder.sqlite is restored from the backup; or the backup copied it first, as the docs said)
    numbered its next deal sets from its own last one: ids whose matches were stored already,
    so their deals were dealt again, to other bots, and the stored rotations of two sets were
    counted as one set's."""
    from collections import deque

    from arena.serve.db import INDEX_STRIDE, LadderDB
    from arena.serve.matchmaker import Matchmaker
    from arena.serve.server import import_bundled
    from arena.tournament.store import ResultStore
    from tests.support.record_factory import make_record

    data = tmp_path / "data"
    data.mkdir()
    ladder = load_ladder(ladder_file(tmp_path))
    import_bundled(ladder, data)
    db, store = LadderDB(data), ResultStore(data)
    secret = store.deal_secret()
    matchmaker = Matchmaker(ladder, data, None)
    playing, entries = matchmaker.roster(db)
    sha = {b: e.sha256 for b, e in entries.items()}
    stored_seeds = set()
    for set_id in (1, 2, 3):  # stored in results.sqlite; ladder.sqlite (the backup) knows only set 1
        if set_id == 1:
            assert db.add_deal_set(0, 3, playing) == 1
        for m in deal_set_matches(ladder.tournament, set_id, 0, 3, playing, sha, secret):
            record = make_record(m.index, list(m.bots), [0, 1, 2], game=m.game, match_id=m.match_id)
            record.update(deal=set_id, rotation=m.index % INDEX_STRIDE, deal_seed=m.deal_seed)
            store.record_match(record)
            stored_seeds.add(m.deal_seed)

    queue: deque = deque()
    matchmaker._top_up(db, store, secret, playing, entries, lambda: False)(queue)
    assert queue
    assert {m.deal for m in queue} and min(m.deal for m in queue) > 3
    assert not {m.deal_seed for m in queue} & stored_seeds
    assert matchmaker.unfinished(db, entries, secret, store) == list(queue)
