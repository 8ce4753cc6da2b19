"""One `arena run` per results folder: an flock'ed ``run.lock`` holding the runner's pid.

The lock is an open file description, so it is held by the runner and by its forked
workers, and released by the kernel when the last of them exits (even after kill -9):
a stale lock file never blocks a later run. Readers (`arena leaderboard`, `arena
replay`) do not take it; the store's WAL mode lets them read while a run writes.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path

from arena.errors import ArenaError, MachineTrouble

LOCK_NAME = "run.lock"


class FolderBusy(ArenaError):
    """Another `arena run` holds the results folder."""


class FolderLock:
    """``with FolderLock(folder):`` the folder is ours; raises ``FolderBusy`` otherwise."""

    def __init__(
        self, folder: Path, *, holder: str = "another arena run", elsewhere: str = "use another results folder"
    ) -> None:
        """``holder`` and ``elsewhere`` name, in the refusal, what holds such a folder and the
        other way out (the ladder: another arena server, another --data folder)."""
        self.path = Path(folder) / LOCK_NAME
        self.holder, self.elsewhere = holder, elsewhere
        self.fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # never through a link nor into a pipe or device: the file is truncated and written (a
        # run.lock linked to another file emptied that file; a named pipe ended as a bug)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
        except OSError as err:
            if err.errno in (errno.EROFS, errno.EACCES, errno.EPERM):  # was "unexpected ... a bug", exit 70
                raise MachineTrouble(
                    f"{self.path.parent}: cannot be written ({err.strerror}); check the disk and the folder's "
                    f"permissions (a read-only folder can be viewed, not played in), or {self.elsewhere}"
                ) from None
            if err.errno != errno.ELOOP:
                raise
            raise self._not_ours() from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise self._not_ours()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise FolderBusy(
                f"{self.path.parent} is in use by {self.holder} (pid {holder}); "
                f"wait for it to finish or stop it, or {self.elsewhere}"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd

    def _not_ours(self) -> ArenaError:
        return ArenaError(
            f"{self.path} is a link, a pipe or a device, not the lock file arena writes there; "
            "remove it (the lock is made again) and rerun"
        )

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # the pid stays in the file: harmless, the flock is what counts
            self.fd = None

    def __enter__(self) -> FolderLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
