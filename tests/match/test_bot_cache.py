"""The bot cache (arena.match.bot_cache, `arena cache`): every use marks an entry, and pruning
removes only what has not been used for the given age, never following a link out of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from arena.match import bot_cache, botfolder
from arena.match.agents import ProcessAgent, RandomAgent
from arena.match.referee import play_match
from arena.match.sandbox import Limits
from arena.tournament.bot_shipping import pack_bots, unpack_bots
from arena.tournament.roster import bot_entry
from arena.tournament.schedule import MatchSpec
from games import REGISTRY
from tests.hostile.test_match_hostile import TC
from tests.support import BOTS
from tests.support.bot_folders import tiny_folder

DAY = 86_400.0
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("ARENA_BOT_ENVS", str(root))
    return root


def _entry(root: Path, kind: str, key: str, age_days: float, size: int = 10) -> Path:
    path = root / kind / key
    (path / "site").mkdir(parents=True)
    (path / "site" / "blob").write_bytes(b"x" * size)
    _age(path, age_days)
    return path


def _age(path: Path, days: float) -> None:
    when = time.time() - days * DAY
    os.utime(path, (when, when))


def test_prune_removes_only_entries_unused_for_longer_than_the_age(cache: Path) -> None:
    old_env = _entry(cache, "envs", "oldenv", 40, size=3000)
    new_env = _entry(cache, "envs", "newenv", 2)
    old_ship = _entry(cache, "shipped", "a" * 64, 31)
    old_arch = _entry(cache, "unpacked", "oldarch", 365)
    found = {e.path: e for e in bot_cache.entries()}
    assert set(found) == {old_env, new_env, old_ship, old_arch}
    assert found[old_env].size == 3000 and not found[old_env].partial
    assert [e.path for e in bot_cache.entries()][0] == old_arch  # least recently used first

    listed = bot_cache.prune(30 * DAY, dry_run=True)
    assert {e.path for e in listed} == {old_env, old_ship, old_arch}
    assert old_env.exists()  # a dry run removes nothing

    removed = bot_cache.prune(30 * DAY)
    assert {e.path for e in removed} == {old_env, old_ship, old_arch}
    assert not old_env.exists() and not old_ship.exists() and not old_arch.exists()
    assert new_env.exists()
    assert not [p for p in (cache / "envs").iterdir() if p.name.startswith(".pruning")]


def test_an_unfinished_install_is_kept_while_it_may_still_be_running(cache: Path) -> None:
    """A dot-named folder is an install or unpack that never finished; one changed within
    PARTIAL_GRACE may be a pip still running, so even --unused-for 0 keeps it."""
    running = _entry(cache, "envs", ".abc.tmp1", 0.001)
    crashed = _entry(cache, "unpacked", ".def.tmp2", 2)
    found = {e.path: e for e in bot_cache.entries()}
    assert found[running].partial and found[crashed].partial
    removed = bot_cache.prune(0.0)
    assert [e.path for e in removed] == [crashed]
    assert running.exists() and not crashed.exists()


def test_pruning_never_follows_a_link_out_of_the_cache(cache: Path, tmp_path: Path) -> None:
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    (cache / "envs").mkdir(parents=True)
    link = cache / "envs" / "evil"
    link.symlink_to(outside, target_is_directory=True)
    os.utime(link, (0, 0), follow_symlinks=False)
    inner = _entry(cache, "unpacked", "inner", 90)
    (inner / "site" / "out").symlink_to(outside, target_is_directory=True)
    removed = bot_cache.prune(30 * DAY)
    assert {e.path for e in removed} == {link, inner}
    assert not link.is_symlink() and not inner.exists()
    assert (outside / "keep.txt").read_text() == "mine"


def test_an_entry_with_read_only_folders_is_removed_too(cache: Path) -> None:
    """(As root, which CI may be, the modes do not stop anything: then it checks the removal only.)"""
    path = _entry(cache, "envs", "readonly", 60)
    (path / "site" / "locked").mkdir()
    (path / "site" / "locked" / "f").write_text("x")
    (path / "site" / "locked").chmod(0)
    (path / "site").chmod(0o555)
    path.chmod(0o555)
    _age(path, 60)
    bot_cache.prune(30 * DAY)
    assert not path.exists()


def test_uses_mark_entries_and_leave_files_outside_the_cache_alone(cache: Path, tmp_path: Path) -> None:
    # an environment: resolving a folder bot marks it
    env = _entry(cache, "envs", botfolder.env_key(["tinypkg==1.0"]), 100)
    (env / "resolved.txt").write_text("tinypkg==1.0\n")
    _age(env, 100)
    folder = tiny_folder(tmp_path / "src")
    assert botfolder.installed_env(folder) is not None
    assert time.time() - env.stat().st_mtime < DAY
    # an archive: its unpacked copy is marked whenever it is resolved again
    archive = tmp_path / "bot.tar.gz"
    with tarfile.open(archive, "w:gz") as t:
        t.add(folder, arcname="tinybot")
    unpacked = botfolder.unpack(archive)
    entry = unpacked.parents[1]
    assert entry.parent == cache / "unpacked"
    _age(entry, 100)
    botfolder.unpack(archive)
    assert time.time() - entry.stat().st_mtime < DAY
    # starting the folder's bot marks the folder's entry too
    _age(entry, 100)
    botfolder.runtime(unpacked)
    assert time.time() - entry.stat().st_mtime < DAY
    # a bot outside the cache keeps its times
    _age(folder, 100)
    before = folder.stat().st_mtime
    bot_cache.mark_used(folder / "main.py")
    bot_cache.mark_used(folder)
    assert folder.stat().st_mtime == before


def test_a_shipped_bot_is_marked_when_it_arrives_and_when_it_starts(cache: Path) -> None:
    entry = bot_entry(str(BOTS / "plain_random.py"))
    shipped = unpack_bots(pack_bots({"plain_random": entry}))["plain_random"]
    home = Path(shipped.path).parent
    assert home.parent == cache / "shipped" and home.name == entry.sha256
    _age(home, 100)
    unpack_bots(pack_bots({"plain_random": entry}))  # the next run ships it again
    assert time.time() - home.stat().st_mtime < DAY
    _age(home, 100)
    from arena.match.detect import detect_sandbox

    agents = [ProcessAgent(shipped, sandbox=detect_sandbox("none"), limits=Limits(), time_control=TC)]
    agents += [RandomAgent(name=f"r{i}", seed=i) for i in (1, 2)]
    spec = REGISTRY["tightwad"]
    match = MatchSpec(
        match_id="cache/1",
        index=0,
        game="tightwad",
        players=3,
        options=spec.resolve_options(3, {}),
        deal_seed=3,
        match_seed=4,
        bots=("plain_random", "r1", "r2"),
    )
    try:
        record = play_match(match, agents, time_control=TC, sandbox=detect_sandbox("none"))
    finally:
        for a in agents:
            a.close()
    assert record["faults"] == [None, None, None]
    assert time.time() - home.stat().st_mtime < DAY
    assert bot_cache.prune(30 * DAY) == []  # what was just played stays


def _arena(cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, ARENA_BOT_ENVS=str(cache))
    return subprocess.run(
        [sys.executable, "-m", "arena", "cache", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_arena_cache_lists_and_prunes_from_the_command_line(cache: Path) -> None:
    empty = _arena(cache)
    assert empty.returncode == 0 and "empty" in empty.stdout and str(cache) in empty.stdout
    old = _entry(cache, "envs", "oldenv", 45, size=5 * 1024 * 1024)
    new = _entry(cache, "shipped", "b" * 64, 1)
    listing = _arena(cache)
    assert listing.returncode == 0, listing.stderr
    assert "oldenv" in listing.stdout and "5.0 MiB" in listing.stdout and "2 entries" in listing.stdout
    data = json.loads(_arena(cache, "--json").stdout)
    assert data["folder"] == str(cache) and [e["key"] for e in data["entries"]] == ["oldenv", "b" * 64]

    dry = _arena(cache, "prune", "--dry-run")
    assert dry.returncode == 0 and "would remove envs/oldenv" in dry.stdout and old.exists()
    done = _arena(cache, "prune", "--unused-for", "30")
    assert done.returncode == 0, done.stderr
    assert "removed envs/oldenv" in done.stdout and "freed 5.0 MiB" in done.stdout
    assert not old.exists() and new.exists()


@pytest.mark.parametrize("days", ["nan", "-1", "soon", "1e9"])
def test_a_bad_age_is_one_line_naming_the_option(cache: Path, days: str) -> None:
    got = _arena(cache, "prune", "--unused-for", days)
    assert got.returncode == 2
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and "--unused-for" in lines[0] and "days" in lines[0], got.stderr
    assert "Traceback" not in got.stderr


def test_a_cache_that_cannot_be_read_is_one_line(cache: Path) -> None:
    cache.mkdir()
    (cache / "envs").write_text("not a folder")  # listing it fails
    got = _arena(cache)
    assert got.returncode == 2 and "Traceback" not in got.stderr
    assert len(got.stderr.strip().splitlines()) == 1 and str(cache) in got.stderr


SLOW_FOLDER_BOT = """
import time
from pathlib import Path
import tinypkg
from botkit import run


def choose(observation, match):
    Path((Path(__file__).parent / "marker.txt").read_text()).write_text("deciding")
    time.sleep(120)  # in the middle of a match, as long as the test needs
    return observation["legal_actions"][0]["id"]


run(choose, name="slow-folder-bot")
"""


def test_prune_keeps_the_environment_of_a_bot_in_the_middle_of_a_match(cache: Path, tmp_path: Path) -> None:
    """`arena cache prune --unused-for 0` while `arena play` waits on a folder bot's first decision:
    the bot's environment stays (its process holds it), and goes once that process has ended."""
    import signal

    from tests.own_processes import in_session, with_marker

    env = _entry(cache, "envs", botfolder.env_key(["tinypkg==1.0"]), 0)
    (env / "site" / "tinypkg").mkdir()
    (env / "site" / "tinypkg" / "__init__.py").write_text("")
    (env / "resolved.txt").write_text("tinypkg==1.0\n")
    idle = _entry(cache, "envs", "idle", 0)
    folder = tmp_path / "slow"
    folder.mkdir()
    (folder / "main.py").write_text(SLOW_FOLDER_BOT)
    (folder / "requirements.txt").write_text("tinypkg==1.0\n")
    marker = tmp_path / "deciding.txt"
    (folder / "marker.txt").write_text(str(marker))
    play = subprocess.Popen(
        [sys.executable, "-m", "arena", "play", "tightwad", str(folder), str(BOTS / "plain_random.py")]
        + [str(BOTS / "plain_random.py"), "--seed", "1", "--no-timeouts", "--sandbox", "none", "--quiet"],
        cwd=tmp_path,
        env=dict(os.environ, ARENA_BOT_ENVS=str(cache)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert play.poll() is None, play.stderr.read().decode() if play.stderr else ""
            assert time.monotonic() < deadline, "the bot never reached its first decision"
            time.sleep(0.05)
        time.sleep(0.01)
        pruned = _arena(cache, "prune", "--unused-for", "0")
        assert pruned.returncode == 0, pruned.stderr
        assert env.is_dir() and (env / "site" / "tinypkg").is_dir(), pruned.stdout
        assert f"kept envs/{env.name}: a running bot uses it" in pruned.stdout
        assert "removed envs/idle" in pruned.stdout and not idle.exists()
        assert "1 entry unused for over 0 days, kept 1 in use" in pruned.stdout
    finally:
        play.terminate()  # arena stops its bots on SIGTERM, as on Ctrl-C
        try:
            play.wait(timeout=30)
        finally:
            for pid in with_marker(str(folder)) + in_session(play.pid):
                os.kill(pid, signal.SIGKILL)
            if play.stderr:
                play.stderr.close()
    # every process that held it is gone: the environment is free to go
    deadline = time.monotonic() + 30
    while with_marker(str(folder)) and time.monotonic() < deadline:
        time.sleep(0.05)
    again = _arena(cache, "prune", "--unused-for", "0")
    assert again.returncode == 0, again.stderr
    assert f"removed envs/{env.name}" in again.stdout and not env.exists()


def test_a_run_holds_what_its_roster_plays_until_it_releases_it(cache: Path, tmp_path: Path) -> None:
    """`arena run` resolves its roster before any worker starts a bot: it holds the roster's
    entries (hold_entries) for the whole run, so a prune meanwhile keeps them."""
    from arena.tournament.roster import hold_entries

    env = _entry(cache, "envs", botfolder.env_key(["tinypkg==1.0"]), 0)
    (env / "resolved.txt").write_text("tinypkg==1.0\n")
    archive = tmp_path / "bot.tar.gz"
    with tarfile.open(archive, "w:gz") as t:
        t.add(tiny_folder(tmp_path / "src"), arcname="tinybot")
    entry = bot_entry(str(archive))
    unpacked = entry.path.parents[1]
    assert unpacked.parent == cache / "unpacked"
    held = hold_entries([entry, bot_entry(str(BOTS / "plain_random.py"))])
    assert sorted(h.folder for h in held) == sorted([env, unpacked])
    lines: list[str] = []
    assert bot_cache.prune(0.0, dry_run=True, say=lines.append) == []
    assert bot_cache.prune(0.0, say=lines.append) == []
    assert env.is_dir() and unpacked.is_dir()
    assert f"kept envs/{env.name}: a running bot uses it" in lines
    for h in held:
        h.release()
    assert {e.path for e in bot_cache.prune(0.0)} == {env, unpacked}


def test_the_listing_says_what_each_hashed_entry_holds_and_shows_no_terminal_escapes(cache: Path) -> None:
    """A key is a hash: the listing also names an environment's packages and a bot's files, and a
    name an entrant chose cannot colour or retitle the organiser's terminal."""
    env = _entry(cache, "envs", "e" * 32, 3)
    (env / "requirements.txt").write_text(
        "# pinned\nnumpy==2.4.6 --hash=sha256:abc\ntorch==2.9.0\nscipy==1.16.0\nrich==14.0\n"
    )
    shipped = _entry(cache, "shipped", "s" * 64, 2)
    (shipped / "bot\x1b]0;owned\x07.py").write_text("")
    unpacked = _entry(cache, "unpacked", "u" * 32, 1)
    (unpacked / "bot").mkdir()
    (unpacked / "bot" / "main.py").write_text("")
    (unpacked / ".complete").write_text("")
    _entry(cache, "envs", "n" * 32, 0)  # no requirements file: holds nothing known

    table = bot_cache.listing(bot_cache.entries(), cache)
    assert "numpy==2.4.6, torch==2.9.0, scipy==1.16.0 and 1 more" in table
    assert "\x1b" not in table and "\x07" not in table and "bot?]0;owned?.py, site" in table
    assert "main.py" in table
    rows = {
        e["key"]: e["holds"] for e in json.loads(bot_cache.listing(bot_cache.entries(), cache, as_json=True))["entries"]
    }
    assert rows["e" * 32] == ["numpy==2.4.6", "torch==2.9.0", "scipy==1.16.0", "rich==14.0"]
    assert rows["u" * 32] == ["main.py"] and rows["n" * 32] == []
