"""Start-up time per sandbox level and round-trip latency: raw pipe vs BotProcess.

Run: python3 benchmarks/bench_process.py [rounds]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.match.detect import detect_sandbox  # noqa: E402
from arena.match.process import BotProcess, bot_command  # noqa: E402
from arena.match.sandbox import Limits, SandboxUnavailable  # noqa: E402

ECHO = Path(__file__).resolve().parent.parent / "tests" / "hostile" / "bots" / "echo.py"


def startup(level: str, n: int = 15) -> tuple[float, float]:
    """Median ms to the sandbox-ready line, and to the first answer."""
    info = detect_sandbox(level)
    ready, first = [], []
    for _ in range(n):
        t0 = time.monotonic()
        bot = BotProcess.start(bot_command(ECHO), bot_file=ECHO, name="b", sandbox=info, limits=Limits())
        ready.append(time.monotonic() - t0)
        bot.send_line(b"x", time.monotonic() + 10)
        bot.read_line(time.monotonic() + 10)
        first.append(time.monotonic() - t0)
        bot.close()
    return statistics.median(ready) * 1000, statistics.median(first) * 1000


def raw_pingpong(rounds: int) -> list[float]:
    p = subprocess.Popen(
        [sys.executable, "-s", "-S", str(ECHO)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
    )
    out = []
    for i in range(rounds + 50):
        t = time.perf_counter()
        p.stdin.write(b"ping\n")
        p.stdout.readline()
        if i >= 50:
            out.append(time.perf_counter() - t)
    p.stdin.close()
    p.wait()
    return out


def bot_pingpong(level: str, rounds: int) -> list[float]:
    bot = BotProcess.start(bot_command(ECHO), bot_file=ECHO, name="b", sandbox=detect_sandbox(level), limits=Limits())
    out = []
    for i in range(rounds + 50):
        t = time.perf_counter()
        bot.send_line(b"ping", time.monotonic() + 5)
        bot.read_line(time.monotonic() + 5)
        if i >= 50:
            out.append(time.perf_counter() - t)
    bot.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rounds", type=int, nargs="?", default=3000, help="round trips per measure (default 3000)")
    rounds = ap.parse_args().rounds
    print("level        ready_ms  first_answer_ms")
    for level in ("full", "namespaces", "landlock", "rlimits", "none"):
        try:
            r, f = startup(level)
        except SandboxUnavailable as exc:
            print(f"{level:12s} unavailable: {exc}")
            continue
        print(f"{level:12s} {r:8.1f}  {f:8.1f}")
    strongest = detect_sandbox("auto").level
    raw = raw_pingpong(rounds)
    ours = bot_pingpong(strongest, rounds)
    raw2 = raw_pingpong(rounds)
    us = lambda xs: statistics.median(xs) * 1e6  # noqa: E731
    p90 = lambda xs: statistics.quantiles(xs, n=10)[-1] * 1e6  # noqa: E731
    print(f"round trip, {rounds} rounds, median (p90) us:")
    print(f"  raw pipe            {us(raw):7.1f} ({p90(raw):.1f})   again: {us(raw2):.1f} ({p90(raw2):.1f})")
    print(f"  BotProcess [{strongest}] {us(ours):7.1f} ({p90(ours):.1f})")
    print(f"  ratio (median)      {us(ours) / statistics.median([us(raw), us(raw2)]):.2f}x")


if __name__ == "__main__":
    main()
