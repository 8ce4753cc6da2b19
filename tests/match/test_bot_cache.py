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
