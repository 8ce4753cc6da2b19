"""Time limits on what a client sends, which uvicorn does not bound by itself.

uvicorn arms its keep-alive timer only after a response, so a client that connects and then
sends its request line and headers a byte at a time (or nothing at all) holds a connection,
and a file descriptor, for as long as it likes (slowloris). ``header_timed(s)`` is uvicorn's
httptools protocol closing a connection whose request headers are not complete ``s`` seconds
after it opened or after the request began (the ladder's ``header_timeout_s``). A body is read
by the application, which allows ``body_timeout_s`` for the whole of it and answers 408 after
that (arena/serve/app.py ``_form``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


def header_timed(seconds: float) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol with a deadline of ``seconds`` for each request's headers."""
    return type("HeaderTimedProtocol", (HeaderTimedProtocol,), {"header_seconds": seconds})


class HeaderTimedProtocol(HttpToolsProtocol):
    header_seconds = 20.0  # nginx allows 60 s by default, Apache's mod_reqtimeout 20 to 40 s

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_timer is None:  # a later request on a kept-alive connection
            self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._header_timer = self.loop.call_later(self.header_seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()
