"""Text from bots, files and paths made inert before a terminal shows it.

A bot's file name, a fault message or a stored detail may hold control characters: an
escape sequence that clears or rewrites the organiser's screen, a carriage return that
overwrites a line, a bidi override that reverses what follows. ``visible`` shows each such
character as its Python escape (``\\x1b``, ``\\r``, ``\\u202e``), so the text reads as it is
and does nothing.
"""

from __future__ import annotations

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
