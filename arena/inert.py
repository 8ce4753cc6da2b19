"""Text from bots, files and paths made inert before a terminal shows it.

A bot's file name, a fault message or a stored detail may hold control characters: an
escape sequence that clears or rewrites the organiser's screen, a carriage return that
overwrites a line, a bidi override that reverses what follows. ``visible`` shows each such
character as its Python escape (``\\x1b``, ``\\r``, ``\\u202e``), so the text reads as it is
and does nothing. ``InertStream`` applies it to everything a command prints.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any, TextIO

_KEEP = "\n\t"


def visible(text: object, keep: str = _KEEP) -> str:
    """``text`` with every non-printable character (C0 and C1 controls, DEL, bidi and other
    format characters, line and paragraph separators) shown as its escape; the characters
    of ``keep`` (newline and tab by default) stay as they are."""
    text = str(text)
    plain = text
    for c in keep:
        plain = plain.replace(c, "")
    if plain.isprintable():  # the usual case, checked at C speed
        return text
    return "".join(c if c.isprintable() or c in keep else ascii(c)[1:-1] for c in text)


def inert_json(text: str) -> str:
    """A JSON text with each character that does not print (a bot's C1 control or bidi override
    in a string) written as its ``\\u`` escape: the same JSON, which ``visible`` leaves as it is.
    Printed through ``InertStream`` it used to become ``\\x85``, which is not JSON: `arena export
    > file.jsonl` wrote lines `arena replay` refused. Only strings can hold such characters (the
    structure's whitespace is newlines and spaces), so every escape lands inside one."""
    if text.replace("\n", "").isprintable():  # the usual case, checked at C speed
        return text
    return "".join(c if c == "\n" or c.isprintable() else json.dumps(c)[1:-1] for c in text)


class InertStream:
    """A text stream that shows control characters as escapes (``visible``): what any command
    prints about a hostile file name, bot or record stays inert."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # bytes would pass unseen (and click probes with b"")
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.raw.write(visible(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, ...
        if name == "buffer":  # no way around the escaping
            raise AttributeError(name)
        return getattr(self.raw, name)


def raw(stream: TextIO) -> TextIO:
    """The stream under an ``InertStream`` (for a display that writes its own control codes)."""
    return stream.raw if isinstance(stream, InertStream) else stream


class inert_output:
    """``with inert_output():`` sys.stdout and sys.stderr are ``InertStream``s, then restored."""

    def __enter__(self) -> None:
        self.saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = (s if s is None or isinstance(s, InertStream) else InertStream(s) for s in self.saved)

    def __exit__(self, *exc: object) -> None:
        sys.stdout, sys.stderr = self.saved
