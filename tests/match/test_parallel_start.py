"""The bots of a match start side by side: every process is launched before any is awaited.

Each test bot, on starting, drops a marker file and then waits (up to 120 s) until every
other bot of its match has dropped its own before it answers the hello. Started one
after another (each waited for before the next is launched), the first bot would wait
for bots that do not exist yet and miss its 20-second start-up limit. No clock decides
the outcome: with side-by-side starts every marker appears.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from arena.match.agents import ProcessAgent
from arena.match.detect import _marker_pids, detect_sandbox
from arena.match.referee import play_match
from arena.match.sandbox import Limits
from arena.match.timecontrol import TimeControl
from arena.tournament.roster import bot_entry
from arena.tournament.schedule import MatchSpec
from games import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
TC = TimeControl(startup_s=20, move_s=3.0)  # generous: three interpreters start on a busy machine
WAITER = """
import os, sys, time
open(MINE, "w").close()
end = time.monotonic() + 120
while not all(os.path.exists(p) for p in OTHERS) and time.monotonic() < end:
    time.sleep(0.01)
"""


def waiting_bots(tmp: Path, n: int, tag: str) -> list[Path]:
    marks = [tmp / f"started-{i}" for i in range(n)]
    bots = []
    for i in range(n):
        head = f"MINE = {str(marks[i])!r}\nOTHERS = {[str(m) for m in marks if m != marks[i]]!r}\n"
        path = tmp / f"waiter_{tag}_{i}.py"
        path.write_text(head + WAITER + (ROOT / "bots/random_bot.py").read_text())
        bots.append(path)
    return bots


def match_of(bots: list[Path], game: str = "tightwad") -> MatchSpec:
    players = len(bots)
    return MatchSpec(
        match_id="parallel-start",
        index=0,
        game=game,
        players=players,
        options=REGISTRY[game].resolve_options(players, {}),
        deal_seed=3,
        match_seed=4,
        bots=tuple(p.stem for p in bots),
    )


def test_a_match_launches_every_bot_before_waiting_for_any(tmp_path):
    sandbox = detect_sandbox("none")  # the markers live in the test's folder; the launch is the same at every level
    bots = waiting_bots(tmp_path, 3, uuid.uuid4().hex[:8])
    agents = [ProcessAgent(bot_entry(str(p)), sandbox=sandbox, limits=Limits(), time_control=TC) for p in bots]
    try:
        record = play_match(match_of(bots), agents, time_control=TC, sandbox=sandbox)
    finally:
        for a in agents:
            a.close()
    assert record["faults"] == [None, None, None]
    assert all((tmp_path / f"started-{i}").exists() for i in range(3))


def test_a_launched_bot_that_is_never_prepared_is_stopped_by_close(tmp_path):
    tag = uuid.uuid4().hex[:8]
    [bot] = waiting_bots(tmp_path, 1, tag)
    bot.write_text(bot.read_text().replace("OTHERS = []", f"OTHERS = [{str(tmp_path / 'never')!r}]"))
    agent = ProcessAgent(bot_entry(str(bot)), sandbox=detect_sandbox("none"), limits=Limits(), time_control=TC)
    agent.launch()
    end = time.monotonic() + 20
    while not (tmp_path / "started-0").exists() and time.monotonic() < end:
        time.sleep(0.01)
    assert (tmp_path / "started-0").exists(), "the launched bot never ran"
    assert _marker_pids(f"waiter_{tag}")
    agent.close()
    end = time.monotonic() + 10
    while _marker_pids(f"waiter_{tag}") and time.monotonic() < end:
        time.sleep(0.05)
    assert _marker_pids(f"waiter_{tag}") == []
