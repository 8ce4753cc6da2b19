"""What keeps a duplicate tournament fair against bots that remember, and what a run says about it.

Duplicate deals are played by several groups and in every seat rotation, so the cards of
one match are the hidden cards of another. Two rules keep them hidden:

* **No process plays a deal twice** (arena/tournament/match_player.py): a bot process that
  remembered its hand from one rotation would know an opponent's hand in the next. The
  tournament file can opt out (``allow_deal_memory: true``); ``fresh_processes: true``
  starts a process for every match.
* **A deal shown on a replay page is not dealt again**: the notable matches' pages under
  ``<results>/replays/`` show every hand, and a later run in the same folder (a bot added
  or changed, ``--fresh``, a resumed run) would otherwise deal those cards again. Before a
  page is written its deal is recorded in the store (``ResultStore.reveal_deals``); when
  the schedule is built, a group that has not finished every rotation of a recorded deal
  plays a replacement deal instead, drawn from the same folder secret
  (``schedule.build_schedule``). Finished matches keep their deal and their results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.tournament.schedule import canonical_json, deal_key, deal_seed


def process_line(tournament: Any) -> str:
    """The one line every run prints about bot processes and deals."""
    if getattr(tournament, "fresh_processes", False):
        return "arena: bot processes: a new one for every match (fresh_processes: true); none sees a deal twice\n"
    if getattr(tournament, "allow_deal_memory", False):
        return (
            "arena: warning: NOT fair for untrusted bots: allow_deal_memory: true lets one bot process play "
            "a deal again (another rotation or group) and remember the hidden cards it saw; remove it "
            "for competitions\n"
        )
    return (
        "arena: bot processes: kept warm, but none plays a deal twice (no rotation or group of a deal "
        "meets a process that saw it)\n"
    )


def redealt(tournament: Any, schedule: Sequence[Any], deal_secret: str | None) -> int:
    """How many of ``schedule``'s matches play a replacement deal (their deal was revealed)."""
    if tournament.deals == "public":
        return 0
    key = deal_key(tournament, deal_secret)
    base: dict[tuple[str, int, str, int], int] = {}
    count = 0
    for m in schedule:
        k = (m.game, m.players, canonical_json(m.options), m.deal)
        if k not in base:
            base[k] = deal_seed(key, m.game, m.players, m.options, m.deal)
        count += m.deal_seed != base[k]
    return count


def replay_line(tournament: Any, revealed: int, replaced: int) -> str:
    """The one line every run prints about replay pages and the deals they show."""
    if tournament.deals == "public":
        return (
            "arena: replay pages: deals are public (deals: public), so a page shows nothing a bot cannot "
            "compute; deals shown are dealt again\n"
        )
    shown = f"{revealed} deal{'s' if revealed != 1 else ''} shown on replay pages so far"
    if replaced:
        shown += f"; {replaced} matches play replacement deals"
    return f"arena: replay pages: a deal shown on one is never dealt to a match still to play ({shown})\n"
