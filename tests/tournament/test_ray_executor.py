"""`arena run --executor ray`: bot files shipped by bytes, results identical to the local pool.

The tests that need Ray skip with a reason when it is not installed
(pip install 'decktet-arena[ray]'); the shipping and error-path tests always run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.records.replies import Played
from arena.report.run import run_and_publish
from arena.tournament.load import load_tournament
from arena.tournament.ray_executor import RAY_MISSING, BotShippingError, BotWorker, pack_bots, ray_backend, unpack_bots
from arena.tournament.retries import Retries
from arena.tournament.roster import BotEntry, bot_entry, resolve_bots
from arena.tournament.runner import limits_from, time_control_from
from arena.tournament.schedule import build_schedule
from arena.tournament.supervisor import Lost, MatchSupervisor
from tests import own_processes as own
from tests import support
from tests.tournament.tournament_fixtures import start_arena, stored_matches

from .test_runner import ROOT, SLOW, leaderboard_json, run_file, share_secret, stored, write_tournament

TEST_SECRET = "5e" * 32  # the schedule's deal secret (a run draws its own)


@pytest.fixture(scope="module", autouse=True)
def node_cache(tmp_path_factory):
    """Where this module's workers unpack shipped bots (ARENA_BOT_ENVS): its own folder, set
    before Ray starts, so its workers inherit it and never touch the user's cache."""
    folder = tmp_path_factory.mktemp("node-cache")
    before = os.environ.get("ARENA_BOT_ENVS")
    os.environ["ARENA_BOT_ENVS"] = str(folder)
    yield folder
    if before is None:
        os.environ.pop("ARENA_BOT_ENVS", None)
    else:
        os.environ["ARENA_BOT_ENVS"] = before


@pytest.fixture(scope="module")
def ray(node_cache):
    """A local Ray instance on 2 CPUs for this module; the runs use it and leave it running."""
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'decktet-arena[ray]'")
    ray.init(address=None, num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    yield ray
    ray.shutdown()


def _entries(*names: str) -> dict[str, BotEntry]:
    return {e.name: e for e in (bot_entry(str(ROOT / "bots" / n)) for n in names)}


# ---- shipping bot files (no Ray needed) ------------------------------------------


def test_shipped_bots_keep_names_file_names_sha256_and_the_executable_bit(tmp_path):
    entries = _entries("random_bot.py", "perl_random.pl")
    packed = pack_bots(entries)
    assert packed["random_bot"]["data"] == (ROOT / "bots/random_bot.py").read_bytes()
    got = unpack_bots(packed, tmp_path)
    assert set(got) == {"random_bot", "perl_random"}
    for name, entry in got.items():
        orig = entries[name]
        assert entry.path.parent == tmp_path / orig.sha256  # by content hash
        assert entry.path.name == orig.path.name
        assert (entry.name, entry.sha256, entry.kind) == (orig.name, orig.sha256, orig.kind)
        assert hashlib.sha256(entry.path.read_bytes()).hexdigest() == orig.sha256
    assert got["perl_random"].kind == "executable"
    assert os.stat(got["perl_random"].path).st_mode & stat.S_IXUSR
    assert not os.stat(got["random_bot"].path).st_mode & stat.S_IXUSR


def test_bytes_that_do_not_match_their_sha256_are_refused(tmp_path):
    packed = pack_bots(_entries("random_bot.py", "tightwad_heuristic.py"))
    packed["tightwad_heuristic"]["data"] += b"\n# tampered\n"
    with pytest.raises(BotShippingError, match="tightwad_heuristic.*SHA-256"):
        unpack_bots(packed, tmp_path / "out")


def test_a_bot_changed_after_the_roster_was_read_is_not_shipped(tmp_path):
    bot = tmp_path / "mybot.py"
    bot.write_bytes((ROOT / "bots/random_bot.py").read_bytes())
    entry = bot_entry(str(bot))
    bot.write_text(bot.read_text() + "\n# changed\n")
    with pytest.raises(BotShippingError, match="mybot"):
        pack_bots({entry.name: entry})


def test_a_shipped_file_name_cannot_escape_the_workers_folder(tmp_path):
    packed = pack_bots(_entries("random_bot.py"))
    packed["random_bot"]["file"] = "../evil.py"
    with pytest.raises(BotShippingError, match="evil"):
        unpack_bots(packed, tmp_path / "out")
    assert not (tmp_path / "evil.py").exists()


def _settings(tournament, level: str = "auto") -> dict:
    from arena import __version__

    return {
        "version": __version__,
        "sandbox_level": level,
        "limits": limits_from(tournament),
        "tc": time_control_from(tournament),
        "fresh": False,
        "name": tournament.name,
    }


def test_the_worker_plays_from_its_own_copies_and_reports_a_bad_set_up_in_one_line(tmp_path, node_cache):
    """BotWorker is the actor's class: exercised here in-process, without Ray."""
    tournament = load_tournament(write_tournament(tmp_path, "w", deals=1))
    entries = _entries("random_bot.py", "tightwad_heuristic.py", "divers_heuristic.py")
    match = next(m for m in build_schedule(tournament, list(entries.values()), TEST_SECRET) if m.game == "tightwad")
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = Path(tempfile.gettempdir()) / f"arena-ray-{gone.pid}-test"  # a killed worker's leftovers
    (stale / "bots").mkdir(parents=True)
    worker = BotWorker(pack_bots(entries), _settings(tournament))
    assert not stale.exists()
    assert worker.tmp.name.startswith(f"arena-ray-{os.getpid()}-")
    info = worker.ready()
    assert info["error"] is None and info["sandbox"]
    copies = node_cache / "shipped"  # the node's cache, by content hash
    record = worker.play(match)
    assert [b["path"] for b in record["bots"]] == [str(copies / entries[n].sha256 / f"{n}.py") for n in match.bots]
    assert [b["sha256"] for b in record["bots"]] == [entries[n].sha256 for n in match.bots]
    assert record["faults"] == [None, None, None]
    from arena.match.sandbox import launch

    assert launch._bot_lib is not None and launch._bot_lib[1].is_dir()  # the bots' copy of the engines
    logs = worker.close()
    assert sorted(logs) == sorted(f"{n}.stderr.log" for n in match.bots)
    assert not worker.tmp.exists()
    assert not launch._bot_lib[1].exists()  # the actor is killed next: its atexit hook never runs

    bad = pack_bots(entries)
    bad["random_bot"]["data"] = b"print('not the same bot')\n"
    broken = BotWorker(bad, _settings(tournament))
    err = broken.ready()["error"]
    assert "BotShippingError" in err and "random_bot" in err and "\n" not in err
    with pytest.raises(ArenaError):
        broken.play(match)
    broken.close()

    other = BotWorker(pack_bots(entries), {**_settings(tournament), "version": "0.0.0-other"})
    assert "0.0.0-other" in other.ready()["error"]
    other.close()


def test_a_node_whose_best_sandbox_level_is_not_safe_refuses_untrusted_bots_in_one_line(tmp_path, monkeypatch):
    """Each node detects its own level: one without bubblewrap or Landlock must not play
    untrusted bots at a weaker level because the driver's machine had a safe one."""
    tournament = load_tournament(write_tournament(tmp_path, "unsafe", deals=1))
    entries = _entries("random_bot.py", "tightwad_heuristic.py", "divers_heuristic.py")
    monkeypatch.setenv("SANDBOX_LEVEL", "rlimits")  # what auto gives on this node: limits only
    untrusted = BotWorker(pack_bots(entries), {**_settings(tournament), "trust_bots": False})
    err = untrusted.ready()["error"]
    untrusted.close()
    assert err and "no sandbox level safe for untrusted bots on this node" in err and "rlimits" in err
    assert "install bubblewrap" in err and "\n" not in err
    trusted = BotWorker(pack_bots(entries), {**_settings(tournament), "trust_bots": True})
    info = trusted.ready()
    trusted.close()
    assert info["error"] is None and info["sandbox"] == "rlimits"


def test_executor_ray_without_ray_installed_is_one_line_and_writes_nothing(tmp_path, monkeypatch):
    path = write_tournament(tmp_path, "noray", deals=1)
    monkeypatch.setitem(sys.modules, "ray", None)  # what find_spec sees when Ray is not installed
    with pytest.raises(ArenaError) as info:
        run_file(path, executor="ray")
    assert str(info.value) == RAY_MISSING == "--executor ray needs Ray: pip install 'decktet-arena[ray]'"
    assert not (tmp_path / "results-noray").exists()
    code = (
        "import sys; sys.modules['ray'] = None; from arena.cli import main; "
        f"sys.argv = ['arena', 'run', {str(path)!r}, '--executor', 'ray']; main()"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [f"arena: error: {RAY_MISSING}"]


def test_an_unreachable_ray_address_fails_fast_in_one_line():
    import socket

    from arena.tournament.ray_executor import _check_reachable

    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        port = srv.getsockname()[1]
        _check_reachable(f"127.0.0.1:{port}")  # someone listens: fine
    tries: list[float] = []
    real = socket.create_connection

    def counted(address, timeout=None, *a, **kw):
        tries.append(timeout)
        return real(address, timeout, *a, **kw)

    socket.create_connection = counted
    try:
        with pytest.raises(
            ArenaError, match=f"cannot reach Ray at 127.0.0.1:{port} \\(--ray-address\\): .*--ray-address"
        ):
            _check_reachable(f"127.0.0.1:{port}")
    finally:
        socket.create_connection = real
    assert len(tries) == 1 and tries[0] is not None and tries[0] <= 5  # one bounded try, no retries
    _check_reachable("auto")  # left to Ray
    _check_reachable(None)


def test_a_dead_ray_address_in_the_environment_fails_fast_too(monkeypatch):
    """ray.init(address=None) joins RAY_ADDRESS and retries a dead one for minutes: it is
    checked like --ray-address, and the line names where it came from."""
    import socket

    pytest.importorskip("ray")
    from arena.tournament.ray_executor import connect

    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        port = srv.getsockname()[1]  # bound, never listening: refused
        monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
        with pytest.raises(
            ArenaError, match=f"cannot reach Ray at 127.0.0.1:{port} \\(RAY_ADDRESS\\).*check RAY_ADDRESS"
        ):
            connect(None)


def test_no_arena_module_imports_ray_when_imported():
    code = (
        "import sys, arena.cli, arena.tournament.runner, arena.tournament.ray_executor, arena.tournament.match_player; "
        "assert 'ray' not in sys.modules, 'ray imported'"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr


# ---- with Ray ----------------------------------------------------------------------


@pytest.mark.slow
def test_the_local_pool_and_ray_store_identical_results_and_leaderboards(tmp_path, ray):
    local = run_file(write_tournament(tmp_path, "local", workers=2, deals=1))
    share_secret(local.results, tmp_path / "results-onray")  # the same deals, as in one folder
    copies_before = set(Path(tempfile.gettempdir()).glob("arena-ray-*"))
    on_ray = run_file(write_tournament(tmp_path, "onray", workers=2, deals=1), executor="ray")
    assert local.played == on_ray.played == on_ray.scheduled == 12  # 3 games, 1 deal each
    assert not on_ray.interrupted and on_ray.faults == 0
    assert stored(local.results) == stored(on_ray.results)
    assert leaderboard_json(local.results) == leaderboard_json(on_ray.results)
    assert (local.results / "leaderboard.json").read_bytes() == (on_ray.results / "leaderboard.json").read_bytes()
    # the records name the driver's snapshot of each bot file (the code that played), and the
    # bots' stderr logs came back
    files = [ROOT / "bots/random_bot.py", ROOT / "bots/tightwad_heuristic.py", ROOT / "bots/divers_heuristic.py"]
    con = sqlite3.connect(on_ray.results / "results.sqlite")
    records = [json.loads(zlib.decompress(blob)) for (blob,) in con.execute("SELECT record FROM matches")]
    shas = [hashlib.sha256(p.read_bytes()).hexdigest() for p in files]
    assert {(b["path"], b["sha256"]) for r in records for b in r["bots"]} == {
        (str(on_ray.results / "bots" / sha / p.name), sha) for p, sha in zip(files, shas)
    }
    assert {r["sandbox"]["level"] for r in records} == {on_ray.sandbox_level}
    assert sorted(p.parent.name for p in (on_ray.results / "logs").glob("ray-*/random_bot.stderr.log")) == [
        "ray-0",
        "ray-1",
    ]
    _wait_until(lambda: _worker_pids(os.getpid()) == {}, "Ray workers outlived the run")  # this test's Ray only
    assert set(Path(tempfile.gettempdir()).glob("arena-ray-*")) <= copies_before  # workers removed their copies


@pytest.mark.slow
def test_builtin_players_play_on_ray_exactly_as_on_the_local_pool(tmp_path, ray):
    def tournament(name: str) -> Path:
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"""
name: {name}
seed: 3
bots: [{ROOT / "bots/tightwad_heuristic.py"}, {{builtin: random}}, {{builtin: random, name: random_2}}]
games: [{{id: tightwad, players: 3, deals: 2}}]
workers: 2
results: {tmp_path / ("results-" + name)}
""")
        return path

    local = run_file(tournament("blocal"))
    share_secret(local.results, tmp_path / "results-bray")
    on_ray = run_file(tournament("bray"), executor="ray")
    assert local.played == on_ray.played == 6 and on_ray.faults == 0
    assert stored(local.results) == stored(on_ray.results)
    assert (local.results / "leaderboard.json").read_bytes() == (on_ray.results / "leaderboard.json").read_bytes()
    assert json.loads((on_ray.results / "leaderboard.json").read_text())["luck"]["aivat"]["matches"] == 6


def _wait_until(cond, message: str, limit_s: float = 10.0) -> None:
    end = time.monotonic() + limit_s
    while not cond():
        assert time.monotonic() < end, message
        time.sleep(0.1)


@pytest.mark.slow
def test_a_sandbox_level_that_fails_on_a_node_is_reported_with_the_node(tmp_path, ray):
    tournament = load_tournament(write_tournament(tmp_path, "sbx", deals=1))
    entries = _entries("random_bot.py", "tightwad_heuristic.py", "divers_heuristic.py")
    pending = build_schedule(tournament, list(entries.values()), TEST_SECRET)
    ctx = {
        "entries": entries,
        "limits": limits_from(tournament),
        "tc": time_control_from(tournament),
        "fresh": False,
        "name": tournament.name,
        "results": tmp_path / "r",
    }
    got: list[dict] = []

    def store(record: dict) -> Played:
        got.append(record)
        return Played(record["match_id"])

    copies_before = set(Path(tempfile.gettempdir()).glob("arena-ray-*"))
    supervisor = MatchSupervisor(
        ray_backend(ctx, sandbox_level="no-such-level", store=store),
        workers=1,
        retries=Retries([]),
        stored=lambda m: False,
    )
    supervisor.submit(*pending)
    with pytest.raises(ArenaError) as info:
        list(supervisor.stream())
    msg = str(info.value)
    assert msg.startswith("Ray worker on ") and "no-such-level" in msg and "\n" not in msg
    assert got == []
    # closed all the same; a folder of a live process outside this one's tree is another test's (the
    # temporary folder is shared: test_bot_shipping.py's in-process worker, run beside this file by xdist)
    ours = set(own.descendants(os.getpid()))
    left = {d for d in set(Path(tempfile.gettempdir()).glob("arena-ray-*")) - copies_before if _ours(d, ours)}
    assert not left


def _ours(folder: Path, tree: set[int]) -> bool:
    """Whether a worker's folder (``arena-ray-<pid>-...``) may be this test's: its owner is in this
    process's tree, or gone (a worker of this test killed before it closed)."""
    pid = int(folder.name.split("-")[2])
    return pid in tree or own.stat(pid) is None


def _worker_pids(root: int) -> dict[int, int]:
    """Ray's BotWorker processes below ``root`` (pid -> start ticks): this test's Ray only."""
    found = {}
    for pid, ticks in own.descendants(root).items():
        try:
            if b"ray::BotWorker" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found[pid] = ticks
        except OSError:
            pass
    return found


def _done_before(log: str, line: str) -> int:
    """How many matches run.log shows done before ``line``: a death noticed at once comes
    before the matches still being played (counts, not clock times, on a busy machine)."""
    lines = log.splitlines()
    return sum(" done (" in ln for ln in lines[: lines.index(line)])


@pytest.mark.slow
def test_a_worker_killed_mid_match_is_replaced_and_the_run_equals_a_local_run(tmp_path, ray):
    bots = [ROOT / "bots/random_bot.py", ROOT / "bots/tightwad_heuristic.py", SLOW]
    ref = run_file(write_tournament(tmp_path, "ref", bots=bots, workers=2, deals=1))  # 12 matches
    path = write_tournament(tmp_path, "killed", bots=bots, workers=2, deals=1)
    results = tmp_path / "results-killed"
    share_secret(ref.results, results)
    killed: list[tuple[int, float]] = []

    def kill_a_worker_mid_match() -> None:
        end = time.monotonic() + 120
        while time.monotonic() < end:
            if results.joinpath("results.sqlite").exists() and stored_matches(results) >= 3:
                for pid in _worker_pids(os.getpid()):  # the ray fixture's instance is ours
                    if own.descendants(pid):  # its bots are running: it is in a match
                        os.kill(pid, signal.SIGKILL)  # as the OOM killer would
                        killed.append((pid, stored_matches(results)))
                        return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_a_worker_mid_match)
    killer.start()
    summary = run_file(path, executor="ray")
    killer.join()
    assert killed, "no worker was killed"
    # the same run replaced the worker and played its matches again: complete, as a local run
    assert summary.complete and not summary.given_up and not summary.harness_failures
    assert summary.played == summary.scheduled == summary.counted == ref.scheduled
    assert stored_matches(results) == ref.scheduled  # every match stored exactly once
    assert stored(results) == stored(ref.results)
    assert (results / "leaderboard.json").read_bytes() == (ref.results / "leaderboard.json").read_bytes()
    log = (results / "run.log").read_text()
    died = [ln for ln in log.splitlines() if " died: " in ln and "matches in flight go back" in ln]
    assert len(died) == 1, died
    assert _done_before(log, died[0]) <= killed[0][1] + 1  # noticed at once, not at the end
    assert "playing it again (try 2 of 3)" in log
    assert log.count("ray: worker 2 starts in place of worker") == 1
    assert log.count("ray: worker 2 ready") == 1


def _two_player_tournament(tmp_path: Path, bots: list[Path], name: str) -> Path:
    """Divers Weights for two, one deal: two matches per pair (seats swapped); sandbox none,
    so a bot can see the Ray worker above it."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"""name: {name}
seed: 7
bots: [{", ".join(str(b) for b in bots)}]
games:
  - id: divers-weights
    players: [2]
    deals: 1
time_control: {{startup_s: 60, move_s: 30}}
workers: 2
sandbox: none
trust_bots: true  # fixture bots at level none: what is tested is the supervision
results: {tmp_path / ("results-" + name)}
""")
    return path


@pytest.mark.slow
def test_a_worker_that_dies_between_matches_is_noticed_and_replaced(tmp_path, ray):
    """Two matches, two workers: the first worker ready takes both (one playing, one
    queued), the other idles. Killing the idle one loses no match; it is replaced
    while work is left, and the run completes."""
    sleepy = tmp_path / "sleepy.py"  # a match lasts seconds: the kill lands while the other plays
    sleepy.write_text(SLOW.read_text().replace("time.sleep(0.004)", "time.sleep(0.05)"))
    results = tmp_path / "results-idle"
    killed: list[tuple[int, float]] = []

    def kill_the_idle_worker() -> None:
        end = time.monotonic() + 120
        while time.monotonic() < end and not killed:
            pids = _worker_pids(os.getpid())
            playing = [pid for pid in pids if own.descendants(pid)]
            if len(pids) == 2 and len(playing) == 1 and (results / "run.log").exists():
                idle = next(pid for pid in pids if pid not in playing)
                if f"pid {idle}, sandbox" in (results / "run.log").read_text():  # it is ready, not starting
                    os.kill(idle, signal.SIGKILL)
                    killed.append((idle, stored_matches(results) if (results / "results.sqlite").exists() else 0))
            time.sleep(0.02)

    killer = threading.Thread(target=kill_the_idle_worker)
    killer.start()
    summary = run_file(_two_player_tournament(tmp_path, [ROOT / "bots/random_bot.py", sleepy], "idle"), executor="ray")
    killer.join()
    assert killed, "no idle worker was killed"
    assert summary.complete and summary.played == summary.scheduled == 2 and not summary.given_up
    log = (results / "run.log").read_text()
    died = [ln for ln in log.splitlines() if f"pid {killed[0][0]}) died: " in ln]
    assert len(died) == 1 and died[0].endswith("it had no match in flight"), died
    assert _done_before(log, died[0]) <= min(killed[0][1] + 1, 1)  # noticed while the other match played
    assert f"ray: worker 2 starts in place of worker {died[0].split('ray: worker ')[1].split()[0]}" in log
    assert "playing it again" not in log


@pytest.mark.slow
def test_a_match_that_kills_its_ray_worker_every_time_is_given_up_and_the_rest_is_played(tmp_path, ray):
    killer = tmp_path / "killer.py"
    killer.write_bytes((support.BOTS / "kills_worker.py").read_bytes())
    bots = [ROOT / "bots/random_bot.py", ROOT / "bots/divers_heuristic.py", killer]
    summary = run_file(_two_player_tournament(tmp_path, bots, "killing"), executor="ray")
    assert not summary.complete and (summary.counted, summary.scheduled) == (2, 6)
    assert summary.played == 2  # random_bot against divers_heuristic, both seat orders
    assert len(summary.given_up) == 4
    assert all("killer" in g and "3 tries" in g and "died" in g for g in summary.given_up)
    log = (tmp_path / "results-killing" / "run.log").read_text()
    assert log.count("given up after 3 tries") == 4
    # three deaths per killing match, no more: a match queued behind it went back uncounted
    assert log.count("matches in flight go back to the queue") == 4 * 3
    given = [ln for ln in log.splitlines() if "given up after 3 tries" in ln]
    assert all("seat 0 " in ln and "seat 1 " in ln and "killer" in ln for ln in given)
    data = leaderboard_json(tmp_path / "results-killing")
    assert (data["complete"], data["scheduled"], data["counted"]) == (False, 6, 2)


@pytest.mark.slow
def test_a_harness_exception_on_a_ray_worker_reaches_run_log_and_is_retried(tmp_path, ray):
    bots = [ROOT / "bots/random_bot.py", ROOT / "bots/divers_heuristic.py"]
    t = load_tournament(_two_player_tournament(tmp_path, bots, "raises"))
    object.__setattr__(t.time_control, "move_s", math.inf)  # the config refuses it: set after loading
    devnull = open(os.devnull, "w")
    summary = run_and_publish(t, out=devnull, err=devnull, executor="ray")
    assert not summary.complete and (summary.counted, summary.scheduled) == (0, 2)
    assert len(summary.given_up) == 2 and all("OverflowError" in g for g in summary.given_up)
    log = (tmp_path / "results-raises" / "run.log").read_text()
    assert log.count("the harness raised OverflowError") >= 2 * 3
    assert "Traceback (most recent call last)" in log and "on Ray worker" in log
    assert "playing it again (try 3 of 3)" in log
    assert " died: " not in log  # the worker survives a harness exception, with fresh bots


@pytest.mark.slow
def test_a_run_whose_cluster_loses_every_worker_stops_in_one_line(tmp_path, ray, monkeypatch):
    """The only worker dies and its CPU is taken at once (another job on the cluster):
    no replacement can start, and the run says so instead of waiting for ever."""
    import arena.tournament.ray_executor as ray_executor

    monkeypatch.setattr(ray_executor, "REPLACE_WAIT_S", 3.0)
    bots = [ROOT / "bots/random_bot.py", SLOW, ROOT / "bots/divers_heuristic.py"]
    path = write_tournament(tmp_path, "gone", bots=bots)
    results = tmp_path / "results-gone"
    hog = ray.remote(num_cpus=1)(_Hog)
    hogs = [hog.remote()]
    ray.get(hogs[0].ready.remote(), timeout=60)  # one of the two CPUs is taken from the start
    killed: list[int] = []

    def lose_the_worker() -> None:
        end = time.monotonic() + 120
        while time.monotonic() < end:
            if results.joinpath("results.sqlite").exists() and stored_matches(results) >= 1:
                hogs.append(hog.remote())  # waits for a CPU, ahead of any replacement
                ray.wait([hogs[1].ready.remote()], timeout=0.5)
                (pid,) = _worker_pids(os.getpid())
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.02)

    killer = threading.Thread(target=lose_the_worker)
    killer.start()
    try:
        summary = run_file(path, executor="ray")  # returns (the message below says why), not waits for ever
        killer.join()
        assert killed, "the worker was not killed"
        assert (
            ray.get(hogs[1].ready.remote(), timeout=60) == "ready"
        )  # it took the freed CPU (an actor can take 10 s to start on a busy machine)
    finally:
        for h in hogs:
            ray.kill(h)
    msg = summary.stopped
    assert msg.startswith("every Ray worker was lost (1 in all) and none could start again in 3 s")
    assert "cluster CPUs: 2, free: 0" in msg and "run the same command again" in msg and "\n" not in msg
    assert not summary.complete and 1 <= summary.counted < summary.scheduled
    assert summary.played == summary.counted == stored_matches(results)
    data = leaderboard_json(results)  # published, and says it is incomplete
    assert (data["complete"], data["counted"]) == (False, summary.counted)
    assert f"ERROR {msg}" in (results / "run.log").read_text()
    _wait_until(lambda: _worker_pids(os.getpid()) == {}, "the pending worker outlived the run")


class _Hog:
    """Another job on the cluster, holding a CPU."""

    def ready(self) -> str:
        return "ready"


@pytest.mark.slow
def test_cli_ctrl_c_on_ray_stops_cleanly_and_prints_the_resume_command(tmp_path):
    """Through `arena run --executor ray`, which starts and stops its own local Ray instance."""
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'decktet-arena[ray]'")
    bots = [ROOT / "bots/random_bot.py", SLOW, ROOT / "bots/divers_heuristic.py"]
    path = write_tournament(tmp_path, "intr", bots=bots, deals=3, workers=2)
    results = tmp_path / "results-intr"
    proc = start_arena("run", str(path), "--executor", "ray")
    end = time.monotonic() + 120
    workers: dict[int, int] = {}  # this run's Ray workers and their bots, recorded while it runs
    bots_seen: dict[int, int] = {}

    def record() -> None:
        workers.update(_worker_pids(proc.pid))
        for pid in workers:
            bots_seen.update(own.descendants(pid))

    while not stored_matches(results) >= 3:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the run made no progress"
        record()
        time.sleep(0.05)
    record()
    assert workers, "no Ray worker of this run was found"
    os.killpg(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert f"resume with: arena run {path} --executor ray" in err
    scheduled = len(build_schedule(load_tournament(path), resolve_bots(load_tournament(path)), TEST_SECRET))
    assert 3 <= stored_matches(results) < scheduled
    _wait_until(lambda: own.still_running(workers) == [], "Ray workers outlived the run", 30)
    _wait_until(lambda: own.still_running(bots_seen) == [], "bots outlived the run", 30)


class _FakeHandle:
    """An actor handle that records its play calls (match id, upcoming match id)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None]] = []
        handle = self

        class _Method:
            def __init__(self, name: str) -> None:
                self.name = name

            def remote(self, *args):
                if self.name == "play":
                    match, upcoming = args
                    handle.calls.append((match.match_id, upcoming.match_id if upcoming else None))
                return object()

            def options(self, **_):
                return self

        self.play, self.ready, self.watch = _Method("play"), _Method("ready"), _Method("watch")


class _FakeRay:
    def wait(self, refs, num_returns=1, timeout=None):
        return [], refs

    def kill(self, handle, no_restart=True):
        pass


def test_each_play_call_names_the_match_that_worker_plays_next_and_a_lost_worker_gives_it_back(tmp_path):
    """The actor starts the bot processes of its next match while this one plays (as the
    local pool's workers do): the supervisor hands each actor the match after its two play
    calls, and the backend names it in the last call."""
    from types import SimpleNamespace

    from arena.tournament.ray_executor import RayBackend

    matches = [SimpleNamespace(match_id=f"m{i}", bots=("a", "b")) for i in range(9)]
    backend = RayBackend(
        _FakeRay(),
        _FakeHandle,
        store=lambda r: Played(r["match_id"]),
        entries={},
        driver_level=None,
        results=tmp_path,
        stderr_cap=0,
        replace_wait_s=10,
    )
    sup = MatchSupervisor(backend, workers=2, retries=Retries([]), stored=lambda m: False)
    sup.submit(*matches)
    for wid in range(2):
        sup._start()
        backend.actors[wid].live = sup.workers[wid].live = True  # both said ready
    a, b = backend.actors[0], backend.actors[1]

    def dispatch() -> None:
        sup._dispatch()
        backend._call()

    dispatch()
    for _ in range(2):  # a finishes two matches, b none
        _, _, match = a.in_flight.pop(0)
        sup._on_reply(0, Played(match.match_id))
        dispatch()
    for actor in (a, b):
        played = [m for m, _ in actor.handle.calls]
        announced = [u for _, u in actor.handle.calls]
        assert len(actor.in_flight) == 2 and len(actor.held) == 1
        assert announced[:-1] == played[1:] and announced[-1] == actor.held[0][1].match_id
    dispatched = [m for actor in (a, b) for m, _ in actor.handle.calls] + [x.held[0][1].match_id for x in (a, b)]
    assert len(set(dispatched)) == len(dispatched) and not set(dispatched) & {m.match_id for m in sup.queue}
    # b is lost (on purpose: nothing counts a try): its two matches and the one handed to it go back,
    # in order, before the rest, and a new actor takes its place
    b_matches = [m for m, _ in b.handle.calls] + [b.held[0][1].match_id]
    events: list = []
    backend._lose(b, "killed", None, events, on_purpose=True)
    (lost,) = events
    assert isinstance(lost, Lost) and lost.on_purpose and lost.playing == 1
    sup._on_lost(lost)
    assert [m.match_id for m in list(sup.queue)[:3]] == b_matches and not sup.retries.tries
    assert sorted(backend.actors) == [0, 2] and sorted(sup.workers) == [0, 2]
    a_matches = {m for m, _ in a.handle.calls} | {a.held[0][1].match_id}
    assert a_matches | {m.match_id for m in sup.queue} == {m.match_id for m in matches}


# ---- refused before anything is written, and stopped as Ctrl-C stops ---------------------


def test_an_empty_or_malformed_ray_address_is_refused_naming_where_it_came_from(monkeypatch):
    from arena.tournament.ray_executor import check_address

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(ArenaError, match="^--ray-address is empty; give the Ray head's HOST:PORT"):
        check_address("")
    with pytest.raises(ArenaError, match="^--ray-address 'nosuch' is not a Ray address"):
        check_address("nosuch")
    monkeypatch.setenv("RAY_ADDRESS", "nosuch")
    for given in (None, "auto"):  # ray.init takes RAY_ADDRESS for both
        with pytest.raises(ArenaError, match="^RAY_ADDRESS='nosuch' is not a Ray address.*set RAY_ADDRESS") as info:
            check_address(given)
        assert "\n" not in str(info.value)
    monkeypatch.delenv("RAY_ADDRESS")
    assert check_address("auto") == ("auto", "--ray-address")  # left to Ray, as before
    assert check_address(None) == (None, "")  # a new local instance


def test_a_port_that_never_answers_as_a_ray_head_is_refused_within_seconds():
    """A listener that accepts and never answers made ray.init retry for minutes, printing Ray's
    C++ warnings; the probe bounds it and keeps them off the console."""
    import socket

    pytest.importorskip("ray")
    from arena.tournament.ray_executor import check_address

    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)  # the kernel accepts; nobody answers
        port = srv.getsockname()[1]
        t0 = time.monotonic()
        with pytest.raises(ArenaError, match=f"cannot reach Ray at 127.0.0.1:{port} \\(--ray-address\\): nothing"):
            check_address(f"127.0.0.1:{port}")
    assert time.monotonic() - t0 < 30


def test_fresh_with_an_unreachable_ray_address_or_a_bad_wait_keeps_the_stored_results(tmp_path, monkeypatch):
    import socket

    pytest.importorskip("ray")
    path = write_tournament(tmp_path, "keep", deals=1, games=("tightwad",))
    run_file(path)
    results = tmp_path / "results-keep"
    before = stored(results)
    assert before
    with socket.socket() as dead:
        dead.bind(("127.0.0.1", 0))  # bound, never listening: refused
        port = dead.getsockname()[1]
        with pytest.raises(ArenaError, match=f"cannot reach Ray at 127.0.0.1:{port}"):
            run_file(path, fresh=True, executor="ray", ray_address=f"127.0.0.1:{port}")
    assert stored(results) == before
    monkeypatch.setenv("ARENA_RAY_REPLACE_WAIT_S", "soon")
    with pytest.raises(ArenaError, match="ARENA_RAY_REPLACE_WAIT_S='soon'"):
        run_file(path, fresh=True, executor="ray")
    assert stored(results) == before


def test_ray_notices_go_to_run_log_not_amid_the_progress_lines(monkeypatch, capsys, caplog):
    """The driver prints the cluster's notices ("(raylet) A worker died ...", colour codes and all)
    to stdout; the arena reports lost workers itself."""
    pytest.importorskip("ray")
    from ray._private import worker as ray_worker

    from arena.tournament.ray_executor import _notices_to_run_log

    monkeypatch.setattr(ray_worker, "print_to_stdstream", ray_worker.print_to_stdstream)  # put back after
    _notices_to_run_log()
    notice = "\x1b[33m(raylet)\x1b[0m A worker died or was killed while executing a task."
    with caplog.at_level(logging.INFO, logger="arena.ray"):
        ray_worker.print_to_stdstream({"lines": [notice], "pid": "raylet", "is_err": False}, ignore_prefix=False)
    out, err = capsys.readouterr()
    assert out == err == ""
    assert "ray (raylet): (raylet) A worker died or was killed while executing a task." in caplog.text
    assert "\x1b" not in caplog.text


# what Ray 2.60 raised at ready() on a node whose workers cannot import decktet-arena
NO_ARENA_ERROR = (
    "The actor died because of an error raised in its creation task, \x1b[36mray::BotWorker.__init__()\x1b[39m "
    "(pid=8180, ip=10.0.0.7, actor_id=a84a84a6cc449aa29cd7f14e01000000, repr=<TemporaryActor>)\n"
    "RuntimeError: The actor with name BotWorker failed to import on the worker. This may be because needed "
    "library dependencies are not installed in the worker environment:\n\n"
    '  File "/home/ray/x.py", line 1, in <module>\n'
    "ModuleNotFoundError: No module named 'arena'"
)


def test_a_node_without_decktet_arena_stops_the_run_in_one_line_naming_the_node(tmp_path):
    """Its workers cannot load the actor class: each dies at start, and replacing them cannot help."""
    from types import SimpleNamespace

    from arena import __version__
    from arena.tournament.ray_executor import RayBackend, _Actor

    class Died(Exception):
        actor_id = "a84a84a6cc449aa29cd7f14e01000000"

    def get(ref):
        raise Died(NO_ARENA_ERROR)

    fake = SimpleNamespace(
        exceptions=SimpleNamespace(RayError=Died), get=get, wait=_FakeRay().wait, kill=_FakeRay().kill
    )
    backend = RayBackend(
        fake,
        _FakeHandle,
        store=lambda r: Played(r["match_id"]),
        entries={},
        driver_level=None,
        results=tmp_path,
        stderr_cap=0,
        replace_wait_s=10,
    )
    backend.start()
    a: _Actor = backend.actors[0]
    with pytest.raises(ArenaError) as info:
        backend._on_ready(a, a.ready_ref, [])
    msg = str(info.value)
    assert msg.startswith("Ray worker on 10.0.0.7") and "\n" not in msg, msg
    assert f"ModuleNotFoundError: No module named 'arena': this node has no decktet-arena {__version__}" in msg
    assert msg.endswith("install the same version everywhere (docs/cluster.md)")
    assert backend.lost == 0  # refused at the first death, not replaced again and again


def _own_ray_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The environment of an `arena` that starts a local Ray of its own (short: Ray's socket paths)."""
    folder = Path(tempfile.mkdtemp(prefix="arena-rt-", dir="/tmp"))
    env = {**os.environ, "RAY_TMPDIR": str(folder)}
    env.pop("RAY_ADDRESS", None)
    return env, folder


@pytest.mark.slow
def test_sigterm_on_ray_stops_as_ctrl_c_does_and_leaves_no_ray_process(tmp_path):
    """ray.init replaced the run's SIGTERM handler with Ray's, which printed a crash dump and
    killed the driver before it could stop its local Ray (its agents were left running)."""
    import shutil

    pytest.importorskip("ray", reason="Ray is not installed: pip install 'decktet-arena[ray]'")
    bots = [ROOT / "bots/random_bot.py", SLOW, ROOT / "bots/divers_heuristic.py"]
    path = write_tournament(tmp_path, "term", bots=bots, deals=3, workers=2)
    results = tmp_path / "results-term"
    env, folder = _own_ray_env(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(path), "--executor", "ray"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        end = time.monotonic() + 180
        while stored_matches(results) < 2:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < end, "the run made no progress"
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGTERM)  # the arena alone, as `kill PID` or a service manager does
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 130, err
        assert "SIGTERM received" not in out + err and "Traceback" not in out + err
        assert "arena: interrupted" in err and f"resume with: arena run {path} --executor ray" in err
        assert (results / "leaderboard.json").exists()
        _wait_until(lambda: own.in_session(proc.pid) == [], "Ray's processes outlived the run", 30)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in own.in_session(proc.pid):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)
