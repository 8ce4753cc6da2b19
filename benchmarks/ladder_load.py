"""P10: `arena serve` under readers while its workers play (docs/performance.md).

Starts `arena serve ladders/demo.yaml` (the bundled bots, 2 workers) on 127.0.0.1 in a
temporary data folder, waits until matches are being stored, then lets READERS concurrent
connections read the leaderboard, the recent matches and the home page REQUESTS times
each, all at once, and reports p50/p99 latency, the load average and the matches the
workers stored meanwhile.

    python benchmarks/ladder_load.py [--readers 50] [--requests 40]
    python benchmarks/ladder_load.py --throughput   # the ladder's matches/s against arena run's

``--throughput``: see ``throughput``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = ("/api/leaderboard", "/api/matches?limit=20", "/")


def read_load(base: str, readers: int, requests: int) -> dict:
    """``readers`` concurrent keep-alive connections to ``base`` each GET ``requests`` pages in
    turn, all at once: latencies and status counts. The client is one asyncio thread writing
    raw HTTP/1.1, so that on a busy machine it measures the server, not its own threads."""
    import asyncio
    from urllib.parse import urlsplit

    url = urlsplit(base)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    latencies: list[float] = []
    statuses: dict[int, int] = {}

    async def reader(i: int, start: asyncio.Event) -> None:
        r, w = await asyncio.open_connection(host, port)
        await start.wait()
        try:
            for k in range(requests):
                path = PATHS[(i + k) % len(PATHS)]
                t0 = time.perf_counter()
                try:
                    w.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: */*\r\n\r\n".encode())
                    await w.drain()
                    head = await r.readuntil(b"\r\n\r\n")
                    code = int(head.split(b" ", 2)[1])
                    length = next(
                        (
                            int(line.split(b":", 1)[1])
                            for line in head.split(b"\r\n")
                            if line.lower().startswith(b"content-length:")
                        ),
                        0,
                    )
                    await r.readexactly(length)
                except (OSError, asyncio.IncompleteReadError, ValueError):
                    code = 0
                latencies.append(time.perf_counter() - t0)
                statuses[code] = statuses.get(code, 0) + 1
                if code == 0:
                    return
        finally:
            w.close()

    async def run() -> float:
        start = asyncio.Event()
        tasks = [asyncio.create_task(reader(i, start)) for i in range(readers)]
        await asyncio.sleep(0.2)  # every connection open before the clock starts
        t0 = time.perf_counter()
        start.set()
        await asyncio.gather(*tasks)
        return time.perf_counter() - t0

    wall = asyncio.run(run())
    latencies.sort()
    return {
        "requests": len(latencies),
        "statuses": statuses,
        "wall_s": round(wall, 2),
        "p50_ms": round(1000 * statistics.median(latencies), 1),
        "p99_ms": round(1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], 1),
        "load_average": os.getloadavg()[0],
    }


def stored(data: Path) -> int:
    conn = sqlite3.connect(f"file:{data / 'results.sqlite'}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
    except sqlite3.Error:  # created, its tables not yet
        return 0
    finally:
        conn.close()


def busy(data: Path) -> tuple[int, float, dict[tuple[str, int], tuple[int, float]]]:
    """(matches stored, seconds of match play they took, {(game, players): (matches, seconds)})."""
    conn = sqlite3.connect(f"file:{data / 'results.sqlite'}?mode=ro", uri=True)
    try:
        n, s = conn.execute("SELECT COUNT(*), COALESCE(SUM(duration_s), 0) FROM matches").fetchone()
        per = {
            (g, p): (k, d)
            for g, p, k, d in conn.execute(
                "SELECT game, players, COUNT(*), SUM(duration_s) FROM matches GROUP BY game, players"
            )
        }
        return n, s, per
    finally:
        conn.close()


def _ladder_for(seconds: float, tmp: Path, label: str, nice: int) -> dict:
    """`arena serve ladders/demo.yaml --workers 2` (``workers_nice: nice``) for ``seconds`` from launch."""
    text = (ROOT / "ladders" / "demo.yaml").read_text().replace("root: ..", f"root: {ROOT}")
    ladder = tmp / f"{label}.yaml"
    ladder.write_text(text.replace("ladder:\n", f"ladder:\n  workers_nice: {nice}\n"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = tmp / label
    t0 = time.monotonic()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena",
            "serve",
            str(ladder),
            "--port",
            str(port),
            "--data",
            str(data),
            "--workers",
            "2",
        ],
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        time.sleep(max(0.0, seconds - (time.monotonic() - t0)))
        n, play_s, per = busy(data) if (data / "results.sqlite").exists() else (0, 0.0, {})
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)
    return {"matches": n, "match_play_s": round(play_s, 1), "per": per}


def throughput() -> dict:
    """`arena run tournaments/spring.yaml` (2 workers, no luck baselines) from launch to exit,
    then the ladder on the same four bots for the same wall time from launch, with its default
    ``workers_nice`` (5) and with 0: matches stored, and the seconds of match play they hold
    (the workers' busy time, which does not depend on the game mix)."""
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        spring = (ROOT / "tournaments" / "spring.yaml").read_text()
        tour = tmp / "spring.yaml"
        tour.write_text(
            spring.replace("results: results/spring", f"results: {tmp}/run")
            .replace("root: ..", f"root: {ROOT}")
            .replace("workers: auto", "workers: 2")
            + "luck_rollouts: 0\n"
        )
        load = [os.getloadavg()[0]]
        t0 = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "arena", "run", str(tour)],
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        run_s = time.monotonic() - t0
        run_n, run_play, run_per = busy(tmp / "run")
        load.append(os.getloadavg()[0])
        nice5 = _ladder_for(run_s, tmp, "ladder5", 5)
        load.append(os.getloadavg()[0])
        nice0 = _ladder_for(run_s, tmp, "ladder0", 0)
        load.append(os.getloadavg()[0])
    out = {
        "seconds": round(run_s, 1),
        "arena_run": {"matches": run_n, "match_play_s": round(run_play, 1)},
        "ladder_nice5": nice5,
        "ladder_nice0": nice0,
        "load_average": load,
    }
    mean = {c: d / k for c, (k, d) in run_per.items()}  # arena run's mean match time per game and seat count
    for k in ("ladder_nice5", "ladder_nice0"):
        per = out[k].pop("per")
        out[k]["matches_over_run"] = round(out[k]["matches"] / max(1, run_n), 3)
        out[k]["play_over_run"] = round(out[k]["match_play_s"] / max(1e-9, run_play), 3)
        # the ladder's matches priced at arena run's time per match of their kind: the same
        # work whatever the mix of games, and whatever the ladder's matches spent starting bots
        out[k]["work_over_run"] = round(sum(n * mean.get(c, 0.0) for c, (n, _) in per.items()) / max(1e-9, run_play), 3)
        out[k]["mix"] = {f"{g}/{p}": n for (g, p), (n, _) in sorted(per.items())}
    out["arena_run"]["mix"] = {f"{g}/{p}": n for (g, p), (n, _) in sorted(run_per.items())}
    return out


def main() -> None:
    if "--throughput" in sys.argv:
        print(json.dumps(throughput(), indent=2))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readers", type=int, default=50)
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument("--warmup-matches", type=int, default=50)
    args = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "arena",
                "serve",
                str(ROOT / "ladders" / "demo.yaml"),
                "--port",
                str(port),
                "--data",
                str(data),
                "--workers",
                "2",
            ],
            cwd=ROOT,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            while not (data / "results.sqlite").exists() or stored(data) < args.warmup_matches:
                if server.poll() is not None:
                    raise SystemExit("the server stopped")
                time.sleep(0.5)
            before, t0 = stored(data), time.monotonic()
            result = read_load(f"http://127.0.0.1:{port}", args.readers, args.requests)
            played = stored(data) - before
            result.update(
                readers=args.readers,
                matches_stored_meanwhile=played,
                matches_per_s=round(played / (time.monotonic() - t0), 2),
                stored_before=before,
                cpus=os.cpu_count(),
            )
            print(json.dumps(result, indent=2))
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(30)


if __name__ == "__main__":
    main()
