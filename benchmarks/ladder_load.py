"""P10: `arena serve` under readers while its workers play (docs/performance.md).

Starts `arena serve ladders/demo.yaml` (the bundled bots, 2 workers) on 127.0.0.1 in a
temporary data folder, waits until matches are being stored, then lets READERS threads
read the leaderboard, the recent matches and the home page REQUESTS times each, all at
once, and reports p50/p99 latency and the matches the workers stored meanwhile.

    python benchmarks/ladder_load.py [--readers 50] [--requests 40]
    python benchmarks/ladder_load.py --throughput   # the ladder's matches/s against arena run's

``--throughput``: `arena run` of tournaments/spring.yaml (the same four bundled bots, games and
seat counts as ladders/demo.yaml, 2 workers, no luck baselines) from launch to exit, then
`arena serve ladders/demo.yaml --workers 2` with no reader for the same wall time from
launch: matches stored per second by each, start-up included in both.
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
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = ("/api/leaderboard", "/api/matches?limit=20", "/")


def read_load(base: str, readers: int, requests: int) -> dict:
    """``readers`` threads each GET ``requests`` pages of ``base``: latencies and status counts."""
    import httpx

    latencies: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    start = threading.Barrier(readers)

    def reader(i: int) -> None:
        mine, codes = [], {}
        with httpx.Client(base_url=base, timeout=30) as client:
            start.wait()
            for k in range(requests):
                t0 = time.perf_counter()
                try:
                    code = client.get(PATHS[(i + k) % len(PATHS)]).status_code
                except httpx.HTTPError:
                    code = 0
                mine.append(time.perf_counter() - t0)
                codes[code] = codes.get(code, 0) + 1
        with lock:
            latencies.extend(mine)
            for c, n in codes.items():
                statuses[c] = statuses.get(c, 0) + n

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(readers)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    latencies.sort()
    return {"requests": len(latencies), "statuses": statuses, "wall_s": round(wall, 2),
            "p50_ms": round(1000 * statistics.median(latencies), 1),
            "p99_ms": round(1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], 1)}


def stored(data: Path) -> int:
    conn = sqlite3.connect(f"file:{data / 'results.sqlite'}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
    finally:
        conn.close()


def throughput() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        spring = (ROOT / "tournaments" / "spring.yaml").read_text()
        tour = Path(tmp) / "spring.yaml"
        tour.write_text(spring.replace("results: results/spring", f"results: {tmp}/run")
                        .replace("workers: auto", "workers: 2") + "luck_rollouts: 0\n")
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-m", "arena", "run", str(tour)], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run_s = time.monotonic() - t0
        run_matches = stored(Path(tmp) / "run")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        data = Path(tmp) / "ladder"
        t0 = time.monotonic()
        server = subprocess.Popen([sys.executable, "-m", "arena", "serve", str(ROOT / "ladders" / "demo.yaml"),
                                   "--port", str(port), "--data", str(data), "--workers", "2"], cwd=ROOT,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            time.sleep(max(0.0, run_s - (time.monotonic() - t0)))
            ladder_matches = stored(data)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(30)
    return {"seconds": round(run_s, 1), "arena_run_matches": run_matches, "ladder_matches": ladder_matches,
            "ladder_over_run": round(ladder_matches / run_matches, 3)}


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
        server = subprocess.Popen([sys.executable, "-m", "arena", "serve", str(ROOT / "ladders" / "demo.yaml"),
                                   "--port", str(port), "--data", str(data), "--workers", "2"], cwd=ROOT,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            while not (data / "results.sqlite").exists() or stored(data) < args.warmup_matches:
                if server.poll() is not None:
                    raise SystemExit("the server stopped")
                time.sleep(0.5)
            before, t0 = stored(data), time.monotonic()
            result = read_load(f"http://127.0.0.1:{port}", args.readers, args.requests)
            played = stored(data) - before
            result.update(readers=args.readers, matches_stored_meanwhile=played,
                          matches_per_s=round(played / (time.monotonic() - t0), 2), stored_before=before,
                          cpus=os.cpu_count())
            print(json.dumps(result, indent=2))
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(30)


if __name__ == "__main__":
    main()
