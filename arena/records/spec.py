"""What one match is: the schedule makes it, the referee plays it, a replay rebuilds it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MatchSpec:
    """One match to play: what, with which seeds, and who sits where."""

    match_id: str  # "<game or label>/p<players>/d<deal>/r<rotation>/<16 hex of match_key>"
    index: int  # position in the schedule; ratings follow this order
    game: str
    players: int
    options: dict[str, Any] = field(hash=False)  # resolved: every option key
    group: int | None = 0
    deal: int | None = 0
    rotation: int | None = 0
    deal_seed: int = 0  # the game's seed: same for every rotation and group
    match_seed: int = 0  # the referee's own seed (fallback moves and such)
    bots: tuple[str, ...] = ()  # bot names in seat order
    key: str = ""  # match_key(): the content hash naming this match

    def to_json(self) -> dict[str, Any]:
        return {
            "match_id": self.match_id,
            "index": self.index,
            "game": self.game,
            "players": self.players,
            "options": dict(self.options),
            "group": self.group,
            "deal": self.deal,
            "rotation": self.rotation,
            "deal_seed": self.deal_seed,
            "match_seed": self.match_seed,
            "bots": list(self.bots),
        }

    @classmethod
    def of_record(cls, record: Mapping[str, Any]) -> MatchSpec:
        """The match a stored record played (for a replay: seats and seeds as recorded)."""
        return cls(
            match_id=record["match_id"],
            index=record.get("index", 0),
            game=record["game"],
            players=record["players"],
            options=record["options"],
            group=record.get("group"),
            deal=record.get("deal"),
            rotation=record.get("rotation"),
            deal_seed=record["deal_seed"],
            match_seed=record["match_seed"],
            bots=tuple(b["name"] for b in record.get("bots", ())),
        )
