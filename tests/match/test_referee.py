"""The referee's fault policy and records, with in-process agents (no processes)."""

from __future__ import annotations

import copy
import json
import time

import pytest

from arena.match.agents import Agent, RandomAgent
from arena.match.faults import BotFault, FaultKind
from arena.match.referee import final_places, play_match
from arena.report.replay import ReplayMismatch, takeover, verify_record
from arena.tournament.schedule import MatchSpec
from games import REGISTRY


def match(game="tightwad", players=3, seed=5, options=None):
    return MatchSpec(
        match_id=f"t/{game}/{seed}",
        index=0,
        game=game,
        players=players,
        options=REGISTRY[game].resolve_options(players, options or {}),
        deal_seed=seed,
        match_seed=seed + 1000,
        bots=tuple(f"b{i}" for i in range(players)),
    )


class FaultyAgent(RandomAgent):
    """Answers randomly, then commits ``kind`` at its ``at``-th decision."""

    def __init__(self, kind: FaultKind, at: int, reply: bytes | None = None) -> None:
        super().__init__(name=f"faulty-{kind.value}")
        self.kind, self.at, self.reply, self.n = kind, at, reply, 0

    def answer(self, deadline):
        line, t = super().answer(deadline)
        self.n += 1
        if self.n == self.at:
            if self.reply is not None:
                return self.reply, t
            raise BotFault(self.kind, "injected")
        return line, t


def test_final_places_faulted_seats_share_last_place():
    assert final_places([0, 1, 2, 3], [None, None, None, None]) == [0, 1, 2, 3]
    assert final_places([0, 1, 2, 3], [{"kind": "timeout"}, None, None, None]) == [3, 0, 1, 2]
    assert final_places([2, 0, 1], [None, {"k": 1}, {"k": 2}]) == [0, 1, 1]
    assert final_places([1, 1, 0], [None, None, {"k": 1}]) == [0, 0, 2]


@pytest.mark.parametrize("game,players", [("tightwad", 4), ("divers-weights", 3), ("palace", 4)])
def test_random_agents_play_a_full_match_and_the_record_replays(game, players):
    rec = play_match(match(game, players), [RandomAgent(seed=i) for i in range(players)])
    assert rec["faults"] == [None] * players
    assert rec["result"]["places"] == rec["game_result"]["places"]
    assert [s["bot"] for s in rec["seats"]] == ["random(in-process)"] * players
    assert all(d["status"] == "ok" for d in rec["decisions"])
    json.dumps(rec)  # JSON-ready
    verify_record(rec)


@pytest.mark.parametrize(
    "kind,reply",
    [
        (FaultKind.TIMEOUT, None),
        (FaultKind.CRASH, None),
        (FaultKind.PROTOCOL, b"{not json"),
        (FaultKind.ILLEGAL, b'{"type": "action", "action": 999}'),
        (FaultKind.PROTOCOL, b'"three"'),
    ],
)
def test_a_faulted_seat_is_out_goes_on_with_fallback_and_takes_last_place(kind, reply):
    agents = [RandomAgent(seed=1), FaultyAgent(kind, at=2, reply=reply), RandomAgent(seed=3)]
    rec = play_match(match("tightwad", 3, seed=9), agents)
    fault = rec["faults"][1]
    assert fault is not None and fault["kind"] == kind.value
    assert rec["faults"][0] is None and rec["faults"][2] is None
    assert rec["result"]["places"][1] == 2  # last, alone
    mine = [d for d in rec["decisions"] if d["seat"] == 1]
    assert [d["status"] for d in mine[:1]] == ["ok"]
    assert all(d["status"] == "fallback" for d in mine[1:])
    # the other seats played their whole match normally
    assert all(d["status"] == "ok" for d in rec["decisions"] if d["seat"] != 1)
    assert rec["seats"][1]["fault"]["kind"] == kind.value
    verify_record(rec)


def test_fallback_actions_come_from_the_match_seed():
    def run():
        agents = [RandomAgent(seed=1), FaultyAgent(FaultKind.CRASH, at=1), RandomAgent(seed=3)]
        return play_match(match("tightwad", 3, seed=4), agents)

    a, b = run(), run()
    assert a["decisions"] == [dict(d, ms=x["ms"]) for d, x in zip(b["decisions"], a["decisions"])]


def test_simultaneous_decisions_are_all_asked_before_any_is_applied():
    seen = []

    class Spy(RandomAgent):
        def ask(self, act_msg, deadline):
            seen.append((act_msg["decision"], act_msg["observation"]["seat"]))
            super().ask(act_msg, deadline)

    play_match(match("divers-weights", 3, seed=2), [Spy(seed=i) for i in range(3)])
    # R-D3: the first trick asks all three seats at the same decision number
    assert seen[:3] == [(0, 0), (0, 1), (0, 2)]


def test_tampered_record_is_detected_at_the_first_differing_decision():
    rec = play_match(match("tightwad", 3, seed=11), [RandomAgent(seed=i) for i in range(3)])
    bad = copy.deepcopy(rec)
    d = bad["decisions"][5]
    legal_other = 0 if d["action"] != 0 else 1
    d["action"] = legal_other
    with pytest.raises(ReplayMismatch) as err:
        verify_record(bad)
    assert err.value.decision == 5
    bad = copy.deepcopy(rec)
    bad["game_result"]["scores"][0] -= 1
    with pytest.raises(ReplayMismatch, match="at the end"):
        verify_record(bad)
    bad = copy.deepcopy(rec)
    del bad["decisions"][-1]
    with pytest.raises(ReplayMismatch, match="not over"):
        verify_record(bad)


def test_takeover_replays_the_prefix_exactly_then_goes_live():
    rec = play_match(match("palace", 3, seed=3), [RandomAgent(seed=i) for i in range(3)])
    k = 20
    new = takeover(rec, k, 1, RandomAgent(name="fixed", seed=99))
    assert [(d["seat"], d["action"]) for d in new["decisions"][:k]] == [
        (d["seat"], d["action"]) for d in rec["decisions"][:k]
    ]
    assert all(d["status"] == "replayed" for d in new["decisions"][:k])
    assert new["bots"][1]["name"] == "fixed"
    assert new["decisions"][k]["status"] == "ok"
    verify_record({**new, "decisions": [dict(d, status="ok") for d in new["decisions"]]})


def test_takeover_with_the_same_policy_reproduces_the_original_match():
    rec = play_match(match("tightwad", 3, seed=8), [RandomAgent(seed=i) for i in range(3)])

    class Copycat(Agent):
        """Plays seat 0's recorded actions: the replay must then match the original."""

        def __init__(self, actions):
            self.name = "copy"
            self.actions = list(actions)

        def ask(self, msg, deadline):
            self.line = str(self.actions.pop(0)).encode()

        def answer(self, deadline):
            return self.line, time.monotonic()

    k = 4
    seat0 = [d["action"] for d in rec["decisions"][k:] if d["seat"] == 0]
    new = takeover(rec, k, 0, Copycat(seat0))
    assert [(d["seat"], d["action"]) for d in new["decisions"]] == [(d["seat"], d["action"]) for d in rec["decisions"]]
    assert new["game_result"] == rec["game_result"]


class Watcher(RandomAgent):
    """A random player that keeps every (decision, observation) it was asked with."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed=seed)
        self.asked: list[tuple[int, dict]] = []

    def ask(self, act_msg, deadline):
        self.asked.append((act_msg["decision"], act_msg["observation"]))
        super().ask(act_msg, deadline)


@pytest.mark.parametrize("game,players", [("divers-weights", 4), ("palace", 3)])
def test_takeover_inside_a_simultaneous_decision_asks_the_live_seat_as_the_match_did(game, players):
    """`--from` two decisions into a simultaneous decision (a Divers Weights trick, Palace's
    set-up swaps) replayed the first seats' choices, so the live bot was asked at another
    decision number and saw who had already chosen: not the state the match's bot was in."""
    seen = [Watcher(seed=i) for i in range(players)]
    rec = play_match(match(game, players, seed=4), seen)
    last = players - 1
    # the first decision where every seat chooses at once (Palace: 0, Divers Weights: a trick)
    first = next(n for n, _ in seen[last].asked if all(n in [m for m, _ in w.asked] for w in seen))
    start = first + 2
    live = Watcher(seed=99)
    new = takeover(rec, start, last, live)
    assert live.asked[0] == next((n, o) for n, o in seen[last].asked if n == first)
    # the seat that chose before `start` keeps its recorded choice, and is first asked after the step
    early = Watcher(seed=98)
    takeover(rec, start, 0, early)
    assert early.asked[0][0] >= first + players
    assert early.asked[0] == next((n, o) for n, o in seen[0].asked if n > first)
    assert [(d["seat"], d["action"]) for d in new["decisions"][: first + players]][:start] == [
        (d["seat"], d["action"]) for d in rec["decisions"][:start]
    ]


class ChattyTimeoutAgent(FaultyAgent):
    """Times out at its first decision after a long stderr whose last line says why."""

    def __init__(self) -> None:
        super().__init__(FaultKind.TIMEOUT, at=1)

    def stderr_tail(self) -> str:
        return "".join(f"searching, step {i}\n" for i in range(200)) + "LAST: stuck in search\n"


def test_a_timeout_keeps_the_end_of_the_bot_s_stderr():
    """The record kept the first 1000 of the last 2000 characters: the bot's last words were cut."""
    agents = [ChattyTimeoutAgent(), RandomAgent(seed=2), RandomAgent(seed=3)]
    fault = play_match(match("tightwad", 3, seed=9), agents)["faults"][0]
    assert fault["kind"] == "timeout"
    assert fault["stderr_tail"].endswith("LAST: stuck in search\n"), fault["stderr_tail"][-200:]
    assert len(fault["stderr_tail"]) <= 1003
