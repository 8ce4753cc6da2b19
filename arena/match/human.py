"""A person at the terminal in one seat: sees only that seat's view, picks by number.

Each decision draws the table once (arena/match/human_view.py) from the seat's own
observation: the news since the seat's previous decision, the table, the hand with ranks
and suits, the legal actions, then one prompt. A decision with one legal action is played
without asking, with a one-line note.
"""

from __future__ import annotations

import time
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from arena.match import protocol
from arena.match.agents import Agent
from arena.match.faults import BotFault, FaultKind
from arena.match.human_view import TableView


class HumanAgent(Agent):
    def __init__(self, seat: int, stdin: TextIO, stdout: TextIO, name: str = "human") -> None:
        self.name = name
        self.seat = seat
        self.stdin = stdin
        self.stdout = stdout
        self.console = Console(file=stdout, highlight=False, emoji=False)
        self.view: TableView | None = None
        self.prev: dict[str, Any] | None = None  # the seat's observation at its previous decision
        self.shows_final = False  # set when the caller hands over the final observation (show_final)
        self._result: dict[str, Any] | None = None
        self._line: bytes | None = None

    def _say(self, text: str) -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def begin(self, start_msg: dict[str, Any]) -> None:
        self.view = TableView(self.seat, start_msg["game"], start_msg["bots"], start_msg["cards"])
        self.prev = None

    def _news(self, obs: dict[str, Any]) -> None:
        assert self.view is not None
        lines = self.view.news(self.prev, obs)
        if lines:
            self.console.print(Text("since your last move:", style="bold"))
            for line in lines:
                self.console.print(Text("  ").append_text(line))
        self.prev = obs

    def ask(self, act_msg: dict[str, Any], deadline: float) -> None:
        obs = act_msg["observation"]
        legal = obs["legal_actions"]
        if self.view is None:  # never begun (not through the referee): draw without card names
            self.view = TableView(
                self.seat, obs.get("game", ""), [f"seat {s}" for s in range(obs.get("players", 0))], []
            )
        n = act_msg["decision"]
        if len(legal) == 1:  # nothing to choose: one line, then what led to it
            note = Text(f"decision {n}: your only legal move, played for you: ", style="italic")
            self.console.print(note.append_text(self.view.action(legal[0])))
            self._news(obs)
            self._line = protocol.encode({"type": "action", "action": 0})
            return
        self.console.rule(f"decision {n} \u00b7 your turn (seat {self.seat})")
        self._news(obs)
        self.console.print(self.view.table(obs))
        self.console.print(self.view.hand(obs))
        self.console.print(self.view.legal(legal))
        while True:
            self.stdout.write(f"choose 0-{len(legal) - 1}: ")
            self.stdout.flush()
            raw = self.stdin.readline()
            if raw == "":
                raise BotFault(FaultKind.CRASH, "end of input at the human seat")
            if not getattr(self.stdin, "isatty", lambda: False)():
                self.stdout.write(raw if raw.endswith("\n") else raw + "\n")  # piped: the answer shows
            raw = raw.strip()
            # isdigit() alone passes '²' and 5,000-digit strings, which int() refuses
            if raw.isascii() and raw.isdigit() and len(raw) <= 6 and int(raw) < len(legal):
                self._line = protocol.encode({"type": "action", "action": int(raw)})
                return
            self._say(f"'{raw}' is not a choice; type a number between 0 and {len(legal) - 1}")

    def answer(self, deadline: float) -> tuple[bytes, float]:
        line, self._line = self._line, None
        assert line is not None
        return line, time.monotonic()

    def finish(self, result_msg: dict[str, Any]) -> None:
        self._result = result_msg
        if not self.shows_final:
            self._say_place()

    def show_final(self, obs: dict[str, Any]) -> None:
        """The end of the match as the seat sees it: how the last tricks ended, the final table."""
        if self.view is None:
            return
        self.console.rule("match over")
        self._news(obs)
        self.console.print(self.view.table(obs))
        if self._result is not None:
            self._say_place()

    def _say_place(self) -> None:
        assert self._result is not None
        self._say(f"\nmatch over: you placed {self._result['place'] + 1} of {len(self._result['places'])}")
