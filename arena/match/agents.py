"""Who sits in a seat: a bot process, a person at the terminal, or a recorded script.

The referee talks to every seat through the same small interface, so a human seat
or a replayed seat goes through exactly the referee's code path.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from arena import __version__
from arena.match import protocol
from arena.match.bot_cache import Hold, entry_folder, hold, mark_used
from arena.match.bot_log import ledger_path
from arena.match.faults import BotFault, FaultKind
from arena.match.sandbox import Limits, SandboxInfo
from arena.match.timecontrol import UNLIMITED_S, TimeControl

ARENA_VERSION = __version__  # sent in hello and stored in every record
MAX_FAILED_STARTS = 3


class Agent:
    """A seat's player. ``ask`` sends a decision request; ``answer`` waits for the
    reply line. Faults are raised as BotFault; the referee decides what they mean."""

    name: str = "agent"
    path: str | None = None
    sha256: str | None = None
    is_process = False

    def prepare(self) -> None:
        """Make sure the agent is ready for a match (start a process, handshake)."""

    def begin(self, start_msg: dict[str, Any]) -> None:
        """A match begins."""

    def ask(self, act_msg: dict[str, Any], deadline: float) -> None:
        raise NotImplementedError

    def answer(self, deadline: float) -> tuple[bytes, float]:
        raise NotImplementedError

    def finish(self, result_msg: dict[str, Any]) -> None:
        """The match ended."""

    def discard(self) -> None:
        """After a fault: drop this agent's process; the next match starts a fresh one."""

    def after_match(self) -> None:
        """Between matches: clean up what the agent left running."""

    def close(self) -> None:
        """Goodbye; release everything."""

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "sha256": self.sha256}


class ProcessAgent(Agent):
    """A bot program in the sandbox, kept warm across matches unless ``fresh``."""

    is_process = True

    def __init__(
        self,
        entry: Any,
        *,
        sandbox: SandboxInfo,
        limits: Limits,
        time_control: TimeControl,
        log_dir: Path | None = None,
        fresh: bool = False,
        no_timeouts: bool = False,
    ) -> None:
        self.entry = entry
        self.name = entry.name
        self.path = str(entry.path)
        self.sha256 = entry.sha256
        self.sandbox = sandbox
        self.limits = limits
        self.tc = time_control
        self.log_dir = log_dir
        self.fresh = fresh
        self.no_timeouts = no_timeouts
        self.proc: Any = None
        self.bot_name: str | None = None  # what the bot calls itself in its hello
        self.failed_starts = 0  # in a row; a bot that never starts stops costing start-up time
        self.last_start_fault: BotFault | None = None
        self._starting: Any = None  # a launched process not yet ready (process.Starting)
        self._launch_fault: BotFault | None = None
        # shared locks on the cache entries it runs from, kept while it may start the bot again
        self._holds: dict[Path, Hold] = {}

    def launch(self) -> None:
        """Spawn this bot's process if the next match needs a new one, without waiting for
        it: the referee launches every seat's bot before it prepares any, so the bots of a
        match start side by side. ``prepare`` finishes the start (or starts it, unlaunched)."""
        from arena.match.process import BotProcess, bot_command

        if self._starting is not None or self._launch_fault is not None or self._disabled():
            return
        if self.proc is not None and self.proc.alive():
            if self.proc.cpu_seconds() < self.limits.cpu_s / 2:
                return
            self.discard()  # near its CPU rlimit: restart before it is killed mid-match
        self.proc = None
        log_path = self.log_dir / f"{self.name}.stderr.log" if self.log_dir else None
        try:
            argv, env, extra_ro = self._command(bot_command)
            self._hold_cache([Path(self.entry.path), *extra_ro])
            self._starting = BotProcess.launch(
                argv,
                bot_file=self.entry.path,
                name=self.name,
                sandbox=self.sandbox,
                limits=self.limits,
                log_path=log_path,
                extra_ro=extra_ro,
                env=env,
                # one stderr budget per bot, over every worker folder beside this one
                log_ledger=ledger_path(self.log_dir, self.name) if self.log_dir else None,
            )
        except BotFault as fault:
            self._launch_fault = fault  # raised by prepare, for this seat

    def _command(self, bot_command: Any) -> tuple[list[str], dict[str, str] | None, list[Path]]:
        """argv, extra environment and read-only paths: a bot folder adds its installed
        environment (never installed here, during a match) and thread caps."""
        forfeit = getattr(self.entry, "forfeit", None)
        if forfeit:  # the bot's own failure, as an import error at its start would be
            raise BotFault(FaultKind.CRASH, f"cannot start: {forfeit}", name=self.name)
        if not Path(self.entry.path).is_dir():
            mark_used(Path(self.entry.path))  # a bot shipped to this node: in use, not to be pruned
            return bot_command(self.entry.path), None, []
        from arena.match.botfolder import BotFolderError, runtime

        try:
            return runtime(Path(self.entry.path))
        except BotFolderError as exc:
            raise BotFault(FaultKind.SANDBOX, str(exc), name=self.name) from None

    def _hold_cache(self, paths: list[Path]) -> None:
        """Hold the cache entries of ``paths`` (an environment, an unpacked or shipped bot), so
        that `arena cache prune` keeps them while this agent lives."""
        for path in paths:
            if path in self._holds or entry_folder(path) is None:
                continue
            got = hold(path)
            if got is not None and path.exists():
                self._holds[path] = got
            else:  # pruned between resolving it and holding it
                raise BotFault(
                    FaultKind.SANDBOX,
                    f"{path} was removed from the bot cache (arena cache prune) as the bot started; "
                    "run the command again (it installs or unpacks the bot again)",
                    name=self.name,
                )

    def _disabled(self) -> bool:
        return self.failed_starts >= MAX_FAILED_STARTS and self.last_start_fault is not None

    def prepare(self) -> None:
        if self._disabled():
            last = self.last_start_fault
            assert last is not None
            raise BotFault(
                last.kind,
                f"not restarted after {self.failed_starts} failed starts in a row (last: {last.detail})",
                **last.extra,
            )
        self.launch()
        starting, self._starting = self._starting, None
        launch_fault, self._launch_fault = self._launch_fault, None
        if launch_fault is not None:
            raise launch_fault  # the sandbox could not be built: the harness's failure, not the bot's
        if starting is None:
            return  # warm: its process serves this match too
        proc = starting.wait()
        proc.pause_after_answer = not self.tc.ponder  # stopped between its turns (time_control.ponder)
        self.proc = proc
        budget = UNLIMITED_S if self.no_timeouts else self.tc.startup_s
        deadline = time.monotonic() + budget
        try:
            proc.send_line(protocol.encode(protocol.hello(ARENA_VERSION)), deadline)
            line, _ = proc.read_line(deadline)
            self.bot_name = protocol.parse_hello(line)
        except BotFault as fault:
            if fault.kind is FaultKind.TIMEOUT:
                fault = BotFault(
                    FaultKind.TIMEOUT, f"no hello within the start-up limit of {budget:g} s", **fault.extra
                )
            self.discard()
            if fault.kind is not FaultKind.SANDBOX:  # the harness's own failures never disable a bot
                self.failed_starts += 1
                self.last_start_fault = fault
            raise fault
        self.failed_starts = 0

    def begin(self, start_msg: dict[str, Any]) -> None:
        self._send(start_msg, time.monotonic() + self._io_budget())

    def ask(self, act_msg: dict[str, Any], deadline: float) -> None:
        if self.proc is not None:
            self.proc.resume()  # its clock runs from here
        self._send(act_msg, deadline)

    def answer(self, deadline: float) -> tuple[bytes, float]:
        line, arrived = self.proc.read_line(deadline)
        return line, arrived

    def finish(self, result_msg: dict[str, Any]) -> None:
        if self.proc is None:
            return
        try:
            self._send(result_msg, time.monotonic() + self._io_budget())
        except BotFault:
            self.discard()  # it will be restarted; the match is already over
            return
        if self.fresh:
            self.close()

    def discard(self) -> None:
        self._abandon_start()
        if self.proc is not None:
            self.proc.kill()
            self.proc = None

    def _abandon_start(self) -> None:
        starting, self._starting = self._starting, None
        self._launch_fault = None
        if starting is not None:
            starting.abandon()

    def detach(self) -> Any:
        """Take the running process away from this agent, still running (the caller keeps it
        for a later match, see ``attach``); the next match starts another. None if none runs."""
        self._abandon_start()
        held, self.proc = (self.proc, self.bot_name) if self.proc is not None else None, None
        return held

    def attach(self, held: Any) -> None:
        """Seat a process taken by ``detach`` (its own earlier process) in this agent's place;
        a process this agent runs now is stopped first."""
        self.close()
        self.proc, self.bot_name = held

    def say_bye(self) -> None:
        """The goodbye and end of its input, without waiting for it to exit (``close`` waits):
        bots told first, then waited for, all exit side by side."""
        if self.proc is None or not self.proc.input_open:
            return
        self.proc.say_bye()
        self.proc.close_input()

    def close(self) -> None:
        self._abandon_start()
        if self.proc is None:
            return
        self.say_bye()
        self.proc.close(grace_s=0.5)
        self.proc = None

    def stderr_tail(self) -> str:
        return self.proc.stderr_tail() if self.proc is not None else ""

    def _io_budget(self) -> float:
        return UNLIMITED_S if self.no_timeouts else max(1.0, self.tc.move_s)

    def _send(self, msg: dict[str, Any], deadline: float) -> None:
        if self.proc is None:
            raise BotFault(FaultKind.CRASH, "bot process is not running")
        self.proc.send_line(protocol.encode(msg), deadline)


class ScriptedAgent(Agent):
    """Plays recorded action ids in order (used by replays); past the script it
    raises, and the referee falls back to a random legal action."""

    def __init__(self, name: str, actions: list[int]) -> None:
        self.name = name
        self._actions = list(actions)
        self._pending: bytes | None = None

    def ask(self, act_msg: dict[str, Any], deadline: float) -> None:
        legal = act_msg["observation"]["legal_actions"]
        if not self._actions:
            raise BotFault(FaultKind.PROTOCOL, "the recorded script has no more actions")
        action = self._actions.pop(0)
        if not 0 <= action < len(legal):
            raise BotFault(FaultKind.ILLEGAL, f"recorded action {action} is not legal here")
        self._pending = protocol.encode({"type": "action", "action": action})

    def answer(self, deadline: float) -> tuple[bytes, float]:
        line, self._pending = self._pending, None
        assert line is not None
        return line, time.monotonic()


class RandomAgent(Agent):
    """An in-process random player (opponents in `arena check`, fillers in tests)."""

    def __init__(self, name: str = "random(in-process)", seed: int = 0) -> None:
        from games.rng import DealRng

        self.name = name
        self._rng = DealRng(seed)
        self._line: bytes | None = None

    def begin(self, start_msg: dict[str, Any]) -> None:
        from games.rng import DealRng

        self._rng = DealRng(start_msg["seed"])

    def ask(self, act_msg: dict[str, Any], deadline: float) -> None:
        n = len(act_msg["observation"]["legal_actions"])
        self._line = str(self._rng.randbelow(n)).encode()

    def answer(self, deadline: float) -> tuple[bytes, float]:
        line, self._line = self._line, None
        assert line is not None
        return line, time.monotonic()
