"""Play matches one after another with each bot's process kept warm across them.

Shared by the local worker processes (arena/tournament/runner.py) and the Ray actors
(arena/tournament/ray_executor.py), so both play a match exactly the same way.

Fair by default: no bot process plays two matches of the same deal (same game, player
count and deal seed: another rotation or another group of a duplicate deal). A process
that remembered its hand from one rotation would know an opponent's hidden cards in the
next. So a worker keeps, per bot, the processes that have played: a match seats a kept
process that has not met its deal, else a new one, and each process plays any deal at
most once. Who plays which match, and what is stored, do not change: only which of a
bot's processes it is. ``deal_memory=True`` (the file's ``allow_deal_memory: true``)
lets one process play a deal again, as before; ``fresh`` starts a process for every match.
"""

from __future__ import annotations

import logging
import math
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("arena.run")

WARM_BOTS = 64  # arena.tournament.config.WARM_BOTS, the tournament file's default
# CPU seconds a warm process's tree may use between its matches (a JVM's compiler finishing, a
# GC); more is processes left running (a fork bomb's children, a search that never stops),
# which take the CPU the other bots' matches are timed on: the process is stopped
IDLE_CPU_S = 2.0
SWEEP_S = 0.5
SPARES = 2  # processes a bot that needed a new one keeps starting ahead (fair play only)


@dataclass
class _Kept:
    """A bot's process off its seat, kept for a match of a deal it has not played."""

    held: Any  # ProcessAgent.detach()
    used: int  # MatchPlayer.clock when it last played
    deals: set[tuple[str, int, int]] = field(default_factory=set)


def deal_of(match: Any) -> tuple[str, int, int]:
    """What a deal is: game, player count and deal seed (the cards dealt)."""
    return (match.game, int(match.players), int(match.deal_seed))


class MatchPlayer:
    """The bots of one worker: started on first use, reused by later matches, closed at the end.

    At most ``warm_bots`` bot processes stay running (never fewer than one match's
    seats; processes kept for other deals count): before a match needs another, the
    least recently used one is stopped. In a field of hundreds of bots a worker would
    otherwise hold a process, pipes and memory for every bot it ever met.
    """

    def __init__(
        self,
        entries: Mapping[str, Any],
        *,
        sandbox: Any,
        limits: Any,
        time_control: Any,
        log_dir: Path | None,
        fresh: bool,
        tournament: str,
        warm_bots: int = WARM_BOTS,
        deal_memory: bool = False,
    ) -> None:
        self.entries = entries
        self.sandbox = sandbox
        self.limits = limits
        self.tc = time_control
        self.log_dir = log_dir
        self.fresh = fresh
        self.deal_memory = deal_memory
        self.tournament = tournament
        self.warm_bots = max(1, warm_bots)
        # every agent met, least recently seated first; an agent outlives its process, so a
        # bot that keeps failing to start is still known as such after being stopped
        self.agents: OrderedDict[str, Any] = OrderedDict()
        self.kept: dict[str, list[_Kept]] = {}  # bot -> its processes off their seat
        self.dealt: dict[str, set[tuple[str, int, int]]] = {}  # bot -> deals its seated process played
        self.seated_proc: dict[str, Any] = {}  # bot -> the process those deals belong to
        self.last_used: dict[str, int] = {}
        self.clock = 0
        self.spares: dict[str, list[Any]] = {}  # bot -> agents starting processes for later matches
        self.idle_from: dict[Any, float] = {}  # warm process -> its tree's CPU when its last match ended
        self.swept = 0.0  # time.monotonic() of the last look at idle processes' CPU

    def play(self, match: Any, upcoming: Any = None) -> dict[str, Any]:
        """Play one scheduled match (a ``MatchSpec``) and return its record. ``upcoming``, the
        match this player plays next if known, lets the processes it will need start now,
        side by side with this match, rather than when it begins."""
        from arena.match.builtin import agent_for
        from arena.match.referee import play_match

        self.clock += 1
        self._stop_busy_idlers()
        deal = deal_of(match)
        seats = []
        for name in match.bots:
            agent = self.agents.get(name)
            if agent is None:
                agent = agent_for(
                    self.entries[name],
                    sandbox=self.sandbox,
                    limits=self.limits,
                    time_control=self.tc,
                    log_dir=self.log_dir,
                    fresh=self.fresh,
                )
                self.agents[name] = agent
            self.agents.move_to_end(name)
            if not self.deal_memory and getattr(agent, "is_process", False):
                self._seat_unseen(name, agent, deal)
            self.last_used[name] = self.clock
            seats.append(agent)
        self._make_room(set(match.bots))
        if upcoming is not None and not self.deal_memory and not self.fresh:
            self._start_spares(match, upcoming)
        try:
            record = play_match(match, seats, time_control=self.tc, sandbox=self.sandbox, tournament=self.tournament)
        finally:
            if not self.deal_memory:
                for name in match.bots:
                    self._played(name, deal)
            for name in match.bots:
                self._idle_from_now(getattr(self.agents[name], "proc", None))
        if not getattr(self.tc, "ponder", True):
            self._settle_spares()
        return record

    def _settle_spares(self) -> None:
        """``ponder: false``: finish the start of the processes launched ahead during the match
        just played (their hello answered), so that they wait stopped, as a warm process does.
        Left only launched, a spare ran free until the match that took it, maybe many matches
        later: a thread or a child a bot starts at import (a pondering engine) took a core from
        the bots whose clocks ran. One that fails to start is dropped (the seat starts another)."""
        from arena.match.faults import BotFault

        for spares in self.spares.values():
            for spare in list(spares):
                if getattr(spare, "proc", None) is not None:
                    continue  # started and stopped already
                try:
                    spare.prepare()
                except BotFault:
                    spare.discard()
                    spares.remove(spare)

    def _idle_from_now(self, proc: Any) -> None:
        try:
            if proc is not None and proc.alive():
                self.idle_from[proc] = proc.cpu_seconds()
        except Exception:  # noqa: BLE001 - a process gone meanwhile is simply not watched
            self.idle_from.pop(proc, None)

    def _stop_busy_idlers(self) -> None:
        """Stop every warm process whose tree used more than ``IDLE_CPU_S`` of CPU since its
        last match ended; the bot's next match starts a new one. The sandbox's limits count a
        warm process's children across matches, but not the CPU they take from others. At most
        every ``SWEEP_S``: without a cgroup each look walks the process's tree in /proc."""
        if time.monotonic() - self.swept < SWEEP_S:
            return
        self.swept = time.monotonic()
        for proc in [p for p in self.idle_from if not p.alive()]:
            del self.idle_from[proc]
        for name, agent in self.agents.items():
            proc = getattr(agent, "proc", None)
            if proc is not None and self._busy_idle(name, proc):
                agent.discard()
        for name, kept in self.kept.items():
            for k in [k for k in kept if self._busy_idle(name, k.held[0])]:
                kept.remove(k)
                k.held[0].kill()

    def _busy_idle(self, name: str, proc: Any) -> bool:
        start = self.idle_from.get(proc)
        if start is None:
            return False
        try:
            used = proc.cpu_seconds() - start
        except Exception:  # noqa: BLE001 - a process gone meanwhile is stopped anyway
            used = math.inf
        if used <= IDLE_CPU_S:
            return False
        del self.idle_from[proc]
        log.warning(
            "bot %s: its process used %.1f s of CPU between its matches (more than %.0f s: processes or "
            "threads left running); stopped, its next match starts a new one",
            name,
            used,
            IDLE_CPU_S,
        )
        return True

    def _deals(self, name: str) -> set[tuple[str, int, int]]:
        """The deals played by the process now seated for ``name`` (empty for a new one)."""
        proc = getattr(self.agents[name], "proc", None)
        if proc is None or self.seated_proc.get(name) is not proc:
            self.seated_proc[name] = proc
            self.dealt[name] = set()
        return self.dealt[name]

    def _played(self, name: str, deal: tuple[str, int, int]) -> None:
        agent = self.agents[name]
        if getattr(agent, "proc", None) is not None:
            self._deals(name).add(deal)

    def _seat_unseen(self, name: str, agent: Any, deal: tuple[str, int, int]) -> None:
        """Seat a process of ``name`` that has not played ``deal``: the seated one if it has
        not, else a kept one, else none (the referee starts a new one)."""
        played = self._deals(name)
        if agent.proc is not None and deal not in played:
            return
        held = agent.detach()
        kept = self.kept.setdefault(name, [])
        if held is not None and held[0].alive():
            kept.append(_Kept(held, self.last_used.get(name, 0), played))
        elif held is not None:
            held[0].kill()
        self.seated_proc[name] = None
        for i in range(len(kept) - 1, -1, -1):  # the most recently used first
            if deal not in kept[i].deals:
                one = kept.pop(i)
                agent.attach(one.held)
                self.seated_proc[name] = one.held[0]
                self.dealt[name] = one.deals
                return
        if getattr(agent, "failed_starts", 0):  # failing to start: no process ahead, no extra tries
            for spare in self.spares.pop(name, []):
                spare.discard()
            return
        spares = self.spares.get(name)
        if spares:
            self._take_spare(name, agent, spares.pop(0))
            # a bot that needed a new process will likely need more within this deal (its
            # next rotations and groups): keep SPARES starting, to be ready by then
            while len(spares) < SPARES and self.processes() < self.warm_bots:
                self._launch_spare(name)

    def _take_spare(self, name: str, agent: Any, spare: Any) -> None:
        """Seat the process ``spare`` started; if it failed to start, the referee starts one."""
        from arena.match.faults import BotFault

        try:
            spare.prepare()
        except BotFault:
            spare.discard()
            return
        held = spare.detach()
        if held is not None:
            agent.attach(held)
            self.seated_proc[name] = held[0]
            self.dealt[name] = set()

    def _start_spares(self, match: Any, upcoming: Any) -> None:
        """Launch now the processes ``upcoming`` will need (its bots that will have no process
        left that has not played its deal), so they start while ``match`` plays."""
        now, then = deal_of(match), deal_of(upcoming)
        for name in upcoming.bots:
            if self.processes() >= self.warm_bots:
                return
            if self.spares.get(name) or name not in self.entries or self.entries[name].kind == "builtin":
                continue
            agent = self.agents.get(name)
            if agent is not None:
                if getattr(agent, "failed_starts", 0):
                    continue  # a bot that fails to start gets no extra tries
                if agent.proc is not None:
                    played = self._deals(name) | ({now} if name in match.bots else set())
                    if then not in played:
                        continue
                if any(then not in k.deals for k in self.kept.get(name, ())):
                    continue
            self._launch_spare(name)

    def _launch_spare(self, name: str) -> None:
        from arena.match.builtin import agent_for

        spare = agent_for(
            self.entries[name],
            sandbox=self.sandbox,
            limits=self.limits,
            time_control=self.tc,
            log_dir=self.log_dir,
            fresh=self.fresh,
        )
        spare.launch()
        self.spares.setdefault(name, []).append(spare)

    def running(self) -> list[str]:
        """Names of the bots with a running process, least recently seated first."""
        return [name for name, agent in self.agents.items() if getattr(agent, "proc", None) is not None]

    def processes(self) -> int:
        """Bot processes running now: seated ones, those kept for other deals, and spares."""
        kept = sum(len(k) for k in self.kept.values())
        return len(self.running()) + kept + sum(len(s) for s in self.spares.values())

    def _make_room(self, seated: set[str]) -> None:
        """Stop the least recently used processes (never one seated in this match) until this
        match's bots fit in ``warm_bots``."""
        running = self.running()
        cold = sum(1 for name in seated if name not in running)
        excess = self.processes() + cold - self.warm_bots
        if excess <= 0:
            return
        order = [(self.last_used.get(name, 0), 1, name, None) for name in running if name not in seated]
        order += [(k.used, 0, name, k) for name, ks in self.kept.items() for k in ks]
        for _, _, name, k in sorted(order, key=lambda o: (o[0], o[1])):
            if excess <= 0:
                break
            if k is None:
                _stop(self.agents[name])
            else:
                self.kept[name].remove(k)
                _stop_held(k.held)
            excess -= 1

    def close(self) -> None:
        """Stop every bot process; never raises. Every bot hears its goodbye before any is
        waited for, so they exit side by side (the end of every run waits for this)."""
        kept = [k.held for ks in self.kept.values() for k in ks]
        self.kept.clear()
        for spare in (s for ss in self.spares.values() for s in ss):
            _stop(spare)
        self.spares.clear()
        for agent in self.agents.values():
            try:
                bye = getattr(agent, "say_bye", None)
                if bye is not None:
                    bye()
            except Exception:  # noqa: BLE001 - closing must never raise; _stop kills it below
                pass
        for held in kept:
            _bye_held(held)
        for agent in self.agents.values():
            _stop(agent)
        for held in kept:
            _stop_held(held)
        self.agents.clear()


def _stop(agent: Any) -> None:
    """Say bye and stop the agent's process; never raises."""
    try:
        agent.close()
    except Exception:  # noqa: BLE001 - closing must never raise
        agent.discard()


def _bye_held(held: Any) -> None:
    from arena.match.faults import BotFault

    proc = held[0]
    try:
        if proc.input_open:
            proc.say_bye()
            proc.close_input()
    except (BotFault, OSError):
        pass


def _stop_held(held: Any) -> None:
    """Say bye and stop a kept process; never raises."""
    proc = held[0]
    try:
        _bye_held(held)
        proc.close(grace_s=0.5)
    except Exception:  # noqa: BLE001 - closing must never raise
        try:
            proc.kill()
        except Exception:  # noqa: BLE001
            pass
