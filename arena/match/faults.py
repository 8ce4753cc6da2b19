"""Typed bot faults: the one vocabulary the process layer, the referee and the
store share. A fault is what a *bot* did wrong, except ``SANDBOX``, which is the
harness's own failure and is never held against the bot's rating record.
"""

from __future__ import annotations

import enum
from typing import Any


class FaultKind(str, enum.Enum):
    TIMEOUT = "timeout"  # no answer before the referee's deadline
    CRASH = "crash"  # the process exited (exit code, stderr tail)
    PROTOCOL = "protocol"  # a line that is not a valid message (cut short)
    ILLEGAL = "illegal"  # a well-formed answer naming an illegal action
    RESOURCE = "resource"  # CPU, memory, output or process limit hit
    SANDBOX = "sandbox"  # the harness failed to run the bot


class BotFault(Exception):
    """Raised by the process layer and the protocol; handled only by the referee."""

    def __init__(self, kind: FaultKind, detail: str, **extra: Any) -> None:
        self.kind = kind
        self.detail = detail
        self.extra = extra
        super().__init__(f"{kind.value}: {detail}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value, "detail": self.detail}
        out.update(self.extra)
        return out


def at_decision(fault: dict[str, Any]) -> str:
    """ " at decision D" for a recorded fault that has one (what `arena replay --from` takes), else ""."""
    decision = fault.get("decision")
    return f" at decision {decision}" if isinstance(decision, int) else ""


def shorten(text: str | bytes, limit: int = 200) -> str:
    """A bad line or stderr tail, cut to ``limit`` characters for records."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def shorten_tail(text: str, limit: int = 1000) -> str:
    """A stderr tail cut to its last ``limit`` characters: a bot's last words say why it stopped."""
    return text if len(text) <= limit else "..." + text[-limit:]


def printable(text: str) -> str:
    """Bot text made safe for a terminal: control characters (escape sequences too) shown
    as ``\\xNN`` escapes; newlines and tabs kept."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in "\n\t" else ascii(c)[1:-1] for c in text)
