"""Bots shipped by content to machines that do not share the driver's files (Ray nodes).

The driver packs each bot once (``pack_bots``): a file's bytes, or a bot folder's files
with their executable bits and the packages its requirements resolved to, all checked
against the SHA-256 the roster recorded. The pack travels through Ray's object store.
A node unpacks it (``unpack_bots``) into its own cache keyed by that hash,
``<cache>/shipped/<sha256>/<file or bot name>`` (``arena.match.bot_cache.cache_root``:
``$ARENA_BOT_ENVS`` or the user's cache dir, on the node), installs a folder's
requirements there with the node's own pip (cached by the requirements' hash, as on the
driver), and plays only what hashes to the driver's SHA-256, packages included. Nothing
is read from a path of the driver's, and nothing installs during a match.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from arena.errors import ArenaError
from arena.match import botfolder
from arena.match.bot_cache import SHIPPED, cache_root, mark_used
from arena.match.pip_failure import explain


class BotShippingError(ArenaError):
    """A shipped bot whose bytes do not match the SHA-256 the tournament recorded."""


def shipped_root() -> Path:
    """This machine's cache of shipped bots (``<cache_root>/shipped``)."""
    return cache_root() / SHIPPED


def pack_bots(entries: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each bot read once on the driver: name -> {kind, sha256, and file + data, or files + packages}.

    Refuses a bot whose bytes no longer match the SHA-256 its entry recorded (it
    changed after the roster was read): results would not say which code played.
    """
    packed: dict[str, dict[str, Any]] = {}
    for name, entry in entries.items():
        if entry.kind == "builtin":  # nothing to ship: every node's arena has it
            packed[name] = {"builtin": entry.builtin, "sha256": entry.sha256, "kind": "builtin"}
            continue
        changed = BotShippingError(
            f"{entry.path}: bot {name!r} changed while the tournament started (SHA-256 differs); run the command again"
        )
        if entry.kind == "folder":
            folder = Path(entry.path)
            try:
                env = entry.env()  # None for a bot that forfeits: its files alone, whatever is installed since
                files = botfolder.pack_files(folder)
            except (OSError, botfolder.BotFolderError) as exc:
                raise BotShippingError(
                    f"{folder}: cannot pack bot folder {name!r} ({exc}); run the command again"
                ) from None
            resolved = env.resolved if env is not None else None
            if botfolder.packed_sha256(files, resolved) != entry.sha256:
                raise changed
            packed[name] = {
                "kind": "folder",
                "sha256": entry.sha256,
                "files": files,
                "packages": list(resolved) if resolved is not None else None,
                "forfeit": entry.forfeit,
            }
            continue
        data = Path(entry.path).read_bytes()
        if hashlib.sha256(data).hexdigest() != entry.sha256:
            raise changed
        packed[name] = {"file": Path(entry.path).name, "sha256": entry.sha256, "kind": entry.kind, "data": data}
    return packed


def unpack_bots(packed: Mapping[str, Mapping[str, Any]], cache: Path | None = None) -> dict[str, Any]:
    """Write shipped bots into ``cache`` (default ``shipped_root()``) by hash, install bot
    folders' requirements, and return their ``BotEntry``s.

    Names and SHA-256 stay those of the driver; a copy already in the cache is reused
    only if it hashes to the same. A bot whose bytes (or a folder's resolved packages)
    do not match raises ``BotShippingError``; a requirement the node cannot install
    raises ``BotFolderError``, both in one line.
    """
    from arena.tournament.config import SAFE_NAME
    from arena.tournament.roster import builtin_entry

    cache = shipped_root() if cache is None else Path(cache)
    entries = {}
    for name, bot in packed.items():
        if not SAFE_NAME.match(name):
            raise BotShippingError(f"refusing shipped bot with name {name!r}")
        if bot.get("kind") == "builtin":
            try:
                entry = builtin_entry(str(bot["builtin"]), name)
            except ValueError as exc:
                raise BotShippingError(f"bot {name!r}: {exc}; this node runs another arena version") from None
            if entry.sha256 != bot["sha256"]:
                raise BotShippingError(
                    f"builtin bot {name!r} differs on this node (another arena version); "
                    "install the same arena on every node"
                )
            entries[name] = entry
        elif bot.get("kind") == "folder":
            entries[name] = _unpack_folder(name, bot, cache)
        else:
            entries[name] = _unpack_file(name, bot, cache)
    return entries


def _home(cache: Path, sha: str) -> Path:
    if len(sha) != 64 or not all(c in "0123456789abcdef" for c in sha):
        raise BotShippingError(f"refusing a shipped bot whose SHA-256 is {sha[:70]!r}")
    home = cache / sha
    home.mkdir(parents=True, exist_ok=True)
    for d in (cache, home):
        d.chmod(0o755)  # the sandbox may run the bot under another uid
    mark_used(home)  # `arena cache prune` keeps what a run still ships
    return home


def _unpack_file(name: str, bot: Mapping[str, Any], cache: Path) -> Any:
    from arena.tournament.roster import BotEntry, bot_kind, file_sha256

    file, sha = str(bot["file"]), str(bot["sha256"])
    if file in ("", ".", "..") or "/" in file or "\0" in file:
        raise BotShippingError(f"refusing shipped bot {name!r} with file name {file!r}")
    data = bytes(bot["data"])
    if hashlib.sha256(data).hexdigest() != sha:
        raise BotShippingError(
            f"bot {name!r} ({file}) arrived with bytes that do not match its SHA-256 {sha[:12]}...; refusing to play it"
        )
    path = _home(cache, sha) / file
    mode = 0o755 if bot["kind"] == "executable" else 0o644
    if not (path.is_file() and file_sha256(path) == sha and (path.stat().st_mode & 0o777) == mode):
        tmp = path.with_name(f".{file}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.chmod(mode)
        os.replace(tmp, path)  # atomic: another worker of this node reads the old copy or this one
    entry = BotEntry(name=name, path=path, sha256=file_sha256(path), kind=bot_kind(path) or "python")
    if entry.sha256 != sha or entry.kind != bot["kind"]:
        raise BotShippingError(f"bot {name!r} ({file}) changed while written to {path}; refusing to play it")
    return entry


def _check_files(name: str, files: Any) -> None:
    """Refuse a pack whose paths would leave its folder, or over the bot folder bounds."""
    total = 0
    for rel, _xbit, data in files:
        parts = PurePosixPath(rel).parts
        if (
            not rel
            or "\0" in rel
            or "\\" in rel
            or rel.startswith("/")
            or ".." in parts
            or any(p in ("", ".") for p in parts)
        ):
            raise BotShippingError(f"refusing shipped bot folder {name!r} with file {rel[:80]!r}")
        total += len(data)
    if len(files) > botfolder.MAX_FILES:
        raise BotShippingError(f"refusing shipped bot folder {name!r}: more than {botfolder.MAX_FILES} files")
    if total > botfolder.MAX_BYTES:
        raise BotShippingError(
            f"refusing shipped bot folder {name!r}: more than {botfolder.MAX_BYTES >> 20} MiB of files"
        )


def _unpack_folder(name: str, bot: Mapping[str, Any], cache: Path) -> Any:
    """``<cache>/<sha256>/<name>/``, written once per node, its requirements installed there."""
    from arena.tournament.roster import BotEntry

    sha, files = str(bot["sha256"]), list(bot["files"])
    packages = tuple(bot["packages"]) if bot.get("packages") is not None else None
    _check_files(name, files)
    if botfolder.packed_sha256(files, packages) != sha:
        raise BotShippingError(
            f"bot folder {name!r} arrived with bytes that do not match its SHA-256 {sha[:12]}...; refusing to play it"
        )
    home = _home(cache, sha)
    dest = home / name
    for attempt in range(2):
        if not dest.is_dir():
            tmp = home / f".{name}.{os.getpid()}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            for rel, xbit, data in files:
                target = tmp / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                target.chmod(0o755 if xbit else 0o644)
            for dirpath, _, _ in os.walk(tmp):
                os.chmod(dirpath, 0o755)
            try:
                os.rename(tmp, dest)
            except OSError:  # another worker of this node wrote it first: checked below
                shutil.rmtree(tmp, ignore_errors=True)
        forfeit = bot.get("forfeit")
        try:  # a bot whose install failed on the driver forfeits here too, without trying again
            env = None if forfeit else botfolder.ensure_env(dest)  # this node's pip and cache; never in a match
        except botfolder.BotFolderError as exc:
            raise botfolder.BotFolderError(f"bot folder {name!r} on this node: {explain(exc)}") from None
        got = botfolder.folder_sha256(dest, env)
        if got == sha:
            return BotEntry(name=name, path=dest, sha256=got, kind="folder", forfeit=forfeit)
        here = env.resolved if env is not None else ()
        if packages is not None and tuple(here) != packages:
            raise BotShippingError(
                f"bot folder {name!r}: its requirements resolve on this node to "
                f"{', '.join(here)}, on the driver to {', '.join(packages)}; pin every "
                "package (dependencies too) in its requirements.txt"
            )
        if attempt == 0:  # a copy changed since it was written: write it again, once
            shutil.rmtree(dest, ignore_errors=True)
    raise BotShippingError(f"bot folder {name!r} changed while written to {dest}; refusing to play it")
