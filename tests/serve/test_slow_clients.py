"""Clients that send slowly or not at all (slowloris) cannot hold the ladder's connections: the
ladder app behind uvicorn with the protocol `arena serve` gives it (header_timed), on a real
socket on loopback, with the timeouts of a ladder file that sets them short."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
pytest.importorskip("httptools")

from arena.serve.http_limits import header_timed  # noqa: E402
from tests.serve.in_process import ladder_app  # noqa: E402
from tests.serve.ladder_fixtures import free_port, wait_until  # noqa: E402


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(port, API token of ann) of a fixture ladder served by uvicorn in a thread."""
    app, tokens, side = ladder_app(
        tmp_path_factory.mktemp("slow"), {"ann": False}, extra="  header_timeout_s: 0.5\n  body_timeout_s: 1\n"
    )
    port = free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, http=header_timed(side.ladder.settings.header_timeout_s), log_config=None
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started, what="uvicorn to start")
    yield port, tokens["ann"]
    server.should_exit = True
    thread.join(10)
    side.close()


def _closed_after(sock: socket.socket, limit_s: float = 10.0) -> tuple[bytes, float]:
    """(what the server sent, seconds) until it closed the connection."""
    start = time.monotonic()
    sock.settimeout(limit_s)
    got = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return got, time.monotonic() - start
        got += chunk


def test_a_connection_that_sends_nothing_is_closed(served):
    port, _ = served
    with socket.create_connection(("127.0.0.1", port)) as sock:
        got, took = _closed_after(sock)
    assert got == b"" and took < 5


def test_headers_sent_a_byte_at_a_time_are_cut_off_at_the_deadline(served):
    port, _ = served
    request = b"GET /api/leaderboard HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 200
    with socket.create_connection(("127.0.0.1", port)) as sock:
        start = time.monotonic()
        sent = 0
        try:
            for byte in request:  # a byte every 20 ms: the whole would take 5 s
                sock.sendall(bytes([byte]))
                sent += 1
                time.sleep(0.02)
        except OSError:
            pass  # the server closed it under us
        got, _ = _closed_after(sock)
        took = time.monotonic() - start
    assert got == b"" and sent < len(request) and took < 5


def test_a_kept_alive_connection_gets_the_deadline_again_for_its_next_request(served):
    port, _ = served
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET /api/leaderboard HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(10)
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /api/leaderboard HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        time.sleep(0.1)
        rest, took = _closed_after(sock)
    assert took < 5 and (first + rest).count(b"HTTP/1.1 ") == 1  # the second request got no answer


def test_a_body_that_does_not_arrive_in_time_gets_408_and_the_connection_closes(served):
    port, token = served
    head = (
        "POST /api/bots HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {token}\r\n"
        "Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: 5000\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head + b"--zz\r\n")  # then nothing: 4,994 bytes never come
        got, took = _closed_after(sock)
    assert got.startswith(b"HTTP/1.1 408"), got[:200]
    assert b"took longer than 1 s" in got and took < 8


def test_a_prompt_client_is_served_as_before(served):
    port, _ = served

    async def get() -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /api/leaderboard HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = await reader.read()
        writer.close()
        return data

    async def all_of_them() -> list[bytes]:
        return await asyncio.wait_for(asyncio.gather(*(get() for _ in range(20))), 30)

    answers = asyncio.run(all_of_them())
    assert all(a.startswith(b"HTTP/1.1 200") for a in answers)
