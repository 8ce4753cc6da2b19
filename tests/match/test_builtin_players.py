"""``{builtin: random}``: a player the arena plays itself, in process, whose known policy lets
the leaderboards remove the luck of its draws (AIVAT, docs/luck.md)."""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path

import pytest

from arena.luck.aivat import AIVAT_ROLLOUTS, AIVAT_VERSION, aivat_corrections
from arena.match.builtin import builtin_sha256
from arena.match.referee import bot_seed
from arena.tournament.config import ConfigError
from arena.tournament.load import load_tournament
from arena.tournament.ray_executor import pack_bots, unpack_bots
from arena.tournament.roster import builtin_entry, resolve_bots
from games import REGISTRY
from games.rng import DealRng
from tests.tournament.test_runner import run_file

ROOT = Path(__file__).resolve().parents[2]
HEURISTIC = ROOT / "bots" / "tightwad_heuristic.py"
RANDOM_FILE = ROOT / "bots" / "random_bot.py"


def _write(tmp: Path, name: str, bots: str, deals: int = 3, extra: str = "", workers: int = 1) -> Path:
    path = tmp / f"{name}.yaml"
    path.write_text(f"""
name: {name}
seed: 11
bots: {bots}
games:
  - id: tightwad
    players: 3
    deals: {deals}
time_control: {{startup_s: 20, move_s: 5.0}}
workers: {workers}
results: {tmp / ("results-" + name)}
{extra}""")
    return path


def _records(results: Path) -> list[dict]:
    con = sqlite3.connect(results / "results.sqlite")
    out = [json.loads(zlib.decompress(r[0])) for r in con.execute("SELECT record FROM matches ORDER BY idx")]
    con.close()
    return out


def _recomputed(rec: dict) -> list[float]:
    """A record's AIVAT correction recomputed from the record alone (the builtin seats' draws known)."""
    known = frozenset(b["seat"] for b in rec["bots"] if b.get("builtin"))
    return aivat_corrections(
        rec["game"],
        rec["players"],
        rec["options"],
        int(rec["deal_seed"]),
        [(d["seat"], d["action"]) for d in rec["decisions"]],
        known,
        AIVAT_ROLLOUTS[rec["game"]],
        int(rec["match_seed"]),
    )


def _corrections(results: Path) -> dict[str, list[float]]:
    con = sqlite3.connect(results / "results.sqlite")
    out = {m: json.loads(c) for m, c in con.execute("SELECT match_id, corrections FROM luck_aivat")}
    con.close()
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("builtin")
    bots = f"[{HEURISTIC}, {{builtin: random}}, {{builtin: random, name: other_random}}]"
    summary = run_file(_write(tmp, "b", bots))
    assert summary.complete
    return summary


def test_a_builtin_player_is_played_in_process_with_the_draws_its_seed_fixes(run):
    records = _records(run.results)
    assert len(records) == 9
    for rec in records:
        state = REGISTRY[rec["game"]].new_game(rec["players"], int(rec["deal_seed"]), rec["options"])
        rngs = {}
        for bot in rec["bots"]:
            if bot["name"] in ("random", "other_random"):
                assert bot["builtin"] == "random" and bot["sha256"] == builtin_sha256("random")
                rngs[bot["seat"]] = DealRng(bot_seed(int(rec["match_seed"]), bot["seat"]))
            else:
                assert "builtin" not in bot
        assert len(rngs) == 2
        for d in rec["decisions"]:
            if d["seat"] in rngs:  # exactly the uniform draw of the seat's own generator
                assert d["status"] == "ok"
                assert d["action"] == rngs[d["seat"]].randbelow(len(state.legal_actions(d["seat"])))
            state.apply(d["seat"], d["action"])
        assert state.is_over() and list(state.result().places) == rec["result"]["places"]


def test_every_match_with_a_builtin_player_gets_its_aivat_correction(run):
    records = _records(run.results)
    got = _corrections(run.results)
    assert set(got) == {r["match_id"] for r in records}
    for rec in records[:3]:  # the stored figure is the function of the record, recomputed
        want = _recomputed(rec)
        assert got[rec["match_id"]] == [round(c, 9) for c in want]
        assert any(abs(c) > 1e-9 for c in want)  # the draws' luck is there to remove


def test_the_luck_adjusted_place_removes_the_correction_of_each_seat(run):
    """Beta is 0 in three-player Tightwad, so the adjusted place of
    a bot is its mean place (1-based) minus the mean of its seats' corrections."""
    data = json.loads((run.results / "leaderboard.json").read_text())
    assert data["luck"]["aivat"]["matches"] == 9 and data["luck"]["available"] is True
    got = _corrections(run.results)
    sums: dict[str, list[float]] = {}
    for rec in _records(run.results):
        for seat in rec["seats"]:
            sums.setdefault(seat["bot"], []).append(seat["place"] + 1 - got[rec["match_id"]][seat["seat"]])
    scope = next(s for s in data["scopes"] if s["scope"] == "tightwad")
    for row in scope["standings"]:
        values = sums[row["bot"]]
        assert row["adjusted_place"] == pytest.approx(sum(values) / len(values), abs=1e-6)  # JSON rounds
        assert row["adjusted_place"] != pytest.approx(row["mean_place"], abs=1e-6)
    assert "builtin random players' draws in 9 matches (AIVAT)" in run.leaderboard


def test_a_bot_file_that_plays_randomly_gets_no_aivat(tmp_path):
    """The arena knows only its own players' policies: a program calling itself random may be
    anything, so its seats are never corrected."""
    summary = run_file(
        _write(tmp_path, "f", f"[{HEURISTIC}, {RANDOM_FILE}, {{path: {RANDOM_FILE}, name: twin}}]", deals=2)
    )
    assert summary.complete
    assert _corrections(summary.results) == {}
    data = json.loads((summary.results / "leaderboard.json").read_text())
    assert data["luck"]["aivat"]["matches"] == 0
    for row in data["scopes"][0]["standings"]:  # beta 0 and no AIVAT: the plain figure
        assert row["adjusted_place"] == row["mean_place"]


def test_a_damaged_correction_is_left_out_and_the_next_run_recomputes_it(run, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(run.results, copy)
    con = sqlite3.connect(copy / "results.sqlite")
    mid = con.execute("SELECT match_id FROM luck_aivat LIMIT 1").fetchone()[0]
    con.execute("UPDATE luck_aivat SET corrections = '[0, 0, 0]' WHERE match_id = ?", (mid,))
    con.commit()
    con.close()
    from click.testing import CliRunner

    from arena.cli import cli

    out = CliRunner().invoke(cli, ["leaderboard", str(copy), "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["luck"]["available"] is False  # never a figure over a hand-edited row
    tournament = _write(tmp_path, "b", f"[{HEURISTIC}, {{builtin: random}}, {{builtin: random, name: other_random}}]")
    text = tournament.read_text().replace(str(tmp_path / "results-b"), str(copy))
    tournament.write_text(text)
    again = run_file(tournament)
    assert again.complete and again.played == 0
    assert _corrections(copy) == _corrections(run.results)
    # a row made with another number of playouts is not used either: computed again
    con = sqlite3.connect(copy / "results.sqlite")
    con.execute("UPDATE luck_aivat SET rollouts = 1 WHERE match_id = ?", (mid,))
    con.commit()
    con.close()
    out = CliRunner().invoke(cli, ["leaderboard", str(copy), "--format", "json"])
    assert json.loads(out.output)["luck"]["available"] is False
    assert run_file(tournament).complete and _corrections(copy) == _corrections(run.results)


def test_builtin_names_follow_the_roster_rules(tmp_path):
    path = _write(tmp_path, "clash", f"[{RANDOM_FILE}, {{builtin: random, name: random_bot}}]")
    with pytest.raises(ConfigError) as err:
        resolve_bots(load_tournament(path))
    text = str(err.value)
    assert "\n" not in text and "two bots are named 'random_bot'" in text and "name: random_bot_2" in text
    bad = _write(tmp_path, "bad", "[{builtin: random, path: x.py}]")
    with pytest.raises(ConfigError) as err:
        load_tournament(bad)
    assert "bots[0].path: unknown key" in str(err.value) and "builtin, name" in str(err.value)
    unknown = _write(tmp_path, "unknown", "[{builtin: minimax}]")
    with pytest.raises(ConfigError) as err:
        load_tournament(unknown)
    assert "bots[0].builtin" in str(err.value) and "random" in str(err.value)


def test_a_builtin_player_is_named_not_shipped_to_ray_nodes(tmp_path):
    packed = pack_bots({"random": builtin_entry("random")})
    assert "data" not in packed["random"]
    entries = unpack_bots(packed, tmp_path)
    assert entries["random"] == builtin_entry("random") and not any(tmp_path.iterdir())
    forged = {"random": {**packed["random"], "sha256": "0" * 64}}
    from arena.tournament.ray_executor import BotShippingError

    with pytest.raises(BotShippingError):
        unpack_bots(forged, tmp_path)


def test_arena_play_seats_builtin_players_by_name():
    from click.testing import CliRunner

    from arena.cli import cli

    out = CliRunner().invoke(
        cli,
        [
            "play",
            "tightwad",
            str(HEURISTIC),
            "builtin:random",
            "builtin:random",
            "--seed",
            "7",
            "--json",
            "--sandbox",
            "rlimits",
        ],
    )
    assert out.exit_code == 0, out.output
    rec, _ = json.JSONDecoder().raw_decode(out.output[out.output.index("{") :])  # stderr lines follow
    assert [b.get("builtin") for b in rec["bots"]] == [None, "random", "random"]
    state = REGISTRY["tightwad"].new_game(3, 7, rec["options"])
    rngs = {s: DealRng(bot_seed(int(rec["match_seed"]), s)) for s in (1, 2)}
    for d in rec["decisions"]:
        if d["seat"] in rngs:
            assert d["action"] == rngs[d["seat"]].randbelow(len(state.legal_actions(d["seat"])))
        state.apply(d["seat"], d["action"])
    bad = CliRunner().invoke(cli, ["play", "tightwad", "builtin:minimax", "builtin:random", "builtin:random"])
    assert bad.exit_code == 2
    assert "builtin:minimax: no builtin player 'minimax' (known: random); use builtin:random" in bad.output
    assert "Traceback" not in bad.output
    check = CliRunner().invoke(cli, ["check", "builtin:random"])
    assert check.exit_code == 2 and "a builtin player is part of the arena, not a bot program" in check.output


def test_aivat_corrections_are_computed_a_batch_of_records_at_a_time_and_on_helpers(tmp_path, monkeypatch):
    """Two workers share the corrections among helper processes (fresh interpreters), and the
    records are read a few at a time: the same rows as one process computing them all."""
    from arena.luck import baselines as luck
    from arena.luck import pool

    monkeypatch.setattr(luck, "AIVAT_BATCH", 8)  # 9 matches: 8 on two helpers, then 1 in process
    calls = []
    real = pool._Helpers.send
    monkeypatch.setattr(
        pool._Helpers, "send", lambda self, wid, chunk: calls.append(len(chunk.jobs)) or real(self, wid, chunk)
    )
    bots = f"[{HEURISTIC}, {{builtin: random}}, {{builtin: random, name: other_random}}]"
    one = run_file(_write(tmp_path, "one", bots, deals=3))
    from tests.tournament.test_runner import share_secret

    share_secret(one.results, tmp_path / "results-two")
    two = run_file(_write(tmp_path, "two", bots, deals=3, workers=2))
    assert one.complete and two.complete and sum(calls) == 8
    assert _corrections(one.results) == _corrections(two.results) and len(_corrections(one.results)) == 9


def test_a_record_that_does_not_replay_gets_no_correction_rather_than_stopping_the_run():
    from arena.luck.helper import luck_job

    job = ["aivat", "tightwad", 3, {}, 5, [[2, 0], [0, 0]], [1, 2], 4, 9]  # seat 2 is not to move first
    assert luck_job(job) is None


def test_palace_corrects_the_builtin_draws_with_its_learned_value_in_four_player_games_only(tmp_path):
    """In Palace the AIVAT value is learned (arena/luck/palace_value.py), with weights for four
    players: those matches get their correction, the three-player ones none (their adjusted
    place is the plain one), and every stored figure is the function of its record."""
    path = tmp_path / "p.yaml"
    path.write_text(f"""
name: p
seed: 5
bots: [{ROOT / "bots" / "palace_heuristic.py"}, {{builtin: random}}, {{builtin: random, name: r2}},
       {{builtin: random, name: r3}}]
games:
  - id: palace
    players: [3, 4]
    deals: 1
time_control: {{startup_s: 20, move_s: 5.0}}
workers: 1
results: {tmp_path / "results"}
""")
    summary = run_file(path)
    assert summary.complete
    records = _records(summary.results)
    got = _corrections(summary.results)
    four = {r["match_id"] for r in records if r["players"] == 4}
    assert len(four) == 4 and len(records) == 4 + 12
    assert set(got) == four
    for rec in records:
        if rec["players"] != 4:
            continue
        want = _recomputed(rec)
        assert got[rec["match_id"]] == [round(c, 9) for c in want]
        assert any(abs(c) > 1e-9 for c in want)
    data = json.loads((summary.results / "leaderboard.json").read_text())
    assert data["luck"]["aivat"] == {"version": AIVAT_VERSION, "matches": 4, "corrected": 4, "draws": 4, "reveals": 4}
    assert (
        "builtin random players' draws and of the face-down cards revealed in 4 matches (AIVAT)"
        in (summary.results / "leaderboard.md").read_text()
    )


def test_palace_corrects_the_reveals_of_matches_between_bot_programs(tmp_path):
    """Chance has known odds whoever plays: four-player Palace matches of bot programs alone get
    the reveal terms (arena.luck.palace_value.reveal_term) and no builtin draws' terms."""
    random_bot = ROOT / "bots" / "random_bot.py"
    path = tmp_path / "p.yaml"
    path.write_text(f"""
name: p
seed: 6
bots: [{ROOT / "bots" / "palace_heuristic.py"}, {random_bot}, {{path: {random_bot}, name: r2}},
       {{path: {random_bot}, name: r3}}]
games:
  - id: palace
    players: 4
    deals: 1
time_control: {{startup_s: 20, move_s: 5.0}}
workers: 1
trust_bots: true
results: {tmp_path / "results"}
""")
    summary = run_file(path)
    assert summary.complete
    records = _records(summary.results)
    got = _corrections(summary.results)
    assert len(records) == 4 and set(got) == {r["match_id"] for r in records}
    for rec in records:
        assert not any(b.get("builtin") for b in rec["bots"])
        want = _recomputed(rec)
        assert got[rec["match_id"]] == [round(c, 9) for c in want]
    assert any(abs(x) > 1e-9 for cs in got.values() for x in cs)
    data = json.loads((summary.results / "leaderboard.json").read_text())
    assert data["luck"]["aivat"] == {"version": AIVAT_VERSION, "matches": 4, "corrected": 4, "draws": 0, "reveals": 4}
    assert "minus the luck of the face-down cards revealed in 4 matches (AIVAT)" in summary.leaderboard
