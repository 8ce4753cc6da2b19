"""A bad number on the command line is one line naming the option (exit 2), and every value an
option's help allows works: replay --seat, duel --move-s, bench protocol --rounds/--sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from tests.support.cli import invoke, one_line_error

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "bots" / "random_bot.py"


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One match of two seats, as `arena play --json` writes it."""
    res = invoke("play", "divers-weights", RANDOM, RANDOM, "--seed", "4", "--json", "--sandbox", "none")
    assert res.exit_code == 0, res.stderr
    path = tmp_path_factory.mktemp("record") / "m.json"
    path.write_text(res.stdout)
    return path


@pytest.mark.parametrize("seat", ["99", "2", "-5"])
def test_replay_refuses_a_seat_the_match_does_not_have(record: Path, seat: str) -> None:
    """It exited 0 and showed nothing; `arena play` refuses the same value."""
    one_line_error(invoke("replay", record, "--seat", seat), f"--seat {seat}: no such seat", "(seats 0..1)", code=2)


def test_replay_with_a_seat_of_the_match_shows_that_seat(record: Path) -> None:
    mid = json.loads(record.read_text())["match_id"]
    res = invoke("replay", record, "--seat", "1")
    assert res.exit_code == 0 and "replay ok" in res.stdout and mid in res.stdout, res.stderr


def test_replay_of_a_record_file_refuses_another_matchs_id(record: Path) -> None:
    """The id was ignored: the file's own match was replayed under another's name."""
    mid = json.loads(record.read_text())["match_id"]
    one_line_error(invoke("replay", record, "not-" + mid), f"holds match {mid!r}, not 'not-{mid}'", code=2)
    assert invoke("replay", record, mid).exit_code == 0


@pytest.mark.parametrize("value", ["0", "nan", "-1", "soon"])
def test_duel_move_s_out_of_range_names_the_option(tmp_path: Path, value: str) -> None:
    """It said "Invalid value: 0.0 is out of range" without naming --move-s."""
    res = invoke("duel", "divers-weights", RANDOM, RANDOM, "--results", tmp_path / "duel", "--move-s", value)
    one_line_error(res, "'--move-s'", repr(value), "0.001 to 3600", code=2)
    assert not (tmp_path / "duel").exists()


@pytest.mark.parametrize("rounds", ["1", "2", "50"])
def test_bench_protocol_runs_with_any_number_of_rounds_its_help_allows(rounds: str) -> None:
    """1 to 50 rounds crashed in _median_us (IndexError, exit 70): all were warm-up."""
    res = invoke("bench", "protocol", "--rounds", rounds, "--game", "divers-weights", "--sandbox", "none")
    assert res.exit_code == 0, res.output
    row = dict(line.strip().split(": ", 1) for line in res.stdout.splitlines())
    assert int(row["rounds"]) >= 1 and float(row["harness_us"]) > 0


def test_bench_protocol_with_an_unknown_sandbox_level_is_one_line() -> None:
    """It ended "unexpected SandboxUnavailable", exit 70."""
    one_line_error(invoke("bench", "protocol", "--sandbox", "zz"), "--sandbox zz", "unknown sandbox level 'zz'", code=2)


@pytest.mark.parametrize(
    "args",
    [
        ("play", "divers-weights", "builtin:random", "builtin:random", "--html", "{missing}/replay.html"),
        ("bench", "--json", "{missing}/bench.json", "--tiny", "--only", "P1"),
    ],
)
def test_an_output_file_in_a_missing_folder_is_refused_before_any_work(tmp_path, args):
    """Checked when the options are read, not after a match was played or a benchmark run."""
    from click.testing import CliRunner

    from arena.cli import cli

    missing = tmp_path / "not-here"
    result = CliRunner().invoke(cli, [a.format(missing=missing) for a in args])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"no folder '{missing}'; create it or give another path" in lines[0]
    assert "sandbox level" not in result.stderr and "decisions" not in result.output  # nothing ran


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            (
                "play",
                "divers-weights",
                "builtin:random",
                "builtin:random",
                "--option",
                "bidding=true",
                "--option",
                "bidding=false",
            ),
            "--option 'bidding' is given twice; give each option once",
        ),
        (
            ("play", "divers-weights", "builtin:random", "builtin:random", "--reveal"),
            "--reveal is for games with a --human",
        ),
        (
            ("serve-admin", "invite", "--data", "{tmp}/d", "--url", "javascript:alert(1)"),
            "give the ladder's http(s) address",
        ),
        (("export", "{tmp}/empty"), "no stored matches yet; run the tournament first"),
    ],
)
def test_input_that_would_be_ignored_or_give_an_empty_result_is_refused(tmp_path, args, says):
    """Each was accepted without a word: the last --option won, --reveal did nothing, the invite
    link was javascript:, the export an empty file."""
    if args[0] == "serve-admin":  # the ladder's extra: without it, that command says so instead
        for module in ("starlette", "uvicorn", "jinja2", "argon2", "multipart"):
            pytest.importorskip(module)
    from arena.tournament.store import ResultStore

    ResultStore(tmp_path / "empty").close()  # a store with no match in it
    result = CliRunner().invoke(cli, [str(a).format(tmp=tmp_path) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], result.stderr
    assert not (tmp_path / "d" / "ladder.sqlite").exists()  # no invite made for a bad link
