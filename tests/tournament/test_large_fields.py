"""Large fields: a worker keeps a bounded number of warm bots, and nothing breaks when
descriptors are numbered above 1023 (select() cannot watch those; poll() can)."""

from __future__ import annotations

import os
import re
import resource
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import games
from arena.cli import cli
from arena.match.detect import open_sandbox
from arena.match.sandbox import Limits
from arena.match.timecontrol import TimeControl
from arena.tournament.match_player import MatchPlayer
from arena.tournament.roster import bot_entry
from arena.tournament.schedule import MatchSpec

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "bots" / "random_bot.py"


def copies(folder: Path, n: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        path = folder / f"b{i:03d}.py"
        shutil.copy(RANDOM, path)
        out.append(path)
    return out


def match(n: int, *bots: str) -> MatchSpec:
    options = games.get_game("divers-weights").resolve_options(len(bots), {})
    return MatchSpec(
        match_id=f"dw/{n}",
        index=n,
        game="divers-weights",
        players=len(bots),
        options=options,
        deal_seed=1000 + n,
        match_seed=2000 + n,
        bots=bots,
    )


@pytest.fixture
def player(tmp_path: Path):
    entries = {p.stem: bot_entry(str(p)) for p in copies(tmp_path / "bots", 6)}
    mp = MatchPlayer(
        entries,
        sandbox=open_sandbox("rlimits"),
        limits=Limits(),
        time_control=TimeControl(startup_s=20, move_s=5),
        log_dir=None,
        fresh=False,
        tournament="lru",
        warm_bots=3,
    )
    yield mp
    mp.close()


def test_a_worker_keeps_at_most_warm_bots_least_recently_used_out(player: MatchPlayer) -> None:
    seen = []
    for n, seats in enumerate([("b000", "b001"), ("b002", "b003"), ("b004", "b005"), ("b003", "b000")]):
        record = player.play(match(n, *seats))
        assert not any(record["faults"]), record["faults"]
        assert len(player.running()) <= 3
        seen.append(player.running())
    assert seen == [["b000", "b001"], ["b001", "b002", "b003"], ["b003", "b004", "b005"], ["b005", "b003", "b000"]]
    stopped = [name for name, agent in player.agents.items() if agent.proc is None]
    assert sorted(stopped) == ["b001", "b002", "b004"]


def test_warm_bots_never_stops_a_seated_bot(player: MatchPlayer) -> None:
    player.warm_bots = 1
    record = player.play(match(0, "b000", "b001"))
    assert not any(record["faults"]) and player.running() == ["b000", "b001"]
    player.play(match(1, "b002", "b001"))
    assert player.running() == ["b002", "b001"]


def _fill_descriptors(above: int) -> list[int]:
    """Open /dev/null until the next descriptor is numbered above ``above``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < above + 200:
        pytest.skip(f"the hard limit of open files ({hard}) is too low for this test")
    if soft != resource.RLIM_INFINITY and soft < above + 200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (above + 200, hard))
    held = []
    fd = os.open(os.devnull, os.O_RDONLY)
    held.append(fd)
    while fd <= above:
        fd = os.dup(held[0])
        held.append(fd)
    return held


def test_bots_work_with_descriptors_numbered_above_1023(player: MatchPlayer) -> None:
    held = _fill_descriptors(1100)
    try:
        record = player.play(match(0, "b000", "b001"))
        assert not any(record["faults"]), record["faults"]
        agent = player.agents["b000"]
        proc = agent.proc
        assert min(proc._fdkind) > 1024
        assert proc.alive()
        agent.close()  # waits for the exit on a pidfd numbered above 1023
        assert not proc.alive()
    finally:
        for fd in held:
            os.close(fd)


def test_a_forked_worker_becomes_a_subreaper_itself() -> None:
    """PR_SET_CHILD_SUBREAPER is not inherited by fork: a worker forked from an arena that
    already is one must still set it, or its bots' orphans pile up as zombies of the parent."""
    import ctypes

    from arena.match.sandbox import become_subreaper

    assert become_subreaper()
    pid = os.fork()
    if pid == 0:  # the child: a worker
        libc = ctypes.CDLL(None, use_errno=True)
        flag = ctypes.c_int(0)
        ok = become_subreaper() and libc.prctl(37, ctypes.byref(flag), 0, 0, 0) == 0  # PR_GET_CHILD_SUBREAPER
        os._exit(0 if ok and flag.value == 1 else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_no_select_call_in_the_arena() -> None:
    """select() fails on descriptors above 1023: the arena polls instead."""
    offenders = []
    for path in (ROOT / "arena").rglob("*.py"):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\bselect\.select\(|\bselect\.epoll\(|^\s*from select import", line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []


@pytest.mark.slow
def test_a_sampled_field_runs_with_descriptors_above_1023(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole `arena run` of a 40-bot sampled field, every descriptor it opens above 1023."""
    copies(tmp_path / "bots", 40)
    (tmp_path / "big.yaml").write_text(
        "name: big\nseed: 3\nbots: [bots/*.py]\n"
        "games: [{id: divers-weights, players: 2, deals: 1, schedule: sampled, matches_per_bot: 2}]\n"
        "time_control: {startup_s: 30, move_s: 10}\nworkers: 2\nwarm_bots: 8\nsandbox: rlimits\ntrust_bots: true\n"
    )
    monkeypatch.chdir(tmp_path)
    held = _fill_descriptors(1100)
    try:
        result = CliRunner().invoke(cli, ["run", "big.yaml"], catch_exceptions=False)
    finally:
        for fd in held:
            os.close(fd)
    assert result.exit_code == 0, result.output
    assert re.search(r"\b40 matches played now, 0 before; 0 faults", result.output), result.output


SPINNER = """\
import json, os, sys
if os.fork() == 0:  # a child left running: it spins between the matches too
    while True:
        pass
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "spinner"}), flush=True)
    elif msg["type"] == "act":
        print(json.dumps({"type": "action", "action": msg["observation"]["legal_actions"][0]["id"]}), flush=True)
    elif msg["type"] == "bye":
        break
"""


def test_a_warm_process_whose_children_spin_between_its_matches_is_stopped(player: MatchPlayer, tmp_path) -> None:
    """A fork bomb's children kept spinning while its warm process waited for its next match,
    taking the CPU other bots' matches are timed on (a ladder's load went from 3.6 to 78).
    With ``ponder: true`` nothing else stops them (nor, at levels without a cgroup, a child
    in a session of its own)."""
    from arena.tournament import match_player

    spinner = tmp_path / "spinner.py"
    spinner.write_text(SPINNER)
    player.tc = TimeControl(startup_s=20, move_s=5, ponder=True)
    player.warm_bots = 10  # room for every bot: only the sweep stops a process here
    player.entries = {**player.entries, "spinner": bot_entry(str(spinner))}
    record = player.play(match(0, "spinner", "b000"))
    assert not any(record["faults"]), record["faults"]
    proc = player.agents["spinner"].proc
    start = player.idle_from[proc]
    deadline = time.monotonic() + 120
    while proc.cpu_seconds() - start <= match_player.IDLE_CPU_S + 0.5 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert proc.cpu_seconds() - start > match_player.IDLE_CPU_S, "the child never spun"
    player.play(match(1, "b001", "b002"))  # another match of this worker: the idle spinner is stopped
    assert player.agents["spinner"].proc is None and not proc.alive()
    assert player.agents["b000"].proc is not None  # an idle honest bot stays warm
    again = player.play(match(2, "spinner", "b000"))  # a new process plays its next match
    assert not any(again["faults"]), again["faults"]


def test_with_ponder_off_a_warm_spinner_is_stopped_between_its_matches_and_stays_warm(
    player: MatchPlayer, tmp_path
) -> None:
    """The default: its process group is stopped from its last answer, children included, so
    it takes no CPU while it waits, the sweep has nothing to stop, and it plays on warm."""
    spinner = tmp_path / "spinner.py"
    spinner.write_text(SPINNER)
    player.warm_bots = 10
    player.entries = {**player.entries, "spinner": bot_entry(str(spinner))}
    record = player.play(match(0, "spinner", "b000"))
    assert not any(record["faults"]), record["faults"]
    proc = player.agents["spinner"].proc
    before = proc.cpu_seconds()
    time.sleep(1.0)
    assert proc.cpu_seconds() - before < 0.05
    player.play(match(1, "b001", "b002"))
    assert player.agents["spinner"].proc is proc  # not swept: still warm
    again = player.play(match(2, "spinner", "b000"))  # resumed for its turns, the same process
    assert not any(again["faults"]), again["faults"]
    assert player.agents["spinner"].proc is proc


def test_with_ponder_off_a_process_started_ahead_for_the_next_match_waits_stopped(
    player: MatchPlayer, tmp_path
) -> None:
    """A spare (a process started during one match for the worker's next) ran free from its
    start until the match that took it, maybe many matches later: a child spinning from the
    bot's import on took a core from the bots whose clocks ran (a Ray run of 36 matches:
    three such processes of a bot spun 8 to 9 s each). Its hello is now answered after the
    match that launched it, and it waits stopped, as a warm process does."""
    spinner = tmp_path / "spinner.py"
    spinner.write_text(SPINNER)
    player.warm_bots = 10
    player.entries = {**player.entries, "spinner": bot_entry(str(spinner))}
    record = player.play(match(0, "b000", "b001"), upcoming=match(1, "spinner", "b002"))
    assert not any(record["faults"]), record["faults"]
    (spare,) = player.spares["spinner"]
    proc = spare.proc if spare.proc is not None else spare._starting._proc
    time.sleep(0.3)  # its start-up, if it is still starting
    before = proc.cpu_seconds()
    time.sleep(1.0)
    assert proc.cpu_seconds() - before < 0.05
    again = player.play(match(1, "spinner", "b002"))  # the spare takes its seat, resumed for its turns
    assert not any(again["faults"]), again["faults"]
    assert player.agents["spinner"].proc is proc
