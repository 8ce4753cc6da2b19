"""The match record: what one finished match leaves, typed.

The stored and exported form is JSON (docs/records.md, schema ``RECORD_SCHEMA``); this
module is its one reader and writer. The referee builds a ``MatchRecord`` and stores
``to_json()``; the store, replay and report read a stored one with ``MatchRecord.from_json``,
which checks every part they rely on and raises ``RecordError`` (one line) otherwise.
Keys a reader does not know are kept (``extra``) and written back after the known ones,
so a record round-trips unchanged.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

RECORD_SCHEMA = 1
RECORD_SCHEMAS = (1,)  # record schema versions this arena reads
MAX_PLAYERS = 64
MAX_RECORD_BYTES = 512 * 1048576  # a file (or an export's line) larger than this is no match record

RecordJson = dict[str, Any]  # a record as stored and exported (JSON object)
FaultJson = dict[str, Any]  # one seat's fault: kind, detail, decision[, stderr_tail, ...]


class RecordError(ValueError):
    """A match record that is malformed or was altered; ``str`` is one line saying what."""


class DecisionStatus(str, enum.Enum):
    """How a decision's action was chosen."""

    OK = "ok"  # the seat's bot answered
    FALLBACK = "fallback"  # the seat had faulted: a random legal action from the match seed
    REPLAYED = "replayed"  # re-applied from a stored record (arena replay --from)


@dataclass(frozen=True)
class Decision:
    n: int  # counted over every seat from 0
    seat: int
    action: int  # index into that moment's legal actions
    text: str
    ms: float | None  # the bot's thinking time; None for a fallback or replayed move
    status: DecisionStatus

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "seat": self.seat,
            "action": self.action,
            "text": self.text,
            "ms": self.ms,
            "status": self.status.value,
        }

    @classmethod
    def from_json(cls, d: Any, i: int) -> Decision:
        if not (isinstance(d, dict) and _is_int(d.get("seat")) and _is_int(d.get("action"))):
            raise RecordError(f"decision {i} has no seat and action")
        try:
            status = DecisionStatus(d.get("status", "ok"))
        except ValueError:
            raise RecordError(f"decision {i} has an unknown status {d.get('status')!r}") from None
        n = d.get("n", i)
        if not _is_int(n):
            raise RecordError(f"decision {i} has a number {n!r} that is not an int")
        return cls(n=n, seat=d["seat"], action=d["action"], text=str(d.get("text", "")), ms=d.get("ms"), status=status)


@dataclass(frozen=True)
class Outcome:
    """Places (0 = first, equal places tie), scores, and whether the decision cap stopped it."""

    places: tuple[int, ...]
    scores: tuple[Any, ...]
    capped: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"places": list(self.places), "scores": list(self.scores), "capped": self.capped}

    @classmethod
    def from_json(cls, d: Any, players: int, what: str) -> Outcome:
        if not isinstance(d, dict):
            raise RecordError(f"{what!r} is not a mapping")
        places, scores = d.get("places"), d.get("scores")
        if not isinstance(places, list) or not isinstance(scores, list):
            raise RecordError(f"{what!r} has no place and score per seat")
        for name, seq in (("places", places), ("scores", scores)):
            if len(seq) != players:
                raise RecordError(f"{len(seq)} {name} for {players} players")
        if any(not _is_int(p) or p < 0 for p in places):
            raise RecordError(f"places must be ints >= 0, got {places}")
        return cls(tuple(places), tuple(scores), bool(d.get("capped", False)))


@dataclass(frozen=True)
class SeatBot:
    """Who sat in one seat: the bot's name and, in ``about``, its ``path``, the ``sha256`` of the
    file that played, and anything else the agent said of itself (``builtin``), in its order."""

    seat: int
    name: str
    about: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> str | None:
        return _opt_str(self.about.get("path"))

    @property
    def sha256(self) -> str | None:
        return _opt_str(self.about.get("sha256"))

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "name": self.name, **self.about}

    @classmethod
    def from_json(cls, b: Mapping[str, Any]) -> SeatBot:
        return cls(
            seat=int(b["seat"]), name=str(b["name"]), about={k: v for k, v in b.items() if k not in ("seat", "name")}
        )


_KNOWN = (
    "schema",
    "match_id",
    "index",
    "tournament",
    "game",
    "rules_version",
    "players",
    "options",
    "deal",
    "rotation",
    "group",
    "deal_seed",
    "match_seed",
    "bots",
    "sandbox",
    "time_control",
    "decisions",
    "result",
    "seats",
    "game_result",
    "faults",
    "started_at",
    "duration_s",
    "harness_version",
)


@dataclass(frozen=True)
class MatchRecord:
    """One finished match (docs/records.md). Seat-indexed tuples are in seat order."""

    match_id: str
    index: int
    game: str
    players: int
    options: dict[str, Any]
    deal_seed: int
    match_seed: int
    bots: tuple[SeatBot, ...]
    decisions: tuple[Decision, ...]
    result: Outcome  # after the fault policy (faulted seats last)
    game_result: Outcome  # what the game alone said
    faults: tuple[FaultJson | None, ...]
    schema: int = RECORD_SCHEMA
    tournament: str | None = None
    rules_version: str | None = None
    deal: int | None = None
    rotation: int | None = None
    group: int | None = None
    sandbox: dict[str, Any] = field(default_factory=dict)
    time_control: dict[str, Any] = field(default_factory=dict)
    seats: tuple[dict[str, Any], ...] | None = None  # the per-seat summary as stored; None: the record has none
    started_at: str | None = None
    duration_s: float | None = None
    harness_version: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys this arena does not know, kept as they were
    absent: frozenset[str] = frozenset()  # optional keys the stored record did not have (not written back)

    # ---- derived views ----------------------------------------------------------------

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.bots)

    @property
    def sandbox_level(self) -> str | None:
        level = self.sandbox.get("level")
        return None if level is None else str(level)

    def fault_kind(self, seat: int) -> str | None:
        fault = self.faults[seat]
        return None if fault is None else str(fault.get("kind"))

    def fault_detail(self, seat: int) -> str | None:
        fault = self.faults[seat]
        detail = None if fault is None else fault.get("detail")
        return None if detail is None else str(detail)

    def seat_rows(self) -> list[dict[str, Any]]:
        if self.seats is not None:
            return [dict(s) for s in self.seats]
        return [
            {
                "seat": s,
                "bot": b.name,
                "place": self.result.places[s],
                "score": self.result.scores[s],
                "fault": self.faults[s],
            }
            for s, b in enumerate(self.bots)
        ]

    # ---- JSON ---------------------------------------------------------------------------

    def to_json(self) -> RecordJson:
        out: RecordJson = {
            "schema": self.schema,
            "match_id": self.match_id,
            "index": self.index,
            "tournament": self.tournament,
            "game": self.game,
            "rules_version": self.rules_version,
            "players": self.players,
            "options": self.options,
            "deal": self.deal,
            "rotation": self.rotation,
            "group": self.group,
            "deal_seed": self.deal_seed,
            "match_seed": self.match_seed,
            "bots": [b.to_json() for b in self.bots],
            "sandbox": self.sandbox,
            "time_control": self.time_control,
            "decisions": [d.to_json() for d in self.decisions],
            "result": self.result.to_json(),
            "seats": self.seat_rows(),
            "game_result": self.game_result.to_json(),
            "faults": list(self.faults),
            "started_at": self.started_at,
            "duration_s": self.duration_s,
            "harness_version": self.harness_version,
        }
        for key in self.absent:  # a record made without them (older tools, fixtures) stays without them
            out.pop(key, None)
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, record: Any) -> MatchRecord:
        """Check and read one stored record; ``RecordError`` (one line) names what is wrong."""
        if not isinstance(record, dict):
            raise RecordError("not a mapping")
        schema = record.get("schema", 1)
        if schema not in RECORD_SCHEMAS:
            raise RecordError(
                f"match record schema {schema!r} is not supported (this arena reads {list(RECORD_SCHEMAS)})"
            )
        for key, kind in _REQUIRED.items():
            if key not in record:
                raise RecordError(f"no {key!r}")
            if not isinstance(record[key], kind) or isinstance(record[key], bool):
                raise RecordError(f"{key!r} is not a {getattr(kind, '__name__', kind)}")
        match_id, players = record["match_id"], record["players"]
        if not match_id:
            raise RecordError("match_id must be a non-empty string, got ''")
        if not 1 <= players <= MAX_PLAYERS:
            raise RecordError(f"'players' is {players!r}")
        bots = record["bots"]
        if not all(isinstance(b, dict) and isinstance(b.get("name"), str) and _is_int(b.get("seat")) for b in bots):
            raise RecordError("'bots' does not name one bot per seat")
        bots = sorted(bots, key=lambda b: b["seat"])
        if [b["seat"] for b in bots] != list(range(players)):
            raise RecordError(f"bots must name seats 0..{players - 1}")
        faults = record["faults"]
        if len(faults) != players:
            raise RecordError(f"{len(faults)} faults for {players} players")
        if not all(f is None or isinstance(f, dict) for f in faults):
            raise RecordError("'faults' does not hold one entry per seat")
        seats = record.get("seats")
        return cls(
            match_id=match_id,
            index=record["index"],
            game=record["game"],
            players=players,
            options=record["options"],
            deal_seed=record["deal_seed"],
            match_seed=record["match_seed"],
            bots=tuple(SeatBot.from_json(b) for b in bots),
            decisions=tuple(Decision.from_json(d, i) for i, d in enumerate(record["decisions"])),
            result=Outcome.from_json(record["result"], players, "result"),
            game_result=Outcome.from_json(record["game_result"], players, "game_result"),
            faults=tuple(faults),
            schema=schema,
            tournament=_opt_str(record.get("tournament")),
            rules_version=_opt_str(record.get("rules_version")),
            deal=_opt_int(record.get("deal")),
            rotation=_opt_int(record.get("rotation")),
            group=_opt_int(record.get("group")),
            sandbox=_mapping(record.get("sandbox")),
            time_control=_mapping(record.get("time_control")),
            seats=tuple(seats) if isinstance(seats, list) else None,
            started_at=_opt_str(record.get("started_at")),
            duration_s=None if record.get("duration_s") is None else float(record["duration_s"]),
            harness_version=_opt_str(record.get("harness_version")),
            extra={k: v for k, v in record.items() if k not in _KNOWN},
            absent=frozenset(k for k in _KNOWN if k not in record),
        )


# key -> the type it must have; a record that lacks one was cut or altered
_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "match_id": str,
    "index": int,
    "game": str,
    "players": int,
    "options": dict,
    "deal_seed": int,
    "match_seed": int,
    "bots": list,
    "decisions": list,
    "faults": list,
    "game_result": dict,
    "result": dict,
}


def new_record(
    *,
    match_id: str,
    index: int,
    tournament: str | None,
    game: str,
    rules_version: str,
    players: int,
    options: dict[str, Any],
    deal: int | None,
    rotation: int | None,
    group: int | None,
    deal_seed: int,
    match_seed: int,
    bots: Sequence[Mapping[str, Any]],
    sandbox: dict[str, Any],
    time_control: dict[str, Any],
    decisions: Sequence[Decision],
    result: Outcome,
    game_result: Outcome,
    faults: Sequence[FaultJson | None],
    started_at: str,
    duration_s: float,
    harness_version: str,
) -> MatchRecord:
    """A record as the referee makes it (every field, the seat summary derived)."""
    seats = tuple(
        {"seat": s, "bot": str(b["name"]), "place": result.places[s], "score": result.scores[s], "fault": faults[s]}
        for s, b in enumerate(bots)
    )
    return MatchRecord(
        seats=seats,
        match_id=match_id,
        index=index,
        game=game,
        players=players,
        options=options,
        deal_seed=deal_seed,
        match_seed=match_seed,
        bots=tuple(SeatBot.from_json(b) for b in bots),
        decisions=tuple(decisions),
        result=result,
        game_result=game_result,
        faults=tuple(faults),
        tournament=tournament,
        rules_version=rules_version,
        deal=deal,
        rotation=rotation,
        group=group,
        sandbox=sandbox,
        time_control=time_control,
        started_at=started_at,
        duration_s=duration_s,
        harness_version=harness_version,
    )


def _is_int(v: Any) -> bool:
    return type(v) is int


def _opt_int(v: Any) -> int | None:
    return None if v is None else int(v)


def _opt_str(v: Any) -> str | None:
    return None if v is None else str(v)


def _mapping(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}
