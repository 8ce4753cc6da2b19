"""Seccomp denylist as a hand-built classic-BPF program (no libseccomp needed).

Standalone on purpose (stdlib only, no package imports): the Landlock shim runs
this file's code inside the sandbox with ``python -I -S``.

Two policies:
* ``"bwrap"``: sockets other than AF_UNIX are refused (namespaces already hide
  the host's abstract and path sockets).
* ``"strict"`` (no namespaces): every ``socket()`` call is refused, because a
  path-named unix socket such as a container daemon's would be reachable.
Both deny ptrace, process_vm_*, keyctl, bpf, io_uring, userfaultfd,
perf_event_open, mounts, unshare/setns, clone with namespace flags, module and
kexec calls, syslog (the kernel log), open_by_handle_at, TIOCSTI/TIOCLINUX, and make clone3 return
ENOSYS (libc then falls back to clone, whose flags we can inspect).
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import platform
import struct

POLICY_VERSION = "denylist-v2"  # v2: syslog(2) denied (the kernel log)

# classic BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

_RET_KILL_PROCESS = 0x80000000
_RET_ALLOW = 0x7FFF0000


def _ret_errno(err: int) -> int:
    return 0x00050000 | (err & 0xFFFF)


_OFF_NR = 0
_OFF_ARCH = 4


def _off_arg_lo(i: int) -> int:
    return 16 + 8 * i  # little-endian low word of args[i]


_AF_UNIX = 1
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C
_CLONE_NS_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080

# name -> number, per architecture (x86_64 table and the asm-generic table of aarch64)
_ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "socket": 41,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            "bpf": 321,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "userfaultfd": 323,
            "perf_event_open": 298,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "unshare": 272,
            "setns": 308,
            "clone": 56,
            "clone3": 435,
            "ioctl": 16,
            "kexec_load": 246,
            "kexec_file_load": 320,
            "init_module": 175,
            "finit_module": 313,
            "delete_module": 176,
            "open_by_handle_at": 304,
            "name_to_handle_at": 303,
            "chroot": 161,
            "acct": 163,
            "swapon": 167,
            "swapoff": 168,
            "reboot": 169,
            "syslog": 103,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "socket": 198,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "bpf": 280,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "userfaultfd": 282,
            "perf_event_open": 241,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "unshare": 97,
            "setns": 268,
            "clone": 220,
            "clone3": 435,
            "ioctl": 29,
            "kexec_load": 104,
            "kexec_file_load": 294,
            "init_module": 105,
            "finit_module": 273,
            "delete_module": 106,
            "open_by_handle_at": 265,
            "name_to_handle_at": 264,
            "chroot": 51,
            "acct": 89,
            "swapon": 224,
            "swapoff": 225,
            "reboot": 142,
            "syslog": 116,
        },
    ),
}

_PLAIN_DENY = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "userfaultfd",
    "perf_event_open",
    "mount",
    "umount2",
    "pivot_root",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "open_by_handle_at",
    "name_to_handle_at",
    "chroot",
    "acct",
    "swapon",
    "swapoff",
    "reboot",
    "syslog",
)


def supported() -> bool:
    """True when this machine's architecture has a syscall table here."""
    return platform.machine() in _ARCHES


def _ins(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k & 0xFFFFFFFF)


def build(policy: str = "bwrap") -> bytes:
    """The filter as raw ``struct sock_filter`` bytes (what ``bwrap --seccomp FD`` reads)."""
    if policy not in ("bwrap", "strict"):
        raise ValueError(f"unknown seccomp policy {policy!r}")
    machine = platform.machine()
    if machine not in _ARCHES:
        raise OSError(errno.ENOSYS, f"seccomp filter: unsupported architecture {machine}")
    audit_arch, nr = _ARCHES[machine]
    eperm = _ret_errno(errno.EPERM)
    prog = [
        _ins(_LD_W_ABS, _OFF_ARCH),
        _ins(_JEQ_K, audit_arch, jt=1, jf=0),
        _ins(_RET_K, _RET_KILL_PROCESS),  # foreign ABI (e.g. int 0x80): never legit here
        _ins(_LD_W_ABS, _OFF_NR),
    ]
    if machine == "x86_64":  # x32 syscall numbers bypass the table
        prog += [_ins(_JGE_K, 0x40000000, jt=0, jf=1), _ins(_RET_K, eperm)]
    for name in _PLAIN_DENY:
        prog += [_ins(_JEQ_K, nr[name], jt=0, jf=1), _ins(_RET_K, eperm)]
    prog += [_ins(_JEQ_K, nr["clone3"], jt=0, jf=1), _ins(_RET_K, _ret_errno(errno.ENOSYS))]
    # socket(domain, ...)
    if policy == "strict":
        prog += [_ins(_JEQ_K, nr["socket"], jt=0, jf=1), _ins(_RET_K, _ret_errno(errno.EAFNOSUPPORT))]
    else:
        prog += [
            _ins(_JEQ_K, nr["socket"], jt=0, jf=4),
            _ins(_LD_W_ABS, _off_arg_lo(0)),
            _ins(_JEQ_K, _AF_UNIX, jt=0, jf=1),
            _ins(_RET_K, _RET_ALLOW),
            _ins(_RET_K, _ret_errno(errno.EAFNOSUPPORT)),
        ]
    prog += [
        _ins(_LD_W_ABS, _OFF_NR),
        # clone(flags, ...): no namespace flags
        _ins(_JEQ_K, nr["clone"], jt=0, jf=4),
        _ins(_LD_W_ABS, _off_arg_lo(0)),
        _ins(_JSET_K, _CLONE_NS_FLAGS, jt=0, jf=1),
        _ins(_RET_K, eperm),
        _ins(_RET_K, _RET_ALLOW),
        # ioctl(fd, request, ...): no terminal injection
        _ins(_JEQ_K, nr["ioctl"], jt=0, jf=5),
        _ins(_LD_W_ABS, _off_arg_lo(1)),
        _ins(_JEQ_K, _TIOCSTI, jt=1, jf=0),
        _ins(_JEQ_K, _TIOCLINUX, jt=0, jf=1),
        _ins(_RET_K, eperm),
        _ins(_RET_K, _RET_ALLOW),
        _ins(_RET_K, _RET_ALLOW),
    ]
    return b"".join(prog)


def describe(policy: str = "bwrap") -> str:
    """Short stable id of a policy, for the sandbox record."""
    return f"{POLICY_VERSION}-{policy} (sha256:{hashlib.sha256(build(policy)).hexdigest()[:12]})"


def memfd(policy: str = "bwrap") -> int:
    """A fresh fd holding the filter, positioned at 0, for ``bwrap --seccomp FD``."""
    fd = os.memfd_create("arena-seccomp", 0)
    os.write(fd, build(policy))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load(policy: str = "strict") -> None:
    """Install the filter on the calling process (needs no_new_privs; used by the shim)."""
    raw = build(policy)
    buf = ctypes.create_string_buffer(raw, len(raw))
    prog = _SockFprog(len(raw) // 8, ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS)")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")
