"""Bots: globs, names, kinds, hashes; one-off lookup for `arena play`."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from arena.tournament.config import ConfigError
from arena.tournament.load import load_tournament
from arena.tournament.roster import BotEntry, RosterError, bot_entry, resolve_bots
from tests.tournament.tournament_fixtures import PY_BOTS, make_project

HEAD = "name: t\nseed: 1\ngames:\n  - {id: palace, players: 2, deals: 1}\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def roster(project: Path, bots: str) -> list[BotEntry]:
    (project / "t.yaml").write_text(HEAD + f"bots: {bots}\n")
    return resolve_bots(load_tournament("t.yaml"))


def test_glob_skips_underscore_files_and_sorts_by_name(project: Path) -> None:
    bots = roster(project, "[bots/*.py]")
    assert [b.name for b in bots] == sorted(PY_BOTS)
    assert all(b.kind == "python" and b.path.is_absolute() for b in bots)
    assert "_botlib" not in {b.name for b in bots}


def test_star_matches_executables_too(project: Path) -> None:
    bots = {b.name: b for b in roster(project, "['bots/*']")}
    assert set(bots) == set(PY_BOTS) | {"rusty"}
    assert bots["rusty"].kind == "executable"


def test_plain_path_to_an_underscore_file_is_kept(project: Path) -> None:
    assert [b.name for b in roster(project, "[bots/_botlib.py, bots/rusty]")] == ["_botlib", "rusty"]


def test_recursive_glob(project: Path) -> None:
    (project / "bots" / "team").mkdir()
    (project / "bots" / "team" / "deep_bot.py").write_text("print(1)\n")
    assert "deep_bot" in {b.name for b in roster(project, "['bots/**/*.py']")}


def test_entry_names_and_hashes(project: Path) -> None:
    bots = roster(project, "[{path: bots/random_bot.py, name: rnd}, {path: bots/random_bot.py, name: rnd2}]")
    assert [b.name for b in bots] == ["rnd", "rnd2"]
    assert bots[0].path == bots[1].path == project / "bots" / "random_bot.py"
    assert bots[0].sha256 == hashlib.sha256(bots[0].path.read_bytes()).hexdigest()


def test_same_file_twice_counts_once(project: Path) -> None:
    assert len(roster(project, "[bots/*.py, bots/random_bot.py]")) == len(PY_BOTS)


def test_hash_follows_the_content(project: Path) -> None:
    before = {b.name: b.sha256 for b in roster(project, "[bots/*.py]")}
    (project / "bots" / "lucky_bot.py").write_text("print('changed')\n")
    after = {b.name: b.sha256 for b in roster(project, "[bots/*.py]")}
    assert before["lucky_bot"] != after["lucky_bot"]
    assert {k: v for k, v in before.items() if k != "lucky_bot"} == {k: v for k, v in after.items() if k != "lucky_bot"}


def test_a_folder_without_an_entry_file_is_not_a_bot(project: Path) -> None:
    """A folder is a bot only with an entry file (docs/first-bot.md, bot folders)."""
    (project / "bots" / "team").mkdir()
    with pytest.raises(ConfigError, match=r"bots\[0\]\.path: .*bots/team: no entry file; add main.py"):
        roster(project, "[{path: bots/team}]")
    (project / "bots" / "team" / "main.py").write_text("print()\n")
    entries = {e.name: e for e in roster(project, "[{path: bots/team}, bots/greedy_bot.py]")}
    assert entries["team"].kind == "folder" and entries["team"].path == project / "bots" / "team"


def test_bot_entry_by_path_and_by_name(project: Path) -> None:
    by_path = bot_entry("bots/greedy_bot.py")
    assert by_path.name == "greedy_bot" and by_path.kind == "python"
    assert by_path.path == project / "bots" / "greedy_bot.py"
    assert bot_entry("greedy_bot") == by_path
    assert bot_entry("rusty").kind == "executable"
    assert bot_entry("greedy_bot", bots_dir=project / "bots") == by_path


def test_bot_entry_prefers_the_py_file_and_reports_ambiguity(project: Path) -> None:
    exe = project / "bots" / "greedy_bot.sh"
    exe.write_text("#!/bin/sh\n")
    os.chmod(exe, 0o755)
    assert bot_entry("greedy_bot").path.suffix == ".py"
    (project / "bots" / "rusty.sh").write_text("#!/bin/sh\n")
    with pytest.raises(RosterError, match="several bots"):
        bot_entry("rusty")


def test_bot_entry_errors(project: Path) -> None:
    with pytest.raises(RosterError, match="no bot of that name in bots"):
        bot_entry("nobody")
    with pytest.raises(RosterError, match="no such bot file"):
        bot_entry("elsewhere/nobody.py")
    (project / "plain.txt").write_text("x")
    with pytest.raises(RosterError, match="chmod"):
        bot_entry("plain.txt")


def test_symlinked_bot_keeps_its_own_name_and_path(project: Path) -> None:
    (project / "bots" / "alias.py").symlink_to(project / "bots" / "random_bot.py")
    bots = {b.name: b for b in roster(project, "[bots/*.py]")}
    assert bots["alias"].path == project / "bots" / "alias.py"
    assert bots["alias"].sha256 == bots["random_bot"].sha256


@pytest.mark.parametrize("entry", ["/bin/true", "{path: /bin/true, name: truth}", "/usr/bin/tru*"])
def test_a_system_program_is_no_bot(project: Path, entry: str) -> None:
    # /bin/true exits at once and speaks no protocol: refused in one line, not played
    with pytest.raises(ConfigError) as err:
        roster(project, f"[bots/random_bot.py, bots/greedy_bot.py, {entry!s}]")
    text = str(err.value)
    assert len(text.splitlines()) == 1
    assert "true" in text and "program of the system" in text and "leave this out" in text


def test_a_link_to_a_system_program_is_no_bot(project: Path) -> None:
    (project / "bots" / "envbot").symlink_to("/usr/bin/env")
    with pytest.raises(RosterError, match="program of the system .*/usr/bin/env"):
        bot_entry("bots/envbot")
    with pytest.raises(RosterError, match="program of the system"):
        bot_entry("/bin/true")
    with pytest.raises(ConfigError, match="program of the system"):
        roster(project, "['bots/*']")


def test_arena_check_and_play_refuse_a_system_program_in_one_line(project: Path) -> None:
    from click.testing import CliRunner

    from arena.cli import cli

    for args in (["check", "/bin/true"], ["play", "tightwad", "/bin/true", "builtin:random", "builtin:random"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "/bin/true is a program of the system" in lines[0], result.stderr


def test_a_short_name_outside_the_project_folder_says_where_short_names_work(tmp_path: Path, monkeypatch) -> None:
    """`arena play tightwad ./mybot random_bot random_bot` run in the author's own folder (no
    bots/ there) only said 'give the bot's file path'."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RosterError) as err:
        bot_entry("random_bot", allow_builtin=True)
    assert "no bots folder here: short names work in the project folder" in str(err.value)
    assert "builtin:random" in str(err.value)
