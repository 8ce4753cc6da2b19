"""The bot cache: what `arena` keeps for bots outside the results, and pruning it.

``cache_root()`` (``$ARENA_BOT_ENVS``, else ``~/.cache/decktet-arena/bot-envs``)
holds one folder per *entry*, under a folder per kind:

- ``envs/<hash>``: a requirements set installed by pip (shared by every bot that pins it);
- ``unpacked/<hash>``: a bot archive, unpacked;
- ``shipped/<sha256>``: a bot sent to this machine by a Ray driver (arena/tournament/bot_shipping.py).

(``locks/<hash>``, an empty file per requirements set, lets one process install it while others wait.)

Nothing ever removes an entry by itself, so a ladder that takes uploads for months, or a Ray
node, grows without end. Every use of an entry (resolving a roster, starting a bot process)
sets the entry folder's modification time (``mark_used``), so its mtime is when it was last
used, and ``prune`` removes the entries unused for longer than a given age. A folder whose
name starts with a dot is an install or unpack that never finished (its process was killed):
it is listed as *partial* and pruned by the same age, but never within ``PARTIAL_GRACE`` of
its last change, the longest an install may still be running (pip's timeout is 30 minutes).

An age cannot tell that a bot started a minute ago is still playing, so a process that runs a
bot from an entry also holds a shared ``flock`` on the entry folder (``hold``; the agent keeps
it as long as it may start the bot again), and ``prune`` removes an entry only once it has
taken that lock exclusively, without waiting: an entry in use is kept, whatever its age.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ArenaError

ENVS, UNPACKED, SHIPPED = "envs", "unpacked", "shipped"
KINDS = (ENVS, UNPACKED, SHIPPED)
LOCKS = "locks"  # one empty file per requirements set, locked while it installs: not an entry, never pruned
PARTIAL_GRACE = 3600.0  # seconds: an unfinished entry younger than this may still be installing


def cache_root() -> Path:
    """Where environments, unpacked archives and shipped bots live: ``$ARENA_BOT_ENVS`` or the user cache."""
    env = os.environ.get("ARENA_BOT_ENVS")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "decktet-arena" / "bot-envs"


class BotCacheError(ArenaError):
    """The cache cannot be read or an entry cannot be removed (the message names it and the fix)."""


@dataclass(frozen=True)
class CacheEntry:
    kind: str  # envs | unpacked | shipped
    path: Path
    size: int  # bytes of its files (links not followed)
    last_used: float  # epoch seconds: the entry folder's mtime
    partial: bool  # an install or unpack that never finished

    @property
    def key(self) -> str:
        return self.path.name


def entry_folder(path: Path) -> Path | None:
    """The cache entry folder that holds ``path``, or None if ``path`` is not in the cache."""
    try:
        root = cache_root().resolve()
        rel = Path(path).resolve().relative_to(root)
    except (OSError, ValueError):
        return None
    if len(rel.parts) >= 2 and rel.parts[0] in KINDS:
        return root / rel.parts[0] / rel.parts[1]
    return None


def mark_used(path: Path) -> None:
    """Record a use of the cache entry that holds ``path`` (nothing if it is not in the cache).
    Best effort: a cache on a read-only disk is still usable, only never pruned by age."""
    folder = entry_folder(path)
    if folder is not None:
        try:
            os.utime(folder)
        except OSError:
            pass


class Hold:
    """A shared lock on one cache entry: ``prune`` keeps the entry while any process holds one.
    Released by ``release`` or when the object is dropped (the kernel also drops it at exit)."""

    def __init__(self, folder: Path, fd: int) -> None:
        self.folder = folder
        self._fd: int | None = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        self.release()


def hold(path: Path) -> Hold | None:
    """Mark the entry that holds ``path`` used and hold it against ``prune``; None if ``path``
    is not in the cache, or the entry is being pruned at this instant (it is then found whole or
    not at all, as without a hold)."""
    folder = entry_folder(path)
    if folder is None:
        return None
    mark_used(folder)
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        # prune renames an entry before deleting it: a lock won on the old folder guards nothing
        same = os.path.samestat(os.fstat(fd), os.stat(folder))
    except OSError:
        same = False
    if not same:
        os.close(fd)
        return None
    return Hold(folder, fd)


def _lock_for_removal(path: Path) -> int | None:
    """An fd holding ``path`` locked exclusively, or None if a process holds it (in use)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except PermissionError:  # a folder without read access: ours to open up, as remove does anyway
        os.chmod(path, 0o755)
        fd = os.open(path, flags)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return None
        raise
    return fd


def _size(path: Path) -> int:
    """Bytes under ``path``, links not followed; what cannot be read counts 0."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(path, onerror=lambda _e: None):
        for name in filenames + dirnames:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode):
                total += st.st_size
    return total


def entries(root: Path | None = None) -> list[CacheEntry]:
    """Every entry of the cache, least recently used first."""
    root = cache_root() if root is None else root
    out = []
    try:
        for kind in KINDS:
            for path in _children(root / kind):
                try:
                    st = path.lstat()
                except FileNotFoundError:  # removed meanwhile
                    continue
                # a stray file or link in a kind folder is listed too, so that it can be pruned
                size = _size(path) if stat.S_ISDIR(st.st_mode) else st.st_size
                out.append(CacheEntry(kind, path, size, st.st_mtime, path.name.startswith(".")))
    except OSError as exc:
        raise BotCacheError(
            f"{root}: cannot read the bot cache ({exc.strerror or exc}); check its permissions or ARENA_BOT_ENVS"
        ) from None
    return sorted(out, key=lambda e: (e.last_used, e.kind, e.key))


def _children(folder: Path) -> Iterator[Path]:
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return
    for name in names:
        yield folder / name


def stale(found: list[CacheEntry], unused_for: float, now: float | None = None) -> list[CacheEntry]:
    """The entries unused for more than ``unused_for`` seconds (unfinished ones: also past the grace)."""
    now = time.time() if now is None else now
    return [
        e for e in found if now - e.last_used > unused_for and not (e.partial and now - e.last_used <= PARTIAL_GRACE)
    ]


def remove(entry: CacheEntry) -> bool:
    """Remove one entry unless a process holds it (False: kept, in use): renamed out of the way
    first (a bot resolving it at this moment finds it whole or not at all), then deleted; a link
    is removed, never followed."""
    path = entry.path
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
        return True
    fd = _lock_for_removal(path)
    if fd is None:
        return False
    try:
        doomed = path.with_name(f".pruning-{path.name}-{os.getpid()}")
        os.rename(path, doomed)
    finally:
        # released once renamed: a process that opened the old name sees it moved (``hold``)
        os.close(fd)
    # a package may ship read-only folders: each is opened up before os.walk enters it
    os.chmod(doomed, 0o755)
    for dirpath, dirnames, _ in os.walk(doomed):
        for name in dirnames:
            sub = os.path.join(dirpath, name)
            if not os.path.islink(sub):
                os.chmod(sub, 0o755)
    shutil.rmtree(doomed)
    return True


def _free(entry: CacheEntry) -> bool:
    """Whether ``remove`` would remove the entry now (no process holds it)."""
    if entry.path.is_symlink() or not entry.path.is_dir():
        return True
    fd = _lock_for_removal(entry.path)
    if fd is not None:
        os.close(fd)
    return fd is not None


def prune(
    unused_for: float, root: Path | None = None, dry_run: bool = False, say: Callable[[str], object] | None = None
) -> list[CacheEntry]:
    """Remove (with ``dry_run``: only list) the entries unused for more than ``unused_for``
    seconds and held by no process, telling ``say`` a line for each and one in the end.
    Returns those removed (would be removed)."""
    root = cache_root() if root is None else root
    doomed = stale(entries(root), unused_for)
    gone: list[CacheEntry] = []
    for e in doomed:
        try:
            removed = _free(e) if dry_run else remove(e)
        except OSError as exc:
            raise BotCacheError(
                f"{e.path}: cannot remove it ({exc.strerror or exc}); check its permissions, then prune "
                f"again ({len(gone)} of {len(doomed)} entries removed so far)"
            ) from None
        if not removed:
            if say is not None:
                say(f"kept {e.kind}/{e.key}: a running bot uses it")
            continue
        gone.append(e)
        if say is not None:
            verb = "would remove" if dry_run else "removed"
            say(f"{verb} {e.kind}/{e.key} ({human_size(e.size)}, last used {when(e.last_used)})")
    if say is not None:
        freed = human_size(sum(e.size for e in gone))
        kept = len(doomed) - len(gone)
        also = f", kept {kept} in use" if kept else ""
        say(
            f"{len(gone)} {'entry' if len(gone) == 1 else 'entries'} unused for over {unused_for / 86_400:g} "
            f"days{also}; {'would free' if dry_run else 'freed'} {freed} in {root}"
        )
    return gone


def human_size(n: int) -> str:
    """``n`` bytes for a person: 512 B, 3.4 MiB, 1.2 GiB."""
    size, unit = float(n), 0
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    while size >= 1024 and unit < len(units) - 1:
        size /= 1024
        unit += 1
    return f"{n} B" if unit == 0 else f"{size:.1f} {units[unit]}"


def when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))


def holds(entry: CacheEntry) -> list[str]:
    """What an entry is for a person (its key is a hash): an environment's pinned packages, an
    archive's or a shipped bot's top-level names; [] if it cannot be read. Names an entrant chose
    are shown with what a terminal would act on (escapes, controls) replaced by '?'."""
    try:
        if entry.kind == ENVS:
            with open(entry.path / "requirements.txt", encoding="utf-8", errors="replace") as f:
                text = f.read(16_384)
            names = [ln.split("--", 1)[0].strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
        else:
            folder = entry.path / "bot" if entry.kind == UNPACKED else entry.path
            names = sorted(n for n in os.listdir(folder) if not n.startswith("."))[:1000]
    except OSError:
        return []
    return ["".join(c if c.isprintable() else "?" for c in n[:200]) for n in names]


def _held(entry: CacheEntry, most: int = 3) -> str:
    names = [n if len(n) <= 40 else n[:39] + "..." for n in holds(entry)]
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def listing(found: list[CacheEntry], root: Path, as_json: bool = False) -> str:
    """What `arena cache` prints: a table (or one JSON object) of the entries and their total."""
    if as_json:
        rows = [
            {
                "kind": e.kind,
                "key": e.key,
                "path": str(e.path),
                "bytes": e.size,
                "last_used": when(e.last_used),
                "partial": e.partial,
                "holds": holds(e),
            }
            for e in found
        ]
        return json.dumps({"folder": str(root), "bytes": sum(e.size for e in found), "entries": rows}, indent=1)
    if not found:
        return f"the bot cache is empty ({root})"
    from tabulate import tabulate

    table = tabulate(
        [
            [e.kind, e.key + (" (partial)" if e.partial else ""), _held(e), human_size(e.size), when(e.last_used)]
            for e in found
        ],
        headers=["kind", "entry", "holds", "size", "last used"],
        disable_numparse=True,
    )
    return f"{table}\n{len(found)} {'entry' if len(found) == 1 else 'entries'}, {human_size(sum(e.size for e in found))}, in {root}"
