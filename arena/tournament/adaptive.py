"""``schedule: adaptive``: play the matches that decide the ranking, and stop when it is decided.

The run proceeds in *rounds*. Round ``r`` plays deal ``r``: the field is shuffled into groups
of ``players`` (``draw_round``), and every group holding a bot whose place is not yet decided
(arena/stats/ranking.py) plays the deal in every seat rotation, exactly as a round robin's
group does (same deal seeds, same content-named match ids, so a round robin and an adaptive
run of the same file share the matches they both play). Each undecided bot gets one sample
per round, its opponents drawn uniformly from the rest of the field.

What round ``r`` plays is a function of the stored results of rounds ``0 .. r-1`` alone,
read in schedule order, and of the tournament seed: the planner replays the rounds from the
start every time it plans, so an interrupted run resumes to the same matches and the same
results, however many workers played them in whatever order. A round is planned only once
the previous one is completely stored.

The run stops when every bot is decided (the whole ranking, or the top ``k`` in order) at
the stated confidence, or at the cap: ``max_matches`` or a full round robin of ``deals``
deals, whichever is smaller (the last round is cut to fit). ``adaptive.json`` in the results
folder records where the race stands for the leaderboards.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from arena.stats.ranking import BordaRace, deal_set_sample
from games.rng import DealRng, derive_seed

STATE_FILE = "adaptive.json"
STATE_FORMAT = "decktet-arena-adaptive"

# (bot names in seat order, places in seat order) of each match of one deal set
DealSet = list[tuple[Sequence[str], Sequence[int]]]
Outcome = Callable[[int, tuple[str, ...]], "DealSet | None"]


@dataclass
class AdaptivePlan:
    """Where one adaptive entry stands: the rounds to schedule and what they decided."""

    key: str                   # the entry's key (label or game id)
    game: str
    players: int
    confidence: float
    top: int | None
    cap: int
    race: BordaRace
    # per round: (members in name order, the bots it was drawn for), in draw order
    rounds: list[list[tuple[tuple[str, ...], tuple[str, ...]]]] = field(default_factory=list)
    status: str = "playing"    # decided | cap | playing (a round is not yet completely stored)
    matches: int = 0           # scheduled so far

    def to_json(self) -> dict[str, Any]:
        complete = sum(len(r) for r in self.rounds[:self.complete_rounds]) * self.players
        return {
            "key": self.key, "game": self.game, "players": self.players,
            "confidence": self.confidence, "top": self.top, "status": self.status,
            "rounds": len(self.rounds), "matches": self.matches, "matches_rated": complete,
            "cap": self.cap, "standings": self.race.summary(),
            "decided_pairs": [list(p) for p in self.race.decided_pairs()],
        }

    @property
    def complete_rounds(self) -> int:
        return len(self.rounds) - (1 if self.status == "playing" else 0)


def draw_round(seed: int, key: str, players: int, number: int, names: Sequence[str],
               active: Sequence[str]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The groups of round ``number``, each with the undecided bots it samples (its foci).

    The whole field is shuffled (from a generator seeded by the tournament seed, the entry,
    the player count and the round) and cut into groups of ``players``; bots left over form a
    last group filled up with bots drawn from the rest. So every bot's opponents are drawn
    uniformly from the rest of the field, and its deal set is an unbiased sample of its Borda
    score. Only groups with an undecided bot are played, and each undecided bot gets exactly
    one sample: all of them at once cost about as many matches as there are bots."""
    rng = DealRng(derive_seed(seed, "adaptive", key, players, number))
    order = list(names)
    rng.shuffle(order)
    wanted = set(active)
    out = []
    for start in range(0, len(order), players):
        chunk = order[start:start + players]
        foci = tuple(sorted(b for b in chunk if b in wanted))
        if len(chunk) < players:
            rest = [b for b in names if b not in chunk]
            rng.shuffle(rest)
            chunk = chunk + rest[:players - len(chunk)]
        if foci:
            out.append((tuple(sorted(chunk)), foci))
    return out


def plan(names: Sequence[str], players: int, *, confidence: float, top: int | None, seed: int,
         key: str, game: str, cap: int, outcome: Outcome) -> AdaptivePlan:
    """Replay the rounds from the start: ``outcome(round, members)`` gives a group's stored
    deal set (None if any of its matches is missing). Stops at the first round not yet
    completely stored, when every bot is decided, or at ``cap`` matches."""
    race = BordaRace(tuple(sorted(names)), confidence, top)
    p = AdaptivePlan(key=key, game=game, players=players, confidence=confidence, top=top, cap=cap, race=race)
    number = 0
    while True:
        active = race.active()
        if not active:
            p.status = "decided"
            return p
        groups = draw_round(seed, key, players, number, race.names, active)
        room = (cap - p.matches) // players
        if room <= 0:
            p.status = "cap"
            return p
        groups = groups[:room]
        p.rounds.append(groups)
        p.matches += len(groups) * players
        results = []
        for members, _ in groups:
            got = outcome(number, members)
            if got is None:
                p.status = "playing"
                return p
            results.append(got)
        for (_, foci), got in zip(groups, results):
            for focus in foci:
                race.add(focus, deal_set_sample(focus, got))
        number += 1


def write_state(folder: Path, plans: Sequence[AdaptivePlan]) -> None:
    """Record the plans for the leaderboards (atomically: a reader sees the old or the new)."""
    data = {"format": STATE_FORMAT, "version": 1, "entries": [p.to_json() for p in plans]}
    tmp = folder / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, folder / STATE_FILE)


MAX_STATE_BYTES = 8 << 20


def read_state(folder: Path) -> list[dict[str, Any]]:
    """The adaptive entries recorded in ``folder`` ([] without the file). The file is checked
    field by field; anything malformed is ignored rather than trusted."""
    path = folder / STATE_FILE
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_STATE_BYTES + 1)
        data = json.loads(raw.decode("utf-8")) if len(raw) <= MAX_STATE_BYTES else None
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict) or data.get("format") != STATE_FORMAT or not isinstance(data.get("entries"), list):
        return []
    return [e for e in data["entries"] if _valid_entry(e)]


def _valid_entry(e: Any) -> bool:
    if not isinstance(e, dict):
        return False
    types = {"key": str, "game": str, "players": int, "confidence": float, "status": str, "rounds": int,
             "matches": int, "cap": int, "standings": list, "decided_pairs": list}
    if any(not isinstance(e.get(k), t) or isinstance(e.get(k), bool) for k, t in types.items()):
        return False
    if e.get("top") is not None and not isinstance(e.get("top"), int):
        return False
    for s in e["standings"]:
        if not (isinstance(s, dict) and isinstance(s.get("bot"), str) and isinstance(s.get("ranks"), list)
                and len(s["ranks"]) == 2 and all(isinstance(x, int) for x in s["ranks"])
                and all(isinstance(s.get(k), (int, float)) and math.isfinite(s[k]) for k in ("score", "low", "high"))
                and isinstance(s.get("decided"), bool) and isinstance(s.get("samples"), int)):
            return False
    return all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in e["decided_pairs"])


def has_adaptive(tournament: Any) -> bool:
    return any(getattr(g, "schedule", "") == "adaptive" for g in tournament.games)


def stored_outcomes(store: Any) -> dict[str, tuple[tuple[str, ...], tuple[int, ...]]]:
    """match id -> (bots in seat order, places) of every intact stored match the harness played
    (an altered row or one with a sandbox fault is not a result)."""
    from arena.tournament.store import _result_row

    out = {}
    for match, seats, intact in store._checked_matches(False):
        if intact:
            row = _result_row(match, seats)
            if not row.sandbox_fault:
                out[row.match_id] = (row.bots, row.places)
    return out
