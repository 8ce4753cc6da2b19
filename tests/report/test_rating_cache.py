"""The rating cache: a report resumed from it equals one built from scratch."""

from __future__ import annotations

import json
import random
import zlib
from pathlib import Path

from arena.report import rating_cache
from arena.report.leaderboard import render_json
from arena.report.ratings import RatingParams, compute_ratings
from arena.tournament.store import ResultRow
from tests.support.record_factory import make_record

BOTS = ["a", "b", "c", "d", "e"]
KEY = rating_cache.key_from_secret("ab" * 32)


def _read(cache: Path) -> dict:
    """The JSON of a cache file (after its HMAC line)."""
    return json.loads(zlib.decompress(cache.read_bytes()).split(b"\n", 1)[1])


def _write(cache: Path, data: dict) -> None:
    """A cache file of ``data``, sealed with KEY as the arena seals it: only its shape is wrong."""
    body = json.dumps(data).encode()
    cache.write_bytes(zlib.compress(rating_cache._mac(KEY, body) + b"\n" + body))


def _records(n: int, seed: int = 1) -> list[dict]:
    rng = random.Random(seed)
    recs = []
    for i in range(n):
        seats = rng.sample(BOTS, rng.randint(2, 4))
        perf = [rng.randint(0, 3) + BOTS.index(b) for b in seats]
        faults = [{"kind": "timeout", "detail": "slow"} if rng.random() < 0.05 else None for _ in seats]
        recs.append(
            make_record(
                i, seats, [sum(q > p for q in perf) for p in perf], game=("tightwad", "palace")[i % 2], faults=faults
            )
        )
    return recs


def test_resumed_report_is_identical_and_rates_only_new_matches(tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / rating_cache.FILE_NAME
    recs = _records(120)
    first = compute_ratings(recs[:80], cache=cache, cache_key=KEY)
    assert _read(cache)["count"] == 80
    assert render_json(first) == render_json(compute_ratings(recs[:80]))

    import arena.report.ratings as ratings

    calls = []
    real = ratings._rate
    monkeypatch.setattr(ratings, "_rate", lambda *a: calls.append(1) or real(*a))
    resumed = compute_ratings(recs, cache=cache, cache_key=KEY)
    assert len(calls) == 2 * 40  # overall + game, new matches only
    assert render_json(resumed) == render_json(compute_ratings(recs))
    assert _read(cache)["count"] == 120


def test_only_the_complete_prefix_is_cached(tmp_path: Path) -> None:
    cache = tmp_path / rating_cache.FILE_NAME
    recs = _records(60)
    gap = recs[:30] + recs[31:]  # match 30 not played yet
    report = compute_ratings(gap, cache=cache, cache_key=KEY)
    assert _read(cache)["count"] == 30
    assert render_json(report) == render_json(compute_ratings(gap))
    # The late match arrives: it is rated in its place, not after the cached rows.
    assert render_json(compute_ratings(recs, cache=cache, cache_key=KEY)) == render_json(compute_ratings(recs))


def test_stale_foreign_or_broken_cache_is_ignored(tmp_path: Path) -> None:
    cache = tmp_path / rating_cache.FILE_NAME
    recs = _records(50)
    compute_ratings(recs, cache=cache, cache_key=KEY)
    changed = _records(50, seed=2)  # other results, same match ids
    assert render_json(compute_ratings(changed, cache=cache, cache_key=KEY)) == render_json(compute_ratings(changed))
    other_params = {"sigma": 5.0}
    assert render_json(compute_ratings(changed, other_params, cache=cache, cache_key=KEY)) == render_json(
        compute_ratings(changed, other_params)
    )
    for junk in (
        b"",
        b"not zlib",
        zlib.compress(b"[1, 2]"),
        zlib.compress(b'{"format": 3}'),
        zlib.compress(
            json.dumps(
                {
                    "format": rating_cache.FORMAT,
                    "version": 1,
                    "count": 10,
                    "params": {},
                    "digest": "x",
                    "scopes": [],
                    "notable": [],
                }
            ).encode()
        ),
    ):
        cache.write_bytes(junk)
        assert render_json(compute_ratings(recs, cache=cache, cache_key=KEY)) == render_json(compute_ratings(recs))


def test_a_cache_whose_scopes_have_another_shape_is_ignored(tmp_path: Path) -> None:
    # valid JSON of the right format, version, parameters and digest, but scope state that is
    # damaged or from another build: the report is rebuilt, never a crash
    cache = tmp_path / rating_cache.FILE_NAME
    recs = _records(60)
    compute_ratings(recs[:40], cache=cache, cache_key=KEY)
    good = _read(cache)
    damage = [
        lambda s: s["deals"].update({b: [[k, 1, 1] for k in v[0]] for b, v in s["deals"].items()}),
        lambda s: s["history"].update({b: v[:2] for b, v in s["history"].items()}),
        lambda s: s.pop("ratings"),
        lambda s: s.update(counts="three"),
        lambda s: s.update(h2h=[["a", "b", 1]]),
    ]
    for hurt in damage:
        data = json.loads(json.dumps(good))
        hurt(data["scopes"][0])
        _write(cache, data)
        assert render_json(compute_ratings(recs, cache=cache, cache_key=KEY)) == render_json(compute_ratings(recs))


def test_an_unwritable_cache_place_is_no_error(tmp_path: Path) -> None:
    recs = _records(10)
    missing = tmp_path / "no" / "such" / rating_cache.FILE_NAME
    assert render_json(compute_ratings(recs, cache=missing, cache_key=KEY)) == render_json(compute_ratings(recs))


def test_a_cache_that_inflates_beyond_the_limit_is_ignored(tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / rating_cache.FILE_NAME
    recs = _records(20)
    compute_ratings(recs, cache=cache, cache_key=KEY)
    rows = [ResultRow.from_record(r) for r in recs]
    assert rating_cache.load(cache, RatingParams.from_dict(None), rows, KEY) is not None
    monkeypatch.setattr(rating_cache, "MAX_BYTES", 100)  # stands in for a zip bomb
    assert rating_cache.load(cache, RatingParams.from_dict(None), rows, KEY) is None


def test_a_history_text_that_does_not_fit_its_history_is_rebuilt(tmp_path: Path) -> None:
    # The cache keeps each history's leaderboard.json text beside its columns. A text that is
    # not made of JSON numbers, has another number of points, or starts or ends on another
    # point is not used: leaderboard.json is what a build without the cache writes.
    cache = tmp_path / rating_cache.FILE_NAME
    recs = _records(60)
    compute_ratings(recs[:40], cache=cache, cache_key=KEY)
    good = _read(cache)
    history = good["scopes"][0]["history"]
    assert all(len(v) == 4 and v[3].startswith("[[") for v in history.values())
    a, b = sorted(history)[:2]
    damage = [
        lambda h: h[a].__setitem__(3, '"]}{"'),
        lambda h: h[a].__setitem__(3, h[b][3]),  # another bot's points
        lambda h: h[a].__setitem__(3, h[a][3].rsplit(",[", 1)[0] + "]"),  # one point short
        lambda h: h[a].__setitem__(3, h[a][3][:-2] + "1]]"),  # last point changed
        lambda h: h[a].__setitem__(3, 12),
        lambda h: [v.pop() for v in h.values()],  # an older arena's cache
    ]
    expected = render_json(compute_ratings(recs))
    for hurt in damage:
        data = json.loads(json.dumps(good))
        hurt(data["scopes"][0]["history"])
        _write(cache, data)
        assert render_json(compute_ratings(recs, cache=cache, cache_key=KEY)) == expected


def test_history_text_grows_with_its_points() -> None:
    from arena.report.ratings import History

    rng = random.Random(5)
    history = History()
    assert history.json_text() == "[]"
    for step in range(4):
        for i in range(rng.randint(1, 5)):
            history.append(10 * step + i, round(rng.gauss(25, 3), 6), round(rng.uniform(1, 8), 6))
        assert history.json_text() == json.dumps([list(p) for p in history], separators=(",", ":"))
        copy = history.copy()
        copy.append(99, 1.5, 2.5)
        assert json.loads(copy.json_text()) == json.loads(history.json_text()) + [[99, 1.5, 2.5]]


def test_rows_from_a_store_are_known_by_their_checked_digests(tmp_path: Path) -> None:
    # A store's rows carry their checked digests, so the cache names its prefix by them (and by
    # the schedule's index, which they do not cover). Any other row or index: rebuilt.
    from dataclasses import replace

    cache = tmp_path / rating_cache.FILE_NAME
    recs = _records(40)
    rows = [replace(ResultRow.from_record(r), digest=f"{i:064x}") for i, r in enumerate(recs)]
    compute_ratings(rows, cache=cache, cache_key=KEY)
    params = RatingParams.from_dict(None)
    assert rating_cache.load(cache, params, rows, KEY) is not None
    other = _records(40, seed=2)
    changed = rows[:7] + [replace(ResultRow.from_record(other[7]), digest="f" * 64)] + rows[8:]
    assert rating_cache.load(cache, params, changed, KEY) is None
    assert render_json(compute_ratings(changed, cache=cache, cache_key=KEY)) == render_json(compute_ratings(changed))
    swapped = rows[:3] + [replace(rows[4], index=3), replace(rows[3], index=4)] + rows[5:]
    assert rating_cache.complete_prefix(swapped) == 40
    assert rating_cache.load(cache, params, swapped, KEY) is None


def _forge(cache: Path, bot: str) -> None:
    """What a hand-edit does: ``bot`` rated far ahead in every scope, the rows' digest and
    everything else of the file kept (as the arena wrote it, HMAC line included if any)."""
    text = zlib.decompress(cache.read_bytes())
    head, body = (b"", text) if text.startswith(b"{") else text.split(b"\n", 1)
    data = json.loads(body)
    for scope in data["scopes"]:
        if bot in scope["ratings"]:
            scope["ratings"][bot] = [100.0, 0.5]
    body = json.dumps(data, separators=(",", ":")).encode()
    cache.write_bytes(zlib.compress(head + (b"\n" if head else b"") + body))


def test_an_edited_cache_does_not_verify_and_the_ratings_are_recomputed(tmp_path: Path, caplog) -> None:
    cache = tmp_path / rating_cache.FILE_NAME
    recs = _records(60)
    honest = compute_ratings(recs, cache=cache, cache_key=KEY)
    last = honest.scopes[0].standings[-1].name
    _forge(cache, last)
    with caplog.at_level("WARNING"):
        report = compute_ratings(recs, cache=cache, cache_key=KEY)
    assert report.scopes[0].standings[0].name != last
    assert render_json(report) == render_json(honest)
    assert "does not verify" in caplog.text
    # nor does a cache sealed for another folder's secret
    other = rating_cache.key_from_secret("cd" * 32)
    assert (
        rating_cache.load(cache, RatingParams.from_dict(None), [ResultRow.from_record(r) for r in recs], other) is None
    )


def test_a_forged_cache_in_a_results_folder_cannot_reorder_the_leaderboard(tmp_path: Path) -> None:
    # End to end: the leaderboard of a results folder, its cache edited by hand (the last bot
    # made first, the rows' digest untouched), is the leaderboard of the stored matches.
    from arena.report.standings import load_report
    from arena.tournament.store import ResultStore

    folder = tmp_path / "results"
    store = ResultStore(folder)
    store.init_tournament("t", {"name": "t"}, [])
    for rec in _records(40):
        store.record_match(rec)
    store.close()
    honest, _ = load_report(folder)
    cache = folder / rating_cache.FILE_NAME
    assert cache.is_file()
    last = honest.scopes[0].standings[-1].name
    _forge(cache, last)
    again, _ = load_report(folder)
    assert again.scopes[0].standings[0].name != last
    assert render_json(again) == render_json(honest)
