"""A visual replay of one match: one self-contained HTML file, no server, no network.

``replay_html(record)`` re-plays the match record through the engine and keeps, for
every decision, each seat's own observation, the deciding seat's legal actions, the
chosen one, its time and any fault. The page draws the table as cards (rank and suit
symbols), each seat's hand and the trick, pile or threshold, and steps through the
decisions with buttons, arrow keys and a slider. It switches between the omniscient
view (every seat's hand: the union of all seats' observations) and one seat's view,
which draws exactly that seat's observation and nothing else. A fragment ``#d40`` in the
address opens decision 40, and stepping keeps the fragment current, so a decision can be linked.
Palace's public events (plays, draws, reveals, eats, blow-ups) are drawn as a running log.

The page is a template (``templates/replay.html.j2``) with its CSS and JS inlined
(``static/replay.css``, ``static/replay.js``); what it draws of each game's observation is data
(``static/replay_layouts.json``), so the script names no game.

The frames travel gzip-compressed and base64-encoded inside the page and are opened
by the browser's own DecompressionStream, so a long Palace match stays small.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.inert import visible
from arena.match.human_view import rank_label  # the corner a card shows: A for an Ace, never 1
from arena.records import RecordJson
from arena.report.files import replace_text
from arena.report.pages import render, static_text
from games import GameError, get_game

MAX_LEGAL_SHOWN = 80  # Palace's set-up swaps can offer hundreds of actions


def replay_frames(record: RecordJson) -> dict[str, Any]:
    """The page's data: match facts, the card table and one frame per decision (+ the end)."""
    try:
        state = get_game(record["game"]).new_game(record["players"], record["deal_seed"], record["options"])
    except (GameError, KeyError, TypeError) as err:
        raise ArenaError(f"match {record.get('match_id')}: cannot rebuild the deal ({err})") from None
    faults = {f["decision"]: (seat, f) for seat, f in enumerate(record.get("faults") or []) if f}
    frames = []
    logged = "events" in state.observation(0)  # a game whose observations carry public events
    for i, d in enumerate(record["decisions"]):
        seat, action = d["seat"], d["action"]
        if state.is_over() or seat not in state.to_move() or not 0 <= action < len(state.legal_actions(seat)):
            raise ArenaError(
                f"match {record.get('match_id')}: decision {i} does not replay on this engine; "
                f"check it with arena replay"
            )
        legal = [state.action_text(seat, a) for a in state.legal_actions(seat)]
        fault = faults.get(i)
        frames.append(
            {
                "n": i,
                "seat": seat,
                "action": action,
                "text": d.get("text"),
                "ms": d.get("ms"),
                "status": d.get("status", "ok"),
                "legal_count": len(legal),
                "legal": _legal_window(legal, action),
                "fault": None if fault is None else {"seat": fault[0], **fault[1]},
                "obs": [state.observation(s) for s in range(record["players"])],
            }
        )
        state.apply(seat, action)
        if logged:  # right after its own decision, a seat's events are exactly what that decision did
            frames[-1]["events"] = state.observation(seat).get("events", [])
    frames.append(
        {"n": len(record["decisions"]), "end": True, "obs": [state.observation(s) for s in range(record["players"])]}
    )
    return {
        "match_id": record["match_id"],
        "game": record["game"],
        "players": record["players"],
        "options": record.get("options"),
        "bots": [b["name"] for b in record["bots"]],
        "seats": record.get("seats") or [],
        "cards": [{**c, "label": rank_label(c["rank"])} for c in state.card_table()],
        "layout": layout(record["game"]),
        "frames": frames,
    }


def layout(game: str) -> dict[str, Any]:
    """What the page draws of ``game``'s observations beside the hands (static/replay_layouts.json;
    a game without an entry: its phase and the hands)."""
    layouts: dict[str, dict[str, Any]] = json.loads(static_text("replay_layouts.json"))
    return layouts.get(game, {})


def _legal_window(legal: list[str], chosen: int) -> list[list[Any]]:
    """[[action id, text], ...]: all of them, or a window around the chosen one."""
    ids = range(len(legal))
    if len(legal) > MAX_LEGAL_SHOWN:
        lo = max(0, min(chosen - MAX_LEGAL_SHOWN // 2, len(legal) - MAX_LEGAL_SHOWN))
        ids = range(lo, lo + MAX_LEGAL_SHOWN)
    return [[a, legal[a]] for a in ids]


def replay_html(record: RecordJson, links: Sequence[tuple[str, str]] = ()) -> str:
    """The whole page as text; ``links``: (href, text) shown in its header (the ladder's way
    back to its pages; a page written to a file has none)."""
    data = replay_frames(record)
    blob = base64.b64encode(gzip.compress(json.dumps(data, separators=(",", ":")).encode(), mtime=0)).decode()
    return render(
        "replay.html.j2",
        title=visible(f"{record['game']} · {record['match_id']}", keep=""),
        data=blob,
        links=[(href, visible(text, keep="")) for href, text in links],
    )


def write_replay_html(record: RecordJson, path: str | Path) -> Path:
    path = Path(path)
    try:
        replace_text(path, replay_html(record))  # a page killed mid-write is never left half
    except OSError as err:
        raise ArenaError(f"{path}: cannot write the replay ({err.strerror}); choose a writable path") from None
    return path
