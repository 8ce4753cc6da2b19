"""The debugging loop from the command line: play, human seats, replay, check, leaderboard."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import support

ROOT = Path(__file__).resolve().parents[2]
BOTS = support.BOTS


def arena(*args: str, input: str | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=ROOT, capture_output=True, text=True, input=input, timeout=timeout
    )


def test_help_lists_every_command():
    out = arena("--help").stdout
    for cmd in ("run", "leaderboard", "play", "replay", "check", "bench"):
        assert cmd in out


@pytest.mark.parametrize(
    "game,bots",
    [
        ("tightwad", ["bots/tightwad_heuristic.py", "random_bot", "bots/perl_random.pl"]),
        ("divers-weights", ["divers_heuristic", "bots/perl_random.pl"]),
        ("palace", ["palace_heuristic", "random_bot", "random_bot", "perl_random"]),
    ],
)
def test_play_json_has_bot_place_score_fault_per_seat(game, bots):
    res = arena("play", game, *bots, "--seed", "3", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert [s["seat"] for s in doc["seats"]] == list(range(len(bots)))
    for s in doc["seats"]:
        assert set(s) >= {"bot", "place", "score", "fault"} and s["fault"] is None
    assert "sandbox level" in res.stderr


def test_play_same_seed_same_game_and_trace_shows_the_decisions():
    a = arena("play", "tightwad", "tightwad_heuristic", "random_bot", "random_bot", "--seed", "9")
    b = arena("play", "tightwad", "tightwad_heuristic", "random_bot", "random_bot", "--seed", "9")
    assert a.returncode == 0, a.stderr
    strip = lambda out: [ln for ln in out.splitlines() if " ms)" not in ln and " s · sandbox" not in ln]
    assert strip(a.stdout) == strip(b.stdout)
    assert "#0 · seat" in a.stdout and "legal: [0]" in a.stdout and "-> [" in a.stdout
    assert "hand: " in a.stdout


def test_play_seat_limits_the_trace_and_quiet_prints_only_the_result():
    full = arena("play", "tightwad", "random_bot", "random_bot", "random_bot", "--seed", "2").stdout
    one = arena("play", "tightwad", "random_bot", "random_bot", "random_bot", "--seed", "2", "--seat", "1").stdout
    quiet = arena("play", "tightwad", "random_bot", "random_bot", "random_bot", "--seed", "2", "--quiet").stdout
    moves = [ln for ln in one.splitlines() if ln.startswith("#")]
    assert moves and all("seat 1 " in ln for ln in moves)
    assert len(moves) < len([ln for ln in full.splitlines() if ln.startswith("#")])
    assert "#" not in quiet.split("match play/")[0] and "place" in quiet


def test_play_bad_input_is_one_clear_line():
    res = arena("play", "tightwad", "random_bot", "random_bot")
    assert res.returncode == 2 and "3 to 10 players" in res.stderr
    res = arena("play", "hearts", "random_bot", "random_bot", "random_bot")
    assert res.returncode == 2 and "unknown game" in res.stderr
    res = arena("play", "tightwad", "nosuchbot", "random_bot", "random_bot")
    assert res.returncode == 2 and "nosuchbot" in res.stderr
    res = arena("play", "divers-weights", "random_bot", "random_bot", "--option", "bidding=maybe")
    assert res.returncode == 2 and "bidding" in res.stderr
    for r in (res,):
        assert len(r.stderr.strip().splitlines()) == 1


def test_human_seat_fed_from_a_pipe_reasks_on_bad_input():
    # a person at seat 0: garbage and out-of-range input are asked again, then "0" forever
    answers = "\n".join(["what", "-1", "99", ""] + ["0"] * 400) + "\n"
    res = arena("play", "tightwad", "random_bot", "random_bot", "--human", "0", "--seed", "4", "--quiet", input=answers)
    assert res.returncode == 0, res.stderr
    assert "'what' is not a choice" in res.stdout
    assert "'99' is not a choice" in res.stdout
    assert "your turn (seat 0)" in res.stdout and "hand: " in res.stdout
    assert "match over: you placed" in res.stdout
    # the human sees only seat 0's view: no other seat's turn is shown
    assert "your turn (seat 1)" not in res.stdout


def test_the_same_human_seat_twice_is_one_line_not_one_seat_fewer():
    res = arena(
        "play", "tightwad", "builtin:random", "builtin:random", "--human", "0", "--human", "0", input="0\n" * 50
    )
    assert (
        res.returncode == 2
        and res.stderr.strip() == "arena: error: --human 0 is given twice; name each human seat once"
    )


def test_human_seat_end_of_input_is_a_fault_not_a_crash():
    res = arena("play", "tightwad", "random_bot", "random_bot", "--human", "1", "--seed", "4", "--json", input="")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout[res.stdout.index("{") :])  # after the human's prompts
    assert doc["seats"][1]["fault"]["kind"] == "crash"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    t = tmp / "t.yaml"
    t.write_text(f"""name: clitest
seed: 3
bots: [{ROOT}/bots/random_bot.py, {ROOT}/bots/tightwad_heuristic.py, {ROOT}/bots/palace_heuristic.py]
games:
  - id: tightwad
    players: [3]
    deals: 1
  - id: palace
    players: [3]
    deals: 1
results: {tmp}/results
""")
    res = arena("run", str(t))
    assert res.returncode == 0, res.stderr
    return t, tmp / "results"


def _a_match_id(folder: Path) -> str:
    import sqlite3

    con = sqlite3.connect(folder / "results.sqlite")
    return con.execute("SELECT match_id FROM matches WHERE game = 'palace' ORDER BY match_id").fetchone()[0]


def test_leaderboard_from_the_file_or_the_folder_in_every_format(results):
    t, folder = results
    a = arena("leaderboard", str(t))
    b = arena("leaderboard", str(folder))
    assert a.returncode == 0 and a.stdout == b.stdout and "conservative" in a.stdout
    assert json.loads(arena("leaderboard", str(folder), "--format", "json").stdout)
    assert "|" in arena("leaderboard", str(folder), "--format", "md").stdout
    assert "," in arena("leaderboard", str(folder), "--format", "csv").stdout


def test_replay_a_stored_match_exactly(results):
    _, folder = results
    mid = _a_match_id(folder)
    res = arena("replay", str(folder), mid)
    assert res.returncode == 0, res.stderr
    assert "replay ok" in res.stdout and "#0 · seat" in res.stdout


def test_replay_takes_the_tournament_file_as_matches_and_export_do(results):
    """`arena matches t.yaml` ends "see one with: arena replay t.yaml <match id>", which said the
    YAML was not a match record."""
    t, folder = results
    mid = _a_match_id(folder)
    hint = arena("matches", str(t)).stdout.splitlines()[-1]
    assert f"arena replay {t} <match id>" in hint
    res = arena("replay", str(t), mid)
    assert res.returncode == 0 and "replay ok" in res.stdout, res.stderr


def test_replay_detects_a_tampered_record(results, tmp_path):
    _, folder = results
    from arena.tournament.store import ResultStore

    rec = ResultStore(folder).get_record(_a_match_id(folder))
    d = rec["decisions"][7]
    d["action"] = 1 if d["action"] == 0 else 0
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(rec))
    res = arena("replay", str(path))
    assert res.returncode == 2
    assert "decision 7" in res.stderr


def test_replay_from_k_with_a_live_bot(results):
    _, folder = results
    mid = _a_match_id(folder)
    res = arena("replay", str(folder), mid, "--from", "10", "--bot", f"1={ROOT}/bots/palace_heuristic.py", "--quiet")
    assert res.returncode == 0, res.stderr
    assert "seat 1: placed" in res.stdout and "from decision 10" in res.stdout
    # the other seats follow the record while it applies: the line says where each left it
    said = res.stdout.strip().splitlines()[-1]
    assert "the other seats played their recorded moves throughout" in said or "off the record" in said, said


def test_the_seats_that_leave_the_record_are_named_with_the_decision():
    from arena.report.replay import _followed

    assert _followed({0: None, 2: None}) == "the other seats played their recorded moves throughout"
    assert (
        _followed({0: 11, 2: 7})
        == "off the record, random legal moves: seat 0 from decision 11, seat 2 from decision 7"
    )


def test_replay_from_k_with_a_live_bot_that_crashes_exits_1(results):
    _, folder = results
    mid = _a_match_id(folder)
    bot = ROOT / "tests" / "hostile" / "bots" / "exit_midway.py"
    res = arena("replay", str(folder), mid, "--from", "10", "--bot", f"1={bot}", "--quiet")
    assert res.returncode == 1, res.stderr
    assert "arena: a bot faulted, seat 1" in res.stderr


def test_replay_bad_arguments(results):
    _, folder = results
    assert "no match with id" in arena("replay", str(folder), "nope").stderr
    assert "go together" in arena("replay", str(folder), _a_match_id(folder), "--from", "3").stderr


def test_check_passes_a_good_bot_in_python_and_in_perl():
    for bot in ("bots/random_bot.py", "bots/perl_random.pl"):
        res = arena("check", bot)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "RESULT: PASS" in res.stdout and "FAIL" not in res.stdout


def test_check_and_play_take_a_bots_limits_from_the_command_line():
    """An ML bot holding 300 MB passes at the default memory_mb (1024) and not at --limit memory_mb=160:
    the limit reaches the sandbox. Bad pairs are one line each."""
    bot = str(BOTS / "holds_memory.py")
    assert arena("check", bot).returncode == 0
    res = arena("check", bot, "--limit", "memory_mb=160")
    assert res.returncode == 1 and "RESULT: FAIL" in res.stdout, res.stdout + res.stderr
    res = arena("play", "tightwad", bot, "builtin:random", "builtin:random", "--limit", "memory_mb=160", "--quiet")
    assert res.returncode == 1 and "a bot faulted" in res.stderr, res.stdout + res.stderr
    for pair, says in [
        ("memory_mb=2", "--limit memory_mb=2: give an integer from 32 to 1048576"),
        ("memory=2", "--limit 'memory=2': expected KEY=INTEGER with KEY one of memory_mb, cpu_s,"),
        ("processes=1e3", "--limit processes=1e3: give an integer from 1 to 4096"),
    ]:
        res = arena("check", bot, "--limit", pair)
        assert res.returncode == 2 and res.stderr.startswith(f"arena: error: {says}"), res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
    res = arena("play", "tightwad", bot, "builtin:random", "builtin:random", "--limit", "cpu_s=5", "--limit", "cpu_s=6")
    assert res.stderr.strip() == "arena: error: --limit cpu_s is given twice; give each limit once"


@pytest.mark.parametrize(
    "bot,expect",
    [
        ("illegal_answer.py", "answer with an `id` taken from observation['legal_actions']"),
        ("silent.py", "no hello within the start-up limit"),
        ("syntax_error.py", "SyntaxError"),
        ("one_match_only.py", "keep reading stdin after a result message"),
        ("ignores_bye.py", "exit when you read"),
        ("print_debug.py", "not JSON"),
    ],
)
def test_check_fails_broken_bots_with_the_right_message(bot, expect):
    res = arena("check", str(BOTS / bot), "--startup-s", "3")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "RESULT: FAIL" in res.stdout
    assert expect in res.stdout, res.stdout


def _fix(stdout: str) -> str:
    return next(ln.strip() for ln in stdout.splitlines() if ln.strip().startswith("fix: "))


@pytest.mark.parametrize(
    "bot,hint",
    [
        (
            "print_debug.py",
            "fix: a stray print: the bot wrote 'thinking about 7 moves' on stdout, which carries "
            "protocol lines only; write debugging text to stderr (botkit's log(...)",
        ),
        (
            "imports_numpy.py",
            "fix: the bot imports 'numpy', which is not there in the sandbox: a Python bot runs "
            "with the standard library, botkit and games only",
        ),
        ("returns_action_dict.py", "fix: choose() returned a whole action; return its id instead: action['id']"),
        ("sends_action_dict.py", "fix: reply with the action's id, not the action object"),
        ("no_shebang_bot", "fix: no_shebang_bot has no '#!' line, so the system does not know what runs it"),
        (
            "crlf_endings.pl",
            "fix: crlf_endings.pl has Windows line endings (CRLF): a '#!' line then names e.g. "
            "'perl\\r', which does not exist; convert the file with `dos2unix crlf_endings.pl`",
        ),
        ("never_answers.py", "fix: answer every act message within the move limit (--move-s)"),
        ("sends_string_id.py", 'fix: send the id as a number, not a string: {"type": "action", "action": 0}'),
        ("sends_action_text.pl", "fix: the bot sent the action's text \"play "),
        ("prints_action_text.sh", "fix: the bot wrote the action's text 'play "),
        ("answers_start.py", "fix: the bot sent a line where its action was due: it answers act messages only"),
        ("never_says_hello.sh", "fix: answer the arena's hello with a hello line as soon as the bot starts"),
    ],
)
def test_check_gives_the_specific_hint_for_a_known_mistake(bot, hint):
    assert (BOTS / bot).is_file()
    res = arena("check", str(BOTS / bot), "--startup-s", "10")
    assert res.returncode == 1 and "RESULT: FAIL" in res.stdout, res.stdout + res.stderr
    assert _fix(res.stdout).startswith(hint), res.stdout
    assert "slowest 0.0 ms" not in res.stdout  # a timing it did not measure


def test_check_of_a_bot_that_never_answers_reports_real_timings():
    res = arena("check", str(BOTS / "never_answers.py"), "--move-s", "0.5")
    assert "timeout at decision 0: no answer within 0.5 s" in res.stdout, res.stdout
    assert "  no decision answered\n" in res.stdout


def test_a_timeouts_record_keeps_what_the_bot_wrote_to_stderr_before_its_time_ran_out():
    """A timeout recorded no stderr tail (only a crash did), so an author could not see what the
    bot was doing when it ran out of time; the record, and the fault's line, now say it."""
    res = arena(
        "play", "tightwad", str(BOTS / "thinks_aloud_for_ever.py"), "builtin:random", "builtin:random",
        "--seed", "1", "--move-s", "0.5", "--json",
    )  # fmt: skip
    assert res.returncode == 1, res.stderr  # a bot faulted
    fault = json.loads(res.stdout)["faults"][0]
    assert fault["kind"] == "timeout" and "searching depth 12 of 40..." in fault["stderr_tail"], fault


def test_a_script_that_is_not_executable_is_told_to_chmod(tmp_path):
    script = tmp_path / "mybot.pl"
    script.write_text("#!/usr/bin/env perl\nprint 1;\n")
    res = arena("check", str(script))
    assert res.returncode == 2
    assert res.stderr.strip().splitlines()[-1].endswith("neither a .py file nor executable; chmod +x " + str(script))


@pytest.mark.slow
def test_replies_with_windows_line_endings_are_accepted():
    res = arena("check", str(BOTS / "crlf_replies.py"))
    assert res.returncode == 0 and "RESULT: PASS" in res.stdout, res.stdout


@pytest.mark.slow
def test_check_warns_when_the_slowest_answer_nears_the_move_limit():
    # 3.5 s of a 6 s limit: 58% (a margin of 2.5 s for a busy machine before it would time out)
    res = arena("check", str(BOTS / "slow_first_answer.py"), "--move-s", "6")
    assert res.returncode == 0 and "RESULT: PASS" in res.stdout, res.stdout  # a warning, not a failure
    warn = next(ln for ln in res.stdout.splitlines() if ln.strip().startswith("WARN"))
    assert "of the 6 s move limit: over" in warn and "decisions answered; slowest answer 3" in warn, warn


def test_timing_verdict_bands():
    from arena.tournament.check_hints import timing_verdict

    assert timing_verdict(None, 1.0) == ("", "no decision answered")
    assert timing_verdict(120.0, 1.0) == ("", "slowest answer 120.0 ms, 12% of the 1 s move limit")
    mark, line = timing_verdict(600.0, 1.0)
    assert mark == "WARN" and "60% of the 1 s move limit: over 50%" in line
    mark, line = timing_verdict(951.0, 1.0)
    assert mark == "WARN" and "95% of the 1 s move limit: over 80%, a busy machine will make it time out" in line
    # the advice is for a bot in any language, not Python's alone
    assert "CPU clock (Python: time.process_time(); C: clock(); Node: process.cpuUsage())" in line


def test_play_exits_1_when_a_bot_faulted_after_showing_the_match():
    res = arena(
        "play", "tightwad", str(BOTS / "crash_at_start.py"), "random_bot", "random_bot", "--seed", "3", "--quiet"
    )
    assert res.returncode == 1, res.stderr
    assert "crash" in res.stdout and "random_bot" in res.stdout  # the table still came
    assert (
        res.stderr.strip().splitlines()[-1]
        == "arena: a bot faulted, seat 0 (crash_at_start): crash at decision 0; exit code 1"
    )
    as_json = arena(
        "play", "tightwad", str(BOTS / "crash_at_start.py"), "random_bot", "random_bot", "--seed", "3", "--json"
    )
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["faults"][0]["kind"] == "crash"
    clean = arena("play", "tightwad", "random_bot", "random_bot", "random_bot", "--seed", "3", "--quiet")
    assert clean.returncode == 0, clean.stderr


def test_play_without_a_seed_deals_unpredictably_and_says_seeds_are_predictable() -> None:
    runs = [json.loads(arena("play", "palace", "random_bot", "random_bot", "--json").stdout) for _ in range(2)]
    assert [r["match_id"] for r in runs] == ["play/palace", "play/palace"]  # no seed in the id
    assert runs[0]["deal_seed"] != runs[1]["deal_seed"]
    seeded = json.loads(arena("play", "palace", "random_bot", "random_bot", "--seed", "5", "--json").stdout)
    assert seeded["match_id"] == "play/palace/5" and seeded["deal_seed"] == 5
    help_text = " ".join(arena("play", "--help").stdout.split())
    assert "PREDICTABLE" in help_text and "random deal" in help_text


def _initial_hand_line(seat: int) -> str:
    from games import get_game

    spec = get_game("tightwad")
    text = spec.new_game(3, 4, spec.resolve_options(3, {})).observation_text(seat)
    return next(line for line in text.splitlines() if line.startswith("hand: "))


def test_a_human_sees_only_their_own_seat_unless_reveal():
    answers = "\n".join(["0"] * 400) + "\n"
    hidden = arena("play", "tightwad", "random_bot", "random_bot", "--human", "0", "--seed", "4", input=answers)
    assert hidden.returncode == 0, hidden.stderr
    own = _initial_hand_line(0).removeprefix("hand: ").split(", ")
    assert all(name in hidden.stdout for name in own)  # its own hand (drawn with ranks)
    for other in (1, 2):
        assert _initial_hand_line(other) not in hidden.stdout  # never an opponent's
        assert f"seat {other} (random_bot) to move" not in hidden.stdout
    shown = arena(
        "play", "tightwad", "random_bot", "random_bot", "--human", "0", "--seed", "4", "--reveal", input=answers
    )
    assert shown.returncode == 0, shown.stderr
    for other in (1, 2):
        assert _initial_hand_line(other) in shown.stdout
    unseeded = arena("play", "tightwad", "random_bot", "random_bot", "--human", "0", input=answers)
    assert "seed hidden" in unseeded.stdout  # a drawn seed would give the deal away


def test_export_writes_every_stored_record_as_one_json_line_that_replays(results, tmp_path):
    import io

    from arena.errors import ArenaError
    from arena.match.referee import RECORD_SCHEMA
    from arena.report.export import iter_records, write_records
    from arena.report.replay import load_record, verify_record
    from arena.tournament.store import ResultStore

    t, folder = results
    out = tmp_path / "all.jsonl"
    res = arena("export", str(folder), "-o", str(out))
    assert res.returncode == 0, res.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    store = ResultStore(folder)
    ids = [r.match_id for r in store.iter_results()]
    assert len(lines) == len(ids) == store.match_count() and f"wrote {len(ids)} match records" in res.stderr
    records = [json.loads(line) for line in lines]
    assert [r["match_id"] for r in records] == ids  # schedule order, none twice
    for r in records:
        assert r["schema"] == RECORD_SCHEMA and r == store.get_record(r["match_id"])
        verify_record(r)  # what arena replay runs
        assert load_record(out, r["match_id"]) == r  # arena replay FILE.jsonl ID
    replayed = arena("replay", str(out), records[-1]["match_id"], "--quiet")
    assert replayed.returncode == 0 and "replay ok" in replayed.stdout, replayed.stderr

    # filters, standard output, the tournament file as the source
    buf = io.StringIO()
    write_records(iter_records(t, game="palace"), buf)
    palace = buf.getvalue().splitlines()
    assert palace == [line for line, r in zip(lines, records) if r["game"] == "palace"] and palace
    with pytest.raises(ArenaError, match="did you mean 'tightwad_heuristic'"):
        list(iter_records(folder, bot="tightwad_heuristc"))
    with pytest.raises(ArenaError, match="did you mean 'palace'"):
        list(iter_records(folder, game="palce"))
    mine = list(iter_records(folder, bot="tightwad_heuristic"))
    assert mine and all("tightwad_heuristic" in [b["name"] for b in r["bots"]] for r in mine)

    # docs/records.md documents every field a record has
    doc = (ROOT / "docs" / "records.md").read_text()
    for key in records[0]:
        assert f"| `{key}` |" in doc, key
    for key in records[0]["decisions"][0]:
        assert f"| `{key}` |" in doc, key

    # mistakes are one line
    with pytest.raises(ArenaError, match="no results yet"):
        list(iter_records(tmp_path))
    with pytest.raises(ArenaError, match="give a match id"):
        load_record(out)
    out.write_text(out.read_text()[:-40] + "\n")  # a cut line
    with pytest.raises(ArenaError, match="is not JSON") as err:
        load_record(out, "nope")
    assert "\n" not in str(err.value)
    res = arena("export", str(tmp_path / "nowhere"))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("ponder", [True, False])
def test_replay_from_k_runs_the_live_bot_as_the_recorded_match_ran_its_bots(results, ponder):
    """`replay --from` always stopped the live bot between its turns, even when the match was
    played with `time_control.ponder: true`: a bot that thinks on the others' time then played
    another match than the one it is debugged against."""
    from arena.report.replay import load_record, take_over

    _, folder = results
    record = load_record(folder, _a_match_id(folder))
    record["time_control"] = {**record["time_control"], "ponder": ponder}
    new, said = take_over(record, 10, f"1={ROOT}/bots/palace_heuristic.py", sandbox_level="none")
    assert new["time_control"]["ponder"] is ponder, new["time_control"]
    assert "from decision 10" in said
