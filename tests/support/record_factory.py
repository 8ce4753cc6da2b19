"""Synthetic match records shaped like RECORD.md, for the store/ratings/leaderboard tests."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any


def sha(name: str, version: int = 1) -> str:
    """A stable fake content hash of a bot file."""
    return hashlib.sha256(f"{name}@{version}".encode()).hexdigest()


def make_record(
    index: int,
    bots: Sequence[str],
    places: Sequence[int],
    *,
    game: str = "tightwad",
    scores: Sequence[Any] | None = None,
    faults: Sequence[dict[str, Any] | None] | None = None,
    capped: bool = False,
    match_id: str | None = None,
    hashes: dict[str, str] | None = None,
    n_decisions: int = 4,
) -> dict[str, Any]:
    """One finished match record; ``faults`` per seat, e.g. {"kind": "timeout", "detail": ...}."""
    players = len(bots)
    assert len(places) == players
    hashes = hashes or {}
    scores = list(scores) if scores is not None else [-p for p in places]
    faults = list(faults) if faults is not None else [None] * players
    deal, rotation = divmod(index, players)
    return {
        "schema": 1,
        "match_id": match_id or f"{game}/p{players}/g0001/d{deal:02d}/r{rotation}/i{index}",
        "index": index,
        "tournament": "test",
        "game": game,
        "rules_version": "1",
        "players": players,
        "options": {"hands": players},
        "deal": deal,
        "rotation": rotation,
        "group": 1,
        "deal_seed": 2**64 - 1 - deal,
        "match_seed": 1000 + index,
        "bots": [
            {"seat": s, "name": b, "path": f"bots/{b}.py", "sha256": hashes.get(b, sha(b))} for s, b in enumerate(bots)
        ],
        "sandbox": {"level": "none", "details": {}},
        "time_control": {"startup_s": 10, "move_s": 1.0, "bank_s": None, "grace_s": 0.05},
        "decisions": [
            {"n": n, "seat": n % players, "action": 0, "text": f"play card {n}", "ms": 1.5, "status": "ok"}
            for n in range(n_decisions)
        ],
        "result": {"places": list(places), "scores": scores, "capped": capped},
        "game_result": {"places": list(places), "scores": scores, "capped": capped},
        "faults": faults,
        "started_at": "2026-11-29T18:40:00Z",
        "duration_s": 0.5,
        "harness_version": "0.1.0",
    }
