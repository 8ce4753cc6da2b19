"""The ladder's luck-adjusted place: its baselines are computed for the stored matches by the
luck process (arena/serve/luck.py), at most a quarter of one core's time, at the workers' priority, and the
leaderboard, its JSON and the bot page show exactly what arena/report/luck.py computes for
the same records."""

from __future__ import annotations

import os
import random

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx2")

from starlette.testclient import TestClient  # noqa: E402

from arena.serve.app import Ladderside, create_app  # noqa: E402
from arena.serve.ladder import load_ladder  # noqa: E402
from arena.serve.server import import_bundled  # noqa: E402
from tests.serve.ladder_fixtures import wait_until  # noqa: E402

ROLLOUTS = 2  # games per seat of a deal's baseline: small, the figure is the same function of them


def _ladder(folder):
    path = folder / "ladder.yaml"
    # Divers Weights at two seats: a configuration with a luck correction (beta > 0)
    path.write_text(f"""name: fixture
seed: 7
bots: [{{builtin: random, name: alpha}}, {{builtin: random, name: beta}}, {{builtin: random, name: gamma}}]
games:
  - id: divers-weights
    players: [2]
    deals: 1
    options: {{bidding: false}}
luck_rollouts: {ROLLOUTS}
workers: 1
ladder:
  new_bot_matches: 6
  refresh_s: 0.5
""")
    return load_ladder(path)


def _store_deal_sets(store, sets: int, seed: int = 1, first: int = 0) -> None:
    """Deal sets as the matchmaker stores them: one deal, both rotations, random places."""
    from games import REGISTRY
    from tests.support.record_factory import make_record

    rng = random.Random(seed)
    names = ["alpha.v1", "beta.v1", "gamma.v1"]
    for d in range(first, first + sets):
        pair = rng.sample(names, 2)
        for r in range(2):
            order = [pair[(s + r) % 2] for s in range(2)]
            record = make_record(
                2 * d + r,
                order,
                rng.sample([0, 1], 2),
                game="divers-weights",
                match_id=f"divers-weights/p2/d{d}/r{r}/{d:08x}{r:08x}",
            )
            record["rules_version"] = REGISTRY["divers-weights"].rules_version
            store.record_match(record)


@pytest.fixture
def ladder_env(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    ladder = _ladder(tmp_path)
    import_bundled(ladder, data)
    side = Ladderside(ladder, data, None, inline=False)  # as the server: ratings from standings.json only
    yield ladder, data, side
    side.close()


def _expected(store):
    """What arena run's leaderboards compute (arena/report/luck.py) for the same records."""
    from arena.luck.baselines import load
    from arena.report.luck import adjust
    from arena.serve.matchmaker import rate_rows, rows_in_play_order

    rows = rows_in_play_order(store)
    report = adjust(rate_rows(store, rows), rows, load(store, rows, ROLLOUTS))
    return {(s.scope, b.name.split(".v")[0]): b for s in report.scopes for b in s.standings}


def test_the_leaderboard_shows_the_luck_adjusted_place_arena_report_computes(ladder_env):
    from arena.serve.luck import fill_pass, options_by_config
    from arena.serve.matchmaker import Matchmaker, last_stored

    ladder, data, side = ladder_env
    _store_deal_sets(side.store, 8)
    mm = Matchmaker(ladder, data, None)
    mm.publish_standings(side.store)
    c = TestClient(create_app(side), raise_server_exceptions=False)
    board = c.get("/api/leaderboard").json()
    assert board["matches"] == 16 and board["luck_matches"] == 0
    assert all(r["adjusted_place"] is None for s in board["scopes"] for r in s["standings"])  # not computed yet

    jobs = fill_pass(side.store, data, last_stored(side.store), options_by_config(ladder.tournament), None, ROLLOUTS)
    assert jobs > 8  # each deal, and the reference deals
    assert mm.publish_standings(side.store) is not None  # new baselines: published again
    board = c.get("/api/leaderboard").json()
    assert board["luck_matches"] == 16
    expected = _expected(side.store)
    rows = [(s["scope"], r) for s in board["scopes"] for r in s["standings"]]
    assert {scope for scope, _ in rows} == {"overall", "divers-weights"}
    for scope, r in rows:
        want = expected[(scope, r["bot"])]
        assert want.adjusted_place is not None
        assert r["adjusted_place"] == pytest.approx(want.adjusted_place, abs=1e-3)
        assert r["mean_place"] == pytest.approx(want.mean_place, abs=1e-3)
    assert any(abs(r["adjusted_place"] - r["mean_place"]) > 1e-3 for _, r in rows)  # a real correction

    alpha = next(r for scope, r in rows if scope == "overall" and r["bot"] == "alpha")
    doc = c.get(f"/api/bots/{alpha['bot_id']}").json()
    assert doc["ratings"]["overall"]["adjusted_place"] == alpha["adjusted_place"]
    page = c.get("/").text
    assert "luck-adj. place" in page and f'<td class="adjusted">{alpha["adjusted_place"]:.2f}</td>' in page
    assert f'<td class="adjusted">{alpha["adjusted_place"]:.2f}</td>' in c.get(f"/bots/{alpha['bot_id']}").text

    # matches stored after the last pass: the figure covers the first 16 until the next one
    _store_deal_sets(side.store, 2, seed=2, first=8)
    mm.publish_standings(side.store)
    board = c.get("/api/leaderboard").json()
    assert board["matches"] == 20 and board["luck_matches"] == 16
    assert all(r["adjusted_place"] is not None for s in board["scopes"] for r in s["standings"])


def test_the_throttle_keeps_the_luck_process_to_its_share_of_a_core():
    from arena.serve.luck import Throttle

    now = {"cpu": 0.0, "wall": 100.0}
    slept = []

    def sleep(s):
        slept.append(s)
        now["wall"] += s

    throttle = Throttle(share=0.25, sleep=sleep, cpu=lambda: now["cpu"], clock=lambda: now["wall"])
    for cpu, wall in ((0.1, 0.1), (0.3, 0.3), (0.2, 2.0), (0.5, 0.5)):  # the third job waited for the CPU
        now["cpu"] += cpu
        now["wall"] += wall
        throttle(1, 4)
        assert now["cpu"] <= 0.25 * (now["wall"] - 100.0) + 1e-9  # never over its share
    assert slept == pytest.approx([0.3, 0.9, 0.3])  # no pause while a job's wall time covered it
    assert throttle.slept == pytest.approx(1.5)


def test_the_luck_process_fills_the_stored_matches_at_the_workers_priority(ladder_env):
    from arena.serve.luck import LUCK_NICE, read_through, start_luck
    from arena.serve.matchmaker import last_stored

    ladder, data, side = ladder_env
    _store_deal_sets(side.store, 3)
    proc = start_luck(ladder.tournament, data)
    try:
        assert proc is not None
        wait_until(lambda: read_through(data) == last_stored(side.store), what="the luck process's first pass")
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + LUCK_NICE)
    finally:
        proc.kill()
        proc.join()
    assert _expected(side.store)[("overall", "alpha")].adjusted_place is not None


def test_play_order_reads_only_new_matches_and_matches_a_whole_read(ladder_env):
    """The matchmaker's ratings pass keeps the rows it read: each pass reads only the matches
    stored since, and the rows are those of a whole read (rows_in_play_order), index for index;
    if matches were deleted meanwhile it reads them all again."""
    import sqlite3

    from arena.serve.matchmaker import PlayOrder, rows_in_play_order
    from arena.tournament.store import AlteredError

    _, data, side = ladder_env
    store = side.store
    read: list[int] = []
    real = store.results_after

    def counting(rowid):
        got = real(rowid)
        read.append(len(got))
        return got

    store.results_after = counting

    def key(rows):
        return sorted((r.index, r.match_id, r.bots, r.places, r.digest) for r in rows)

    order = PlayOrder()
    _store_deal_sets(store, 3)
    assert key(order.update(store)) == key(rows_in_play_order(store)) and read == [6]
    _store_deal_sets(store, 2, seed=2, first=3)
    assert key(order.update(store)) == key(rows_in_play_order(store)) and read == [6, 4]
    assert order.update(store) and read == [6, 4, 0]  # nothing new: nothing read

    con = sqlite3.connect(data / "results.sqlite")
    with con:
        gone = con.execute("SELECT match_id FROM matches ORDER BY rowid LIMIT 1 OFFSET 2").fetchone()[0]
        con.execute("DELETE FROM seats WHERE match_id = ?", (gone,))
        con.execute("DELETE FROM matches WHERE match_id = ?", (gone,))
    rows = order.update(store)
    assert read[-1] == 9 and gone not in {r.match_id for r in rows}  # read whole again
    assert key(rows) == key(rows_in_play_order(store))

    _store_deal_sets(store, 1, seed=3, first=5)
    with con:  # a new match altered before the next pass reads it
        con.execute("UPDATE seats SET place = 1 - place WHERE match_id = (SELECT MAX(match_id) FROM matches)")
    con.close()
    with pytest.raises(AlteredError):
        order.update(store)


def test_a_luck_process_that_died_is_started_again(ladder_env, caplog):
    """Killed (the OOM killer, a stray kill), it stayed dead while the ladder played on: the
    luck-adjusted place stopped following the matches without a word until the next start."""
    import logging
    import signal

    from arena.serve.luck import kept_alive, read_through, start_luck
    from arena.serve.matchmaker import last_stored

    ladder, data, side = ladder_env
    proc = start_luck(ladder.tournament, data)
    assert proc is not None and kept_alive(proc, ladder.tournament, data) is proc
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    _store_deal_sets(side.store, 3)
    with caplog.at_level(logging.WARNING, logger="arena.serve"):
        again = kept_alive(proc, ladder.tournament, data)
    try:
        assert again is not None and again is not proc and again.is_alive()
        assert "the luck process stopped (exit code -9); starting it again" in caplog.text
        wait_until(lambda: read_through(data) == last_stored(side.store), what="the new luck process's pass")
    finally:
        again.kill()
        again.join()
