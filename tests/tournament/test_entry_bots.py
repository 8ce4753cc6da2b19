"""A game entry's `bots`: only the named roster bots play it; absent, nothing changes."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from arena.tournament.config import ConfigError
from arena.tournament.load import load_tournament
from arena.tournament.schedule import build_schedule, check_schedule
from tests import support
from tests.cli.test_cli_errors import invoke, one_line_error
from tests.tournament.test_schedule import SPRING_GAMES, bots, tournament
from tests.tournament.tournament_fixtures import make_project

ROOT = Path(__file__).resolve().parents[2]
SLOW = support.BOTS / "slow_random.py"
SECRET = "ab" * 32


def names_of(n: int) -> list[str]:
    return [b.name for b in bots(n)]


def entry(**kw: Any) -> dict[str, Any]:
    return {"id": "tightwad", "players": [3], "deals": 2, **kw}


def digest(schedule: list[Any]) -> str:
    text = json.dumps([[m.to_json(), m.key] for m in schedule], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


# ---- absent = the whole roster, byte for byte --------------------------------------------

# Computed on main before `bots` existed (commit 3d9e7d6): the whole schedule, every
# field of every match, of SPRING_GAMES plus a sampled entry on 7 bots.
UNCHANGED_GAMES = SPRING_GAMES + [
    {
        "id": "tightwad",
        "label": "tw-sampled",
        "players": [3, 5],
        "deals": 2,
        "schedule": "sampled",
        "matches_per_bot": 30,
    }
]
MAIN_DIGESTS = {
    "public": (2054, "463e25768e3b0a05adb9095d5c0f3498230950f5f4555e7fc009f6212d244455"),
    "secret": (2054, "9ce517ec6c2231604f84c7a17f5c35bd79eb2b352744e26b4b9e0185b7efcb58"),
}
# The stored config of a file that sets no new key. Changed on purpose twice: warm_bots' default
# went from 32 to 64 (fair play keeps a process per bot and rotation; docs/tournament.md), and
# time_control gained ``ponder`` (false: bots stopped between their turns). No match depends on
# either: the schedule digests above are unchanged.
MAIN_CONFIG_DIGEST = "c27aa542d114c2382be66b37ffb7b3813667b3bf54e6399a9ebdef899aab1dd2"


@pytest.mark.parametrize("deals", ["public", "secret"])
def test_a_file_without_bots_schedules_exactly_what_main_did(deals: str) -> None:
    s = build_schedule(tournament(UNCHANGED_GAMES, deals=deals), bots(7), SECRET)
    assert (len(s), digest(s)) == MAIN_DIGESTS[deals]


def test_a_file_without_bots_records_the_same_config() -> None:
    dumped = tournament(SPRING_GAMES).model_dump(mode="json")
    assert all("bots" not in g for g in dumped["games"])
    assert hashlib.sha256(json.dumps(dumped, sort_keys=True).encode()).hexdigest() == MAIN_CONFIG_DIGEST
    named = tournament([entry(bots=["bot00", "bot01", "bot02"])]).model_dump(mode="json")
    assert named["games"][0]["bots"] == ["bot00", "bot01", "bot02"]


# ---- schedule contents -------------------------------------------------------------------


@pytest.mark.parametrize("deals", ["public", "secret"])
def test_an_entry_with_bots_is_the_schedule_of_a_roster_of_only_those_bots(deals: str) -> None:
    pick = ["bot01", "bot03", "bot04", "bot06"]
    named = build_schedule(tournament([entry(players=[3, 4], bots=pick)], deals=deals), bots(8), SECRET)
    alone = build_schedule(
        tournament([entry(players=[3, 4])], deals=deals), [b for b in bots(8) if b.name in pick], SECRET
    )
    assert [m.to_json() for m in named] == [m.to_json() for m in alone]
    assert len(named) == 4 * 2 * 3 + 1 * 2 * 4  # C(4,3)·2·3 + C(4,4)·2·4
    assert {b for m in named for b in m.bots} == set(pick)


def test_the_lists_order_does_not_matter_the_rosters_does() -> None:
    a = build_schedule(tournament([entry(bots=["bot04", "bot00", "bot02"])]), bots(6))
    b = build_schedule(tournament([entry(bots=["bot00", "bot02", "bot04"])]), bots(6))
    assert [m.to_json() for m in a] == [m.to_json() for m in b]


def test_two_entries_each_play_their_own_bots_and_a_third_the_whole_roster() -> None:
    games = [
        {"id": "divers-weights", "players": [2], "deals": 2, "bots": ["bot00", "bot05"]},
        {"id": "tightwad", "players": [3], "deals": 1, "bots": ["bot01", "bot02", "bot03", "bot04"]},
        {"id": "palace", "players": [2], "deals": 1},
    ]
    s = build_schedule(tournament(games), bots(6))
    by_game: dict[str, set[str]] = {}
    for m in s:
        by_game.setdefault(m.game, set()).update(m.bots)
    assert by_game == {
        "divers-weights": {"bot00", "bot05"},
        "tightwad": {"bot01", "bot02", "bot03", "bot04"},
        "palace": set(names_of(6)),
    }
    assert Counter(m.game for m in s) == {"divers-weights": 1 * 2 * 2, "tightwad": 4 * 1 * 3, "palace": 15 * 1 * 2}
    assert [m.index for m in s] == list(range(len(s)))
    assert len({m.match_id for m in s}) == len(s)


def test_a_sampled_entry_draws_its_groups_from_its_bots_only() -> None:
    pick = ["bot01", "bot03", "bot04", "bot06", "bot08", "bot09"]
    g = entry(players=[3], deals=1, schedule="sampled", matches_per_bot=12, bots=pick)
    named = build_schedule(tournament([g]), bots(12))
    alone = build_schedule(
        tournament([{k: v for k, v in g.items() if k != "bots"}]), [b for b in bots(12) if b.name in pick]
    )
    assert [m.to_json() for m in named] == [m.to_json() for m in alone]
    plays = Counter(b for m in named for b in m.bots)
    assert set(plays) == set(pick) and max(plays.values()) - min(plays.values()) <= 3


def test_naming_one_more_bot_keeps_every_match_already_scheduled() -> None:
    before = build_schedule(tournament([entry(bots=["bot00", "bot01", "bot02"])]), bots(5))
    after = build_schedule(tournament([entry(bots=["bot00", "bot01", "bot02", "bot03"])]), bots(5))
    assert {m.match_id for m in before} < {m.match_id for m in after}
    assert len(after) == 4 * 2 * 3


def test_max_matches_counts_the_entrys_bots_not_the_roster() -> None:
    small = tournament([entry(deals=10, max_matches=30, bots=["bot00", "bot01", "bot02"])])
    check_schedule(small, bots(12))  # C(3,3)·10·3 = 30
    with pytest.raises(ConfigError, match=r"a round robin of 4 bots is 120 matches"):
        check_schedule(tournament([entry(deals=10, max_matches=30, bots=names_of(4))]), bots(12))


# ---- validation: one line naming the file, the field and the fix ---------------------------


def load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, games: str, extra_bots: str = "") -> Any:
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "tournaments" / "mine.yaml"
    path.write_text(
        f"name: mine\nseed: 1\nbots: [bots/*.py{extra_bots}]\ngames:\n  - {{id: palace, players: 2, deals: 1}}\n{games}"
    )
    return load_tournament("tournaments/mine.yaml")


ROSTER = "cautious_bot, greedy_bot, lucky_bot, random_bot"


@pytest.mark.parametrize(
    "bots_text, message",
    [
        (
            "[random_bot, gredy_bot, lucky_bot]",
            "games[1].bots[1]: no bot named 'gredy_bot' in the roster; did you mean 'greedy_bot'? "
            f"use one of the roster's names: {ROSTER}",
        ),
        (
            "[random_bot, lucky_bot, rusty]",
            f"games[1].bots[2]: no bot named 'rusty' in the roster; use one of the roster's names: {ROSTER}",
        ),
        (
            "[random_bot, lucky_bot, random_bot]",
            "games[1].bots[2]: bot 'random_bot' is listed twice (also bots[0]); list each bot once",
        ),
        (
            "[]",
            "games[1].bots: the list is empty; list at least 3 bot names from the roster, "
            "or remove bots to play the whole roster",
        ),
        (
            "[random_bot, lucky_bot]",
            "games[1].bots: tightwad with 3 players needs at least 3 bots, the list has 2; "
            "list at least 3 bots or remove 3 from players",
        ),
        (
            "random_bot",
            "games[1].bots: expected a list of bot names from the roster, got 'random_bot'; "
            "e.g. bots: [random_bot, greedy_bot, cautious_bot], or remove bots to play the whole roster",
        ),
        (
            "[random_bot, 7, lucky_bot]",
            "games[1].bots[1]: expected a bot name (a string), got 7; e.g. bots: [random_bot, greedy_bot, cautious_bot]",
        ),
        (
            "[bots/random_bot.py, lucky_bot, greedy_bot]",
            "games[1].bots[0]: no bot named 'bots/random_bot.py' in the roster; did you mean 'random_bot'? "
            f"use one of the roster's names: {ROSTER}",
        ),
    ],
)
def test_bad_bots_is_one_line_with_the_file_field_and_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bots_text: str, message: str
) -> None:
    with pytest.raises(ConfigError) as err:
        load(tmp_path, monkeypatch, f"  - {{id: tightwad, players: [3], deals: 1, bots: {bots_text}}}\n")
    assert str(err.value) == f"tournaments/mine.yaml: {message}"
    assert err.value.line == 6  # the entry's line in the file


def test_the_largest_player_count_decides_how_many_bots_are_needed() -> None:
    with pytest.raises(
        ConfigError,
        match=r"games\[0\]\.bots: tightwad with 5 players needs at least 5 bots, "
        r"the list has 4; list at least 5 bots or remove 5 from players",
    ):
        tournament([entry(players=[3, 5], bots=names_of(4))])


def test_a_long_roster_is_listed_in_part() -> None:
    t = tournament([entry(bots=["bot00", "bot01", "nobody"])])
    with pytest.raises(ConfigError) as err:
        check_schedule(t, bots(50))
    assert "bot00, bot01" in str(err.value) and "bot19 and 30 more" in str(err.value)
    assert "bot20" not in str(err.value)


def test_a_huge_unknown_name_is_shortened_in_the_message() -> None:
    t = tournament([entry(bots=["bot00", "bot01", "x" * 5000])])
    with pytest.raises(ConfigError) as err:
        check_schedule(t, bots(3))
    assert len(str(err.value)) < 400 and "\n" not in str(err.value)


def test_arena_run_reports_an_unknown_bot_in_one_line_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_text(
        "name: mine\nseed: 1\nbots: [bots/*.py]\ngames:\n"
        "  - {id: tightwad, players: 3, deals: 1, bots: [lucky_bot, greedy, random_bot]}\n"
        "results: out\n"
    )
    for args in (["run", "t.yaml"], ["run", "t.yaml", "--dry-run"]):
        result = invoke(*args)
        one_line_error(result, "t.yaml: games[0].bots[1]: no bot named 'greedy'", "did you mean 'greedy_bot'?")
        assert result.exit_code == 2
    assert not (tmp_path / "out").exists()


# ---- end to end: every report with bots missing from some games ---------------------------

FIELD = {"divers-weights": ["alpha", "bravo"], "tightwad": ["bravo", "charlie", "delta"]}
ROSTER_BOTS = ["alpha", "bravo", "charlie", "delta", "echo"]  # echo is in no entry: plays nothing


def _sections(text: str, heading: re.Pattern[str]) -> dict[str, str]:
    parts = heading.split(text)
    return {parts[i].strip().lower(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _named(text: str, pattern: str = r"(?<![a-z]){}(?![a-z])") -> set[str]:
    return {b for b in ROSTER_BOTS if re.search(pattern.format(b), text)}


@pytest.fixture(scope="module")
def two_fields(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    home = tmp_path_factory.mktemp("entrybots")
    for name in ROSTER_BOTS:
        shutil.copy(SLOW, home / f"{name}.py")
    games = "".join(
        f"  - {{id: {g}, players: {len(b) if g == 'divers-weights' else 3}, deals: 2, "
        f"bots: [{', '.join(reversed(b))}]}}\n"
        for g, b in FIELD.items()
    )
    (home / "t.yaml").write_text(
        f"name: fields\nseed: 5\nbots: [{', '.join(n + '.py' for n in ROSTER_BOTS)}]\n"
        f"games:\n{games}time_control: {{startup_s: 20, move_s: 5.0}}\n"
        "workers: 2\nresults: results\n"
    )
    res = subprocess.run(
        [sys.executable, "-m", "arena", "run", "t.yaml"], cwd=home, capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr
    (home / "stderr.txt").write_text(res.stderr)
    return home, res.stdout


def test_a_roster_bot_in_no_game_is_named_in_a_warning(two_fields: tuple[Path, str]) -> None:
    home, _ = two_fields
    warnings = [ln for ln in (home / "stderr.txt").read_text().splitlines() if "play in no game" in ln]
    assert warnings == [
        "arena: warning: t.yaml: 1 roster bot(s) play in no game (echo): "
        "add them to a game's bots list, or remove them from bots"
    ]
    assert "roster bots that play in no game: echo" in (home / "results" / "run.log").read_text()


def test_a_run_plays_each_entry_with_its_own_bots(two_fields: tuple[Path, str]) -> None:
    home, _ = two_fields
    board = json.loads((home / "results" / "leaderboard.json").read_text())
    assert board["complete"] and board["scheduled"] == board["counted"] == 1 * 2 * 2 + 1 * 2 * 3
    scopes = {s["scope"]: s for s in board["scopes"]}
    assert list(scopes) == ["overall", "divers-weights", "tightwad"]
    assert {s["bot"] for s in scopes["overall"]["standings"]} == set(FIELD["divers-weights"] + FIELD["tightwad"])
    for game, field in FIELD.items():
        assert sorted(s["bot"] for s in scopes[game]["standings"]) == field
        assert {h["bot"] for h in scopes[game]["head_to_head"]} <= set(field)
        assert all(s["matches"] == (4 if game == "divers-weights" else 6) for s in scopes[game]["standings"])


def test_every_report_format_lists_per_game_only_the_bots_that_played(two_fields: tuple[Path, str]) -> None:
    home, terminal = two_fields
    results = home / "results"
    csv_rows = [line.split(",") for line in (results / "leaderboard.csv").read_text().splitlines()[1:]]
    md = _sections((results / "leaderboard.md").read_text(), re.compile(r"^## (.+)$", re.M))
    term = _sections(terminal, re.compile(r"^(\S[^\n]*)\n=+$", re.M))
    html = _sections((results / "leaderboard.html").read_text(), re.compile(r"<h2>([^<]+)</h2>"))
    for game, field in FIELD.items():
        assert {r[2] for r in csv_rows if r[0] == game} == set(field)
        assert _named(md[game]) == set(field), md[game]
        assert _named(term[game]) == set(field), term[game]
        assert _named(html[game], r'<td class="name">{}</td>') == set(field)
    for fmt in ("table", "md", "csv", "json", "html"):
        res = subprocess.run(
            [sys.executable, "-m", "arena", "leaderboard", "results", "--format", fmt],
            cwd=home,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
        assert res.stdout.strip()


def test_the_docs_example_has_the_documented_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.tournament.roster import resolve_bots

    doc = (ROOT / "docs" / "tournament.md").read_text()
    block = re.search(r"```yaml\n(name: measured\n.*?)```", doc, re.S).group(1)
    assert "`C(6,2)·2·2 + C(6,3)·2·3 = 180` matches of Palace and\n`C(4,4)·4·4 = 16` of Tightwad" in doc
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tournaments" / "mine.yaml").write_text(block)
    t = load_tournament("tournaments/mine.yaml")
    s = build_schedule(t, resolve_bots(t), SECRET)
    assert Counter(m.game for m in s) == {"palace": 180, "tightwad": 16}
    assert {b for m in s if m.game == "tightwad" for b in m.bots} == {"lucky_bot", "greedy_bot", "greedy_2", "greedy_3"}
