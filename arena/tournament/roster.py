"""The bots of a tournament: files found, named, hashed and checked.

A bot is one file: a ``.py`` file (run with the harness's Python) or any other
executable file; or a folder, or a .zip / .tar.gz archive of one, with an entry file,
data and pinned requirements (``arena.match.botfolder``: the requirements are installed
here, before play). Globs skip files whose name starts with ``_`` (helpers); a bot
listed by its exact path is never skipped. A program of the system (``/bin/true``, an
interpreter, anything under ``SYSTEM_DIRS`` once symlinks are followed) is no bot: it
does not speak the protocol, and its name would rank a tool, not an entrant.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from arena.errors import ArenaError
from arena.match import bot_cache, botfolder
from arena.match.pip_failure import explain
from arena.tournament.config import SAFE_NAME, SAFE_NAME_TEXT, BotSpec, BuiltinSpec, Tournament

BotKind = Literal["python", "executable", "builtin", "folder"]


class RosterError(ArenaError):
    """A bot named on the command line cannot be found or run."""


@dataclass(frozen=True)
class BotEntry:
    """One bot of a roster: unique name, absolute path, content hash, how to run it."""

    name: str
    path: Path
    sha256: str
    kind: BotKind
    source: Path | None = None  # for a snapshot: the file it was copied from
    builtin: str | None = None  # kind "builtin": which player of arena/match/builtin.py
    # why the bot cannot start (its requirements did not install): it forfeits every match
    forfeit: str | None = None

    def env(self, folder: Path | None = None) -> botfolder.BotEnv | None:
        """The installed environment of this folder bot (or of its copy ``folder``); None for a
        bot that needs none or forfeits (its identity is then its files alone)."""
        return None if self.forfeit else botfolder.installed_env(Path(folder or self.path))

    def to_json(self) -> dict[str, str]:
        out = {"name": self.name, "path": str(self.path), "sha256": self.sha256, "kind": self.kind}
        if self.source is not None:
            out["source"] = str(self.source)
        if self.builtin is not None:
            out["builtin"] = self.builtin
        if self.forfeit is not None:
            out["forfeit"] = self.forfeit
        return out


def builtin_entry(policy: str, name: str | None = None) -> BotEntry:
    """The roster entry of a player built into the arena (``{builtin: random}``)."""
    from arena.match.builtin import builtin_path, builtin_sha256

    return BotEntry(
        name=name or policy, path=builtin_path(), sha256=builtin_sha256(policy), kind="builtin", builtin=policy
    )


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def bot_kind(path: Path) -> BotKind | None:
    """``python`` for a .py file, ``executable`` for an executable file, ``folder`` for a
    folder or an archive of one (.zip, .tar.gz), else None."""
    if path.is_dir() or botfolder.is_archive(path):
        return "folder"
    if not path.is_file():
        return None
    if path.suffix == ".py":
        return "python"
    if os.access(path, os.X_OK):
        return "executable"
    return None


# Where the system keeps its own programs and files: no bot lives there.
GLOB_SECONDS = 20.0  # a bots pattern that walks longer is no project's folder of bots
GLOB_MAX_PATHS = 100_000
SYSTEM_DIRS = (
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/usr",
    "/etc",
    "/boot",
    "/dev",
    "/proc",
    "/sys",
    "/run",
    "/snap",
)


def system_program(path: Path) -> str | None:
    """The system folder ``path`` lies in (symlinks followed), else None."""
    real = os.path.realpath(path)
    for top in SYSTEM_DIRS:
        if real == top or real.startswith(top + "/"):
            return top
    return None


def _not_a_system_program(path: Path, shown: str) -> str | None:
    """Why ``path`` cannot be a bot (one line with the fix), or None."""
    top = system_program(path)
    if top is None:
        return None
    real = os.path.realpath(path)
    where = f"{real}, under {top}" if real != str(path) else f"under {top}"
    return (
        f"{shown} is a program of the system ({where}), not a bot; a bot is your own .py or "
        "executable file that speaks the protocol (docs/protocol.md): give its path, or leave this out"
    )


# (folder, requirements) whose install failed in this process, with why: pip is tried once,
# though a tournament file's roster is resolved more than once (loading it, then running it)
_FAILED_INSTALLS: dict[tuple[str, str], botfolder.BotFolderError] = {}


def _install(folder: Path) -> botfolder.BotEnv | None:
    try:
        key = (os.path.realpath(folder), botfolder.env_key(botfolder.requirements(folder)))
    except botfolder.BotFolderError as exc:  # a line that is not pinned
        raise explain(exc) from None
    if key in _FAILED_INSTALLS:
        raise _FAILED_INSTALLS[key]
    try:
        return botfolder.ensure_env(folder)
    except botfolder.BotFolderError as exc:
        _FAILED_INSTALLS[key] = explain(exc)
        raise _FAILED_INSTALLS[key] from None


def _as_given(exc: botfolder.BotFolderError, folder: Path, path: Path) -> botfolder.BotFolderError:
    """A bot folder's error as its owner gave the bot: an archive's unpacked copy in the bot
    cache (a folder its owner never made) is named by the archive, 'mybot.zip: no entry file'."""
    if folder == path:
        return exc
    return botfolder.BotFolderError(str(exc).replace(str(folder), str(path)))


def _entry(path: Path, name: str, *, forfeits: bool = False) -> BotEntry:
    """``forfeits``: a tournament's bot whose requirements cannot be installed forfeits its
    matches (a broken bot never stops a tournament); else (a duel, a check, a one-off match,
    a ladder's own bots) that failure is the command's error."""
    kind = bot_kind(path)
    assert kind is not None
    if kind == "folder":
        # an archive plays from its unpacked folder; the requirements are installed now, never
        # during a match, and the identity covers the files and the resolved packages
        folder = botfolder.unpack(path) if path.is_file() else path
        try:
            botfolder.folder_files(folder)  # links out or to nothing, special files, size: refused before any install
            botfolder.entry_file(folder)
        except botfolder.BotFolderError as exc:
            raise _as_given(exc, folder, path) from None
        forfeit = None
        try:
            env = _install(folder)
        except botfolder.BotFolderError as exc:
            exc = _as_given(exc, folder, path)
            if not forfeits:
                raise exc from None
            # once installed, its identity (files and packages) changes: its matches play again
            _warn_once(
                f"arena: bot {name!r} forfeits its matches: {exc} (once it is fixed, its matches are played again)"
            )
            env, forfeit = None, str(exc)
        return BotEntry(
            name=name,
            path=folder,
            sha256=botfolder.folder_sha256(folder, env),
            kind=kind,
            source=path if folder != path else None,
            forfeit=forfeit,
        )
    marker = next((m for m in (botfolder.REQUIREMENTS, botfolder.MANIFEST) if (path.parent / m).is_file()), None)
    if marker:  # mybot/main.py named instead of mybot/: it runs without the folder's packages and data
        _warn_once(
            f"arena: {path} is a file of the bot folder {path.parent} (it has {marker}): it plays alone, without "
            f"the folder's packages and files; name the folder ({path.parent}) to play the bot"
        )
    return BotEntry(name=name, path=path, sha256=file_sha256(path), kind=kind)


def hold_entries(entries: list[BotEntry]) -> list[bot_cache.Hold]:
    """Hold, against `arena cache prune`, the cache entries the roster plays from (an unpacked
    or shipped bot, a folder's environment) until the holds are released: a run resolves its
    roster before its workers start any bot."""
    held = []
    for e in entries:
        paths = [e.path]
        if e.kind == "folder":
            env = e.env()
            paths += [env.path] if env is not None else []
        held += [h for h in map(bot_cache.hold, paths) if h is not None]
    return held


_WARNED: set[str] = set()


def _warn_once(line: str) -> None:
    if line not in _WARNED:
        _WARNED.add(line)
        print(line, file=sys.stderr, flush=True)


def _absolute(path: Path) -> Path:
    """Absolute and normalised, but symlinks kept (a linked bot keeps its own name and place)."""
    return Path(os.path.abspath(path))


def _shown(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


def resolve_bots(tournament: Tournament, *, forfeits: bool = True) -> list[BotEntry]:
    """Every bot of the tournament, sorted by name; raises ``arena.tournament.config.ConfigError``.
    ``forfeits``: a bot folder whose requirements cannot be installed is in the roster and
    forfeits its matches (``BotEntry.forfeit``); False: that is a ``ConfigError`` too."""
    base = tournament.base_dir
    found: dict[str, tuple[BotEntry, int]] = {}
    for i, item in enumerate(tournament.bots):
        candidates: list[tuple[Path, str | None]]
        if isinstance(item, BuiltinSpec):
            entry = builtin_entry(item.builtin, item.name)
            if entry.name in found and found[entry.name][0] != entry:
                other, j = found[entry.name]
                raise tournament.config_error(
                    ("bots", i),
                    f"two bots are named {entry.name!r}: {_shown(other.path, base) if other.builtin is None else 'builtin ' + str(other.builtin)} "
                    f"(bots[{j}]) and builtin {item.builtin}; give one an explicit name: - {{builtin: {item.builtin}, "
                    f"name: {entry.name}_2}}",
                )
            found[entry.name] = (entry, i)
            continue
        if isinstance(item, BotSpec):
            loc: tuple[str | int, ...] = ("bots", i, "path")
            candidates = [(tournament.resolve_path(item.path), item.name)]
            if not candidates[0][0].exists():
                raise tournament.config_error(
                    loc,
                    f"no such file {item.path!r} (looked in {base}); fix the path "
                    "(relative paths start at the working directory, or at root:)",
                )
        else:
            loc = ("bots", i)
            candidates = [(p, None) for p in _expand(tournament, item, loc)]
            if not candidates and item.startswith("builtin:"):  # the command line's spelling
                kind = item[len("builtin:") :] or "random"
                raise tournament.config_error(
                    loc,
                    f"{item!r} is how the command line names a builtin player; in a tournament file "
                    f"write it as an entry with a name: - {{builtin: {kind}, name: house_{kind}}}",
                )
            if not candidates:
                raise tournament.config_error(
                    loc,
                    f"{item!r} matches no bot file (looked in {base}); fix the pattern or run from "
                    "the folder it is relative to (or set root:)",
                )
        for path, name in candidates:
            why = _not_a_system_program(path, repr(_shown(path, base)))
            if why:
                raise tournament.config_error(loc, why)
            if bot_kind(path) is None:
                raise tournament.config_error(
                    loc,
                    f"{_shown(path, base)!r} is neither a .py file nor executable; "
                    f"make it executable (chmod +x {_shown(path, base)}) or leave it out",
                )
            name = name or _stem(path)
            if name in found and found[name][0].builtin is not None:
                raise tournament.config_error(
                    loc,
                    f"two bots are named {name!r}: builtin {found[name][0].builtin} (bots[{found[name][1]}]) "
                    f"and {_shown(path, base)}; give one an explicit name: - {{path: {_shown(path, base)}, "
                    f"name: {name}_2}}",
                )
            if not SAFE_NAME.match(name):
                raise tournament.config_error(
                    loc,
                    f"bot name {name!r} (from {_shown(path, base)}) is not allowed; rename the {_what(path)} or "
                    f"give a name: - {{path: {_shown(path, base)}, name: my_bot}} ({SAFE_NAME_TEXT})",
                )
            if name in found:
                other, j = found[name]
                if other.path == _absolute(path):
                    continue  # the same file listed twice under the same name
                raise tournament.config_error(
                    loc,
                    f"two bots are named {name!r}: {_shown(other.path, base)} (bots[{j}]) and "
                    f"{_shown(path, base)}; give one an explicit name: - {{path: {_shown(path, base)}, "
                    f"name: {name}_2}}",
                )
            try:
                found[name] = (_entry(_absolute(path), name, forfeits=forfeits), i)
            except botfolder.BotFolderError as exc:
                raise tournament.config_error(loc, str(exc)) from None
    return sorted((e for e, _ in found.values()), key=lambda e: e.name)


def _expand(tournament: Tournament, pattern: str, loc: tuple[str | int, ...]) -> list[Path]:
    """Files matched by one ``bots`` string, sorted; ``_``-files skipped by wildcards."""
    if not glob.has_magic(pattern):
        path = tournament.resolve_path(pattern)
        return [path] if path.exists() else []
    pattern = os.path.expanduser(pattern)
    absolute = os.path.isabs(pattern)  # else root_dir keeps glob characters in the base folder's own name inert
    hits = _bounded_glob(pattern, None if absolute else tournament.base_dir)
    if hits is None:
        raise tournament.config_error(
            loc,
            f"{pattern!r} walks more than {GLOB_MAX_PATHS:,} paths or for more than {GLOB_SECONDS:g} s (a '**' "
            "from / or through links such as /proc/self/root never ends); name the folder of the bots, "
            "e.g. bots/*.py",
        )
    out = []
    for hit in sorted(hits):
        path = Path(hit) if absolute else tournament.base_dir / hit
        if path.name.startswith("_") or not path.is_file():
            continue
        out.append(path)
    return out


def _bounded_glob(pattern: str, root_dir: Path | None) -> list[str] | None:
    """``glob.glob(pattern, recursive=True)``, or None once it passes ``GLOB_MAX_PATHS`` hits or
    ``GLOB_SECONDS``: '**' follows links to folders, so '/**/*.py' walks /proc/self/root again
    and again. The walk runs in a thread that a trace function stops at its next call (glob's
    walk is Python generators), since a walk that matches nothing never returns to check."""
    hits: list[str] = []
    failed: list[BaseException] = []
    stop = threading.Event()

    def halt(*_: object) -> None:
        if stop.is_set():
            raise _GlobStopped
        return None  # no tracing of lines: a call costs one check

    def walk() -> None:
        sys.settrace(halt)
        try:
            for hit in glob.iglob(pattern, root_dir=root_dir, recursive=True):
                hits.append(hit)
                if len(hits) > GLOB_MAX_PATHS:
                    return
        except _GlobStopped:
            pass
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            failed.append(exc)
        finally:
            sys.settrace(None)

    walker = threading.Thread(target=walk, name="bots-glob", daemon=True)
    walker.start()
    walker.join(GLOB_SECONDS)
    if walker.is_alive():
        stop.set()
        walker.join()
        return None
    if failed:
        raise failed[0]
    return None if len(hits) > GLOB_MAX_PATHS else hits


class _GlobStopped(Exception):
    """Raised inside the glob's walk to end it."""


def bot_entry(path_or_name: str, bots_dir: Path | None = None, *, allow_builtin: bool = False) -> BotEntry:
    """One bot for a one-off run: a file path, or a bare name looked up in ``bots_dir``.

    ``random_bot`` finds ``bots/random_bot.py``, else the one file in ``bots/``
    with that stem; with ``allow_builtin``, ``builtin:random`` is the arena's builtin random
    player. Raises ``RosterError``.
    """
    if path_or_name.startswith("builtin:"):  # a player the arena plays itself
        if not allow_builtin:
            raise RosterError(
                f"{path_or_name}: a builtin player is part of the arena, not a bot program; give a bot file here"
            )
        policy = path_or_name[len("builtin:") :]
        try:
            return builtin_entry(policy)
        except ValueError as exc:
            raise RosterError(f"{path_or_name}: {exc}; use builtin:random") from None
    bots_dir = Path("bots") if bots_dir is None else bots_dir
    path = Path(path_or_name).expanduser()
    if not path.exists() and os.sep not in path_or_name and "/" not in path_or_name:
        exact = bots_dir / f"{path_or_name}.py"
        same_stem = (
            sorted(p for p in bots_dir.glob("*") if p.stem == path_or_name and p.is_file()) if bots_dir.is_dir() else []
        )
        if exact.is_file():
            path = exact
        elif len(same_stem) == 1:
            path = same_stem[0]
        elif len(same_stem) > 1:
            names = ", ".join(p.name for p in same_stem)
            raise RosterError(
                f"{path_or_name}: several bots in {bots_dir} have that name ({names}); give the file path"
            )
        else:
            elsewhere = (
                "" if bots_dir.is_dir() else f" (no {bots_dir} folder here: short names work in the project folder)"
            )
            builtin = ", or builtin:random for the arena's own random player" if allow_builtin else ""
            raise RosterError(
                f"{path_or_name}: no such bot file, and no bot of that name in {bots_dir}{elsewhere}; "
                f"give the bot's file path{builtin}"
            )
    if not path.exists():
        raise RosterError(f"{path_or_name}: no such bot file; check the path")
    why = _not_a_system_program(path, path_or_name)
    if why:
        raise RosterError(why)
    if bot_kind(path) is None:
        raise RosterError(f"{path_or_name}: neither a .py file nor executable; chmod +x {path_or_name}")
    name = _stem(path)
    if not SAFE_NAME.match(name):
        raise RosterError(
            f"{path_or_name}: the bot name {name!r} is not allowed; rename the {_what(path)} ({SAFE_NAME_TEXT})"
        )
    try:
        return _entry(_absolute(path), name)
    except botfolder.BotFolderError as exc:
        raise RosterError(str(exc)) from None


def _what(path: Path) -> str:
    return "folder" if path.is_dir() else "file"


def _stem(path: Path) -> str:
    """The default bot name: the file's stem; a folder's own name; an archive's without .tar.gz."""
    for ext in botfolder.ARCHIVES:
        if path.name.endswith(ext) and path.is_file():
            return path.name[: -len(ext)]
    return path.name if path.is_dir() else path.stem


SNAPSHOTS = "bots"  # <results>/bots/<sha256>/<file name>: the code that really plays


def _copy_folder(e: BotEntry, target: Path) -> None:
    """Bot folder ``e``'s files copied to ``target`` (made anew), modes kept executable or not."""
    shutil.rmtree(target, ignore_errors=True)
    try:
        for rel, src in botfolder.folder_files(Path(e.path)):
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
            dest.chmod(0o755 if os.access(src, os.X_OK) else 0o644)
    except (OSError, botfolder.BotFolderError) as exc:
        shutil.rmtree(target, ignore_errors=True)
        raise ArenaError(
            f"{e.path}: cannot copy bot folder {e.name!r} ({exc}); check it is still there and readable"
        ) from None


def snapshot_bots(entries: list[BotEntry], folder: Path) -> list[BotEntry]:
    """Copy each bot file into ``folder/bots/<sha256>/`` and return entries that run the copy.

    The bytes are read once, hashed and written, so the hash names exactly the code
    every process of the run executes; editing or deleting the original afterwards
    changes nothing. A copy already there (an earlier run) is reused.
    """
    out = []
    for e in entries:
        if e.kind == "builtin":  # played in process by the arena itself: no file runs
            out.append(e)
            continue
        if e.kind == "folder":
            out.append(_snapshot_folder(e, folder))
            continue
        try:
            data = Path(e.path).read_bytes()
        except OSError as exc:
            raise ArenaError(
                f"{e.path}: cannot read bot {e.name!r} ({exc.strerror or exc}); "
                "check the file is still there and readable"
            ) from None
        sha = hashlib.sha256(data).hexdigest()
        home = Path(folder) / SNAPSHOTS / sha
        dest = home / Path(e.path).name
        if not dest.is_file() or file_sha256(dest) != sha:
            home.mkdir(parents=True, exist_ok=True)
            for d in (home.parent, home):
                d.chmod(0o755)  # the sandbox may run the bot under another uid
            tmp = home / f".{dest.name}.{os.getpid()}.tmp"
            tmp.write_bytes(data)
            tmp.chmod(0o755 if e.kind == "executable" else 0o644)
            os.replace(tmp, dest)
        out.append(BotEntry(name=e.name, path=dest, sha256=sha, kind=e.kind, source=Path(e.path)))
    return out


def _snapshot_folder(e: BotEntry, folder: Path) -> BotEntry:
    """A bot folder copied to ``folder/bots/<sha256>/<name>/`` (files only, read-only modes).
    The same files under a second name (two entrants' identical uploads, two copies in one
    roster) get a second copy beside the first, under that name."""
    home = Path(folder) / SNAPSHOTS / e.sha256
    dest = home / e.name
    if not (home / ".complete").is_file():
        tmp = Path(folder) / SNAPSHOTS / f".{e.sha256}.{os.getpid()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            _copy_folder(e, tmp / e.name)
        except ArenaError:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        for dirpath, _, _ in os.walk(tmp):
            os.chmod(dirpath, 0o755)  # the sandbox may run the bot under another uid
        (tmp / ".complete").write_text("")
        shutil.rmtree(home, ignore_errors=True)
        os.replace(tmp, home)
    elif not dest.is_dir():
        tmp = home / f".{e.name}.{os.getpid()}.{threading.get_ident()}.tmp"
        _copy_folder(e, tmp)
        for dirpath, _, _ in os.walk(tmp):
            os.chmod(dirpath, 0o755)
        try:
            os.replace(tmp, dest)
        except OSError:  # made meanwhile by another process: the same files
            shutil.rmtree(tmp, ignore_errors=True)
    sha = botfolder.folder_sha256(dest, e.env(dest))
    if sha != e.sha256:
        raise ArenaError(f"{e.path}: bot folder {e.name!r} changed while it was copied; run again")
    return BotEntry(name=e.name, path=dest, sha256=sha, kind=e.kind, source=e.source or Path(e.path), forfeit=e.forfeit)
