"""A bounded load on loopback: 50 concurrent readers while 2 workers play. Every read is
answered (no error, no refusal) and play goes on; the latencies are reported, never
asserted (docs/performance.md P10 has the measured ones, from benchmarks/ladder_load.py)."""

from __future__ import annotations

import signal
import sys

import pytest

from tests.serve.ladder_fixtures import ROOT, free_port, ladder_file, safe_sandbox, start_server, wait_until

sys.path.insert(0, str(ROOT))
from benchmarks.ladder_load import read_load, stored  # noqa: E402


@pytest.mark.slow
def test_fifty_readers_while_two_workers_play(tmp_path):
    pytest.importorskip("httpx")
    safe_sandbox()
    data = tmp_path / "data"
    port = free_port()
    server = start_server(ladder_file(tmp_path), data, port, tmp_path / "server.out", "--workers", "2")
    try:
        wait_until(lambda: (data / "results.sqlite").exists() and stored(data) >= 3, what="matches")
        before = stored(data)
        result = read_load(f"http://127.0.0.1:{port}", readers=50, requests=4)
        print("ladder load:", result)
        assert result["statuses"] == {200: 200}
        wait_until(lambda: stored(data) > before, what="play to go on")
        assert server.poll() is None
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)
