"""``schedule: adaptive``: play the matches that decide the ranking, and stop when it is decided.

The run proceeds in *rounds*. Round ``r`` plays deal ``r``: ``draw_round`` forms groups of
``players`` bots out of the *useful pairs* (arena/stats/ranking.py: pairs whose order is
still open and matters), and every group plays the deal in every seat rotation, exactly as a
round robin's group does (same deal seeds, same content-named match ids, so a round robin
and an adaptive run of the same file share the matches they both play). Each deal set gives
every pair of its group a paired sample on the same deal and seats, so a pair is decided by
its own duplicate test, and the whole finishing order counts. Decided pairs (and bots whose
place is settled) get no more matches.

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

import copy
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.stats.ranking import PairRace
from games.rng import DealRng, derive_seed

STATE_FILE = "adaptive.json"
STATE_FORMAT = "decktet-arena-adaptive"

# (bot names in seat order, places in seat order) of each match of one deal set
DealSet = list[tuple[Sequence[str], Sequence[int]]]
Outcome = Callable[[int, tuple[str, ...]], "DealSet | None"]


@dataclass
class AdaptivePlan:
    """Where one adaptive entry stands: the rounds to schedule and what they decided."""

    key: str  # the entry's key (label or game id)
    game: str
    players: int
    confidence: float
    top: int | None
    cap: int
    margin: float
    race: PairRace
    # per round: (members in name order, the undecided bots among them), in draw order
    rounds: list[list[tuple[tuple[str, ...], tuple[str, ...]]]] = field(default_factory=list)
    status: str = "playing"  # decided | cap | playing (a round is not yet completely stored)
    matches: int = 0  # scheduled so far

    def to_json(self) -> dict[str, Any]:
        complete = sum(len(r) for r in self.rounds[: self.complete_rounds]) * self.players
        return {
            "key": self.key,
            "game": self.game,
            "players": self.players,
            "confidence": self.confidence,
            "top": self.top,
            "margin": self.margin,
            "status": self.status,
            "rounds": len(self.rounds),
            "matches": self.matches,
            "matches_rated": complete,
            "cap": self.cap,
            "standings": self.race.summary(),
            "decided_pairs": [list(p) for p in self.race.decided_pairs()],
        }

    @property
    def complete_rounds(self) -> int:
        return len(self.rounds) - (1 if self.status == "playing" else 0)


def draw_round(
    seed: int, key: str, players: int, number: int, race: PairRace
) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The groups of round ``number``, each with the undecided bots among its members.

    From a generator seeded by the tournament seed, the entry, the player count and the
    round: the bots with a useful pair are shuffled; each in turn, if not yet placed this
    round, opens a group and draws its partners at random among the unplaced bots that form a
    useful pair with *every* member so far (else with any member). A group short of
    ``players`` takes useful partners already placed this round (they play the deal twice, as
    in a round robin), then bots drawn from the rest of the field. So every bot with a useful
    pair plays each round, and only groups holding a useful pair are played."""
    rng = DealRng(derive_seed(seed, "adaptive", key, players, number))
    useful = race.useful()
    if not useful:
        return []
    links = {a: set(bs) for a, bs in useful.items()}
    order = list(useful)
    rng.shuffle(order)
    free = set(order)
    open_ = set(race.active())
    out = []
    for first in order:
        if first not in free:
            continue
        group = [first]
        free.discard(first)
        while len(group) < players:
            cands = [b for b in useful[first] if b in free and all(b in links[g] for g in group)]
            if not cands:
                cands = sorted({b for g in group for b in useful.get(g, ()) if b in free}, key=race.names.index)
            if not cands:  # its useful partners play elsewhere this round: they play it too
                cands = sorted({b for g in group for b in useful.get(g, ()) if b not in group}, key=race.names.index)
            if not cands:
                break
            pick = cands[rng.randbelow(len(cands))]
            group.append(pick)
            free.discard(pick)
        if len(group) < players:
            rest = [b for b in race.names if b not in group]
            spare = [b for b in rest if b not in links] or rest  # bots with nothing open first
            rng.shuffle(spare)
            group += spare[: players - len(group)]
        members = tuple(sorted(group))
        out.append((members, tuple(b for b in members if b in open_)))
    return out


def plan(
    names: Sequence[str],
    players: int,
    *,
    confidence: float,
    top: int | None,
    margin: float = 0.05,
    seed: int,
    key: str,
    game: str,
    cap: int,
    outcome: Outcome,
) -> AdaptivePlan:
    """Replay the rounds from the start: ``outcome(round, members)`` gives a group's stored
    deal set (None if any of its matches is missing). Stops at the first round not yet
    completely stored, when every bot is decided, or at ``cap`` matches."""
    race = PairRace(tuple(sorted(names)), confidence, top, horizon=max(1, cap // players), margin=margin)
    p = AdaptivePlan(
        key=key, game=game, players=players, confidence=confidence, top=top, cap=cap, margin=margin, race=race
    )
    memo_key = (key, game, players, confidence, top, margin, seed, cap, race.names)
    done: list[list[DealSet]] = []  # each complete round's results, in draw order
    number = _resume(p, memo_key, outcome, done)
    race = p.race
    while True:
        groups = draw_round(seed, key, players, number, race) if race.active() else []
        if not groups:
            p.status = "decided" if race.done() else "cap"
            break
        room = (cap - p.matches) // players
        if room <= 0:
            p.status = "cap"
            break
        groups = groups[:room]
        p.rounds.append(groups)
        p.matches += len(groups) * players
        results = [outcome(number, members) for members, _ in groups]
        if any(got is None for got in results):
            p.status = "playing"
            break
        for got in results:
            race.add(got)  # type: ignore[arg-type]  (none is None here)
        race.refresh()
        done.append(results)  # type: ignore[arg-type]
        number += 1
    _remember(memo_key, p, done)
    return p


# The planner replays every round at every call (once per round of a run), and each round
# refits the ratings: a run's planning would grow with the square of its rounds. So the last
# plan of each entry is kept, and a later call starts from it once every one of its rounds
# is checked to have the same stored results (the rounds drawn follow from those alone).
_MEMO: dict[tuple[Any, ...], tuple[list[Any], list[list[DealSet]], PairRace]] = {}
_MEMO_SIZE = 16


def _resume(p: AdaptivePlan, memo_key: tuple[Any, ...], outcome: Outcome, done: list[list[DealSet]]) -> int:
    """Bring ``p`` to the end of the remembered complete rounds if their results are still the
    stored ones; the number of the next round to plan (0: from the start)."""
    cached = _MEMO.get(memo_key)
    if cached is None:
        return 0
    rounds, results, race = cached
    for number, (groups, got) in enumerate(zip(rounds, results)):
        if [outcome(number, members) for members, _ in groups] != got:
            return 0
    p.race = copy.deepcopy(race)
    p.rounds = list(rounds)
    p.matches = sum(len(g) for g in rounds) * p.players
    done.extend(results)
    return len(rounds)


def _remember(memo_key: tuple[Any, ...], p: AdaptivePlan, done: list[list[DealSet]]) -> None:
    if p.status == "playing":  # the race holds the complete rounds only
        rounds = p.rounds[:-1]
    else:
        rounds = p.rounds
    if len(rounds) != len(done):  # (cannot happen: every complete round has its results)
        return
    _MEMO.pop(memo_key, None)
    while len(_MEMO) >= _MEMO_SIZE:
        _MEMO.pop(next(iter(_MEMO)))
    _MEMO[memo_key] = (list(rounds), list(done), copy.deepcopy(p.race))


def write_state(folder: Path, plans: Sequence[AdaptivePlan]) -> None:
    """Record the plans for the leaderboards (atomically: a reader sees the old or the new)."""
    data = {"format": STATE_FORMAT, "version": 1, "entries": [p.to_json() for p in plans]}
    tmp = folder / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, folder / STATE_FILE)


def clear_state(folder: Path) -> None:
    """No adaptive entry in the tournament (any more): the leaderboards must not show an earlier
    file's race from a stale ``adaptive.json``."""
    (folder / STATE_FILE).unlink(missing_ok=True)


def still_playing(plans: Sequence[AdaptivePlan]) -> list[str]:
    """The keys of the entries whose race is not over: a round is planned and not completely
    stored, or the next round is not planned yet (the run stopped between rounds)."""
    return [f"{p.key} ({p.players} players)" for p in plans if p.status == "playing"]


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
    types = {
        "key": str,
        "game": str,
        "players": int,
        "confidence": float,
        "status": str,
        "rounds": int,
        "matches": int,
        "cap": int,
        "standings": list,
        "decided_pairs": list,
    }
    if any(not isinstance(e.get(k), t) or isinstance(e.get(k), bool) for k, t in types.items()):
        return False
    if e.get("top") is not None and (not isinstance(e.get("top"), int) or isinstance(e.get("top"), bool)):
        return False
    margin = e.get("margin", 0.0)  # absent in files written before the margin existed
    if not isinstance(margin, (int, float)) or isinstance(margin, bool) or not 0 <= margin < 1:
        return False
    for s in e["standings"]:
        if not isinstance(s, dict):  # first: a number or a string is no standing (``in`` would raise)
            return False
        if "rating" in s and (
            not isinstance(s["rating"], (int, float)) or isinstance(s["rating"], bool) or not math.isfinite(s["rating"])
        ):
            return False
        if not (
            isinstance(s.get("bot"), str)
            and isinstance(s.get("ranks"), list)
            and len(s["ranks"]) == 2
            and all(isinstance(x, int) for x in s["ranks"])
            and all(isinstance(s.get(k), (int, float)) and math.isfinite(s[k]) for k in ("score", "low", "high"))
            and isinstance(s.get("decided"), bool)
            and isinstance(s.get("samples"), int)
        ):
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
