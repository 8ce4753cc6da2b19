"""Bot folders with requirements shipped to a Ray node by content (arena.tournament.bot_shipping).

The node is a ``BotWorker`` (the Ray actor's class) in this process, without Ray: what
it gets is the driver's pack only. The driver's folder and its environments cache are
gone before the worker starts, and the worker's cache is another folder, so nothing can
be played from a path of the driver's. pip is offline (test_bot_folders' wheels).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from arena.match import botfolder
from arena.tournament.bot_shipping import BotShippingError, pack_bots, unpack_bots
from arena.tournament.load import load_tournament
from arena.tournament.ray_executor import BotWorker
from arena.tournament.roster import BotEntry, bot_entry
from arena.tournament.schedule import build_schedule
from tests.match.test_bot_folders import any_safe_level
from tests.support.bot_folders import tiny_folder

from .test_ray_executor import TEST_SECRET, _settings
from .test_runner import ROOT, write_tournament


def _node(monkeypatch: pytest.MonkeyPatch, cache: Path, wheels: Path | None) -> None:
    """What the worker's node has: its own cache; pip finds ``wheels`` (None: nothing)."""
    monkeypatch.setenv("ARENA_BOT_ENVS", str(cache))
    empty = cache.parent / "no-wheels"
    empty.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels or empty))


@pytest.mark.slow  # one pip install on the node (a few seconds on a busy machine)
def test_a_bot_folder_reaches_a_node_by_content_and_installs_there_before_play(
    offline: Path, shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tiny_folder(offline / "driver")
    tiny = bot_entry(str(folder))  # installs into the driver's cache
    rnd = bot_entry(str(ROOT / "bots/random_bot.py"))
    heur = bot_entry(str(ROOT / "bots/tightwad_heuristic.py"))
    entries = {tiny.name: tiny, rnd.name: rnd, heur.name: heur}
    tournament = load_tournament(write_tournament(offline, "ship", deals=1, bots=[folder, rnd.path, heur.path]))
    match = next(m for m in build_schedule(tournament, list(entries.values()), TEST_SECRET) if m.game == "tightwad")
    packed = pack_bots(entries)
    shutil.rmtree(folder)  # the driver's copy is gone once packed

    node = offline / "node" / "cache"
    _node(monkeypatch, node, shared / "wheels")
    worker = BotWorker(packed, _settings(tournament, any_safe_level().level))
    try:
        assert worker.ready()["error"] is None
        record = worker.play(match)
    finally:
        worker.close()
    assert record["faults"] == [None] * len(match.bots), record["faults"]
    by_name = {b["name"]: b for b in record["bots"]}
    assert by_name["tinybot"]["sha256"] == tiny.sha256 and by_name["random_bot"]["sha256"] == rnd.sha256
    assert by_name["tinybot"]["path"].startswith(str(node / "shipped" / tiny.sha256 / "tinybot"))
    assert by_name["random_bot"]["path"] == str(node / "shipped" / rnd.sha256 / "random_bot.py")
    key = botfolder.env_key(["tinypkg==1.0"])
    assert (node / "envs" / key / "resolved.txt").is_file()  # installed on the node, in its own cache

    # a second worker on that node finds both in its cache: no pip (it could find nothing now)
    _node(monkeypatch, node, None)
    again = BotWorker(packed, _settings(tournament, any_safe_level().level))
    assert again.ready()["error"] is None
    again.close()

    # a node whose pip cannot install the requirements: one line, before any match
    _node(monkeypatch, offline / "bare" / "cache", None)
    bare = BotWorker(packed, _settings(tournament, any_safe_level().level))
    err = bare.ready()["error"]
    bare.close()
    assert err and "\n" not in err and "tinybot" in err and "on this node" in err
    assert "pip found no binary wheel of tinypkg==1.0" in err  # none where this node's pip looks


def test_a_tampered_or_escaping_folder_pack_is_refused(offline: Path, tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "main.py").write_text("print('hi')\n")
    entry = bot_entry(str(folder))  # no requirements: no install
    packed = pack_bots({entry.name: entry})
    assert [f[0] for f in packed["plain"]["files"]] == ["main.py"] and packed["plain"]["packages"] is None
    got = unpack_bots(packed, tmp_path / "node")["plain"]
    assert got.path == tmp_path / "node" / entry.sha256 / "plain" and got.sha256 == entry.sha256

    tampered = {"plain": {**packed["plain"], "files": [("main.py", 0, b"print('other')\n")]}}
    with pytest.raises(BotShippingError, match="plain.*SHA-256"):
        unpack_bots(tampered, tmp_path / "node2")
    escaping = {"plain": {**packed["plain"], "files": [("../../evil.py", 0, b"x")]}}
    with pytest.raises(BotShippingError, match="evil"):
        unpack_bots(escaping, tmp_path / "node3")
    assert not list(tmp_path.rglob("evil.py"))

    # a cached copy changed on the node is written again from the pack, never played as it is
    (got.path / "main.py").chmod(0o644)
    (got.path / "main.py").write_text("print('changed on the node')\n")
    again = unpack_bots(packed, tmp_path / "node")["plain"]
    assert (again.path / "main.py").read_text() == "print('hi')\n" and again.sha256 == entry.sha256


def test_a_folder_changed_after_the_roster_was_read_is_not_shipped(offline: Path, tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "main.py").write_text("print('hi')\n")
    entry = bot_entry(str(folder))
    (folder / "extra.txt").write_text("new")
    with pytest.raises(BotShippingError, match="plain.*changed"):
        pack_bots({entry.name: entry})
    assert os.path.isdir(folder)


def test_a_bot_that_forfeits_on_the_driver_forfeits_on_the_node_without_pip(
    offline: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A roster's bot whose requirements did not install (``BotEntry.forfeit``) ships as such:
    the node runs no pip for it (pip could find tinypkg 1.0 there) and its matches fault."""
    folder = tmp_path / "pinned"
    folder.mkdir()
    (folder / "main.py").write_text("import tinypkg\n")
    (folder / "requirements.txt").write_text("tinypkg==1.0\n")
    entry = BotEntry(
        name="pinned",
        path=folder,
        sha256=botfolder.folder_sha256(folder, None),
        kind="folder",
        forfeit="requirements.txt: pip could not install tinypkg==1.0 (the driver's index was down)",
    )
    packed = pack_bots({entry.name: entry})
    assert packed["pinned"]["packages"] is None and packed["pinned"]["forfeit"] == entry.forfeit

    def no_pip(folder: Path) -> None:
        raise AssertionError(f"the node ran pip for {folder}")

    monkeypatch.setattr(botfolder, "ensure_env", no_pip)
    got = unpack_bots(packed, tmp_path / "node")["pinned"]
    assert got.forfeit == entry.forfeit and got.sha256 == entry.sha256
