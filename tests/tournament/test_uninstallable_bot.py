"""A tournament's bot folder whose requirements pip cannot install forfeits its matches: the
tournament plays on (a broken bot never stops a tournament), and once the bot is fixed its
matches are played again. Alone (a duel, a check) the same failure is the command's error.

Offline: pip finds only the wheels the ``offline`` fixture points it at (tinypkg 1.0 and 2.0)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.support.cli import invoke

NEEDS_TINYPKG = """
import random
import tinypkg
from botkit import run

run(lambda observation, match: random.choice(observation["legal_actions"])["id"], name="needs-tinypkg")
"""


def folder_bot(base: Path, pin: str) -> Path:
    folder = base / "pinned"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "main.py").write_text(NEEDS_TINYPKG)
    (folder / "requirements.txt").write_text(f"{pin}\n")
    return folder


def tournament(base: Path, folder: Path) -> Path:
    path = base / "t.yaml"
    path.write_text(
        f"""
name: uninstallable
seed: 5
bots: [{folder}, {{builtin: random, name: r1}}, {{builtin: random, name: r2}}]
games:
  - {{id: tightwad, players: 3, deals: 1}}
time_control: {{startup_s: 20, move_s: 5.0}}
workers: 1
sandbox: none
trust_bots: true
luck_rollouts: 0
results: {base / "results"}
"""
    )
    return path


def seats(results: Path) -> list[tuple[str, str | None, str | None]]:
    con = sqlite3.connect(results / "results.sqlite")
    try:
        return con.execute(  # the seats of the matches the roster schedules now (not a changed bot's old ones)
            "SELECT bot, fault_kind, fault_detail FROM seats JOIN schedule USING (match_id) ORDER BY match_id, seat"
        ).fetchall()
    finally:
        con.close()


@pytest.mark.slow  # pip runs (a second or two each on a busy machine)
def test_a_bot_whose_requirements_cannot_install_forfeits_and_plays_again_once_fixed(offline: Path) -> None:
    folder = folder_bot(offline, "tinypkg==9.9")  # no such wheel
    path = tournament(offline, folder)

    first = invoke("run", path)
    assert first.exit_code == 0, first.output
    warned = [ln for ln in first.stderr.splitlines() if "forfeits its matches" in ln]
    # said once, though the file's roster is resolved twice (loaded, then run): pip ran once
    assert len(warned) == 1, first.stderr
    assert "'pinned'" in warned[0] and "requirements.txt" in warned[0] and "tinypkg==9.9" in warned[0]
    # it is not fixed yet: the line says what happens once it is, not that it was
    assert "(fixed," not in warned[0] and warned[0].endswith("(once it is fixed, its matches are played again)")
    assert "Traceback" not in first.output + first.stderr
    rows = seats(offline / "results")
    assert len(rows) == 3 * 3  # every match of the deal was played: 3 rotations of 3 seats
    mine = [r for r in rows if r[0] == "pinned"]
    assert [kind for _, kind, _ in mine] == ["crash"] * 3, mine  # the bot's failure, not the harness's
    assert all("pip could not install tinypkg==9.9" in (detail or "") for _, _, detail in mine)
    assert all(kind is None for bot, kind, _ in rows if bot != "pinned")

    folder_bot(offline, "tinypkg==1.0")  # fixed: its identity changes, its matches play again
    second = invoke("run", path)
    assert second.exit_code == 0, second.output
    assert "forfeits" not in second.stderr
    assert "bot pinned changed (its matches are played again)" in second.output + second.stderr
    rows = seats(offline / "results")
    assert len(rows) == 9 and all(kind is None for _, kind, _ in rows), rows


@pytest.mark.slow  # pip runs
def test_alone_the_same_failure_is_the_commands_one_line_error(offline: Path) -> None:
    folder = folder_bot(offline, "tinypkg==9.9")
    duel = invoke("duel", "tightwad", folder, "builtin:random", "--results", offline / "duel")
    assert duel.exit_code == 2 and "Traceback" not in duel.output + duel.stderr
    installing, error = duel.stderr.strip().splitlines()  # pip's attempt is announced, then the error
    assert installing.startswith("arena: installing tinypkg==9.9")
    assert error.startswith("arena: error: ") and "requirements.txt: pip could not install tinypkg==9.9" in error
