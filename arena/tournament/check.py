"""`arena check <bot>`: a short conformance suite for a new bot.

It starts the bot once and keeps that one process for every match, like a
tournament does: handshake, then a match of every game at several player
counts (the bot in a different seat each time, in-process random players in
the others), answering within time and only with legal ids, then goodbye and a
clean exit. Each check says what to fix when it fails.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.match.agents import ProcessAgent, RandomAgent
from arena.match.faults import BotFault, printable
from arena.match.referee import play_match
from arena.match.sandbox import Limits, SandboxInfo
from arena.match.timecontrol import TimeControl
from arena.records import MatchRecord
from arena.records.spec import MatchSpec
from arena.tournament.check_hints import GENERIC, fault_hint, own_path, startup_verdict, timing_verdict
from games import REGISTRY
from games.rng import derive_seed

# (game, players, options): every game, its smallest and largest tables, every option family.
CHECK_MATCHES: list[tuple[str, int, dict[str, Any]]] = [
    ("tightwad", 3, {}),
    ("tightwad", 4, {}),
    ("tightwad", 6, {}),
    ("tightwad", 10, {}),
    ("divers-weights", 2, {}),
    ("divers-weights", 3, {}),
    ("divers-weights", 4, {"bidding": True}),
    ("palace", 2, {}),
    ("palace", 4, {}),
    ("palace", 5, {"extended": True, "wyrm_variant": True}),
]

HINTS = GENERIC  # the fault kinds' generic hints (arena/tournament/check_hints.py has the specific ones)


@dataclass
class CheckResult:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    warn: bool = False  # passed, but near a limit


@dataclass
class CheckReport:
    bot: str
    checks: list[CheckResult] = field(default_factory=list)
    decisions: int = 0
    slowest_ms: float | None = None  # None: no decision answered
    stderr_tail: str = ""
    stderr_cause: str = ""  # the error named above the tail, if the tail does not name it
    move_s: float | None = None  # the move limit the timings are judged against
    # each check's lines as it ends (a slow bot's check takes minutes: never silent till the end)
    echo: Callable[[str], None] | None = None

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def add(self, name: str, ok: bool, detail: str, fix: str = "", *, warn: bool = False) -> None:
        self.checks.append(CheckResult(name, ok, detail, fix, warn))
        if self.echo is not None:
            self.echo("\n".join(_lines(self.checks[-1])))

    def render(self, *, streamed: bool = False) -> str:
        """The report; ``streamed``: without the title and check lines ``echo`` printed."""
        lines = [] if streamed else [f"arena check {self.bot}"]
        for c in [] if streamed else self.checks:
            lines += _lines(c)
        mark, timing = timing_verdict(self.slowest_ms, self.move_s)
        answered = f"{self.decisions} decisions answered; " if self.slowest_ms is not None else ""
        lines.append(f"  {'WARN  ' if mark else ''}{answered}{timing}")
        if not self.ok and self.stderr_tail:
            lines.append("  the bot's stderr ended with:")
            if self.stderr_cause:
                lines += [f"   | {printable(self.stderr_cause)}", "   | [...]"]
            lines.extend("   | " + ln for ln in printable(self.stderr_tail).splitlines()[-15:])
        lines.append("RESULT: " + ("PASS" if self.ok else "FAIL"))
        return "\n".join(lines)


def _lines(c: CheckResult) -> list[str]:
    out = [f"  {('WARN' if c.warn else 'PASS') if c.ok else 'FAIL'}  {c.name}: {printable(c.detail)}"]
    if not c.ok and c.fix:
        out.append(f"        fix: {c.fix}")
    return out


def _check_match(i: int, game: str, players: int, options: dict[str, Any]) -> MatchSpec:
    """The i-th check match: seeds of its own, no schedule position (deal, rotation, group: none)."""
    return MatchSpec(
        match_id=f"check/{game}/p{players}/{i}",
        index=i,
        game=game,
        players=players,
        options=REGISTRY[game].resolve_options(players, options),
        group=None,
        deal=None,
        rotation=None,
        deal_seed=derive_seed("check", i),
        match_seed=derive_seed("check-referee", i),
    )


def check_bot(
    bot: str, sandbox_level: str, limits: Limits, time_control: TimeControl, echo: Callable[[str], None]
) -> CheckReport:
    """`arena check BOT`: the bot resolved (a file, a folder, a name in bots/), the sandbox opened
    (either an ArenaError: one line), then ``run_check`` printing as it goes."""
    from arena.match.detect import open_sandbox
    from arena.tournament.roster import bot_entry

    entry = bot_entry(bot)
    return run_check(entry, sandbox=open_sandbox(sandbox_level), limits=limits, time_control=time_control, echo=echo)


def legal_texts(record: MatchRecord, seat: int, decision: Any) -> list[str]:
    """The texts of ``seat``'s legal actions at ``decision`` of ``record`` (a fault's), to tell
    an answer given by its label from a stray print; [] if the record does not say."""
    if not isinstance(decision, int):
        return []
    state = REGISTRY[record.game].new_game(record.players, record.deal_seed, dict(record.options))
    for d in record.decisions:
        if d.n >= decision or state.is_over():
            break
        state.apply(d.seat, d.action)
    if state.is_over() or seat not in state.to_move():
        return []
    return [state.action_text(seat, a) for a in range(len(state.legal_actions(seat)))]


def run_check(
    entry: Any,
    *,
    sandbox: SandboxInfo,
    limits: Limits,
    time_control: TimeControl | None = None,
    matches: list[tuple[str, int, dict[str, Any]]] | None = None,
    echo: Callable[[str], None] | None = None,
) -> CheckReport:
    """Run the checks; with ``echo``, print the title and each check as it ends (then
    ``report.render(streamed=True)`` gives the rest)."""
    tc = time_control or TimeControl()
    report = CheckReport(bot=entry.name, move_s=tc.move_s, echo=echo)
    if echo is not None:
        echo(f"arena check {entry.name}")
    path = Path(entry.path)
    pinned = own_path(path) if path.is_dir() else None
    if pinned is not None:
        detail, fix, runs = pinned  # in a file that runs: surely broken; in a data file: maybe
        report.add("runs from a copy", not runs, detail, fix, warn=not runs)
    agent = ProcessAgent(entry, sandbox=sandbox, limits=limits, time_control=tc)
    t0 = time.monotonic()
    try:
        agent.prepare()
    except BotFault as fault:
        report.stderr_tail = agent.stderr_tail() or str(fault.extra.get("stderr_tail", ""))
        report.stderr_cause = str(fault.extra.get("stderr_cause") or "")
        report.add(
            "handshake",
            False,
            fault.detail,
            fault_hint(fault.kind.value, fault.detail, report.stderr_tail, path, handshake=True),
        )
        return report
    detail, fix, warn = startup_verdict(agent.bot_name, time.monotonic() - t0, tc.startup_s)
    report.add("handshake", True, detail, fix, warn=warn)
    pid = agent.proc.pid
    failed = False
    for i, (game, players, options) in enumerate(matches or CHECK_MATCHES):
        seat = i % players
        m = _check_match(i, game, players, options)
        seats = [RandomAgent(seed=i) for _ in range(players)]
        seats[seat] = agent
        record = MatchRecord.from_json(play_match(m, seats, time_control=tc, sandbox=sandbox))
        mine = [d.ms for d in record.decisions if d.seat == seat and d.ms is not None]  # its thinking times
        report.decisions += len(mine)
        if mine:
            report.slowest_ms = max([report.slowest_ms or 0.0, *mine])
        fault = record.faults[seat]
        label = f"{game} {players} players (seat {seat})"
        if fault is not None:
            report.stderr_tail = str(fault.get("stderr_tail") or "")
            report.stderr_cause = str(fault.get("stderr_cause") or "")
            hint = fault_hint(
                fault["kind"],
                str(fault["detail"]),
                report.stderr_tail,
                path,
                first_match=i == 0,
                exit_code=fault.get("exit_code"),
                first_answer=report.decisions == 0,
                legal_texts=legal_texts(record, seat, fault.get("decision")),
            )
            report.add(label, False, f"{fault['kind']} at decision {fault.get('decision')}: {fault['detail']}", hint)
            failed = True
            break
        report.add(label, True, f"{len(mine)} decisions, all legal and in time")
    if not failed:
        same = agent.proc is not None and agent.proc.pid == pid
        report.add(
            "several matches in one process",
            same,
            "one process played every match" if same else "the process was restarted",
            "keep reading stdin after a result message; exit only on bye",
        )
        clean = _exits_on_bye(agent)
        report.add(
            "clean exit on bye",
            clean,
            "exited after bye" if clean else "still running after bye",
            'exit when you read {"type": "bye"}',
        )
    else:
        agent.discard()
    return report


def _exits_on_bye(agent: ProcessAgent, grace_s: float = 2.0) -> bool:
    """Send bye and watch whether the bot leaves by itself within the grace period."""
    proc = agent.proc
    if proc is None:
        return False
    proc.say_bye(0.5)
    end = time.monotonic() + grace_s
    while time.monotonic() < end and proc.alive():
        time.sleep(0.02)
    clean = not proc.alive()
    agent.discard()
    return clean
