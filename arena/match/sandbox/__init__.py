"""Sandbox levels for bot processes, chosen by a start-up self-test.

Levels (a fixed set, strongest first; see docs in ``LEVELS``):

* ``full``        bwrap namespaces (user, pid, net, ipc, uts, mount, cgroup) + seccomp
                  + per-bot cgroup (pids, memory, cpu accounting) + rlimits
* ``namespaces``  the same without the cgroup: memory by RLIMIT_AS, no process cap
                  unless the bot has its own host uid
* ``landlock``    no bubblewrap: Landlock (files, TCP, signal/abstract-socket scope)
                  + strict seccomp (no sockets at all) + rlimits + subreaper sweep; when the
                  arena is root it also unshares pid/net/uts/ipc/mount/cgroup namespaces
                  itself (``nsroot.py``), pivots into a private root, and runs each bot
                  under its own unprivileged uid in its own cgroup
* ``rlimits``     resource limits only: NOT isolated (files, network, signals open)
* ``none``        plain subprocess for debugging one's own bot: no limits at all

Safe for untrusted bots: a level whose self-test proved every property listed in
docs/sandbox.md (``SandboxInfo.safe``); ``rlimits`` and ``none`` never are.

``arena.match.detect`` picks the level (``detect_sandbox``) by running ``probe.py`` through
the real bot process layer; this package itself holds only the shared types.

Every level runs the bot in a new session with an explicit environment, closed
fds, a private scratch directory as cwd (removed at close), and is cleaned up by
a kill that sweeps every descendant (the referee is a child subreaper).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any

from arena.records.controls import Limits

from .procs import become_subreaper

__all__ = ["LEVELS", "ORDER", "READY", "Limits", "SandboxInfo", "SandboxUnavailable", "become_subreaper", "bwrap_path"]

LEVELS: dict[str, str] = {
    "full": "bwrap namespaces + seccomp + cgroup (pids, memory, cpu) + rlimits",
    "namespaces": "bwrap namespaces + seccomp + rlimits (memory by RLIMIT_AS; no cgroup)",
    "landlock": "Landlock + strict seccomp + rlimits; as root also pid/net/uts/ipc/mount namespaces, "
    "a private root, a uid of its own per bot and the cgroup (no bubblewrap needed)",
    "rlimits": "resource limits only: NOT isolated from files, network or other processes",
    "none": "plain subprocess, no limits (debugging only)",
}
ORDER = ("full", "namespaces", "landlock", "rlimits")
READY = "ARENA-SANDBOX-READY"


class SandboxUnavailable(RuntimeError):
    """A requested level failed its self-test (the message is one line)."""


@dataclass(frozen=True)
class SandboxInfo:
    """The active level and what it really enforces; printed and stored with every match."""

    level: str
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def safe(self) -> bool:
        """Whether the self-test proved this level safe for untrusted bots (see docs/sandbox.md)."""
        return bool(self.details.get("safe"))

    def enforces(self, what: str) -> bool:
        """Whether ``what`` (e.g. "processes", "network", "filesystem", "signals") is enforced."""
        return bool(self.details.get("enforces", {}).get(what))

    def summary(self) -> str:
        d = self.details
        s = f"sandbox: {self.level} ({d.get('backend', '?')}; layers: {', '.join(d.get('layers', []))})"
        if d.get("missing"):
            s += f"; missing: {', '.join(d['missing'])}"
        s += "; safe for untrusted bots" if self.safe else "; NOT safe for untrusted bots"
        return s


_bwrap_version: str | None = None


def bwrap_path() -> str | None:
    """The bwrap binary, if any (``ARENA_BWRAP`` overrides, for tests)."""
    return os.environ.get("ARENA_BWRAP") or shutil.which("bwrap")


def _bwrap_ver(path: str) -> str:
    global _bwrap_version
    if _bwrap_version is None:
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=5).stdout
            _bwrap_version = out.strip() or "bwrap ?"
        except (OSError, subprocess.SubprocessError):
            _bwrap_version = "bwrap ?"
    return _bwrap_version
