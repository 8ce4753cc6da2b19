"""The typed vocabulary the layers above speak: what a match is (``MatchSpec``), what it
leaves (``MatchRecord``, ``Decision``, ``DecisionStatus``), how it is timed and bounded
(the one ``TimeControl``, the one ``Limits``), and what a worker answers (``replies``).
Below ``arena.match`` and ``arena.tournament``; imports nothing of the arena but itself."""

from arena.records.controls import LIMIT_BOUNDS, TIME_BOUNDS, Limits, TimeControl
from arena.records.record import (
    RECORD_SCHEMA,
    RECORD_SCHEMAS,
    Decision,
    DecisionStatus,
    MatchRecord,
    Outcome,
    RecordError,
    RecordJson,
    SeatBot,
)
from arena.records.spec import MatchSpec

__all__ = [
    "LIMIT_BOUNDS",
    "RECORD_SCHEMA",
    "RECORD_SCHEMAS",
    "TIME_BOUNDS",
    "Decision",
    "DecisionStatus",
    "Limits",
    "MatchRecord",
    "MatchSpec",
    "Outcome",
    "RecordError",
    "RecordJson",
    "SeatBot",
    "TimeControl",
]
