"""`arena serve` as a user runs it: a real server process on loopback, real sandboxed bots.

One flow, to keep it short (builtin players: a match takes milliseconds): a second server
on the same data folder is refused; 50 concurrent readers are all answered while 2 workers
play (a bounded load); a kill -9 of the server mid-match loses no finished match and, after
the restart, counts none twice; when its matchmaker dies the server stops, in one line.
Uploads that get rated: tests/serve/test_browser.py."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys

import pytest

httpx = pytest.importorskip("httpx2")
pytest.importorskip("starlette")

from tests.own_processes import in_session  # noqa: E402
from tests.serve.ladder_fixtures import ROOT, free_port, ladder_file, safe_sandbox, start_server, wait_until  # noqa: E402

sys.path.insert(0, str(ROOT))
from benchmarks.ladder_load import read_load  # noqa: E402


def _stored(data) -> dict[str, tuple[int, int]]:
    """{match id: (players, deal)} of every stored match, read as a separate reader would."""
    conn = sqlite3.connect(f"file:{data / 'results.sqlite'}?mode=ro", uri=True)
    try:
        return {mid: (p, d) for mid, p, d in conn.execute("SELECT match_id, players, deal FROM matches")}
    finally:
        conn.close()


def _get(port: int, path: str, **kw):
    try:
        return httpx.get(f"http://127.0.0.1:{port}{path}", timeout=10, **kw)
    except httpx.HTTPError:
        return None


def _overall(port: int) -> dict:
    r = _get(port, "/api/leaderboard")
    return (
        next(s for s in r.json()["scopes"] if s["scope"] == "overall")
        if r is not None and r.status_code == 200
        else None
    )


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.mark.slow
def test_one_server_per_folder_readers_under_load_and_a_kill_9_loses_and_double_counts_nothing(tmp_path):
    safe_sandbox()
    data = tmp_path / "data"
    ladder = ladder_file(tmp_path, extra="  header_timeout_s: 1\n")
    port = free_port()
    log = tmp_path / "server.out"
    server = start_server(ladder, data, port, log, "--workers", "2")
    try:
        wait_until(lambda: _overall(port), what="the server to answer")

        # a client that connects and sends nothing is cut off (slowloris; tests/serve/test_slow_clients.py)
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.settimeout(20)
            assert sock.recv(1) == b""

        # one server per data folder
        # (in process: refused at the lock, before anything starts)
        from click.testing import CliRunner

        from arena.cli import cli

        second = CliRunner().invoke(cli, ["serve", str(ladder), "--port", str(free_port()), "--data", str(data)])
        assert second.exit_code == 2
        assert (
            "in use by another arena server" in second.stderr
            and "give another --data folder" in second.stderr
            and "Traceback" not in second.output
        )

        # 50 concurrent readers while 2 workers play: every read answered, play goes on
        # (the latencies are P10's, measured by benchmarks/ladder_load.py, never asserted)
        wait_until(lambda: (data / "results.sqlite").exists() and len(_stored(data)) >= 3, what="the first matches")
        played = len(_stored(data))
        result = read_load(f"http://127.0.0.1:{port}", readers=50, requests=2)
        print("ladder load:", result)
        assert result["statuses"] == {200: 100}
        wait_until(lambda: len(_stored(data)) > played, what="play to go on")

        # kill -9 while matches are being played
        wait_until(lambda: len(_stored(data)) >= 6, what="some matches")
        before = _stored(data)
        os.kill(server.pid, signal.SIGKILL)
        server.wait(10)
        wait_until(lambda: not in_session(server.pid), timeout_s=60, what="the matchmaker and workers to die with it")
    finally:
        _stop(server)

    server = start_server(ladder, data, port, log)
    try:
        wait_until(lambda: _overall(port), what="the restarted server")
        wait_until(lambda: len(_stored(data)) >= len(before) + 6, timeout_s=180, what="play after the restart")
        # its matchmaker dies: the server stops too, in one line (a supervisor starts it again)
        children = f"/proc/{server.pid}/task/{server.pid}/children"
        matchmaker = open(children).read().split()
        assert matchmaker
        os.kill(int(matchmaker[0]), signal.SIGKILL)
        assert server.wait(60) == 2
        wait_until(lambda: not in_session(server.pid), timeout_s=60, what="the workers to stop with it")
        after = _stored(data)
        assert set(before) <= set(after)  # no finished match lost
        deals: dict[tuple[str, int], int] = {}
        for mid, (players, deal) in after.items():  # every deal set holds at most one match per rotation
            key = (mid.split("/")[0], deal)
            deals[key] = deals.get(key, 0) + 1
            assert deals[key] <= players
        sets = sqlite3.connect(data / "ladder.sqlite").execute("SELECT id, players, bots FROM deal_sets").fetchall()
        assert {d for _, d in deals} <= {s[0] for s in sets}
        assert all(len(json.loads(b)) == p for _, p, b in sets)
    finally:
        _stop(server)
    text = log.read_text()
    assert "arena: error: the matchmaker stopped" in text and "Traceback" not in text

    # the leaderboard the server shows counts each stored match once: seats rated = seats stored
    from arena.serve.app import Ladderside
    from arena.serve.ladder import load_ladder

    side = Ladderside(load_ladder(ladder), data, safe_sandbox())
    board = side.leaderboard()
    _replays_only_of_finished_deals(side)
    side.close()
    stored = _stored(data)
    overall = next(s for s in board["scopes"] if s["scope"] == "overall")
    assert board["matches"] == len(stored)
    assert sum(r["matches"] for r in overall["standings"]) == sum(p for p, _ in stored.values())


def _replays_only_of_finished_deals(side) -> None:
    """Recent matches link to the replay viewer once every rotation of their deal is stored."""
    from starlette.testclient import TestClient

    from arena.serve.app import create_app

    c = TestClient(create_app(side), raise_server_exceptions=False)
    matches = c.get("/api/matches?limit=500").json()["matches"]
    shown = [m for m in matches if m["replay"]]
    assert shown
    page = c.get(shown[0]["replay"])
    assert page.status_code == 200 and shown[0]["match_id"] in page.text
    assert shown[0]["replay"] in c.get("/matches").text
    by_deal: dict[str, int] = {}  # over every stored match: the list holds the last 500 only
    with sqlite3.connect(side.data / "results.sqlite") as con:
        for (mid,) in con.execute("SELECT match_id FROM matches"):
            prefix = mid.rsplit("/r", 1)[0]
            by_deal[prefix] = by_deal.get(prefix, 0) + 1
    for m in matches:  # a deal with a rotation missing (cut by the kill -9 and not yet replayed) shows none
        if by_deal[m["match_id"].rsplit("/r", 1)[0]] < m["players"]:
            assert m["replay"] is None
            assert c.get(f"/matches/{m['match_id']}/replay").status_code == 403
