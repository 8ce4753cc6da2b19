"""A person at the terminal in one seat: sees only that seat's view, picks by number."""

from __future__ import annotations

import time
from typing import Any, TextIO

from arena.match import protocol
from arena.match.agents import Agent
from arena.match.faults import BotFault, FaultKind


class HumanAgent(Agent):
    wants_view = True

    def __init__(self, seat: int, stdin: TextIO, stdout: TextIO, name: str = "human") -> None:
        self.name = name
        self.seat = seat
        self.stdin = stdin
        self.stdout = stdout
        self._line: bytes | None = None

    def _say(self, text: str) -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def ask(self, act_msg: dict[str, Any], deadline: float) -> None:
        obs = act_msg["observation"]
        legal = obs["legal_actions"]
        self._say(f"\n== your turn (seat {self.seat}), decision {act_msg['decision']} ==")
        self._say(act_msg.get("view", ""))
        for a in legal:
            self._say(f"  [{a['id']}] {a['text']}")
        while True:
            self.stdout.write(f"choose 0-{len(legal) - 1}: ")
            self.stdout.flush()
            raw = self.stdin.readline()
            if raw == "":
                raise BotFault(FaultKind.CRASH, "end of input at the human seat")
            raw = raw.strip()
            if raw.isdigit() and int(raw) < len(legal):
                self._line = protocol.encode({"type": "action", "action": int(raw)})
                return
            self._say(f"'{raw}' is not a choice; type a number between 0 and {len(legal) - 1}")

    def answer(self, deadline: float) -> tuple[bytes, float]:
        line, self._line = self._line, None
        assert line is not None
        return line, time.monotonic()

    def finish(self, result_msg: dict[str, Any]) -> None:
        self._say(f"\nmatch over: you placed {result_msg['place'] + 1} of {len(result_msg['places'])}")
