"""One cgroup per bot process: pids + memory + cpu accounting, and a sure kill.

Handles the hybrid layout found here (v1 pids/memory/cpuacct, v2 ``unified``
with only ``cgroup.kill``) and a plain v2 tree where controllers are delegated.
Groups are created under this process's own cgroup, named
``arena.<referee pid>.<n>``; groups left by a dead referee are removed lazily.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

_SEQ = itertools.count(1)
_NAME_RE = re.compile(r"^arena\.(\d+)\.\d+$")


@dataclass
class Hierarchy:
    """What this machine offers, discovered once per process."""

    v1: dict[str, Path] = field(default_factory=dict)  # controller -> our own cgroup dir
    v2: Path | None = None  # our own v2 dir
    v2_controllers: frozenset[str] = frozenset()

    def describe(self) -> str:
        parts = []
        if self.v1:
            parts.append("v1:" + ",".join(sorted(self.v1)))
        if self.v2 is not None:
            ctl = sorted(self.v2_controllers & {"pids", "memory", "cpu"})
            parts.append("v2:" + (",".join(ctl) if ctl else "kill-only"))
        return "+".join(parts) or "none"


def _own_paths() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        for c in ctrls.split(",") if ctrls else [""]:
            out[c] = path
    return out


# cgroup v1 controllers a bot's group joins: pids and memory enforce the limits, cpuacct
# counts its CPU, and cpu makes the scheduler share CPU between groups, so a bot's many
# processes (a fork bomb's) weigh as much as one process of another bot, not each as much
V1_CONTROLLERS = ("pids", "memory", "cpuacct", "cpu")


def discover() -> Hierarchy:
    """Locate our cgroup in each usable hierarchy (nothing is created here)."""
    h = Hierarchy()
    try:
        own = _own_paths()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return h
    for line in mounts:
        left, _, right = line.partition(" - ")
        lf, rf = left.split(), right.split()
        if len(rf) < 3:
            continue
        root, mnt, fstype, opts = lf[3], lf[4], rf[0], rf[2].split(",")
        if fstype == "cgroup":
            for ctl in V1_CONTROLLERS:
                if ctl in opts and ctl not in h.v1 and ctl in own:
                    rel = own[ctl]
                    if root != "/" and rel.startswith(root):
                        rel = rel[len(root) :]
                    h.v1[ctl] = Path(mnt) / rel.lstrip("/")
        elif fstype == "cgroup2" and h.v2 is None and "" in own:
            rel = own[""]
            if root != "/" and rel.startswith(root):
                rel = rel[len(root) :]
            d = Path(mnt) / rel.lstrip("/")
            if (d / "cgroup.procs").exists():
                h.v2 = d
                try:
                    h.v2_controllers = frozenset((d / "cgroup.subtree_control").read_text().split())
                except OSError:
                    h.v2_controllers = frozenset()
    return h


def usable(h: Hierarchy) -> tuple[bool, str]:
    """Whether we can enforce pids + memory and account cpu, with a reason if not."""
    need = {"pids", "memory"}
    have = set(h.v1) | (set(h.v2_controllers) if h.v2 else set())
    if not need <= have:
        return False, f"cgroup controllers missing: {sorted(need - have)} (have {h.describe()})"
    if not os.access(next(iter(h.v1.values()), h.v2 or Path("/")), os.W_OK):
        return False, "cgroup not writable (not root and not delegated)"
    return True, ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _procs(d: Path) -> list[int]:
    try:
        return [int(x) for x in (d / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _rmdir_when_empty(d: Path, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while True:
        try:
            d.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() >= end:
                return False
            for pid in _procs(d):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.02)


def sweep_stale(h: Hierarchy) -> int:
    """Remove groups left by referees that are gone (crash, SIGKILL). Returns how many."""
    n = 0
    for base in [*h.v1.values(), *([h.v2] if h.v2 else [])]:
        try:
            entries = list(base.iterdir())
        except OSError:
            continue
        for d in entries:
            m = _NAME_RE.match(d.name)
            if m and d.is_dir() and not _alive(int(m.group(1))):
                n += _rmdir_when_empty(d, 0.5)
    return n


class BotCgroup:
    """The cgroup(s) of one bot process. Created before launch; joined by the launcher."""

    def __init__(self, h: Hierarchy, *, memory_bytes: int, pids_max: int) -> None:
        self.name = f"arena.{os.getpid()}.{next(_SEQ)}"
        self.dirs: dict[str, Path] = {}
        self.v2: Path | None = None
        self._final_cpu: float | None = None
        try:
            for ctl, base in h.v1.items():
                d = base / self.name
                if d not in self.dirs.values():  # cpu and cpuacct are often mounted together
                    d.mkdir()
                self.dirs[ctl] = d
            if h.v2 is not None:
                d = h.v2 / self.name
                d.mkdir()
                self.v2 = d
            self._limit(h, memory_bytes, pids_max)
        except OSError:
            self.remove(0.2)
            raise

    def _limit(self, h: Hierarchy, memory_bytes: int, pids_max: int) -> None:
        if "pids" in self.dirs:
            (self.dirs["pids"] / "pids.max").write_text(str(pids_max))
        elif self.v2 and "pids" in h.v2_controllers:
            (self.v2 / "pids.max").write_text(str(pids_max))
        else:
            raise OSError("no pids controller")
        if "memory" in self.dirs:
            (self.dirs["memory"] / "memory.limit_in_bytes").write_text(str(memory_bytes))
            sw = self.dirs["memory"] / "memory.memsw.limit_in_bytes"
            if sw.exists():
                sw.write_text(str(memory_bytes))
        elif self.v2 and "memory" in h.v2_controllers:
            (self.v2 / "memory.max").write_text(str(memory_bytes))
            if (self.v2 / "memory.swap.max").exists():
                (self.v2 / "memory.swap.max").write_text("0")
        else:
            raise OSError("no memory controller")

    def procs_files(self) -> list[str]:
        """Files the launcher writes its own pid into (v1 groups first, then v2)."""
        out = list(dict.fromkeys(str(d / "cgroup.procs") for d in self.dirs.values()))
        if self.v2 is not None:
            out.append(str(self.v2 / "cgroup.procs"))
        return out

    def _read(self, ctl: str, fname: str) -> str | None:
        d = self.dirs.get(ctl) or self.v2
        try:
            return (d / fname).read_text() if d else None
        except OSError:
            return None

    def cpu_seconds(self) -> float | None:
        """CPU of every task that ever ran in the group."""
        if self._final_cpu is not None:
            return self._final_cpu
        if "cpuacct" in self.dirs:
            txt = self._read("cpuacct", "cpuacct.usage")
            return int(txt) / 1e9 if txt else None
        if self.v2 is not None:
            txt = self._read("", "cpu.stat")
            if txt:
                for line in txt.splitlines():
                    if line.startswith("usage_usec"):
                        return int(line.split()[1]) / 1e6
        return None

    def oom_kills(self) -> int:
        """OOM kills inside the group (v1 ``memory.oom_control``, v2 ``memory.events``)."""
        txt = self._read("memory", "memory.oom_control" if "memory" in self.dirs else "memory.events")
        for line in (txt or "").splitlines():
            k, _, v = line.partition(" ")
            if k == "oom_kill":
                return int(v)
        return 0

    def pids_max_hits(self) -> int:
        """Forks refused because of ``pids.max``."""
        txt = self._read("pids", "pids.events")
        for line in (txt or "").splitlines():
            k, _, v = line.partition(" ")
            if k == "max":
                return int(v)
        return 0

    def pids_current(self) -> int:
        txt = self._read("pids", "pids.current")
        return int(txt) if txt else 0

    def freeze(self, frozen: bool) -> bool:
        """Stop (True) or resume (False) every task in the group, forked or ``setsid`` alike
        (v2 ``cgroup.freeze``; frozen tasks still die of SIGKILL). False: not possible here."""
        if self.v2 is None:
            return False
        try:
            fd = os.open(self.v2 / "cgroup.freeze", os.O_WRONLY)
        except OSError:
            return False  # a kernel before 5.2
        try:
            os.write(fd, b"1" if frozen else b"0")
            return True
        except OSError:
            return False
        finally:
            os.close(fd)

    def kill(self, timeout: float = 2.0) -> int:
        """Kill every task in the group, until none is left. Returns tasks seen."""
        seen: set[int] = set()
        if self.v2 is not None and (self.v2 / "cgroup.kill").exists():
            try:
                (self.v2 / "cgroup.kill").write_text("1")
            except OSError:
                pass
        groups = list(self.dirs.values()) + ([self.v2] if self.v2 else [])
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            pids = {p for d in groups for p in _procs(d)}
            if not pids:
                break
            seen |= pids
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.005)
        return len(seen)

    def remove(self, timeout: float = 2.0) -> bool:
        """Kill what is left and remove the groups (bounded wait; stale ones are swept later)."""
        if self._final_cpu is None and (self.dirs or self.v2):
            try:
                self._final_cpu = self.cpu_seconds()
            except (OSError, ValueError):
                pass
        ok = True
        for d in dict.fromkeys([*self.dirs.values(), *([self.v2] if self.v2 else [])]):
            ok &= _rmdir_when_empty(d, timeout)
        return ok
