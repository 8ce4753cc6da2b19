"""Fair duplicate play: no bot process plays a deal twice, and no replay page shows a deal a
later match of its folder plays (arena/tournament/fair_play.py)."""

from __future__ import annotations

import io
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from arena.report.run import run_and_publish
from arena.tournament.config import parse_tournament
from arena.tournament.load import load_tournament
from arena.tournament.roster import BotEntry
from arena.tournament.schedule import build_schedule
from tests import support

REMEMBERS = support.BOTS / "remembers_deals.py"
ILLEGAL = support.BOTS / "illegal_answer.py"
SLOW = support.BOTS / "slow_random.py"
REPORT = re.compile(r"remembers: (\S+) again=(\d) hits=(\d+)")


def _write(tmp: Path, name: str, bots: list[Path], games: str, extra: str = "") -> Path:
    path = tmp / f"{name}.yaml"
    path.write_text(f"""name: {name}
seed: 11
bots: [{", ".join(str(b) for b in bots)}]
games:
{games}
time_control: {{startup_s: 20, move_s: 5.0}}
sandbox: rlimits
trust_bots: true
luck_rollouts: 0
results: {tmp / ("results-" + name)}
{extra}""")
    return path


def _run(path: Path, **kw):
    err = io.StringIO()
    summary = run_and_publish(load_tournament(path), out=io.StringIO(), err=err, **kw)
    return summary, err.getvalue()


def _rememberers(tmp: Path, n: int) -> list[Path]:
    (tmp / "bots").mkdir(exist_ok=True)
    out = []
    for i in range(n):
        out.append(tmp / "bots" / f"mem{i}.py")
        shutil.copy(REMEMBERS, out[-1])
    return out


THREE_GAMES = """  - {id: tightwad, players: [3], deals: 1}
  - {id: divers-weights, players: [3], deals: 1}
  - {id: palace, players: [3], deals: 1}"""


def _reports(results: Path) -> list[tuple[str, int, int]]:
    """Every remembering bot's end-of-match line, from every process's stderr log."""
    out = []
    for log in sorted((results / "logs").glob("worker-*/*.stderr.log")):
        out += [(m[1], int(m[2]), int(m[3])) for m in REPORT.finditer(log.read_text(errors="replace"))]
    return out


@pytest.mark.slow
def test_no_bot_process_sees_a_deal_twice_by_default_in_any_game(tmp_path: Path) -> None:
    # 4 bots in groups of 3: each bot plays every deal 9 times (3 groups x 3 rotations)
    summary, err = _run(_write(tmp_path, "fair", _rememberers(tmp_path, 4), THREE_GAMES, "workers: 2"))
    assert summary.complete and summary.played == 36 and summary.faults == 0
    reports = _reports(summary.results)
    assert len(reports) == 36 * 3  # every seat of every match reported
    assert {deal.split("/")[0] for deal, _, _ in reports} == {"tightwad", "divers-weights", "palace"}
    assert [r for r in reports if r[1]] == []  # no process met a deal it had played
    assert "none plays a deal twice" in err and "NOT fair" not in err


@pytest.mark.slow
def test_allow_deal_memory_lets_a_process_remember_and_every_run_says_so(tmp_path: Path) -> None:
    path = _write(tmp_path, "memory", _rememberers(tmp_path, 3), THREE_GAMES, "workers: 1\nallow_deal_memory: true")
    summary, err = _run(path)
    assert summary.complete and summary.played == 9
    hits: dict[str, int] = {}
    for deal, again, n in _reports(summary.results):
        if again:
            hits[deal.split("/")[0]] = hits.get(deal.split("/")[0], 0) + n
    # the detector works: in every game an opponent played cards this process had held
    assert set(hits) == {"tightwad", "divers-weights", "palace"} and min(hits.values()) > 0, hits
    assert "NOT fair for untrusted bots: allow_deal_memory: true" in err
    _, again = _run(path)  # a resumed run (nothing to play) says it again
    assert "NOT fair for untrusted bots" in again


# ---- replay pages --------------------------------------------------------------------------


def _shown_deals(results: Path) -> set[tuple[str, int, str]]:
    """(game, players, deal seed) of every match a replay page under replays/ shows."""
    pages = {p.stem for p in (results / "replays").glob("*.html")}
    con = sqlite3.connect(results / "results.sqlite")
    rows = con.execute("SELECT match_id, game, players, deal_seed FROM matches").fetchall()
    con.close()
    return {(g, p, s) for mid, g, p, s in rows if re.sub(r"[^A-Za-z0-9._-]", "_", mid) in pages}


def _matches(results: Path) -> dict[str, tuple[str, int, str, bytes]]:
    con = sqlite3.connect(results / "results.sqlite")
    rows = con.execute("SELECT match_id, game, players, deal_seed, record FROM matches").fetchall()
    con.close()
    return {mid: (g, p, s, rec) for mid, g, p, s, rec in rows}


def test_a_deal_shown_on_a_replay_page_is_never_dealt_again_in_its_folder(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    bots = [ILLEGAL]
    for name in ("r0", "r1", "r2"):
        shutil.copy(SLOW, tmp_path / "bots" / f"{name}.py")
        bots.append(tmp_path / "bots" / f"{name}.py")
    games = "  - {id: tightwad, players: [3], deals: 1}"
    first, first_err = _run(_write(tmp_path, "pages", bots[:3], games))
    assert first.complete and first.played == 3
    shown = _shown_deals(first.results)
    assert shown  # the illegal bot's first match has a page: its deal is public now
    before = _matches(first.results)

    # a bot joins: the new groups play deal 0 again, but not the cards a page showed
    second, err = _run(_write(tmp_path, "pages", bots, games))
    assert second.complete and second.played == 12 - 3
    after = _matches(second.results)
    assert {mid: after[mid] for mid in before} == before  # finished matches kept as they were
    new = {mid: v for mid, v in after.items() if mid not in before}
    assert len(new) == 9 and not {(g, p, s) for g, p, s, _ in new.values()} & shown
    counted = json.loads((second.results / "leaderboard.json").read_text())
    assert counted["counted"] == counted["scheduled"] == 12

    # --fresh plays everything again: never on a deal a page has shown, then or now
    shown |= _shown_deals(second.results)
    third, _ = _run(_write(tmp_path, "pages", bots, games), fresh=True)
    assert third.complete and third.played == 12
    assert not {(g, p, s) for g, p, s, _ in _matches(third.results).values()} & shown
    # every run says which rule applies
    assert "replay pages: a deal shown on one is never dealt to a match still to play (0 deals" in first_err
    assert "(1 deal shown on replay pages so far; 9 matches play replacement deals)" in err


def _entries(n: int) -> list[BotEntry]:
    return [BotEntry(f"b{i}", Path(f"/x/b{i}.py"), f"{i}" * 64, "python") for i in range(n)]


def test_the_schedule_replaces_a_revealed_deal_only_for_groups_that_have_not_finished_it() -> None:
    t = parse_tournament(
        {
            "name": "t",
            "seed": 3,
            "bots": ["bots/*.py"],
            "deals": "secret",
            "games": [{"id": "tightwad", "players": [3], "deals": 2}],
        }
    )
    secret = "ab" * 32
    base = build_schedule(t, _entries(4), secret)
    assert build_schedule(t, _entries(4), secret, revealed=(), stored=()) == base
    d0 = [m for m in base if m.deal == 0]
    seed = d0[0].deal_seed
    revealed = {("tightwad", 3, seed)}
    stored = {m.match_id for m in d0 if m.group == 0} | {d0[3].match_id}  # group 1: one rotation of 3
    new = build_schedule(t, _entries(4), secret, revealed=revealed, stored=stored)
    assert [m.index for m in new] == [m.index for m in base]
    for old, now in zip(base, new):
        if old.deal != 0 or old.group == 0:
            assert now == old  # finished or never shown: as before
        else:
            assert now.deal_seed != seed and now.match_id != old.match_id and now.bots == old.bots
    replaced = {m.group: m.deal_seed for m in new if m.deal == 0 and m.group}
    assert all(sum(m.deal_seed == s for m in new if m.group == g) == 3 for g, s in replaced.items())
    # public deals: anyone computes every deal, nothing is replaced
    public = t.model_copy(update={"deals": "public"})
    assert build_schedule(public, _entries(4), None, revealed=revealed, stored=()) == build_schedule(
        public, _entries(4), None
    )


def test_a_page_made_with_arena_replay_from_a_results_folder_records_its_deal(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from arena.cli import cli
    from arena.tournament.store import ResultStore

    runner = CliRunner()
    played = runner.invoke(
        cli,
        [
            "play",
            "tightwad",
            "builtin:random",
            "builtin:random",
            "builtin:random",
            "--seed",
            "7",
            "--json",
            "--sandbox",
            "none",
        ],
    )
    assert played.exit_code == 0, played.output
    record, _ = json.JSONDecoder().raw_decode(played.output)  # then stderr's lines
    with ResultStore(tmp_path / "results") as store:
        store.record_match(record)
        assert store.revealed_deals() == set()
    page = tmp_path / "page.html"
    out = runner.invoke(cli, ["replay", str(tmp_path / "results"), record["match_id"], "--html", str(page)])
    assert out.exit_code == 0, out.output
    assert page.exists()
    with ResultStore(tmp_path / "results") as store:
        assert store.revealed_deals() == {("tightwad", 3, int(record["deal_seed"]))}


@pytest.mark.slow
def test_the_process_policy_changes_no_stored_result(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    bots = []
    for name in ("s0", "s1", "s2", "s3"):  # deterministic: random seeded by each match's seed
        shutil.copy(SLOW, tmp_path / "bots" / f"{name}.py")
        bots.append(tmp_path / "bots" / f"{name}.py")
    games = "  - {id: tightwad, players: [3], deals: 1}"
    results = {}
    for name, extra in (("fair", ""), ("memory", "allow_deal_memory: true")):
        folder = tmp_path / f"results-{name}"
        if results:  # the same folder secret, so the same deals
            folder.mkdir()
            shutil.copy(tmp_path / "results-fair" / "deal-secret", folder / "deal-secret")
        summary, _ = _run(_write(tmp_path, name, bots, games, "workers: 1\n" + extra))
        assert summary.complete and summary.played == 12
        con = sqlite3.connect(folder / "results.sqlite")
        results[name] = con.execute(
            "SELECT match_id, seat, bot, place, score FROM seats ORDER BY match_id, seat"
        ).fetchall()
        con.close()
    assert results["fair"] == results["memory"]
