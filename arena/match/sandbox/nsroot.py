"""Namespaces and a private root filesystem through ctypes, for the ``landlock`` level.

Standalone on purpose (stdlib only): the shim imports it with ``python -I -S``.
Used only when the referee is root and bubblewrap is absent: the shim unshares
mount, pid, net, uts, ipc and cgroup namespaces (root needs no user namespace
for that), builds a tmpfs root holding only the allowed paths (read-only), the
bot's scratch (a tmpfs of its own, read-write), a fresh ``/proc`` and four device nodes, then
pivots into it. The bot then runs under its own unprivileged uid.
"""

from __future__ import annotations

import ctypes
import os
import platform

CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x00020000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x08000000, 0x20000000, 0x40000000
NAMESPACES = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}

DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.syscall.restype = ctypes.c_long


def _check(r: int, what: str) -> None:
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def unshare(flags: int = NAMESPACES) -> None:
    _check(_libc.unshare(flags), "unshare")


def mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def enc(s: str | None) -> bytes | None:
        return s.encode() if s is not None else None

    _check(_libc.mount(enc(src), enc(dst), enc(fstype), flags, enc(data)), f"mount {dst}")


def sethostname(name: str) -> None:
    b = name.encode()
    _check(_libc.sethostname(b, len(b)), "sethostname")


def _pivot_root(new: str, old: str) -> None:
    nr = _PIVOT_ROOT.get(platform.machine())
    if nr is None:
        raise OSError(38, "pivot_root: unsupported architecture")
    _check(_libc.syscall(nr, new.encode(), old.encode()), "pivot_root")


def _mountpoint(path: str, like: str) -> None:
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    if os.path.isdir(like):
        os.makedirs(path, mode=0o755, exist_ok=True)
    elif not os.path.exists(path):
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))


def _bind(old: str, new: str, *, writable: bool, dev: bool = False) -> None:
    _mountpoint(new, old)
    mount(old, new, None, MS_BIND | MS_REC)
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | (0 if dev else MS_NODEV) | (0 if writable else MS_RDONLY)
    mount(None, new, None, flags)


def build_root(
    *, ro: list[list[str]], rw: list[str], links: dict[str, str], tmpfs_mb: int = 1, rw_tmpfs: str | None = None
) -> None:
    """Replace ``/`` of this mount namespace by a tmpfs holding only the given paths.

    Call in a new mount namespace, from the first process of the new pid
    namespace (so the fresh ``/proc`` shows only the bot's processes).
    ``ro`` holds ``[host path with symlinks resolved, path in the new root]``;
    ``rw`` paths keep their host names; ``links`` are symlinks (e.g. ``/bin``). With
    ``rw_tmpfs`` (mount options, e.g. ``size=...,nr_inodes=...``) each ``rw`` path is a new
    tmpfs of its own instead of the host folder: the bot's writes stay in its namespace,
    within that size and inode count.
    """
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    base = "/tmp"  # any directory: the tmpfs covers it only in this namespace
    mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    os.chdir(base)
    os.mkdir("oldroot")
    os.mkdir("newroot")
    _pivot_root(".", "oldroot")  # the host tree is now /oldroot
    os.chdir("/")
    mount("tmpfs", "/newroot", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0755,size={tmpfs_mb}m")
    for src, dst in ro:
        if os.path.exists("/oldroot" + src):
            _bind("/oldroot" + src, "/newroot" + dst, writable=False)
    for p in rw:
        if rw_tmpfs is None:
            _bind("/oldroot" + p, "/newroot" + p, writable=True)
        else:
            _mountpoint("/newroot" + p, "/oldroot" + p)
            mount("tmpfs", "/newroot" + p, "tmpfs", MS_NOSUID | MS_NODEV, rw_tmpfs)
    for p, target in links.items():
        os.makedirs(os.path.dirname("/newroot" + p), mode=0o755, exist_ok=True)
        if not os.path.lexists("/newroot" + p):
            os.symlink(target, "/newroot" + p)
    os.makedirs("/newroot/dev", mode=0o755, exist_ok=True)
    mount("tmpfs", "/newroot/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
    for d in DEVICES:
        _bind("/oldroot" + d, "/newroot" + d, writable=True, dev=True)
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"/newroot/dev/{name}")
    os.makedirs("/newroot/proc", mode=0o755, exist_ok=True)
    mount("proc", "/newroot/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.chdir("/newroot")
    _pivot_root(".", ".")  # stack the old root on top of the new one...
    _check(_libc.umount2(b".", MNT_DETACH), "umount old root")  # ...and drop it
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
