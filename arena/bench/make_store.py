"""A large synthetic results store, for timing ratings and leaderboards (P7).

    python -m arena.bench.make_store results/big [--matches 100000] [--bots 50] [--seed 1]

Mixed games (tightwad, divers-weights, palace), 2-10 players per match, bots with a
hidden strength and noisy performances (rounded, so some places tie), 100 deals per game
and player count, each shared by many groups as in a real schedule. The records are
shaped like real ones (schema 1) but carry no decisions. Written without fsync: a benchmark fixture, not a tournament.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import Any

from arena.tournament.store import ResultStore

GAMES = ("tightwad", "divers-weights", "palace")


def record(index: int, game: str, bots: list[str], places: list[int], deal: int) -> dict[str, Any]:
    players = len(bots)
    return {
        # ids as a schedule gives them: <entry>/p<players>/d<deal>/r<rotation>/<hex>
        "schema": 1,
        "match_id": f"{game}/p{players}/d{deal:02d}/r{index % 20}/{index:016x}",
        "index": index,
        "tournament": "big",
        "game": game,
        "rules_version": "1",
        "players": players,
        "options": {},
        "deal": deal,
        "rotation": 0,
        "group": 0,
        "deal_seed": 1000 + deal,
        "match_seed": index,
        "bots": [{"seat": s, "name": b, "sha256": "0" * 64} for s, b in enumerate(bots)],
        "sandbox": {"level": "none"},
        "decisions": [],
        "result": {"places": places, "scores": [-p for p in places], "capped": False},
        "game_result": {"places": places, "scores": [-p for p in places], "capped": False},
        "faults": [None] * players,
        "duration_s": 0.1,
    }


def make_store(folder: str | Path, matches: int = 100_000, bots: int = 50, seed: int = 1) -> Path:
    rng = random.Random(seed)
    names = [f"bot{i:02d}" for i in range(bots)]
    strength = {b: rng.gauss(0, 2) for b in names}
    store = ResultStore(folder)
    store.init_tournament(
        "big", {"name": "big", "ratings": {}}, [{"name": b, "path": None, "sha256": "0" * 64} for b in names]
    )
    store.conn.execute("PRAGMA synchronous = OFF")  # one transaction per match, no fsync
    for i in range(matches):
        game = GAMES[i % len(GAMES)]
        seats = rng.sample(names, rng.randint(2, min(10, bots)))
        perf = [round(strength[b] + rng.gauss(0, 2)) for b in seats]
        places = [sum(q > p for q in perf) for p in perf]
        # 100 deals per game and player count, shared by many groups, as in a real schedule
        store.record_match(record(i, game, seats, places, (i // 20) % 100))
    store.close()
    return Path(folder)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--matches", type=int, default=100_000)
    ap.add_argument("--bots", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    t = time.perf_counter()
    make_store(a.folder, a.matches, a.bots, a.seed)
    print(f"{a.matches} matches in {a.folder} ({time.perf_counter() - t:.1f} s)")


if __name__ == "__main__":
    main()
