"""A bot that is a folder (or a .zip / .tar.gz archive of one): entry file, data, requirements.

Layout::

    mybot/
      main.py            the entry (or name another file: bot.toml ``entry = "run.sh"``,
                         or leave exactly one executable file at the top)
      weights.npy        any data files; the bot finds them next to ``__file__``
      requirements.txt   optional, every line pinned: ``numpy==2.4.6`` (``--hash=`` options checked)

Requirements are installed before play (``arena check``, ``arena play`` and every run
resolve the roster first) with pip, into an environment folder cached by the hash of the
requirements and the Python version, under ``$ARENA_BOT_ENVS`` or the user's cache dir
(``$XDG_CACHE_HOME/decktet-arena/bot-envs``, default ``~/.cache/...``). pip uses its own
configuration (``PIP_INDEX_URL``, ``PIP_FIND_LINKS``, ``PIP_NO_INDEX``, pip.conf), so the
index is whatever pip is set to reach. Nothing installs during a match: a bot whose
environment is missing then fails to start. The folder and the environment are bound
read-only in the sandbox, and the bot's numeric libraries get one thread each.

Version control's own files (``.git``, ``.hg``, ``.svn``) are not part of the bot, as
``__pycache__`` is not. Links inside a folder are followed while they stay in it (files and folders alike: a run
plays a copy); links out of it, to nothing, or to a folder that holds them are refused.
Archive members are read in blocks, never more than a byte past the size they claim; one
whose data is longer or shorter than that is refused.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import fcntl
import hashlib
import io
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from arena.errors import ArenaError
from arena.match.bot_cache import ENVS, LOCKS, UNPACKED, cache_root, mark_used

MANIFEST = "bot.toml"
MANIFEST_KEYS = frozenset({"entry"})
REQUIREMENTS = "requirements.txt"
# version control's own files and folders, anywhere in a bot folder: not the bot (not hashed, copied
# or shipped), so that `git status` rewriting .git/index does not make the folder another bot
NOT_THE_BOT = frozenset({".git", ".hg", ".svn"})
MAX_FILES = 2000  # files in a bot folder or archive
MAX_BYTES = 512 * 1024 * 1024  # their total size (unpacked)
# an archive holds its files' bytes and, per file, headers and a name of at most ~8 KiB
MAX_ARCHIVE_BYTES = MAX_BYTES + 64 * 1024 * 1024
BLOCK = 1 << 16  # bytes read from an archive member at a time
MAX_DEPTH = 32  # folders inside a bot folder or archive (a deeper one is hostile, not a bot)
MAX_NAME = 255  # bytes in one file or folder name: the file system's own limit
ARCHIVES = (".zip", ".tar.gz", ".tgz")
# what a damaged or hostile archive raises while read: bad CRC, an unsupported method (deflate64:
# NotImplementedError), truncated data (EOFError), a corrupt stream (zlib.error), an encrypted
# member (RuntimeError), a bad name or header (ValueError), tar's own errors
BAD_ARCHIVE = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    tarfile.TarError,
    NotImplementedError,
    EOFError,
    zlib.error,
    OSError,
    RuntimeError,
    ValueError,
)
_HASH = re.compile(r"\s*--hash[=\s]\s*(sha(?:256|384|512):[0-9A-Fa-f]+)(?=\s|$)")
_PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[A-Za-z0-9,._-]+\])?==([A-Za-z0-9.+!_-]+)$")
# numpy, OpenBLAS, MKL, OpenMP (torch), numexpr, Accelerate, BLIS: one thread each, so that a bot
# stays within its CPU share and its process limit
THREAD_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "BLIS_NUM_THREADS",
)


class BotFolderError(ArenaError):
    """A bot folder or archive that cannot be used as it is (the message says the fix)."""


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.endswith(ARCHIVES)


def folder_files(folder: Path) -> list[tuple[str, Path]]:
    """Every file of the folder as (relative posix path, path): each folder's files sorted, then
    its subfolders in turn. A link is followed (and copied as what it names) while it stays in
    the folder; refuses links leaving it or to nothing, special files, and folders over the bounds."""
    out: list[tuple[str, Path]] = []
    total = 0
    folders = 0
    root = Path(os.path.realpath(folder))

    def inside(p: Path, real: Path, what: str) -> None:
        if real != root and root not in real.parents:
            raise BotFolderError(f"{p}: a link out of the bot folder {folder}; copy the {what} in instead")

    def walk(here: Path, rel: tuple[str, ...], above: tuple[Path, ...]) -> None:
        nonlocal total, folders
        folders += 1
        if folders > MAX_FILES:  # each folder a link leads to counts: two links a level multiply them
            raise BotFolderError(f"{folder}: more than {MAX_FILES} folders; keep the bot folder smaller")
        try:
            names = sorted(os.listdir(here))
        except OSError as exc:
            raise BotFolderError(
                f"{here}: cannot read the folder ({exc.strerror or exc}); make it readable: chmod -R a+rX {folder}"
            ) from None
        subfolders: list[tuple[str, Path]] = []
        for name in names:
            p = here / name
            if os.path.islink(p) and not os.path.exists(p):
                raise BotFolderError(f"{p}: a link to nothing; remove it")
            if name in NOT_THE_BOT:  # git, hg and svn's own files change as they please (git status)
                continue
            real = Path(os.path.realpath(p))
            if os.path.isdir(p):
                if name != "__pycache__":
                    subfolders.append((name, real))
                continue
            inside(p, real, "file")
            st = p.stat()
            if not stat.S_ISREG(st.st_mode):
                raise BotFolderError(f"{p}: not a regular file; leave it out of the bot folder")
            total += st.st_size
            out.append(("/".join((*rel, name)), p))
            if len(out) > MAX_FILES:
                raise BotFolderError(f"{folder}: more than {MAX_FILES} files; keep the bot folder smaller")
            if total > MAX_BYTES:
                raise BotFolderError(f"{folder}: more than {MAX_BYTES >> 20} MiB of files; keep the bot folder smaller")
        if subfolders and len(rel) >= MAX_DEPTH:
            raise BotFolderError(f"{folder}: folders nested deeper than {MAX_DEPTH}; flatten the bot folder")
        for name, real in subfolders:
            p = here / name
            inside(p, real, "folder")
            if real in above:
                raise BotFolderError(f"{p}: a link to a folder that holds it; remove it")
            walk(p, (*rel, name), (*above, real))

    walk(Path(folder), (), (root,))
    return out


def entry_file(folder: Path) -> Path:
    """The file that runs the bot: bot.toml's ``entry``, else main.py, else the one executable."""
    manifest = folder / MANIFEST
    if os.path.lexists(manifest) and not manifest.is_file():
        raise BotFolderError(f'{manifest}: not a file; make it a file that names the entry (entry = "main.py")')
    if manifest.is_file():
        try:
            data = tomllib.loads(manifest.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise BotFolderError(f'{manifest}: not valid TOML ({exc}); write entry = "main.py"') from None
        unknown = sorted(set(data) - MANIFEST_KEYS)
        if unknown:  # a misspelt 'entry' would otherwise read as a missing one
            close = difflib.get_close_matches(unknown[0], sorted(MANIFEST_KEYS), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise BotFolderError(
                f"{manifest}: unknown field {unknown[0]!r}; {hint}{MANIFEST} knows {', '.join(sorted(MANIFEST_KEYS))}"
            )
        entry = data.get("entry")
        if not isinstance(entry, str) or not entry:
            raise BotFolderError(f"{manifest}: field 'entry' must name the bot's file, e.g. entry = \"main.py\"")
        p = folder / entry
        if ".." in Path(entry).parts or Path(entry).is_absolute() or not p.is_file():
            raise BotFolderError(f"{manifest}: entry {entry!r} is not a file inside {folder}; fix the name")
        if p.suffix != ".py" and not os.access(p, os.X_OK):
            raise BotFolderError(f"{manifest}: entry {entry!r} is neither a .py file nor executable; chmod +x {p}")
        return p
    if (folder / "main.py").is_file():
        return folder / "main.py"
    exe = sorted(p for p in folder.iterdir() if p.is_file() and os.access(p, os.X_OK))
    if len(exe) == 1:
        return exe[0]
    if len(exe) > 1:
        names = ", ".join(p.name for p in exe[:5]) + (", ..." if len(exe) > 5 else "")
        raise BotFolderError(
            f"{folder}: {len(exe)} executable files ({names}) and no main.py; name the one that runs the bot in "
            f'{MANIFEST}: entry = "{exe[0].name}"'
        )
    scripts = sorted(p.name for p in folder.glob("*.py") if p.is_file())
    if len(scripts) == 1:  # bot.py, say: the one Python file is surely the bot
        raise BotFolderError(
            f'{folder}: no entry file; rename {scripts[0]} to main.py, or name it in {MANIFEST}: entry = "{scripts[0]}"'
        )
    raise BotFolderError(f'{folder}: no entry file; add main.py, or name the entry in {MANIFEST}: entry = "mybot"')


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each requirement line, comments dropped and lines ending in a
    backslash joined to the next, as pip reads them (pip-compile --generate-hashes writes those)."""
    out: list[tuple[int, str]] = []
    start, parts = 0, list[str]()
    for i, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()  # a hash's value never holds '#'
        if not parts:
            start = i
        if line.endswith("\\"):
            parts.append(line[:-1])
            continue
        parts.append(line)
        joined = " ".join(p.strip() for p in parts).strip()
        parts = []
        if joined:
            out.append((start, joined))
    if parts and " ".join(parts).strip():
        out.append((start, " ".join(p.strip() for p in parts).strip()))
    return out


def requirements(folder: Path) -> list[str]:
    """The pinned requirement lines of the folder (``name==version``, then any ``--hash=``
    options pip is to check), normalised and sorted."""
    path = folder / REQUIREMENTS
    if not path.is_file():
        return []
    out = []
    for i, line in _logical_lines(path.read_text(encoding="utf-8", errors="replace")):
        _refuse_option_or_marker(path, i, line)
        req, *options = line.split(" --", 1)
        hashes = _HASH.findall(" --" + options[0]) if options else []
        rest = _HASH.sub("", " --" + options[0]).strip() if options else ""
        m = _PINNED.match(req.replace(" ", ""))
        if not m or rest:
            raise BotFolderError(
                f"{path}:{i}: {line!r} is not pinned; write one package per line "
                "as name==version (e.g. numpy==2.4.6), optionally with --hash=sha256:... options"
            )
        # PEP 503: Zope.Interface, zope_interface and zope-interface are one package, one environment
        pin = f"{re.sub(r'[-_.]+', '-', m.group(1)).lower()}{m.group(2) or ''}=={m.group(3)}"
        out.append(" ".join([pin, *(f"--hash={h.lower()}" for h in sorted(set(hashes)))]))
    return sorted(out)


# pip options a requirements file may hold, and the pip setting that does the same for the arena
_PIP_SETTINGS = {
    "-i": "PIP_INDEX_URL",
    "--index-url": "PIP_INDEX_URL",
    "--extra-index-url": "PIP_EXTRA_INDEX_URL",
    "-f": "PIP_FIND_LINKS",
    "--find-links": "PIP_FIND_LINKS",
    "--no-index": "PIP_NO_INDEX",
    "--trusted-host": "PIP_TRUSTED_HOST",
}


def _refuse_option_or_marker(path: Path, i: int, line: str) -> None:
    """A pip option line or an environment marker, refused with what to do instead."""
    if line.startswith("-"):
        option = line.split()[0].split("=", 1)[0]
        setting = _PIP_SETTINGS.get(option)
        instead = (
            f"set {setting} in the environment (or pip.conf) where the arena runs, on every Ray node too"
            if setting
            else "keep only name==version pins (and their --hash options) in it"
        )
        raise BotFolderError(
            f"{path}:{i}: {line!r}: the arena reads no pip options from requirements.txt; {instead} (docs/first-bot.md)"
        )
    if ";" in line:
        raise BotFolderError(
            f"{path}:{i}: {line!r} has an environment marker; the bot's packages are installed for the "
            "Python that runs the arena, so drop the marker and pin what that Python needs"
        )


PINS_SHOWN = 6  # a pip freeze pins dozens: the line names a few, so pip's reason still fits after them


def _pins(reqs: list[str]) -> str:
    """The requirements as people read them: name==version, without their hashes, the first few."""
    names = [r.split(" ", 1)[0] for r in reqs]
    if len(names) > PINS_SHOWN:
        names = [*names[: PINS_SHOWN - 1], f"and {len(names) - PINS_SHOWN + 1} more"]
    return ", ".join(names) + (" (hash-checked)" if any(" " in r for r in reqs) else "")


def _pip_reason(lines: list[str]) -> str:
    """pip's ERROR line, its list of the versions the index has cut to the first and the last few.
    Its "Ignored the following versions that require a different python version" comes first
    whenever the index has such versions, but is a remark: the reason is the line after it."""
    errors = [ln for ln in lines if ln.startswith("ERROR")]
    reasons = [ln for ln in errors if not ln.startswith("ERROR: Ignored the following")]
    why = (reasons or errors or lines[-1:] or ["no output"])[0]

    def cut(m: re.Match[str]) -> str:
        versions = [v.strip() for v in m.group(1).split(",")]
        if len(versions) <= 6:
            return m.group(0)
        return f"(from versions: {versions[0]}, ..., {', '.join(versions[-4:])}: {len(versions)} in all)"

    return re.sub(r"\(from versions: ([^)]*)\)", cut, why)


def env_key(reqs: list[str]) -> str:
    """The cache key of an environment: the requirements and the Python that runs the bot."""
    text = f"python {sys.version_info[0]}.{sys.version_info[1]} {sys.implementation.cache_tag}\n" + "\n".join(reqs)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class BotEnv:
    path: Path  # the environment folder (site folder inside)
    resolved: tuple[str, ...]  # every installed distribution, name==version

    @property
    def site(self) -> Path:
        return self.path / "site"


def _resolved(site: Path) -> tuple[str, ...]:
    out = []
    for d in site.glob("*.dist-info"):
        name, _, version = d.name[: -len(".dist-info")].partition("-")
        out.append(f"{name.lower().replace('_', '-')}=={version}")
    return tuple(sorted(out))


def installed_env(folder: Path) -> BotEnv | None:
    """The folder's environment if its requirements are installed (None: it needs none)."""
    reqs = requirements(folder)
    if not reqs:
        return None
    path = cache_root() / ENVS / env_key(reqs)
    done = path / "resolved.txt"
    if not done.is_file():
        raise BotFolderError(
            f"{folder}: its requirements are not installed; run `arena check {folder}` (installs them) before the match"
        )
    mark_used(path)
    return BotEnv(path, tuple(done.read_text().split()))


def ensure_env(folder: Path) -> BotEnv | None:
    """Install the folder's requirements (once per distinct set) and return the environment."""
    reqs = requirements(folder)
    if not reqs:
        return None
    path = cache_root() / ENVS / env_key(reqs)
    if (path / "resolved.txt").is_file():
        return installed_env(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    failed = path.parent.parent / LOCKS / f"{path.name}.failed"
    with _install_lock(path, reqs) as waited_since:
        if (path / "resolved.txt").is_file():  # another process installed it while this one waited
            return installed_env(folder)
        if waited_since is not None:  # the one it waited for failed: its reason, not pip once more
            why = _failed_since(failed, waited_since)
            if why:
                raise BotFolderError(f"{folder / REQUIREMENTS}: {why}")
        try:
            _install(folder, reqs, path)
        except BotFolderError as exc:
            _write_failure(failed, str(exc).removeprefix(f"{folder / REQUIREMENTS}: "))
            raise
        failed.unlink(missing_ok=True)
    return installed_env(folder)


def _write_failure(failed: Path, why: str) -> None:
    """What the processes waiting on the same install say instead of running pip again each."""
    with contextlib.suppress(OSError):
        tmp = failed.with_name(f".{failed.name}.{os.getpid()}")
        tmp.write_text(f"{time.time()}\n{why}")
        os.replace(tmp, failed)


def _failed_since(failed: Path, since: float) -> str | None:
    try:
        when, _, why = failed.read_text(errors="replace").partition("\n")
        return why if why and float(when) >= since else None
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def _install_lock(path: Path, reqs: list[str]) -> Iterator[float | None]:
    """One install of a requirements set at a time on this machine: a ladder's checks, or a Ray
    node's workers, that need the same set at once would each run pip for minutes. Yields when
    this process began to wait for another's install (None: it did not wait)."""
    locks = path.parent.parent / LOCKS
    locks.mkdir(parents=True, exist_ok=True)
    fd = os.open(locks / path.name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        waited_since = None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waited_since = time.time()
            print(
                f"arena: waiting for another process installing {_pins(reqs)} into {path}", file=sys.stderr, flush=True
            )
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield waited_since
    finally:
        os.close(fd)  # releases the lock


def _install(folder: Path, reqs: list[str], path: Path) -> None:
    print(f"arena: installing {_pins(reqs)} for {folder} into {path} (once)", file=sys.stderr, flush=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        (tmp / REQUIREMENTS).write_text("\n".join(reqs) + "\n")
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-input",
            "--disable-pip-version-check",
            "--no-warn-script-location",
            "--only-binary",
            ":all:",
            "--target",
            str(tmp / "site"),
            "-r",
            str(tmp / REQUIREMENTS),
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BotFolderError(
                f"{folder / REQUIREMENTS}: pip could not run ({exc}); install pip for this Python"
            ) from None
        if proc.returncode != 0:
            lines = [ln.strip() for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
            why = _pip_reason(lines)
            raise BotFolderError(
                f"{folder / REQUIREMENTS}: pip could not install {_pins(reqs)} ({why}); "
                "check the pins, or the index pip reaches (PIP_INDEX_URL, PIP_FIND_LINKS)"
            )
        resolved = _resolved(tmp / "site")
        (tmp / "resolved.txt").write_text("\n".join(resolved) + "\n")
        for dirpath, _dirnames, filenames in os.walk(tmp):  # readable by a sandbox uid, written by none
            os.chmod(dirpath, 0o755)
            for f in filenames:
                p = os.path.join(dirpath, f)
                if not os.path.islink(p):
                    os.chmod(p, 0o755 if os.access(p, os.X_OK) else 0o644)
        try:
            os.rename(tmp, path)
        except OSError:
            if not (path / "resolved.txt").is_file():  # not another process that won the race
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def folder_sha256(folder: Path, env: BotEnv | None) -> str:
    """The bot's identity: every file (path, executable bit, bytes) and the resolved packages."""
    h = hashlib.sha256(b"decktet-arena bot folder 1\n")
    for rel, p in folder_files(folder):
        h.update(f"{rel}\0{int(os.access(p, os.X_OK))}\0{p.stat().st_size}\0".encode())
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 16), b""):
                h.update(block)
    if env is not None:
        h.update(("\0packages\0" + "\n".join(env.resolved)).encode())
    return h.hexdigest()


def pack_files(folder: Path) -> list[tuple[str, int, bytes]]:
    """The folder as (relative posix path, executable bit, bytes) in ``folder_files`` order:
    what ``packed_sha256`` hashes and a Ray node unpacks (arena.tournament.bot_shipping)."""
    return [(rel, int(os.access(p, os.X_OK)), p.read_bytes()) for rel, p in folder_files(folder)]


def packed_sha256(files: list[tuple[str, int, bytes]], resolved: tuple[str, ...] | None) -> str:
    """``folder_sha256`` of the folder ``files`` was packed from (``resolved``: its packages, or None)."""
    h = hashlib.sha256(b"decktet-arena bot folder 1\n")
    for rel, xbit, data in files:
        h.update(f"{rel}\0{int(xbit)}\0{len(data)}\0".encode())
        h.update(data)
    if resolved is not None:
        h.update(("\0packages\0" + "\n".join(resolved)).encode())
    return h.hexdigest()


def unpacked_folder(archive: Path) -> Path:
    """Where ``archive`` unpacks to in the bot cache (named by its content's hash)."""
    with open(archive, "rb") as f:
        return cache_root() / UNPACKED / hashlib.file_digest(f, "sha256").hexdigest()[:32]


def unpack(archive: Path) -> Path:
    """The folder an archive unpacks to (cached by the archive's hash); refuses absolute or
    ``..`` paths, links, devices, damaged archives, and archives over the bounds."""
    size = archive.stat().st_size
    if size > MAX_ARCHIVE_BYTES:
        raise BotFolderError(
            f"{archive}: {size >> 20} MiB, more than any archive of {MAX_BYTES >> 20} MiB of files; keep the bot smaller"
        )
    dest = unpacked_folder(archive)
    data_hash = dest.name
    if (dest / ".complete").is_file():
        mark_used(dest)
        return _top(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{data_hash}.", dir=dest.parent))
    try:
        members = _members(archive)
        if len(members) > MAX_FILES:
            raise BotFolderError(f"{archive}: more than {MAX_FILES} files; keep the bot smaller")
        if sum(size for _, size, _ in members) > MAX_BYTES:
            raise BotFolderError(f"{archive}: more than {MAX_BYTES >> 20} MiB unpacked; keep the bot smaller")
        for name, size, read in _checked_members(archive, members):
            target = tmp / "bot" / name
            if read is None:
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            mode = _copy_member(archive, name, size, read, target)
            target.chmod(0o755 if mode & 0o111 else 0o644)
        (tmp / ".complete").write_text("")
        try:
            os.rename(tmp, dest)
        except OSError:
            if not (dest / ".complete").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _top(dest)


def _copy_member(archive: Path, name: str, size: int, read: Opener, target: Path) -> int:
    """Write one member in blocks, never past the size it claims (whose sum was bounded), so a
    header that lies costs a block of memory, not the member; returns its mode."""

    def bad(exc: BaseException) -> BotFolderError:
        return BotFolderError(f"{archive}: member {name!r} cannot be read ({_why(exc)}); repack it")

    try:
        mode, src = read()
    except BAD_ARCHIVE as exc:
        raise bad(exc) from None
    written = 0
    with src, open(target, "wb") as out:
        while True:
            try:
                block = src.read(min(BLOCK, size - written + 1))
            except BAD_ARCHIVE as exc:
                raise bad(exc) from None
            written += len(block)
            if not block or written > size:
                break
            out.write(block)
    if written != size:
        raise _size_lie(archive, name, size, "more" if written > size else "less")
    return mode


def _size_lie(archive: Path, name: str, size: int, more: str = "more", end: str = "") -> BotFolderError:
    """The one line for a member whose data is not the size its header claims."""
    return BotFolderError(
        f"{archive}: member {name!r} holds {more} than the {size} bytes its header claims{end}; repack it"
    )


def _why(exc: BaseException) -> str:
    """An archive library's reason in a few words (its first line, or the kind of error)."""
    lines = str(exc).splitlines()
    return lines[0][:120] if lines and lines[0] else type(exc).__name__


def _checked_members(archive: Path, members: list[Member]) -> list[Member]:
    """The members with their names normalised (``./`` dropped), refusing any that would leave
    the folder, nest deeper than ``MAX_DEPTH``, exceed ``MAX_NAME``, appear twice, or be both a
    file and a folder: each is a one-line reason, never an error of the file system."""
    files: set[str] = set()
    folders: set[str] = set()
    out: list[Member] = []
    for name, size, read in members:
        parts = [part for part in name.split("/") if part not in ("", ".")]
        if name.startswith("/") or ".." in parts or "\\" in name:
            raise BotFolderError(
                f"{archive}: member {name!r} leaves the archive's folder; repack it with relative paths"
            )
        if not parts:
            if read is None:
                continue  # the archive's own top folder
            raise BotFolderError(f"{archive}: member {name!r} has no file name; repack it")
        if len(parts) > MAX_DEPTH:
            raise BotFolderError(
                f"{archive}: member {name[:80]!r} is nested deeper than {MAX_DEPTH} folders; flatten the bot folder"
            )
        if any(len(part.encode()) > MAX_NAME for part in parts):
            raise BotFolderError(f"{archive}: member {name[:80]!r} has a name longer than {MAX_NAME} bytes; shorten it")
        rel = "/".join(parts)
        above = {"/".join(parts[:i]) for i in range(1, len(parts))}
        clash = rel in files or (read is not None and rel in folders) or (above & files)
        if clash:
            raise BotFolderError(
                f"{archive}: member {rel!r} is in the archive twice, or as a file and a folder; repack it"
            )
        (folders if read is None else files).add(rel)
        folders |= above
        out.append((rel, size, read))
    return out


# what macOS's Finder adds beside the folder it compresses (AppleDouble copies of attributes)
FINDER_EXTRAS = frozenset({"__MACOSX", ".DS_Store"})


def _top(dest: Path) -> Path:
    """An archive of one folder (``mybot/main.py``) is that folder; else its root. Finder's
    ``__MACOSX`` beside the folder does not make it two (a zip made with "Compress mybot" on a Mac)."""
    root = dest / "bot"
    kids = [p for p in root.iterdir() if p.name not in FINDER_EXTRAS] if root.is_dir() else []
    if len(kids) == 1 and kids[0].is_dir():
        return kids[0]
    return root


Opener = Callable[[], tuple[int, IO[bytes]]]  # a member's mode and its bytes as a stream
Member = tuple[str, int, "Opener | None"]  # name, size it claims, opener (None: a folder)


def _zip_reader(z: zipfile.ZipFile, info: zipfile.ZipInfo, mode: int) -> Opener:
    """A zip member's opener whose stream runs to the end of the member's data, whatever size its
    headers claim. zipfile stops a member at that size and checks the CRC of what it gave, so
    headers that understate the size, their CRC patched to match, made a truncated file
    silently. Opened as longer than any member, its data past the claim shows (``_copy_member``
    reads one byte past the claim and refuses the member), and zipfile checks the CRC where the
    member's compressed data ends, not where its headers say."""
    roomy = copy.copy(info)
    roomy.file_size = MAX_ARCHIVE_BYTES << 8  # never reached: _copy_member stops a byte past the claim

    def read() -> tuple[int, IO[bytes]]:
        return mode, z.open(roomy)

    return read


def _tar_reader(t: tarfile.TarFile, member: tarfile.TarInfo) -> Opener:
    def read() -> tuple[int, IO[bytes]]:
        f = t.extractfile(member)
        return member.mode, (f if f is not None else io.BytesIO())

    return read


def _members(archive: Path) -> list[Member]:
    """(name, size, opener or None for a folder) of every member, at most one past the bounds;
    refuses links, devices and damaged archives."""
    out: list[Member] = []
    if archive.name.endswith(".zip"):
        try:
            z = zipfile.ZipFile(archive)
            infos = z.infolist()
        except BAD_ARCHIVE as exc:
            raise BotFolderError(f"{archive}: not a zip archive ({_why(exc)}); repack it") from None
        for info in infos[: MAX_FILES + 1]:
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise BotFolderError(f"{archive}: member {info.filename!r} is a link; put the file itself in")
            if info.is_dir():
                out.append((info.filename.rstrip("/"), 0, None))
            else:
                out.append((info.filename, info.file_size, _zip_reader(z, info, mode)))
        return out
    infos_tar: list[tarfile.TarInfo] = []
    claimed = 0
    try:
        t = tarfile.open(archive, "r:gz")
        # finding each header decompresses the members before it: stop once past a bound
        for tar_info in t:
            infos_tar.append(tar_info)
            claimed += tar_info.size
            _check_tar_padding(archive, t, tar_info)
            if len(infos_tar) > MAX_FILES or claimed > MAX_BYTES:
                break
        else:
            _check_tar_end(archive, t, infos_tar)
    except BAD_ARCHIVE as exc:
        raise BotFolderError(f"{archive}: not a .tar.gz archive ({_why(exc)}); repack it") from None
    for member in infos_tar:
        if member.isdir():
            out.append((member.name.rstrip("/"), 0, None))
        elif member.isfile():
            out.append((member.name, member.size, _tar_reader(t, member)))
        else:
            raise BotFolderError(f"{archive}: member {member.name!r} is a link or a device; put plain files in")
    return out


def _check_tar_padding(archive: Path, t: tarfile.TarFile, info: tarfile.TarInfo) -> None:
    """Refuse a member whose last block is not zeros past the size its header claims: the rest
    of its data, cut off by a header that understates the size (its checksum fixed up)."""
    tail = info.size % tarfile.BLOCKSIZE
    if not info.isfile() or not tail:
        return
    assert t.fileobj is not None
    t.fileobj.seek(info.offset_data + info.size)  # forward: the stream is read once, in order
    if t.fileobj.read(tarfile.BLOCKSIZE - tail).strip(b"\0"):
        raise _size_lie(archive, info.name, info.size)


def _check_tar_end(archive: Path, t: tarfile.TarFile, infos: list[tarfile.TarInfo]) -> None:
    """Refuse a tar with anything but zeros after the place its members end (the end-of-archive
    blocks, and a record's padding). tarfile ends the archive silently at the first block that
    is not a header, or is zeros: a member whose header understates its size (its checksum fixed
    up) left the rest of its data there, and it unpacked cut short, the members after it gone."""
    assert t.fileobj is not None
    t.fileobj.seek(t.offset)
    left = TAR_TRAILER_BYTES + 1
    while left > 0:
        block = t.fileobj.read(min(BLOCK, left))
        if not block:
            return
        left -= len(block)
        if block.strip(b"\0") or left <= 0:
            if infos:
                raise _size_lie(archive, infos[-1].name, infos[-1].size, end=", or data follows the archive's end")
            raise BotFolderError(f"{archive}: data follows the archive's end; repack it")


TAR_TRAILER_BYTES = 1 << 20  # zeros allowed after a tar's last member: its end blocks, a record's padding


def runtime(folder: Path) -> tuple[list[str], dict[str, str], list[Path]]:
    """(argv, extra environment, extra read-only paths) that run the folder's bot; the
    environment must already be installed (``ensure_env``)."""
    from arena.match.sandbox.launch import bot_env, interpreter

    mark_used(folder)  # an unpacked archive or a shipped folder: in use, not to be pruned
    # the sandbox binds each folder at its real path: a linked folder's own path is not there
    folder = Path(os.path.realpath(folder))
    entry = entry_file(folder)
    argv = [interpreter(), "-s", "-S", str(entry)] if entry.suffix == ".py" else [str(entry)]
    extra = {v: "1" for v in THREAD_VARS}
    env = installed_env(folder)
    ro: list[Path] = []
    if env is not None:
        base = bot_env(None, "")["PYTHONPATH"]
        site = os.path.realpath(env.site)
        extra["PYTHONPATH"] = os.pathsep.join([site, base]) if base else site
        ro.append(env.path)
    return argv, extra, ro
