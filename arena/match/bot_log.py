"""A bot's stderr log, capped per bot over all its processes and workers.

Each bot process appends to its worker's log file (``logs/worker-N/<bot>.stderr.log``),
but the cap (``stderr_log_kb``) is one budget per bot: a *ledger* file shared by every
process of that bot (``logs/.stderr-kept/<bot>``, next to the worker folders) counts
the bytes kept so far. Workers are separate processes, so the ledger is read and
advanced under ``flock``; each process holds its own open file description, so the
lock also works between bots of one process.

What counts: everything the arena writes into the bot's logs, the header line a
process gets before its first kept byte included (a process that never writes to
stderr leaves no header), so a bot restarted 35,000 times still keeps at most the cap.
The process whose output reached the cap adds one note saying so (a short line, outside
the budget); later processes add nothing. A budget spent exactly, with nothing cut, is noted by
the first process refused after it (the ledger then holds cap + 1: "noted").
"""

from __future__ import annotations

import fcntl
import os
import struct
import time
from pathlib import Path

__all__ = ["BotLog", "ledger_path", "LEDGER_DIR"]

LEDGER_DIR = ".stderr-kept"
_COUNT = struct.Struct("=Q")


def ledger_path(log_dir: Path, bot: str) -> Path:
    """The budget file of ``bot`` for a worker log folder ``log_dir`` (``.../logs/worker-N``): shared
    by every worker folder beside it."""
    return Path(log_dir).parent / LEDGER_DIR / bot


class BotLog:
    """The capped stderr log of one bot process."""

    def __init__(self, path: Path, *, name: str, cap_bytes: int, ledger: Path | None = None) -> None:
        self.path, self.name, self.cap = Path(path), name, cap_bytes
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # without a shared ledger, the budget is this log file's (over every process appending to it)
        self._ledger_path = Path(ledger) if ledger is not None else self.path.with_name(f".{self.path.name}.kept")
        self._ledger_path.parent.mkdir(parents=True, exist_ok=True)
        self._ledger = os.open(self._ledger_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        # made at once, empty until the bot writes: every bot that ran has its log
        self._file: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        self._started = False  # header written
        self._full = False  # the bot's budget is spent (it never comes back)
        self._reached_cap = False  # this process's output spent it
        self.dropped = 0  # bytes of this process not kept

    def _header(self) -> bytes:
        return f"[arena: {self.name}: new process at {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}]\n".encode()

    def write(self, data: bytes) -> None:
        """Keep what the bot's budget still allows of ``data``."""
        if not data or self._ledger < 0:
            return
        if self._full:
            self.dropped += len(data)
            return
        fcntl.flock(self._ledger, fcntl.LOCK_EX)
        try:
            raw = os.pread(self._ledger, _COUNT.size, 0)
            used = _COUNT.unpack(raw)[0] if len(raw) == _COUNT.size else 0
            room = self.cap - used
            head = b"" if self._started else self._header()
            if room <= len(head):
                self._full = True
                self.dropped += len(data)
                if used <= self.cap:  # the first refusal: this process says so (cap + 1: said)
                    os.pwrite(self._ledger, _COUNT.pack(self.cap + 1), 0)
                    self._reached_cap = True
                return
            out = head + data[: room - len(head)]
            assert self._file is not None
            os.write(self._file, out)
            self._started = True
            kept = len(out) - len(head)
            if kept < len(data):  # cut here: this process says so, and no later one
                self.dropped += len(data) - kept
                self._full = self._reached_cap = True
            os.pwrite(self._ledger, _COUNT.pack(self.cap + 1 if self._reached_cap else used + len(out)), 0)
        finally:
            fcntl.flock(self._ledger, fcntl.LOCK_UN)

    def close(self) -> None:
        """Add the cap note if this process's output reached the cap; release the files."""
        try:
            if self._reached_cap and self._file is not None:
                os.write(
                    self._file,
                    f"\n[arena: stderr log capped at {self.cap // 1024} KiB for {self.name}, "
                    f"over all its processes; {self.dropped} bytes dropped, and any later "
                    f"output]\n".encode(),
                )
        except OSError:
            pass
        for fd in (self._file, self._ledger):
            if fd is not None and fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._file, self._ledger = None, -1


def append_within(path: Path, data: bytes, *, ledger: Path, cap_bytes: int, name: str) -> int:
    """Append ``data`` (a whole log brought back from elsewhere, e.g. a Ray node) to ``path``
    within the bot's budget in ``ledger``; a cut gets the cap note. Returns the bytes kept."""
    log = BotLog(path, name=name, cap_bytes=cap_bytes, ledger=ledger)
    log._started = True  # the data carries its processes' own headers
    try:
        log.write(data)
        return len(data) - log.dropped
    finally:
        log.close()
