"""The referee: one match of any game, with real bots, under one fault policy.

``play_match`` owns the game state; agents only ever see observations and
answer with action ids. Every fault a seat commits goes through ``_fault``, the
single place where the policy lives: the faulted seat is out of the match (its
process is dropped), its seat goes on with random legal actions drawn from the
match seed, it takes last place (shared with other faulted seats), and the
other seats play on unharmed.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable, Sequence
from typing import Any, cast

from arena.match import protocol
from arena.match.agents import ARENA_VERSION, Agent, ProcessAgent
from arena.match.faults import BotFault, FaultKind, shorten_tail
from arena.match.sandbox import SandboxInfo
from arena.match.timecontrol import Clock, TimeControl
from arena.records.record import RECORD_SCHEMA, Decision, DecisionStatus, FaultJson, Outcome, RecordJson, new_record
from arena.records.spec import MatchSpec
from games import get_game
from games.core import places_from_keys
from games.rng import DealRng, derive_seed

__all__ = ["RECORD_SCHEMA", "Observer", "SandboxArg", "bot_seed", "final_places", "play_match"]

Observer = Callable[..., None]
# what a record says of the sandbox: the detected level, its JSON form (a Ray node's), or None (in-process)
SandboxArg = SandboxInfo | dict[str, Any] | None


def bot_seed(match_seed: int, seat: int) -> int:
    """The seed handed to a bot in its start message (its own, never the deal's)."""
    return derive_seed(match_seed, "bot", seat)


def final_places(game_places: Sequence[int], faults: Sequence[FaultJson | None]) -> list[int]:
    """The fault policy's places: faulted seats share last place, the others keep
    their order from the game."""
    ok = [s for s in range(len(game_places)) if faults[s] is None]
    if len(ok) == len(game_places):
        return list(game_places)
    ranked = places_from_keys([game_places[s] for s in ok])
    places = [len(ok)] * len(game_places)
    for s, p in zip(ok, ranked):
        places[s] = p
    return places


class _Match:
    def __init__(
        self,
        match: MatchSpec,
        agents: Sequence[Agent],
        tc: TimeControl,
        sandbox: SandboxArg,
        observer: Observer | None,
        no_timeouts: bool,
        tournament: str | None,
    ) -> None:
        self.m = match
        self.agents = list(agents)
        self.tc = tc
        self.sandbox = sandbox
        self.observer = observer
        self.tournament = tournament
        self.spec = get_game(match.game)
        self.state = self.spec.new_game(match.players, match.deal_seed, match.options)
        n = match.players
        if len(self.agents) != n:
            raise ValueError(f"{match.game} with {n} players needs {n} agents, got {len(self.agents)}")
        self.faults: list[FaultJson | None] = [None] * n
        self.clocks = [Clock(tc, no_timeouts) for _ in range(n)]
        self.fallback = DealRng(derive_seed(match.match_seed, "fallback"))
        self.decisions: list[Decision] = []

    def emit(self, event: str, **data: Any) -> None:
        if self.observer is not None:
            self.observer(event, **data)

    # ---- the one fault policy -------------------------------------------------

    def _fault(self, seat: int, fault: BotFault) -> None:
        if self.faults[seat] is not None:
            return
        info = fault.to_json()
        info["decision"] = self.state.decisions
        agent = self.agents[seat]
        tail = getattr(agent, "stderr_tail", None)
        # what the bot last wrote to stderr says why it died or what it was doing when it ran out
        if fault.kind in (FaultKind.CRASH, FaultKind.TIMEOUT) and tail is not None and "stderr_tail" not in info:
            info["stderr_tail"] = shorten_tail(tail(), 1000)
        self.faults[seat] = info
        agent.discard()
        self.emit("fault", seat=seat, bot=agent.name, fault=info)

    # ---- phases ---------------------------------------------------------------

    def begin(self) -> None:
        self.emit("begin", match=self.m, names=[a.name for a in self.agents], state=self.state)
        cards = self.state.card_table()
        names = [a.name for a in self.agents]
        for agent in self.agents:  # every bot that needs a process gets it started first,
            launch = getattr(agent, "launch", None)  # so they boot side by side
            if launch is not None:
                launch()
        for seat, agent in enumerate(self.agents):
            try:
                agent.prepare()
                agent.begin(
                    protocol.start(
                        match_id=self.m.match_id,
                        game=self.spec.id,
                        rules_version=self.spec.rules_version,
                        options=self.state.options,
                        players=self.m.players,
                        seat=seat,
                        seed=bot_seed(self.m.match_seed, seat),
                        time_control=self.tc.to_json(),
                        cards=cards,
                        bots=names,
                    )
                )
            except BotFault as fault:
                self._fault(seat, fault)

    def replay_prefix(self, prefix: Sequence[tuple[int, int]]) -> None:
        """Re-apply recorded decisions before the live play starts (replay --from)."""
        state = self.state
        for seat, action in prefix:
            text = state.action_text(seat, action)
            self.emit(
                "decision",
                state=state,
                seat=seat,
                bot=self.agents[seat].name,
                action=action,
                text=text,
                ms=None,
                status=DecisionStatus.REPLAYED.value,
            )
            self.decisions.append(Decision(state.decisions, seat, action, text, None, DecisionStatus.REPLAYED))
            state.apply(seat, action)

    def play(self) -> None:
        state = self.state
        while not state.is_over():
            movers = state.to_move()
            asked = self._ask([s for s in movers if self.faults[s] is None])
            answers = self._collect(asked)
            for seat in movers:
                if state.is_over() or seat not in state.to_move():
                    break
                self._decide(seat, asked.get(seat), answers.get(seat))

    def _ask(self, seats: list[int]) -> dict[int, tuple[float, float, int]]:
        asked: dict[int, tuple[float, float, int]] = {}
        for seat in seats:
            obs = self.state.observation(seat)
            clock = self.clocks[seat]
            msg = protocol.act(self.state.decisions, obs, clock.time_left())
            if getattr(self.agents[seat], "wants_view", False):
                msg["view"] = self.state.observation_text(seat)  # for people, not bots
            sent = time.monotonic()
            deadline = clock.deadline(sent)
            try:
                self.agents[seat].ask(msg, deadline)
            except BotFault as fault:
                self._fault(seat, fault)
                continue
            asked[seat] = (sent, deadline, len(obs["legal_actions"]))
        return asked

    def _collect(self, asked: dict[int, tuple[float, float, int]]) -> dict[int, Any]:
        answers: dict[int, Any] = {}
        procs = [s for s in asked if self.agents[s].is_process]
        if len(procs) > 1:
            from arena.match.process import read_lines

            got = read_lines([(cast(ProcessAgent, self.agents[s]).proc, asked[s][1]) for s in procs])
            answers.update(zip(procs, got))
        for seat, (_sent, deadline, _n) in asked.items():
            if seat in answers:
                continue
            try:
                answers[seat] = self.agents[seat].answer(deadline)
            except BotFault as fault:
                answers[seat] = fault
        return answers

    def _decide(self, seat: int, asked: tuple[float, float, int] | None, answer: Any) -> None:
        state = self.state
        action = None
        ms = None
        if asked is not None and self.faults[seat] is None:
            sent, _deadline, legal = asked
            try:
                if isinstance(answer, BotFault):
                    raise answer
                line, arrived = answer
                ms = round((arrived - sent) * 1000, 3)
                action = protocol.parse_action(line, legal)
                self.clocks[seat].spend(arrived - sent)
            except BotFault as fault:
                if fault.kind is FaultKind.TIMEOUT:
                    allowed = self.clocks[seat].allowance()
                    fault = BotFault(FaultKind.TIMEOUT, f"no answer within {allowed:g} s", **fault.extra)
                self._fault(seat, fault)
                action = None
        status = DecisionStatus.OK
        if action is None:
            status = DecisionStatus.FALLBACK
            action = self.fallback.randbelow(len(state.legal_actions(seat)))
        text = state.action_text(seat, action)
        self.emit(
            "decision",
            state=state,
            seat=seat,
            bot=self.agents[seat].name,
            action=action,
            text=text,
            ms=ms,
            status=status.value,
        )
        self.decisions.append(Decision(state.decisions, seat, action, text, ms, status))
        state.apply(seat, action)

    def finish(self, started_at: str, t0: float) -> RecordJson:
        game_result = self.state.result()
        places = final_places(game_result.places, self.faults)
        scores = list(game_result.scores)
        for seat, agent in enumerate(self.agents):
            if self.faults[seat] is not None:
                continue
            try:
                agent.finish(protocol.result(self.m.match_id, seat, places, scores, game_result.capped, self.faults))
                agent.after_match()
            except BotFault:
                agent.discard()
        m = self.m
        record = new_record(
            match_id=m.match_id,
            index=m.index,
            tournament=self.tournament,
            game=self.spec.id,
            rules_version=self.spec.rules_version,
            players=m.players,
            options=self.state.options,
            deal=m.deal,
            rotation=m.rotation,
            group=m.group,
            deal_seed=m.deal_seed,
            match_seed=m.match_seed,
            bots=[{"seat": s, **a.describe()} for s, a in enumerate(self.agents)],
            sandbox=_sandbox_json(self.sandbox),
            time_control=self.tc.to_json(),
            decisions=self.decisions,
            result=Outcome(tuple(places), tuple(scores), game_result.capped),
            game_result=Outcome(tuple(game_result.places), tuple(game_result.scores), game_result.capped),
            faults=self.faults,
            started_at=started_at,
            duration_s=round(time.monotonic() - t0, 4),
            harness_version=ARENA_VERSION,
        ).to_json()
        self.emit("end", record=record, state=self.state)
        return record


def _sandbox_json(sandbox: SandboxArg) -> dict[str, Any]:
    if sandbox is None:
        return {"level": "in-process", "details": {}}
    if isinstance(sandbox, dict):
        return sandbox
    return {"level": sandbox.level, "details": sandbox.details}


def play_match(
    match: MatchSpec,
    agents: Sequence[Agent],
    *,
    time_control: TimeControl | None = None,
    sandbox: SandboxArg = None,
    observer: Observer | None = None,
    no_timeouts: bool = False,
    tournament: str | None = None,
    prefix: Sequence[tuple[int, int]] = (),
) -> RecordJson:
    """Play one match and return its record as stored (``MatchRecord.to_json()``, docs/records.md).

    ``agents`` are in seat order. No
    exception from a bot ever escapes: bot failures become faults in the record.
    ``prefix`` is a list of (seat, action) applied first, without asking anyone.
    """
    started_at = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    t0 = time.monotonic()
    run = _Match(match, agents, time_control or TimeControl(), sandbox, observer, no_timeouts, tournament)
    run.begin()
    run.replay_prefix(prefix)
    run.play()
    return run.finish(started_at, t0)
