"""Readable traces of a match, for `arena play` and `arena replay`."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, TextIO

from tabulate import tabulate

from arena.match.faults import at_decision, printable
from arena.records.spec import MatchSpec


def _indent(text: str, pad: str = "    ") -> str:
    return "\n".join(pad + line for line in text.splitlines())


class Tracer:
    """An observer for ``play_match``: prints each decision as it is made.

    ``seat`` (or ``seats``) limits the trace to what those seats saw; ``quiet`` prints the
    result only; ``show_seed=False`` keeps the deal seed (which gives away every hand) out;
    decisions of the ``skip`` seats are not printed (a person's seat draws its own).
    """

    def __init__(
        self,
        out: TextIO,
        seat: int | None = None,
        quiet: bool = False,
        show_legal: bool = True,
        seats: Collection[int] | None = None,
        show_seed: bool = True,
        skip: Collection[int] = (),
    ) -> None:
        self.out = out
        self.seats = {seat} if seat is not None else (set(seats) if seats is not None else None)
        self.quiet = quiet
        self.show_legal = show_legal
        self.show_seed = show_seed
        self.skip = set(skip)

    def _hidden(self, seat: int) -> bool:
        return self.seats is not None and seat not in self.seats

    def _p(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def __call__(self, event: str, **data: Any) -> None:
        getattr(self, "on_" + event)(**data)

    def on_begin(self, match: MatchSpec, names: list[str], state: Any) -> None:
        if self.quiet:
            return
        opts = ", ".join(f"{k}={v}" for k, v in sorted(state.options.items()))
        seed = match.deal_seed if self.show_seed else "hidden"
        self._p(f"{match.game} · {match.players} players · seed {seed} · {opts}")
        self._p("seats: " + ", ".join(f"{i}={n}" for i, n in enumerate(names)))
        self._p(f"match id: {match.match_id}")

    def on_decision(
        self, state: Any, seat: int, bot: str, action: int, text: str, ms: float | None, status: str
    ) -> None:
        if self.quiet or self._hidden(seat) or seat in self.skip:
            return
        self._p(f"\n#{state.decisions} · seat {seat} ({bot}) to move")
        self._p(_indent(state.observation_text(seat)))
        if self.show_legal:
            legal = [state.action_info(seat, i) for i in state.legal_actions(seat)]
            self._p("    legal: " + "  ".join(f"[{a['id']}] {a['text']}" for a in legal))
        took = f"{ms:.1f} ms" if ms is not None else "no time"
        tag = "" if status == "ok" else f"  [{status}]"
        self._p(f"  -> [{action}] {text}  ({took}){tag}")

    def on_fault(self, seat: int, bot: str, fault: dict[str, Any]) -> None:
        if self.quiet or self._hidden(seat):
            return
        self._p(
            f"\n!! seat {seat} ({bot}) faulted{at_decision(fault)}: {fault['kind']}: {printable(str(fault['detail']))}"
        )
        if fault.get("stderr_cause"):  # an error named above the tail (a deep stack trace)
            self._p(_indent(printable(str(fault["stderr_cause"])), "   | ") + "\n   | [...]")
        if fault.get("stderr_tail"):
            self._p(_indent(printable(str(fault["stderr_tail"])), "   | "))
        self._p("   its seat plays on with random legal actions and takes last place")

    def on_end(self, record: dict[str, Any], state: Any) -> None:
        self._p("" if self.quiet else "\n" + "=" * 60)
        self._p(format_result(record))


def format_result(record: dict[str, Any]) -> str:
    rows = []
    for s in record["seats"]:
        fault = s["fault"]
        rows.append(
            [
                s["seat"],
                s["bot"],
                s["place"] + 1,
                s["score"],
                "" if fault is None else f"{fault['kind']}: {printable(str(fault['detail']))}",
            ]
        )
    capped = " (stopped by the decision cap)" if record["result"]["capped"] else ""
    head = (
        f"{record['game']} · match {record['match_id']} · {len(record['decisions'])} decisions"
        f" · {record['duration_s']:.2f} s · sandbox {record['sandbox']['level']}{capped}"
    )
    table = tabulate(rows, headers=["seat", "bot", "place", "score", "fault"], tablefmt="simple")
    return head + "\n" + str(table)
