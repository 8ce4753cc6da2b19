"""The tournament file: good files load with their defaults, bad ones fail in one line."""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.tournament.config import ConfigError, Limits, TimeControl, Tournament, parse_tournament
from arena.tournament.load import load_tournament
from arena.tournament.roster import resolve_bots
from tests.support.named_pipe import error_within
from tests.tournament.tournament_fixtures import PY_BOTS, make_project

FILE = "tournaments/bad.yaml"

BASE = """\
name: t
seed: 1
bots: [bots/*.py]
games:
  - {id: tightwad, players: 3, deals: 2}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    make_project(tmp_path)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "random_bot.py").write_text("print(2)\n")
    (tmp_path / "bots" / "notes.txt").write_text("not a bot\n")
    (tmp_path / "resfile").write_text("a file, not a folder\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(project: Path, text: str, name: str = FILE) -> str:
    (project / name).parent.mkdir(parents=True, exist_ok=True)
    (project / name).write_text(text)
    return name


def swap(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new)


# (test id, file text, field path in the message, expected pieces of the message)
BAD = [
    ("missing-name", swap("name: t\n", ""), "name", ["required field is missing", "name: spring"]),
    ("unsafe-name", swap("name: t", "name: ../up"), "name", ["folder name", "name: spring"]),
    ("seed-type", swap("seed: 1", "seed: abc"), "seed", ["expected an integer", "'abc'", "seed: 2026"]),
    ("seed-bool", swap("seed: 1", "seed: true"), "seed", ["expected an integer", "got true"]),
    ("seed-float", swap("seed: 1", "seed: 1.5"), "seed", ["expected an integer", "1.5"]),
    ("seed-negative", swap("seed: 1", "seed: -3"), "seed", ["at least 0", "seed: 2026"]),
    (
        "unknown-game",
        swap("id: tightwad", "id: tightwd"),
        "games[0].id",
        ["unknown game 'tightwd'", "did you mean 'tightwad'?", "divers-weights"],
    ),
    (
        "player-count",
        swap("{id: tightwad, players: 3, deals: 2}", "{id: divers-weights, players: [2, 5], deals: 2}"),
        "games[0].players",
        ["divers-weights takes 2 to 4 players, got 5; use players between 2 and 4"],
    ),
    ("player-type", swap("players: 3", "players: three"), "games[0].players", ["player count", "'three'"]),
    ("players-repeat", swap("players: 3", "players: [3, 3]"), "games[0].players", ["list each count once"]),
    ("players-empty", swap("players: 3", "players: []"), "games[0].players", ["empty", "players: [3, 4]"]),
    (
        "option-name",
        swap(
            "{id: tightwad, players: 3, deals: 2}",
            "{id: divers-weights, players: 2, deals: 2, options: {biding: true}}",
        ),
        "games[0].options.biding",
        ["no option 'biding'", "did you mean 'bidding'?"],
    ),
    (
        "option-value",
        swap(
            "{id: tightwad, players: 3, deals: 2}",
            "{id: divers-weights, players: 2, deals: 2, options: {bidding: 'yes'}}",
        ),
        "games[0].options.bidding",
        ["expected true or false", "'yes'"],
    ),
    (
        "option-for-one-count",
        swap("{id: tightwad, players: 3, deals: 2}", "{id: palace, players: [3, 8], deals: 1, options: {decks: 2}}"),
        "games[0].options.decks",
        ["with 8 players", "use at least 3 or 'auto'"],
    ),
    (
        "options-not-mapping",
        swap("deals: 2}", "deals: 2, options: [bidding]}"),
        "games[0].options",
        ["expected a mapping", "options: {bidding: true}"],
    ),
    ("deals-zero", swap("deals: 2", "deals: 0"), "games[0].deals", ["at least 1", "got 0", "deals: 4"]),
    ("deals-missing", swap(", deals: 2", ""), "games[0].deals", ["required field is missing", "deals: 4"]),
    ("deal-typo", swap("deals: 2", "deal: 2"), "games[0].deal", ["unknown key", "did you mean 'deals'?"]),
    ("unknown-top-key", BASE + "worker: 2\n", "worker", ["unknown key", "did you mean 'workers'?"]),
    ("workers-zero", BASE + "workers: 0\n", "workers", ["'auto' or an integer from 1 to 256", "got 0"]),
    ("workers-word", BASE + "workers: many\n", "workers", ["'auto' or an integer from 1 to 256", "'many'"]),
    ("glob-no-match", swap("bots/*.py", "robots/*.py"), "bots[0]", ["'robots/*.py' matches no bot file"]),
    (
        "builtin-as-cli-string",
        swap("[bots/*.py]", "[bots/*.py, 'builtin:random']"),
        "bots[1]",
        ["how the command line names a builtin player", "{builtin: random, name: house_random}"],
    ),
    (
        "missing-bot-file",
        swap("[bots/*.py]", "[bots/*.py, {path: bots/nobody.py}]"),
        "bots[1].path",
        ["no such file 'bots/nobody.py'"],
    ),
    (
        "duplicate-bot-names",
        swap("[bots/*.py]", "[bots/*.py, other/random_bot.py]"),
        "bots[1]",
        ["two bots are named 'random_bot'", "name: random_bot_2"],
    ),
    (
        "not-executable",
        swap("[bots/*.py]", "[bots/*.py, bots/notes.txt]"),
        "bots[1]",
        ["neither a .py file nor executable", "chmod +x bots/notes.txt"],
    ),
    (
        "bad-bot-name",
        swap("[bots/*.py]", "[bots/*.py, {path: bots/rusty, name: 'my bot'}]"),
        "bots[1].name",
        ["'my bot' is not allowed", "letters, digits"],
    ),
    # a name is one line: "lucky_bot\n" passed a ^...$ check and showed in the pages as a second lucky_bot
    (
        "bot-name-newline",
        swap("[bots/*.py]", '[bots/*.py, {path: bots/rusty, name: "lucky_bot\\n"}]'),
        "bots[1].name",
        ["'lucky_bot\\n' is not allowed", "letters, digits"],
    ),
    ("name-newline", swap("name: t", 'name: "t\\n"'), "name", ["folder name", "name: spring"]),
    (
        "label-newline",
        swap("deals: 2}", 'deals: 2, label: "tw\\n"}'),
        "games[0].label",
        ["label 'tw\\n' is not allowed"],
    ),
    ("bot-item-type", swap("[bots/*.py]", "[bots/*.py, 7]"), "bots[1]", ["expected a string", "got 7"]),
    ("bots-empty", swap("[bots/*.py]", "[]"), "bots", ["must not be empty", "bots: [bots/*.py]"]),
    (
        "negative-move",
        BASE + "time_control: {move_s: -1}\n",
        "time_control.move_s",
        ["at least 0.001", "got -1", "move_s: 1.0"],
    ),
    (
        "infinite-move",
        BASE + "time_control: {move_s: .inf}\n",
        "time_control.move_s",
        ["expected a finite number", "got inf", "from 0.001 to 3600"],
    ),
    ("nan-bank", BASE + "time_control: {bank_s: .nan}\n", "time_control.bank_s", ["expected a finite number"]),
    (
        "tiny-startup",
        BASE + "time_control: {startup_s: 0.000000001}\n",
        "time_control.startup_s",
        ["at least 0.1", "got 1e-09", "startup_s: 10"],
    ),
    (
        "startup-tiny",  # a number with an exponent is a number (YAML 1.2), held to its bounds
        BASE + "time_control: {startup_s: 1e-9}\n",
        "time_control.startup_s",
        ["must be at least 0.1", "got 1e-09"],
    ),
    ("huge-move", BASE + "time_control: {move_s: 1.0e+9}\n", "time_control.move_s", ["at most 3600"]),
    (
        "one-open-file",
        BASE + "limits: {open_files: 1}\n",
        "limits.open_files",
        ["at least 16", "got 1", "from 16 to 65536", "open_files: 64"],
    ),
    (
        "absurd-memory",
        BASE + "limits: {memory_mb: 100000000000000}\n",
        "limits.memory_mb",
        ["at most 1048576", "memory_mb: 1024"],
    ),
    (
        "float-memory",
        BASE + "limits: {memory_mb: 1e14}\n",
        "limits.memory_mb",
        ["expected an integer", "got 100000000000000.0", "from 32 to 1048576"],
    ),
    ("too-many-workers", BASE + "workers: 100000\n", "workers", ["from 1 to 256", "got 100000"]),
    ("warm-bots-zero", BASE + "warm_bots: 0\n", "warm_bots", ["at least 1", "warm_bots: 64"]),
    (
        "unbounded-matches-per-bot",
        swap("deals: 2}", "deals: 2, schedule: sampled, matches_per_bot: 10000000000}"),
        "games[0].matches_per_bot",
        ["at most 100000"],
    ),
    (
        "huge-max-matches",
        swap("deals: 2}", "deals: 2, max_matches: 10000000000}"),
        "games[0].max_matches",
        ["at most 1000000"],
    ),
    ("infinite-tau", BASE + "ratings: {tau: .inf}\n", "ratings.tau", ["expected a finite number"]),
    (
        "sampled-too-big",
        swap("deals: 2}", "deals: 2, schedule: sampled, matches_per_bot: 90000}"),
        "games[0].matches_per_bot",
        ["is 120000 matches", "more than max_matches 2000", "lower matches_per_bot"],
    ),
    (
        "billion-laughs",
        BASE
        + "x: &a [l, l, l, l, l, l, l, l, l, l]\n"
        + "".join(f"x{i}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(6)),
        "line 9",
        ["expands to more than 100000 values"],
    ),
    ("deep-nesting", BASE + "x: " + "[" * 40 + "]" * 40 + "\n", "line 6", ["nested more than 32 levels deep"]),
    ("recursive-alias", BASE + "x: &r [*r]\n", "line 6", ["refers to a value that contains it"]),
    ("negative-bank", BASE + "time_control: {bank_s: -5}\n", "time_control.bank_s", ["at least 0", "bank_s: 30"]),
    ("time-typo", BASE + "time_control: {move: 1}\n", "time_control.move", ["did you mean 'move_s'?"]),
    ("yaml-syntax", "name: t\nseed: 1\n  bots: [x]\n", "line 3", ["YAML syntax error", "indentation"]),
    ("yaml-unclosed", "name: [t\n", "line 2", ["YAML syntax error", "expected ',' or ']'"]),
    ("duplicate-key", BASE + "seed: 2\n", "line 6", ["duplicate key 'seed'", "first at line 2"]),
    ("empty-file", "", "", ["the file is empty", "name, seed, bots and games"]),
    ("comments-only", "# nothing yet\n", "", ["the file is empty"]),
    ("not-a-mapping", "- name: t\n- seed: 1\n", "", ["expected a mapping of fields", "got a list"]),
    (
        "sampled-without-matches",
        swap("deals: 2}", "deals: 2, schedule: sampled}"),
        "games[0].matches_per_bot",
        ["schedule 'sampled' needs matches_per_bot", "matches_per_bot: 100"],
    ),
    (
        "matches-without-sampled",
        swap("deals: 2}", "deals: 2, matches_per_bot: 9}"),
        "games[0].matches_per_bot",
        ["only applies to a sampled schedule", "schedule: sampled"],
    ),
    (
        "schedule-typo",
        swap("deals: 2}", "deals: 2, schedule: sampeld}"),
        "games[0].schedule",
        ["did you mean 'sampled'?", "'round-robin', 'sampled', 'gauntlet' or 'adaptive'"],
    ),
    (
        "too-few-bots",
        swap("{id: tightwad, players: 3, deals: 2}", "{id: tightwad, players: [3, 5], deals: 2}"),
        "games[0].players",
        ["tightwad with 5 players needs at least 5 bots, the roster has 4", "remove 5 from players"],
    ),
    (
        "round-robin-too-big",
        swap("deals: 2", "deals: 600"),
        "games[0].schedule",
        ["7200 matches", "more than max_matches 2000", "schedule: sampled", "matches_per_bot"],
    ),
    (
        "same-entry-twice",
        BASE + "  - {id: tightwad, players: [3, 4], deals: 1}\n",
        "games[1].players",
        ["tightwad with 3 players is already in games[0]", "label"],
    ),
    ("label-is-other-game", swap("deals: 2}", "deals: 2, label: palace}"), "games[0].label", ["another game's id"]),
    (
        "sandbox-level",
        BASE + "sandbox: ful\n",
        "sandbox",
        ["unknown sandbox level 'ful'", "did you mean 'full'?", "rlimits, none"],
    ),
    ("results-is-file", BASE + "results: resfile\n", "results", ["'resfile' is an existing file", "must be a folder"]),
    ("results-inside-file", BASE + "results: resfile/x\n", "results", ["which is a file", "must be a folder"]),
    (
        "root-missing",
        BASE + "root: nowhere\n",
        "root",
        ["'nowhere' is not a folder", "relative to the tournament file"],
    ),
    (
        "limits-type",
        BASE + "limits: {memory_mb: 1G}\n",
        "limits.memory_mb",
        ["expected an integer", "'1G'", "memory_mb: 1024"],
    ),
    ("limits-zero", BASE + "limits: {processes: 0}\n", "limits.processes", ["at least 1", "processes: 32"]),
    (
        "draw-probability",
        BASE + "ratings: {draw_probability: 1}\n",
        "ratings.draw_probability",
        ["less than 1", "draw_probability: 0.001"],
    ),
    ("fresh-processes-type", BASE + "fresh_processes: 'yes'\n", "fresh_processes", ["expected true or false"]),
    ("null-key", BASE + "null: x\n", "", ["the key null is not a field name", "quote it"]),
    ("empty-bot-path", swap("bots: [bots/*.py]", "bots: [bots/*.py, '']"), "bots[1]", ["the path is empty"]),
    ("bool-key", BASE + "true: x\n", "", ["the key true is not a field name"]),
    ("date-name", swap("name: t", "name: 2026-01-01"), "name", ["the date 2026-01-01", "quote it, '2026-01-01'"]),
    ("set-value", swap("name: t", "name: !!set {a, b}"), "name", ["a set (!!set); use a list"]),
    ("unknown-tag", swap("name: t", "name: !mine t"), "line 1, column 7", ["the tag '!mine'", "remove the tag"]),
    ("list-key", BASE + "? [a, b]\n: c\n", "line 6, column 3", ["unhashable key", "a key is a field name"]),
]


@pytest.mark.parametrize("text,field,expected", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_file_gives_one_line(project: Path, text: str, field: str, expected: list[str]) -> None:
    path = write(project, text)
    before = sorted(p for p in project.rglob("*"))
    with pytest.raises(ConfigError) as err:
        load_tournament(path)
    message = str(err.value)
    assert "\n" not in message
    # file first, then the field path (or the YAML line), then the problem and the fix
    assert re.match(re.escape(f"{FILE}: {field}") + ("[:,] " if field else ""), message), message
    for piece in expected:
        assert piece in message, f"{piece!r} not in {message!r}"
    assert sorted(p for p in project.rglob("*")) == before  # nothing written


def test_at_least_twenty_kinds_of_bad_file() -> None:
    assert len({b[0] for b in BAD}) >= 20


def test_config_error_is_an_arena_error() -> None:
    assert issubclass(ConfigError, ArenaError)
    e = ConfigError("x.yaml", "bad\nthing", "seed", 2)
    assert str(e) == "x.yaml: seed: bad thing" and e.line == 2 and e.field == "seed"


def test_missing_file(project: Path) -> None:
    with pytest.raises(ConfigError, match=r"^tournaments/none\.yaml: no such file"):
        load_tournament("tournaments/none.yaml")


def test_error_knows_the_line(project: Path) -> None:
    text = BASE + "  - id: divers-weights\n    players: [2, 9]\n    deals: 1\n"
    with pytest.raises(ConfigError) as err:
        load_tournament(write(project, text))
    assert err.value.field == "games[1].players" and err.value.line == 7


def test_several_problems_are_counted(project: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_tournament(write(project, "name: t\nseed: x\nbots: []\ngames: []\n"))
    assert str(err.value).endswith("(and 2 more problems)")


# ---- good files ----------------------------------------------------------------


def test_spring_example_with_defaults(project: Path) -> None:
    spring = Path(__file__).resolve().parents[2] / "tournaments" / "spring.yaml"
    t = load_tournament(spring)
    assert t.name == "spring" and t.seed == 2026
    assert t.games[0].players == [3, 4] and t.games[1].options == {"bidding": False}
    assert t.games[2].players == [4] and t.games[2].deals == 2
    assert t.games[0].schedule == "round-robin" and t.games[0].max_matches == 2000
    tc = t.time_control
    assert (tc.startup_s, tc.move_s, tc.bank_s, tc.grace_s) == (10, 1.0, None, 0.05)
    assert t.workers == "auto" and t.worker_count == (os.cpu_count() or 1)
    assert t.results_dir == project.resolve() / "results" / "spring"
    assert t.sandbox == "auto" and t.fresh_processes is False
    assert t.limits == Limits()
    assert (t.ratings.tau, t.ratings.draw_probability) == (None, None)
    assert t.base_dir == project.resolve()
    assert t.source == str(spring)


def test_limits_defaults() -> None:
    assert Limits().to_json() == {
        "memory_mb": 1024,
        "cpu_s": 600,
        "file_mb": 16,
        "open_files": 64,
        "processes": 32,
        "scratch_mb": 64,
        "stdout_line_kb": 1024,
        "stderr_log_kb": 256,
    }


def test_one_limits_and_one_time_control() -> None:
    """The tournament file validates into the very types the sandbox and referee read."""
    from arena.match import sandbox, timecontrol

    assert sandbox.Limits is Limits and timecontrol.TimeControl is TimeControl


def test_results_default_and_explicit(project: Path) -> None:
    t = load_tournament(write(project, BASE))
    assert t.results_dir == project.resolve() / "results" / "t"
    t = load_tournament(write(project, BASE + "results: out/here\nworkers: 3\n"))
    assert t.results_dir == project.resolve() / "out" / "here" and t.worker_count == 3
    assert not (project / "out").exists()


def test_paths_are_relative_to_the_working_directory(
    project: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "t.yaml").write_text(BASE)
    t = load_tournament(elsewhere / "t.yaml")  # cwd is the project: bots found there
    assert [b.name for b in resolve_bots(t)] == sorted(PY_BOTS)
    monkeypatch.chdir(elsewhere)
    with pytest.raises(ConfigError, match="matches no bot file"):
        load_tournament("t.yaml")


def test_a_glob_that_never_ends_is_stopped_in_one_line(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # '**' follows links to folders: '/**/*.py' walked /proc/self/root again and again, for ever
    from arena.tournament import roster

    loop = project / "loop"
    loop.mkdir()
    for n in range(3):  # three ways back up: each level triples the walk, as far as paths may grow
        (loop / f"up{n}").symlink_to("..")
    monkeypatch.setattr(roster, "GLOB_SECONDS", 1.0)
    name = write(project, BASE.replace("bots: [bots/*.py]", "bots: [bots/*.py, 'loop/**/nothing.py']"))
    started = time.monotonic()
    with pytest.raises(ConfigError) as err:
        load_tournament(name)
    assert time.monotonic() - started < 10
    assert str(err.value).startswith(
        f"{name}: bots[1]: 'loop/**/nothing.py' walks more than 100,000 paths or for more than 1 s "
    )
    assert not [t for t in threading.enumerate() if t.name == "bots-glob"]  # the walk was stopped, not left

    monkeypatch.setattr(roster, "GLOB_MAX_PATHS", 3)  # a pattern that matches too much is refused too
    with pytest.raises(ConfigError, match=r"'loop/\*\*/\*\.py' walks more than 3 paths"):
        load_tournament(write(project, BASE.replace("bots: [bots/*.py]", "bots: ['loop/**/*.py']")))


def test_root_is_relative_to_the_file(
    project: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project, BASE + "root: ..\n", "tournaments/rooted.yaml")
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    t = load_tournament(project / "tournaments" / "rooted.yaml")
    assert t.base_dir == project.resolve()
    assert len(resolve_bots(t)) == 4
    assert t.results_dir == project.resolve() / "results" / "t"


def test_players_int_becomes_a_list_and_options_resolve(project: Path) -> None:
    t = load_tournament(
        write(
            project,
            swap(
                "{id: tightwad, players: 3, deals: 2}",
                "{id: palace, players: [4, 2], deals: 1, options: {extended: true}}",
            ),
        )
    )
    g = t.games[0]
    assert g.players == [2, 4] and g.key == "palace"
    assert g.options_for(4) == {"extended": True, "decks": "auto", "wyrm_variant": False, "decision_cap": 100000}


def test_sampled_entry_is_counted_against_max_matches(project: Path) -> None:
    # every bot plays at least once: 2 groups of 3 x 600 deals x 3 rotations = 3600 matches
    text = swap("deals: 2}", "deals: 600, schedule: sampled, matches_per_bot: 30}")
    with pytest.raises(ConfigError, match="is 3600 matches, more than max_matches 2000"):
        load_tournament(write(project, text))
    text = swap("deals: 2}", "deals: 600, schedule: sampled, matches_per_bot: 30, max_matches: 3600}")
    assert load_tournament(write(project, text)).games[0].matches_per_bot == 30


def test_sampled_schedule_is_counted_not_built(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.tournament.schedule as schedule

    def no_drawing(*args: object) -> None:
        raise AssertionError("the schedule was drawn to be counted")

    monkeypatch.setattr(schedule, "draw_groups", no_drawing)
    text = swap("deals: 2}", "deals: 2, schedule: sampled, matches_per_bot: 99999, max_matches: 100000}")
    with pytest.raises(ConfigError, match="is 133332 matches, more than max_matches 100000"):
        load_tournament(write(project, text))


def test_oversize_file_is_refused_unread(project: Path) -> None:
    name = write(project, BASE + "# " + "x" * 1_100_000 + "\n")
    with pytest.raises(ConfigError) as err:
        load_tournament(name)
    assert (
        str(err.value) == f"{name}: is larger than 1024 KiB; a tournament file is a few lines of YAML: "
        "check that this is the right file"
    )


def test_a_named_pipe_nothing_writes_to_is_refused_at_once(project: Path) -> None:
    # open() would wait for a writer for ever: `arena run fifo.yaml` hung
    os.mkfifo(project / "pipe.yaml")
    said = error_within(10, project / "pipe.yaml", ConfigError, lambda: load_tournament("pipe.yaml"))
    assert said == "pipe.yaml: is a pipe (FIFO) that nothing wrote to; give the tournament file itself (a .yaml file)"


def test_dev_zero_is_refused_by_its_size(project: Path) -> None:
    with pytest.raises(ConfigError, match=r"^/dev/zero: is larger than 1024 KiB; "):
        load_tournament("/dev/zero")


def test_a_pipe_with_a_writer_is_read(project: Path) -> None:
    # `cat t.yaml | arena run /dev/stdin` keeps working: a pipe is read to its end
    read, write_end = os.pipe()
    os.write(write_end, BASE.encode())
    os.close(write_end)
    try:
        t = load_tournament(f"/proc/self/fd/{read}")
    finally:
        os.close(read)
    assert t.name == "t"


def test_a_number_of_thousands_of_digits_is_one_line_naming_the_field(project: Path) -> None:
    # int() refuses over 4,300 digits: a seed of 5,000 ended as a bug (exit 70, ValueError)
    name = write(project, BASE.replace("seed: 1", "seed: " + "9" * 5000))
    with pytest.raises(ConfigError) as err:
        load_tournament(name)
    assert str(err.value) == (
        f"{name}: line 2, column 7: seed: a number 5000 characters long; no field takes a number this large: "
        "give a value within the field's bounds (docs/tournament.md)"
    )
    name = write(project, BASE.replace("players: 3", "players: [3, " + "9" * 5000 + "]"))  # in a list: its line
    with pytest.raises(ConfigError, match=r": line 5, column 33: a number 5000 characters long; "):
        load_tournament(name)
    name = write(project, BASE.replace("seed: 1", "seed: " + "9" * 30))  # a long one still gets its bounds
    with pytest.raises(ConfigError, match=r"seed: must be at most 9223372036854775807, got 9{30}; use an integer"):
        load_tournament(name)


@pytest.mark.parametrize(("written", "seconds"), [("5e-1", 0.5), ("2E0", 2.0), (".5e-1", 0.05), ("1.5e+1", 15.0)])
def test_a_number_with_an_exponent_is_a_number_as_in_yaml_1_2(project: Path, written: str, seconds: float) -> None:
    # PyYAML (YAML 1.1) read 5e-1 as text: "move_s: expected a number, got '5e-1'"
    t = load_tournament(write(project, BASE + f"time_control: {{move_s: {written}}}\n"))
    assert t.time_control.move_s == seconds
    name = write(project, BASE + "time_control: {move_s: 1e308}\n")  # a number, held to the field's bounds
    with pytest.raises(ConfigError, match=r"time_control.move_s: must be at most 3600.0, got 1e\+308"):
        load_tournament(name)
    assert load_tournament(write(project, BASE.replace("name: t", "name: 1e3x"))).name == "1e3x"  # text stays text


@pytest.mark.parametrize(
    ("written", "read"), [("1:30", None), ("017", 17), ("+017", 17), ("0", 0), ("0x1F", 31), ("1_000", 1000)]
)
def test_integers_read_as_yaml_1_2_reads_them_not_in_base_60_or_octal(project: Path, written: str, read) -> None:
    # YAML 1.1 (PyYAML) read `seed: 1:30` as 90 (base 60) and `seed: 017` as 15 (octal), silently
    name = write(project, BASE.replace("seed: 1", f"seed: {written}"))
    if read is None:
        with pytest.raises(ConfigError, match=r"bad.yaml: seed: expected an integer, got '1:30'; use an integer"):
            load_tournament(name)
    else:
        assert load_tournament(name).seed == read


def test_a_base_60_float_is_text_as_in_yaml_1_2(project: Path) -> None:
    name = write(project, BASE + "time_control: {move_s: '0:30.5'}\n")
    with pytest.raises(ConfigError, match=r"time_control.move_s: expected a number, got '0:30.5'"):
        load_tournament(name)
    name = write(project, BASE + "time_control: {move_s: 1:30.5}\n")  # YAML 1.1 read 90.5
    with pytest.raises(ConfigError, match=r"time_control.move_s: expected a number, got '1:30.5'"):
        load_tournament(name)


def test_merge_keys_are_standard_yaml(project: Path) -> None:
    merged = BASE.replace(
        "  - {id: tightwad, players: 3, deals: 2}\n",
        "  - &one {id: tightwad, players: 3, deals: 2}\n  - <<: *one\n    label: tw-long\n    deals: 5\n",
    )
    t = load_tournament(write(project, merged))
    assert [(g.key, g.deals, g.players) for g in t.games] == [("tightwad", 2, [3]), ("tw-long", 5, [3])]


def test_parse_tournament_without_a_file() -> None:
    t = parse_tournament(
        {"name": "x", "seed": 3, "bots": ["a.py"], "games": [{"id": "palace", "players": 2, "deals": 1}]}
    )
    assert isinstance(t, Tournament) and t.source is None and t.base_dir == Path.cwd().resolve()
    with pytest.raises(ConfigError, match=r"^<tournament>: seed: "):
        parse_tournament({"name": "x", "seed": "3", "bots": ["a.py"], "games": []})


def test_models_are_frozen(project: Path) -> None:
    t = load_tournament(write(project, BASE))
    with pytest.raises(Exception):
        t.seed = 5  # type: ignore[misc]


def test_bot_hashes(project: Path) -> None:
    t = load_tournament(write(project, BASE))
    for b in resolve_bots(t):
        assert b.sha256 == hashlib.sha256(b.path.read_bytes()).hexdigest()


def test_a_tournament_file_in_a_loop_of_links_says_so(project: Path) -> None:
    (project / "a.yaml").symlink_to("b.yaml")
    (project / "b.yaml").symlink_to("a.yaml")
    with pytest.raises(ConfigError, match=r"symbolic links\); point it at the real file$"):
        load_tournament("a.yaml")


@pytest.mark.parametrize(
    "options, fix",
    [
        ("{decision_cap: 0}", "use an integer from 1 to 10000000"),
        ("{hands: 0}", "use an integer from 1 to 1000"),
        ("{bidding: 'no'}", "write true or false, unquoted"),
        ("{hands: 2, target: 30}", "remove one of them"),
        ("{hands: two}", "use an integer from 1 to 1000"),
    ],
)
def test_a_bad_game_option_says_the_fix(tmp_path, options, fix):
    """Every other field's error ends with its fix; the game options' said only what was wrong."""
    path = tmp_path / "t.yaml"
    path.write_text(
        "name: t\nseed: 1\nbots: [{builtin: random, name: a}, {builtin: random, name: b}]\n"
        f"games: [{{id: divers-weights, players: 2, deals: 1, options: {options}}}]\n"
    )
    with pytest.raises(ConfigError) as err:
        load_tournament(path)
    assert fix in str(err.value) and "\n" not in str(err.value)
