"""A ladder file: a tournament file plus a ``ladder:`` section.

The tournament part (name, seed, bots, games with their seat counts, time control,
sandbox, limits, workers) is read and checked by arena/tournament/config.py exactly
as for `arena run`; its bots are the bundled bots, playing from the start. A game
entry's ``deals`` is not used: a ladder deals without end, one deal set at a time.
The ``ladder`` section holds what only a ladder needs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from arena.tournament.config import ConfigError, Tournament, _Model, _read, format_loc, parse_tournament

MAX_UPLOAD_BYTES = 4 * 1024 * 1024


class LadderSettings(_Model):
    """The ``ladder:`` section of a ladder file."""

    # deal sets started per minute at most; 0: as fast as the workers play
    match_rate: float = Field(0, ge=0, le=10_000)
    upload_max_bytes: int = Field(256 * 1024, ge=1024, le=MAX_UPLOAD_BYTES)
    # a new bot's deal sets come first until it has played this many matches
    new_bot_matches: int = Field(20, ge=0, le=100_000)
    # bots one entrant may have playing at once (versions of a bot count once); 0: no limit
    max_bots_per_entrant: int = Field(5, ge=0, le=10_000)
    refresh_s: float = Field(3.0, ge=0.5, le=3600)  # how often the pages poll the JSON API
    # niceness of the matchmaker, its workers and bots: readers are answered first (the server
    # needs well under 1 ms of CPU a request), matches take what is left
    workers_nice: int = Field(5, ge=0, le=19)
    # a client slower than this with a request's headers, or its body, is cut off (slowloris)
    header_timeout_s: float = Field(20.0, ge=0.5, le=600)
    body_timeout_s: float = Field(60.0, ge=1, le=3600)


class Ladder:
    """A validated ladder file: ``tournament`` (its tournament part) and ``settings``."""

    def __init__(self, tournament: Tournament, settings: LadderSettings, source: str) -> None:
        self.tournament = tournament
        self.settings = settings
        self.source = source

    @property
    def name(self) -> str:
        return self.tournament.name


def load_ladder(path: str | os.PathLike[str]) -> Ladder:
    """Read and check a ladder file; raises ``ConfigError`` (one line naming file and field)."""
    from arena.tournament.roster import resolve_bots
    from arena.tournament.schedule import check_schedule

    label = str(path)
    file = Path(path)
    text, data = _read(file, label, "ladder file")
    section = data.pop("ladder", None) or {}
    if not isinstance(section, dict):
        raise ConfigError(label, "expected a mapping, e.g. ladder: {match_rate: 0}", "ladder")
    if data.get("trust_bots"):
        raise ConfigError(
            label,
            "a ladder runs uploaded bots, so it never trusts bots; remove trust_bots "
            "(install bubblewrap for a sandbox level safe for untrusted bots)",
            "trust_bots",
        )
    if data.get("allow_deal_memory"):
        raise ConfigError(
            label,
            "a ladder runs uploaded bots, so no bot process may play a deal twice; remove "
            "allow_deal_memory (docs/tournament.md, fair play)",
            "allow_deal_memory",
        )
    tournament = parse_tournament(data, label, Path.cwd(), text, file.resolve().parent)
    try:
        settings = LadderSettings.model_validate(section)
    except ValidationError as exc:
        err: dict[str, Any] = exc.errors()[0]
        loc = ("ladder", *err["loc"])
        raise ConfigError(label, _message(err), format_loc(loc)) from None
    check_schedule(tournament, resolve_bots(tournament, forfeits=False))
    return Ladder(tournament, settings, label)


def _message(err: dict[str, Any]) -> str:
    if err["type"] == "extra_forbidden":
        return f"unknown field; the ladder section has {', '.join(LadderSettings.model_fields)} (see docs/ladder.md)"
    got = err.get("input")
    return f"{err['msg']}, got {got!r} (see docs/ladder.md)"
