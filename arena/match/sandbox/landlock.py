"""Landlock (Linux >= 5.13) through ctypes: filesystem, TCP and scope rules.

Standalone on purpose (stdlib only): the shim imports it with ``python -I -S``.
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Iterable

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # same on x86_64 and arm64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1, 2

_FILE_BITS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
RO = EXECUTE | READ_FILE | READ_DIR
RW_ALL = (1 << 16) - 1


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> int:
    """Landlock ABI of the running kernel, 0 when unavailable."""
    try:
        r = _libc().syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(r), 0)


def _handled_fs(abi: int) -> int:
    bits = (1 << 13) - 1
    if abi >= 2:
        bits |= REFER
    if abi >= 3:
        bits |= TRUNCATE
    if abi >= 5:
        bits |= IOCTL_DEV
    return bits


def restrict(ro: Iterable[str], rw: Iterable[str], *, deny_tcp: bool = True, scope: bool = True) -> int:
    """Restrict the calling process (and its future children) to ``ro``/``rw`` paths.

    Paths that do not exist are skipped. Returns the ABI used. Raises OSError on
    failure so the caller can refuse to run the bot unconfined.
    """
    abi = abi_version()
    if abi < 1:
        raise OSError(38, "landlock unavailable")
    libc = _libc()
    fs = _handled_fs(abi)
    net = (NET_BIND_TCP | NET_CONNECT_TCP) if (deny_tcp and abi >= 4) else 0
    scoped = (SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL) if (scope and abi >= 6) else 0
    if abi >= 6:
        attr = struct.pack("=QQQ", fs, net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", fs, net)
    else:
        attr = struct.pack("=Q", fs)
    abuf = ctypes.create_string_buffer(attr, len(attr))
    rfd = libc.syscall(_SYS_CREATE_RULESET, abuf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if rfd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        for paths, access in ((ro, RO & fs), (rw, fs)):
            for path in paths:
                try:
                    pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue
                try:
                    allowed = access if os.path.isdir(path) else access & _FILE_BITS
                    rule = struct.pack("=Qi", allowed, pfd)
                    rbuf = ctypes.create_string_buffer(rule, len(rule))
                    if (
                        libc.syscall(
                            _SYS_ADD_RULE, ctypes.c_int(rfd), ctypes.c_int(_RULE_PATH_BENEATH), rbuf, ctypes.c_uint32(0)
                        )
                        != 0
                    ):
                        raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
                finally:
                    os.close(pfd)
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS)")
        if libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(rfd), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(rfd)
    return abi
