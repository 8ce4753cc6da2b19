"""The one time control and the one set of per-bot limits.

Both are plain frozen dataclasses: the referee and the sandbox read them, and the
tournament file validates into them (pydantic reads the bounds from the annotations,
so a tournament file and the CLI share one definition, with one set of bounds).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated, Any, ClassVar

from pydantic import ConfigDict, Field

# (low, high) of each time-control field, in seconds; also bounds the CLI's --move-s etc.
TIME_BOUNDS: dict[str, tuple[float, float]] = {
    "startup_s": (0.1, 600.0),
    "move_s": (0.001, 3600.0),
    "bank_s": (0.0, 86_400.0),
    "grace_s": (0.0, 60.0),
}
# (low, high) of each per-bot limit; the lows are what a Python bot needs to start at all.
LIMIT_BOUNDS: dict[str, tuple[int, int]] = {
    "memory_mb": (32, 1_048_576),
    "cpu_s": (1, 604_800),
    "file_mb": (1, 1_048_576),
    "open_files": (16, 65_536),
    "processes": (1, 4096),
    "scratch_mb": (1, 1_048_576),
    "stdout_line_kb": (1, 65_536),
    "stderr_log_kb": (1, 1_048_576),
}

_STRICT = ConfigDict(extra="forbid", frozen=True)  # strict per field: a strict dataclass refuses a mapping


def _seconds(name: str) -> Any:
    lo, hi = TIME_BOUNDS[name]
    return Field(ge=lo, le=hi, allow_inf_nan=False, strict=True)


def _limit(name: str) -> Any:
    lo, hi = LIMIT_BOUNDS[name]
    return Field(ge=lo, le=hi, strict=True)


@dataclass(frozen=True)
class TimeControl:
    """Seconds: start-up, per decision, an optional per-match bank, a grace margin."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT

    startup_s: Annotated[float, _seconds("startup_s")] = 10.0  # launch to hello (Python start-up is slow)
    move_s: Annotated[float, _seconds("move_s")] = 1.0  # per decision
    bank_s: Annotated[float | None, _seconds("bank_s")] = None  # optional per-match bank, spent over move_s
    grace_s: Annotated[float, _seconds("grace_s")] = 0.05  # pipe and scheduling latency on every limit
    # False: a bot's processes are stopped from each answer to its next request, so it computes
    # only while its own clock runs (chess's "pondering" off); True: they run all the time
    ponder: Annotated[bool, Field(strict=True)] = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Limits:
    """Per-bot limits. Memory is per bot (cgroup) or per process (RLIMIT_AS)."""

    __pydantic_config__: ClassVar[ConfigDict] = _STRICT

    memory_mb: Annotated[int, _limit("memory_mb")] = 1024  # cgroup memory where available, else RLIMIT_AS
    cpu_s: Annotated[int, _limit("cpu_s")] = 600  # CPU cap of the bot tree; RLIMIT_CPU = cpu_s+1 backstop
    file_mb: Annotated[int, _limit("file_mb")] = 16  # RLIMIT_FSIZE
    open_files: Annotated[int, _limit("open_files")] = 64  # RLIMIT_NOFILE
    processes: Annotated[int, _limit("processes")] = 32  # tasks (processes + threads): pids cgroup
    scratch_mb: Annotated[int, _limit("scratch_mb")] = 64  # the private tmpfs scratch (= cwd, HOME, TMPDIR)
    stdout_line_kb: Annotated[int, _limit("stdout_line_kb")] = 1024  # longest accepted protocol line
    stderr_log_kb: Annotated[int, _limit("stderr_log_kb")] = 256  # the bot's stderr logs, all its processes

    @property
    def scratch_inodes(self) -> int:
        """Files and folders the scratch may hold: one per 4 KiB page of ``scratch_mb`` (empty files
        take no pages, so without this cap they could be made without end)."""
        return self.scratch_mb * 256

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
