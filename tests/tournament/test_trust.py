"""Issue 11: a tournament is complete or says it is not, and a resume equals a fresh run.

Each test reproduces one case from the top of the issue (a run that exited 0 while
publishing a wrong tournament) and checks the behaviour now required. Rosters are
built from fixture bots copied into the test's own folder; sandbox none keeps them fast.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.report.run import run_and_publish
from arena.tournament.folder_lock import FolderLock
from arena.tournament.load import load_tournament
from tests import support
from tests.tournament.tournament_fixtures import start_arena, write_gated_bot

ROOT = Path(__file__).resolve().parents[2]
FIX = support.BOTS
RANDOM = ROOT / "bots" / "random_bot.py"
SLOW = FIX / "slow_random.py"


def make_bot(folder: Path, name: str, src: Path = RANDOM, tag: str = "") -> Path:
    """A bot file of its own (``tag`` makes its bytes, hence its SHA-256, differ)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(src.read_text() + (f"\n# {tag}\n" if tag else ""))
    return path


def gated_bot(folder: Path, name: str, gate: Path) -> Path:
    return write_gated_bot(folder / f"{name}.py", gate, tag=name)


def tour(
    tmp: Path,
    bots: list[Path],
    *,
    name: str = "t",
    deals: int = 1,
    workers: int = 1,
    seed: int = 7,
    game: str = "divers-weights",
    players: int = 2,
    options: str = "",
    extra: str = "",
    sandbox: str = "none",
) -> Path:
    text = f"""name: {name}
seed: {seed}
bots: [{", ".join(str(b) for b in bots)}]
games:
  - id: {game}
    players: [{players}]
    deals: {deals}
{options}
time_control: {{startup_s: 60, move_s: 30}}  # generous: a busy machine must not fault a bot
workers: {workers}
sandbox: {sandbox}
trust_bots: true  # fixture bots at level none: what is tested here is the bookkeeping
results: {tmp / "res"}
{extra}
"""
    path = tmp / f"{name}.yaml"
    path.write_text(text)
    return path


def run_in_process(path: Path | object, **kw):
    devnull = open(os.devnull, "w")
    t = load_tournament(path) if isinstance(path, Path) else path
    return run_and_publish(t, out=devnull, err=devnull, **kw)


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def board(results: Path) -> dict:
    return json.loads((results / "leaderboard.json").read_text())


def count_stored(results: Path) -> int:
    try:
        con = sqlite3.connect(results / "results.sqlite", timeout=5)
        return con.execute("SELECT count(*) FROM matches").fetchone()[0]
    except sqlite3.Error:
        return 0


def wait_for(results: Path, k: int, proc: subprocess.Popen, limit_s: float = 120) -> None:
    end = time.monotonic() + limit_s
    while not (results / "results.sqlite").exists() or count_stored(results) < k:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the run made no progress"
        time.sleep(0.05)


def children(pid: int) -> list[int]:
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            stat = Path(f"/proc/{p}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(p))
    return out


def seat_rows(results: Path, bot: str) -> list[tuple]:
    con = sqlite3.connect(results / "results.sqlite")
    return con.execute(
        "SELECT s.match_id, s.sha256, s.fault_kind FROM seats s JOIN schedule USING (match_id) WHERE s.bot = ?", (bot,)
    ).fetchall()


# ---- complete, or it says so; supervised workers --------------------------------------


@pytest.mark.slow
def test_a_killed_worker_is_replaced_and_its_match_played_again(tmp_path):
    gate = tmp_path / "gate"
    bots = [make_bot(tmp_path / "b", n, SLOW) for n in ("s1", "s2")] + [gated_bot(tmp_path / "b", "s3", gate)]
    path = tour(tmp_path, bots, deals=2, workers=2)
    results = tmp_path / "res"
    proc = start_arena("run", str(path))
    wait_for(results, 3, proc)
    gate.touch()
    time.sleep(0.5)  # matches finishing now were nearly done at the gate; the rest are slowed
    workers = children(proc.pid)
    assert len(workers) >= 2, workers
    os.kill(workers[0], signal.SIGKILL)  # as the OOM killer would
    stored_at_kill = count_stored(results)
    gate.unlink()
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    data = board(results)
    assert data["complete"] and data["scheduled"] == data["counted"] == 12
    lines = (results / "run.log").read_text().splitlines()
    died = next(i for i, ln in enumerate(lines) if "died (killed by signal 9)" in ln)
    # noticed at once (its sentinel wakes the pool), not at the end: at most the other
    # worker's slowed match can have finished between the kill and the notice
    done_before = sum(" done (" in ln for ln in lines[:died])
    assert done_before <= stored_at_kill + 1 < data["counted"], (done_before, stored_at_kill)


def test_a_match_that_kills_its_worker_every_time_is_given_up_and_the_run_fails(tmp_path):
    bots = [
        make_bot(tmp_path / "b", "r1"),
        make_bot(tmp_path / "b", "r2", tag="2"),
        make_bot(tmp_path / "b", "killer", FIX / "kills_worker.py"),
    ]
    path = tour(tmp_path, bots)
    res = arena("run", str(path))
    assert res.returncode == 1, res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last == "arena: incomplete: 2 of 6 matches; rerun to finish"
    assert res.stderr.count("arena: given up:") == 4 and "killer" in res.stderr
    log = (tmp_path / "res" / "run.log").read_text()
    assert log.count("died (killed by signal 9)") == 4 * 3  # three tries per match, no more
    data = board(tmp_path / "res")
    assert (data["complete"], data["scheduled"], data["counted"]) == (False, 6, 2)
    assert (tmp_path / "res" / "leaderboard.md").read_text().count("INCOMPLETE: 2 of 6") == 1
    assert "INCOMPLETE: 2 of 6" in (tmp_path / "res" / "leaderboard.html").read_text()
    assert res.stdout.startswith("INCOMPLETE: 2 of 6")
    rows = (tmp_path / "res" / "leaderboard.csv").read_text().splitlines()
    assert rows[0].endswith(",status,scheduled,counted,deals,sandbox") and rows[1].endswith(
        ",INCOMPLETE,6,2,secret,none:unsafe"
    )


def test_an_exception_in_a_worker_reaches_run_log_and_the_run_is_incomplete(tmp_path):
    """`move_s: .inf` crashed the worker and published 0 rated matches with exit 0. The
    config now refuses .inf; here the value is set after loading, to reach the worker."""
    bots = [make_bot(tmp_path / "b", "r1"), make_bot(tmp_path / "b", "r2", tag="2")]
    t = load_tournament(tour(tmp_path, bots))
    object.__setattr__(t.time_control, "move_s", math.inf)
    summary = run_in_process(t)
    assert not summary.complete and (summary.counted, summary.scheduled) == (0, 2)
    assert len(summary.given_up) == 2 and "OverflowError" in summary.given_up[0]
    log = (tmp_path / "res" / "run.log").read_text()
    assert "Traceback (most recent call last)" in log and "OverflowError" in log


def test_workers_that_fail_as_they_start_end_the_run_instead_of_hanging_it(tmp_path):
    """A worker exiting right after logging its traceback left the log queue's lock held by
    a dead process: the run printed its verdict, then hung for ever at exit."""
    bots = [make_bot(tmp_path / "b", "r1"), make_bot(tmp_path / "b", "r2", tag="2")]
    path = tour(tmp_path, bots, workers=2)
    logs = tmp_path / "res" / "logs"
    logs.mkdir(parents=True)
    for wid in range(40):  # each worker's log folder is taken by a file: the worker fails at once
        (logs / f"worker-{wid}").write_text("in the way\n")
    res = arena("run", str(path), timeout=120)
    assert res.returncode == 1, res.stderr
    assert res.stderr.strip().splitlines()[-1] == "arena: incomplete: 0 of 2 matches; rerun to finish"
    log = (tmp_path / "res" / "run.log").read_text()
    assert log.count("failed\nTraceback (most recent call last)") >= 6 and log.count("FileExistsError") >= 6


def test_a_worker_killed_while_it_held_the_log_queue_does_not_silence_the_others(tmp_path):
    import logging
    import multiprocessing as mp

    from arena.tournament.runner import free_log_queues, setup_logging

    (tmp_path / "res").mkdir()
    setup_logging(tmp_path / "res", open(os.devnull, "w"))
    queues = [h.queue for h in logging.getLogger().handlers if hasattr(h, "queue")]
    assert queues
    ctx = mp.get_context("fork")

    def dies_holding_the_lock():
        for q in queues:
            q._wlock.acquire()
        os.kill(os.getpid(), signal.SIGKILL)

    def logs_a_line():
        logging.getLogger("arena.run").warning("a line from a live worker")
        from arena.tournament.runner import flush_log_queues

        flush_log_queues()

    dead = ctx.Process(target=dies_holding_the_lock)
    dead.start()
    dead.join()
    assert dead.exitcode == -signal.SIGKILL
    assert free_log_queues(wait_s=0.5)
    live = ctx.Process(target=logs_a_line)
    live.start()
    live.join(30)
    assert live.exitcode == 0
    logging.getLogger("arena.run").warning("a line from the parent")
    end = time.monotonic() + 10
    while "a line from a live worker" not in (tmp_path / "res" / "run.log").read_text():
        assert time.monotonic() < end, "the live worker's line never arrived"
        time.sleep(0.05)
    assert "a line from the parent" in (tmp_path / "res" / "run.log").read_text()
    root = logging.getLogger()
    for h in [h for h in root.handlers if getattr(h, "_arena", False)]:
        root.removeHandler(h)
        h.close()


# ---- the tournament is a set of matches named by their content -------------------------


def test_adding_a_bot_plays_only_its_matches_and_equals_a_fresh_run(tmp_path):
    b = tmp_path / "b"
    bots = [make_bot(b, "a"), make_bot(b, "c", tag="c"), make_bot(b, "d", tag="d")]
    first = run_in_process(tour(tmp_path, bots))  # one deal: 3 pairs, both seatings
    assert first.complete and first.scheduled == 6
    path = tour(tmp_path, bots + [make_bot(b, "new", tag="new")])
    second = run_in_process(path)
    assert (second.already_done, second.played, second.scheduled) == (6, 6, 12)
    resumed = {n: (tmp_path / "res" / n).read_bytes() for n in ("leaderboard.csv", "leaderboard.json")}
    overall = board(tmp_path / "res")["scopes"][0]["standings"]
    assert {s["bot"]: s["matches"] for s in overall} == {"a": 6, "c": 6, "d": 6, "new": 6}
    fresh = run_in_process(path, fresh=True)
    assert fresh.played == 12
    assert resumed == {n: (tmp_path / "res" / n).read_bytes() for n in resumed}


def test_replacing_a_bot_plays_the_new_one_and_the_old_one_leaves(tmp_path):
    b = tmp_path / "b"
    a, c, old = make_bot(b, "a"), make_bot(b, "c", tag="c"), make_bot(b, "old", tag="old")
    run_in_process(tour(tmp_path, [a, c, old]))
    again = run_in_process(tour(tmp_path, [a, c, make_bot(b, "newer", tag="newer")]))
    assert (again.already_done, again.played) == (2, 4)
    names = {s["bot"] for s in board(tmp_path / "res")["scopes"][0]["standings"]}
    assert names == {"a", "c", "newer"}


def test_a_bot_whose_file_left_a_glob_roster_is_named_not_quietly_dropped(tmp_path):
    b = tmp_path / "b"
    a, c, d = make_bot(b, "a"), make_bot(b, "c", tag="c"), make_bot(b, "d", tag="d")
    path = tour(tmp_path, [b / "*.py"])
    assert arena("run", str(path)).returncode == 0
    d.unlink()
    c.write_text(c.read_text() + "# changed\n")
    make_bot(b, "e", tag="e")
    res = arena("run", str(path))
    assert res.returncode == 0, res.stderr
    assert (
        "arena: since the last run: bot d left (no longer counted); bot e joined; "
        "bot c changed (its matches are played again)"
    ) in res.stderr.splitlines()
    assert {s["bot"] for s in board(tmp_path / "res")["scopes"][0]["standings"]} == {"a", "c", "e"}
    again = arena("run", str(path))
    assert again.returncode == 0 and "since the last run" not in again.stderr
    # the edit undone: c's first version is played by no new match, and the news says so
    c.write_text(c.read_text().removesuffix("# changed\n"))
    undone = arena("run", str(path))
    assert undone.returncode == 0, undone.stderr
    assert "arena: since the last run: bot c changed back to a version played before (" in undone.stderr
    news = next(line for line in undone.stderr.splitlines() if "since the last run" in line)
    assert "played again" not in news, news


def test_bot_files_dropped_into_a_globbed_folder_are_announced_with_the_new_match_count(tmp_path):
    b = tmp_path / "b"
    make_bot(b, "a"), make_bot(b, "c", tag="c")
    path = tour(tmp_path, [b / "*.py"])
    assert arena("run", str(path)).returncode == 0  # 1 pair, 2 seatings: 2 matches
    make_bot(b, "d", tag="d"), make_bot(b, "e", tag="e")  # experiments dropped into the folder
    news = "since the last run: bots d, e joined; 12 matches scheduled, was 2 (6.0x)"
    plan = arena("run", str(path), "--dry-run")  # said before anything is played
    assert plan.returncode == 0 and news in plan.stdout.splitlines(), plan.stdout
    res = arena("run", str(path))
    assert res.returncode == 0, res.stderr
    lines = res.stderr.splitlines()
    assert "arena: " + news in lines
    assert "10 matches played now, 2 before" in res.stdout, res.stdout


@pytest.mark.parametrize("change", ["seed", "option"])
def test_a_changed_seed_or_option_replays_every_match(tmp_path, change):
    # The seed draws public deals (with secret deals, the default, it only draws groups
    # and seating, which two bots in both rotations do not change).
    bots = [make_bot(tmp_path / "b", "a"), make_bot(tmp_path / "b", "c", tag="c")]
    run_in_process(tour(tmp_path, bots, deals=2, extra="deals: public"))
    kw = {"seed": 8} if change == "seed" else {"options": "    options: {bidding: true}"}
    res = arena("run", str(tour(tmp_path, bots, deals=2, extra="deals: public", **kw)))
    assert res.returncode == 0, res.stderr
    assert "resuming" not in res.stderr and "4 matches played now, 0 before" in res.stdout
    assert board(tmp_path / "res")["counted"] == 4


def test_dry_run_says_what_would_be_played_kept_and_dropped(tmp_path):
    b = tmp_path / "b"
    a, c, d = make_bot(b, "a"), make_bot(b, "c", tag="c"), make_bot(b, "d", tag="d")
    run_in_process(tour(tmp_path, [a, c, d]))
    before = (tmp_path / "res" / "results.sqlite").stat().st_mtime_ns
    d.write_text(d.read_text() + "# changed\n")
    res = arena("run", str(tour(tmp_path, [a, c, d])), "--dry-run")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("6 matches scheduled: 4 to play, 2 already stored (kept), 4 stored but")
    assert "play (4):" in res.stdout and "keep (2):" in res.stdout and "drop (4):" in res.stdout
    assert (tmp_path / "res" / "results.sqlite").stat().st_mtime_ns == before


def test_a_dry_run_before_the_first_run_says_its_match_ids_are_provisional(tmp_path):
    """Before the folder's deal secret exists the dry run listed ids that were never played."""
    b = tmp_path / "b"
    path = tour(tmp_path, [make_bot(b, "a"), make_bot(b, "c", tag="c")])
    first = arena("run", str(path), "--dry-run")
    assert first.returncode == 0 and "match ids are provisional" in first.stdout, first.stderr
    run_in_process(path)
    again = arena("run", str(path), "--dry-run")
    assert again.returncode == 0 and "provisional" not in again.stdout


# ---- harness failures are not results -------------------------------------------------


@pytest.mark.skipif(not Path("/usr/bin/bwrap").exists(), reason="needs bubblewrap for a sandbox that can fail")
def test_a_harness_failure_is_not_stored_and_the_next_run_plays_it(tmp_path):
    """`limits: {open_files: 1}` stored every match as a sandbox fault, and later runs
    said "12 of 12 already played". (The config now refuses 1; set after loading here.)"""
    bots = [make_bot(tmp_path / "b", "a"), make_bot(tmp_path / "b", "c", tag="c")]
    path = tour(tmp_path, bots, sandbox="auto")
    t = load_tournament(path)
    object.__setattr__(t.limits, "open_files", 1)
    broken = run_in_process(t)
    assert not broken.complete and broken.counted == 0 and len(broken.harness_failures) == 2
    assert count_stored(tmp_path / "res") == 0
    fixed = run_in_process(path)
    assert fixed.complete and (fixed.already_done, fixed.played) == (0, 2)


# ---- bots are snapshotted --------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("what", ["edit", "delete"])
def test_editing_or_deleting_a_bot_during_a_run_changes_nothing(tmp_path, what):
    b = tmp_path / "b"
    victim = make_bot(b, "victim", SLOW)
    original = hashlib.sha256(victim.read_bytes()).hexdigest()
    bots = [victim, make_bot(b, "s2", SLOW, tag="2"), make_bot(b, "s3", SLOW, tag="3")]
    path = tour(tmp_path, bots, deals=2, extra="fresh_processes: true")
    results = tmp_path / "res"
    proc = start_arena("run", str(path))
    wait_for(results, 2, proc)
    if what == "edit":
        victim.write_text("raise SystemExit('new code')\n")
    else:
        victim.unlink()
    stored_at_change = count_stored(results)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    rows = seat_rows(results, "victim")
    assert len(rows) == 8 and stored_at_change < 12  # most of its matches started after the change
    assert {sha for _, sha, _ in rows} == {original} and {k for _, _, k in rows} == {None}
    assert (results / "bots" / original / "victim.py").is_file()
    assert arena("replay", str(results), rows[-1][0], "--quiet").returncode == 0


# ---- one run per results folder --------------------------------------------------------


@pytest.mark.slow
def test_a_second_run_on_a_folder_in_use_refuses_and_readers_still_read(tmp_path):
    gate = tmp_path / "gate"
    bots = [make_bot(tmp_path / "b", n, SLOW, tag=n) for n in ("s1", "s2")] + [gated_bot(tmp_path / "b", "s3", gate)]
    path = tour(tmp_path, bots, deals=2)
    results = tmp_path / "res"
    first = start_arena("run", str(path))
    wait_for(results, 2, first)
    gate.touch()
    second = arena("run", str(path))
    assert second.returncode == 2
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and f"pid {first.pid}" in lines[0] and "in use" in lines[0]
    reader = arena("leaderboard", str(results))
    assert reader.returncode == 0 and "INCOMPLETE" in reader.stdout
    mid = sqlite3.connect(results / "results.sqlite").execute("SELECT match_id FROM matches").fetchone()[0]
    assert arena("replay", str(results), mid, "--quiet").returncode == 0
    assert first.poll() is None, "the first run ended before the test was done with it"
    gate.unlink()
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert board(results)["counted"] == 12


def test_the_lock_is_held_in_this_process_too(tmp_path):
    bots = [make_bot(tmp_path / "b", "a"), make_bot(tmp_path / "b", "c", tag="c")]
    path = tour(tmp_path, bots)
    with FolderLock(tmp_path / "res"):
        res = arena("run", str(path))
    assert res.returncode == 2 and f"(pid {os.getpid()})" in res.stderr
    assert arena("run", str(path)).returncode == 0  # released


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_a_lock_file_that_is_a_link_or_a_pipe_is_refused_untouched(tmp_path, kind):
    """run.lock is truncated and written: through a link it emptied another file (the pid was
    all that was left of it); a named pipe ended as a bug (exit 70, EINVAL from ftruncate)."""
    from arena.errors import ArenaError

    (tmp_path / "res").mkdir()
    lock = tmp_path / "res" / "run.lock"
    other = tmp_path / "precious.txt"
    other.write_text("precious\n")
    if kind == "link":
        lock.symlink_to(other)
    else:
        os.mkfifo(lock)
    with pytest.raises(ArenaError) as err:
        FolderLock(tmp_path / "res").acquire()
    assert str(err.value) == (
        f"{lock} is a link, a pipe or a device, not the lock file arena writes there; remove it (the lock is "
        "made again) and rerun"
    )
    assert other.read_text() == "precious\n"


def test_a_run_log_that_is_a_named_pipe_is_refused_not_waited_on(tmp_path):
    """The log file was opened for appending: a run.log that is a named pipe hung arena run."""
    from arena.errors import ArenaError
    from arena.tournament.runner import close_run_logging, setup_logging
    from tests.support.named_pipe import error_within

    (tmp_path / "res").mkdir()
    log = tmp_path / "res" / "run.log"
    os.mkfifo(log)
    try:
        said = error_within(10, log, ArenaError, lambda: setup_logging(tmp_path / "res", open(os.devnull, "w")))
    finally:
        close_run_logging()
    assert said == f"{log} is a pipe or a device, not a log file; remove it (it is made again) and rerun"


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_stops_like_ctrl_c_with_the_resume_hint(tmp_path, sig):
    # SIGHUP: a closed terminal or a dropped ssh connection, handled as SIGTERM (it ended the
    # run with exit 129, no message and no resume hint)
    gate = tmp_path / "gate"
    bots = [make_bot(tmp_path / "b", n, SLOW, tag=n) for n in ("s1", "s2")] + [gated_bot(tmp_path / "b", "s3", gate)]
    path = tour(tmp_path, bots, deals=2, workers=2)
    results = tmp_path / "res"
    proc = start_arena("run", str(path))
    wait_for(results, 2, proc)
    gate.touch()
    time.sleep(0.5)  # matches finishing now were nearly done at the gate; the rest are slowed
    assert proc.poll() is None, "the run ended before the test could stop it"
    workers = children(proc.pid)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert f"resume with: arena run {path}" in err
    assert "resume with" in (results / "run.log").read_text()  # also there when the terminal is gone
    time.sleep(0.5)
    assert not [
        w
        for w in workers
        if Path(f"/proc/{w}").exists() and "Z" not in Path(f"/proc/{w}/stat").read_text().rsplit(")", 1)[1][:3]
    ]
    gate.unlink()
    again = arena("run", str(path))
    assert again.returncode == 0 and board(results)["complete"]


# ---- a match where every seat faulted is not rated -------------------------------------


def test_a_match_where_every_seat_faulted_is_not_rated_and_is_notable(tmp_path):
    b = tmp_path / "b"
    bots = [
        make_bot(b, "dead1", FIX / "crash_at_start.py"),
        make_bot(b, "dead2", FIX / "crash_at_start.py", "2"),
        make_bot(b, "alive"),
    ]
    summary = run_in_process(tour(tmp_path, bots, deals=2))
    assert summary.complete
    data = board(tmp_path / "res")
    overall = {s["bot"]: s for s in data["scopes"][0]["standings"]}
    assert overall["dead1"]["firsts"] == 0 and overall["dead2"]["firsts"] == 0
    assert overall["dead1"]["matches"] == 4  # only those against alive, which it lost
    assert data["scopes"][0]["skipped"] == 4
    assert sum(n["reason"] == "all_faulted" for n in data["notable"]) == 4


# ---- logs keep history -----------------------------------------------------------------


def test_bot_logs_append_per_process_and_run_log_names_seats(tmp_path):
    b = tmp_path / "b"
    bots = [make_bot(b, "chatter", FIX / "stderr_chatter.py"), make_bot(b, "a")]
    path = tour(tmp_path, bots, deals=3, extra="fresh_processes: true")
    run_in_process(path)
    log = (tmp_path / "res" / "logs" / "worker-0" / "chatter.stderr.log").read_text().splitlines()
    assert sum(ln.startswith("[arena: chatter: new process at ") for ln in log) == 6
    assert sum(ln.startswith("result of a match") for ln in log) == 6
    run_log = (tmp_path / "res" / "run.log").read_text()
    assert run_log.count("(seat 0 chatter, seat 1 a)") == 3 and run_log.count("(seat 0 a, seat 1 chatter)") == 3
    run_in_process(path)
    assert (tmp_path / "res" / "run.log").read_text().count("tournament t:") == 2  # history kept
    run_in_process(path, fresh=True)
    assert (tmp_path / "res" / "run.log").read_text().count("tournament t:") == 1  # --fresh starts over


# ---- a worker stuck at its start -------------------------------------------------------


def test_a_worker_stuck_at_its_start_is_killed_and_replaced(tmp_path, monkeypatch):
    """A forked worker can inherit a lock held for ever (SQLite's, held by another thread of the
    parent at the fork: seen once in CI, the run waited on the worker until the job's limit).
    The first worker here sticks before its store is open; the run replaces it and finishes."""
    import arena.match.sandbox as sandbox
    from arena.tournament import runner

    first = tmp_path / "first-worker-started"
    parent = os.getpid()

    def stuck_once() -> bool:
        if os.getpid() != parent and not first.exists():  # the first worker, not the run itself
            first.touch()
            time.sleep(3600)  # the parent kills it
        return True

    monkeypatch.setattr(sandbox, "become_subreaper", stuck_once)  # forked workers inherit the patch
    monkeypatch.setattr(runner, "WORKER_SETUP_LIMIT_S", 1.0)
    b = tmp_path / "b"

    def too_long(*_):
        raise TimeoutError("the run waited on the stuck worker (no watch for a worker's start)")

    old = signal.signal(signal.SIGALRM, too_long)
    signal.alarm(120)  # fail, not hang, without the watch
    try:
        summary = run_in_process(tour(tmp_path, [make_bot(b, "x"), make_bot(b, "y")], deals=2))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert summary.complete and summary.played == 4
    run_log = (tmp_path / "res" / "run.log").read_text()
    assert "worker-0 did not set itself up in 1 s (stuck at its start); it is killed" in run_log


def test_a_changed_time_control_says_the_stored_matches_still_count(tmp_path):
    """Raising startup_s after a bot timed out kept those timeouts without a word: the time
    control is not part of a match's identity, so the stored matches still count."""
    b = tmp_path / "b"
    path = tour(tmp_path, [make_bot(b, "a"), make_bot(b, "c", tag="c")])
    assert arena("run", str(path)).returncode == 0
    path.write_text(path.read_text().replace("{startup_s: 60, move_s: 30}", "{startup_s: 90, move_s: 30}"))
    line = (
        "since the last run: time control changed (startup_s 60 -> 90): the matches stored under "
        "the old settings still count; --fresh plays them all again"
    )
    dry = arena("run", str(path), "--dry-run")
    assert dry.returncode == 0 and line in dry.stdout.splitlines(), dry.stdout
    res = arena("run", str(path))
    assert res.returncode == 0 and f"arena: {line}" in res.stderr.splitlines(), res.stderr
    again = arena("run", str(path))
    assert again.returncode == 0 and "since the last run" not in again.stderr


def test_a_changed_time_control_with_new_deals_claims_no_stored_match_still_counts(tmp_path):
    """Switching to public deals replays every match; a time control changed at the same time
    was announced as 'the matches stored under the old settings still count' though none did."""
    b = tmp_path / "b"
    path = tour(tmp_path, [make_bot(b, "a"), make_bot(b, "c", tag="c")])
    assert arena("run", str(path)).returncode == 0
    text = path.read_text().replace("{startup_s: 60, move_s: 30}", "{startup_s: 90, move_s: 30}")
    path.write_text(text + "deals: public\n")
    dry = arena("run", str(path), "--dry-run")
    assert dry.returncode == 0 and dry.stdout.startswith("2 matches scheduled: 2 to play, 0 already stored")
    assert "still count" not in dry.stdout, dry.stdout
    res = arena("run", str(path))
    assert res.returncode == 0 and "2 matches played now, 0 before" in res.stdout, res.stdout
    assert "still count" not in res.stderr, res.stderr


def test_a_fresh_dry_run_says_how_many_stored_matches_of_which_tournament_it_would_delete(tmp_path):
    """--fresh --dry-run on another tournament's folder (given by mistake) said '0 stored but no
    longer in the tournament', though --fresh deletes every match stored there."""
    b = tmp_path / "b"
    bots = [make_bot(b, "a"), make_bot(b, "c", tag="c")]
    run_in_process(tour(tmp_path, bots))
    other = tour(tmp_path, bots, name="other")
    dry = arena("run", str(other), "--fresh", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "--fresh deletes the 2 matches stored of 't' in this results folder" in dry.stdout.splitlines()
    assert count_stored(tmp_path / "res") == 2
