"""leaderboard.html: one static page, no server, no external resources, no script.

The markup is a template (``templates/leaderboard.html.j2``, with ``static/leaderboard.css``
inlined: ``arena.report.pages``); this module turns a ``RatingReport`` into what the template
prints, and draws the plots as SVG with an element tree.

Per scope: the standings, an inline SVG line plot of each bot's conservative rating
(mu - 3 sigma) after each of its rated matches (x = the match's number within that
scope, so a game's plot runs over its own matches; faulty bots dotted and marked), and
the head-to-head matrix; then the notable matches grouped by bot and kind, with the
stored stderr tail and a link to a replay of the first match of each group. Every text from the results (bot
names, match ids, fault details) is made inert: ``arena.inert.visible``, then HTML-escaped (by
the template, or by the element tree in the plots).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

from arena.inert import visible
from arena.report.leaderboard import (
    ADAPTIVE_HEADERS,
    ADAPTIVE_NOTE,
    FAULT_MARK,
    IDS_SHOWN,
    NOTABLE_GROUP_HEADERS,
    STANDING_HEADERS,
    adaptive_line,
    adaptive_rows,
    deals_line,
    format_adjusted_place,
    format_faults,
    format_mean_place,
    luck_line,
    marked_name,
    notable_groups,
    params_line,
    sandbox_line,
    scope_summary,
    scope_title,
    shown_scopes,
    status_line,
)
from arena.report.pages import render
from arena.report.ratings import FAULT_KINDS, HistoryPoint, RatingReport, ScopeReport


def _inert(text: object) -> str:
    """A text from the results with control and bidi characters shown as escapes (a name cannot
    reverse or hide the text after it); the element tree escapes the markup."""
    return visible(text, keep="\n")


# Colour-blind-friendly palette (Okabe-Ito, then Tableau) for up to 16 distinct lines.
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
    "#4E79A7",
    "#F28E2B",
    "#59A14F",
    "#E15759",
    "#B07AA1",
    "#9C755F",
    "#76B7B2",
    "#BAB0AC",
)
MAX_POINTS = 600  # per line; more are thinned (the last point is always kept)
NOTABLE_LIMIT = 200


def _slug(scope: str) -> str:
    return "scope-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in scope)


def _nice_step(span: float, target: int) -> float:
    raw = span / max(1, target)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    step = _nice_step(hi - lo, target)
    start = math.floor(lo / step) * step
    ticks, t = [], start
    while t <= hi + step * 1e-9:
        if t >= lo - step * 1e-9:
            ticks.append(round(t, 10))
        t += step
    return ticks


def _fmt_tick(value: float) -> str:
    return f"{value:g}" if abs(value) >= 1e-9 else "0"


def _thin(points: Sequence[HistoryPoint]) -> list[HistoryPoint]:
    if len(points) <= MAX_POINTS:
        return list(points)
    step = len(points) / MAX_POINTS
    picked = [int(i * step) for i in range(MAX_POINTS)]
    if picked[-1] != len(points) - 1:
        picked.append(len(points) - 1)
    return [points[i] for i in picked]


def _el(parent: ET.Element, tag: str, text: str | None = None, /, **attrs: Any) -> ET.Element:
    """A child element; ``attrs`` with ``_`` for ``-`` (``text_anchor``), values as given."""
    e = ET.SubElement(parent, tag, {k.replace("_", "-"): str(v) for k, v in attrs.items()})
    if text is not None:
        e.text = text
    return e


def rating_plot(scope: ScopeReport, *, width: int = 1040, height: int = 340) -> Markup:
    """An inline SVG: one line per bot of its conservative rating over the schedule index."""
    left, right, top, bottom = 54, 190, 14, 40
    pw, ph = width - left - right, height - top - bottom
    lines = [(s, _thin(s.history)) for s in scope.standings if s.history]
    svg = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "viewBox": f"0 0 {width} {height}",
            "role": "img",
            "aria-label": _inert(f"Conservative rating over the {scope_title(scope.scope)} matches"),
        },
    )
    if not lines:
        _el(svg, "text", "no rated matches yet", x=width / 2, y=height / 2, text_anchor="middle")
        return Markup(ET.tostring(svg, encoding="unicode"))
    # x = the match's number within this scope: a game's plot runs over that game's own matches.
    number = {i: n for n, i in enumerate(sorted({p.index for _, pts in lines for p in pts}), start=1)}
    xs = [number[p.index] for _, pts in lines for p in pts]
    ys = [p.conservative for _, pts in lines for p in pts]
    x0, x1 = min(xs), max(xs)
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    y0, y1 = min(ys), max(ys)
    pad = max(0.5, (y1 - y0) * 0.06)
    y0, y1 = y0 - pad, y1 + pad
    yt, xt = _ticks(y0, y1), [t for t in _ticks(x0, x1, 8) if float(t).is_integer()]

    def px(x: float) -> str:
        return f"{left + (x - x0) / (x1 - x0) * pw:.1f}"

    def py(y: float) -> str:
        return f"{top + (y1 - y) / (y1 - y0) * ph:.1f}"

    _el(svg, "rect", x=left, y=top, width=pw, height=ph, fill="#fbfcfe", stroke="#d9dee7")
    for t in yt:
        y = top + (y1 - t) / (y1 - y0) * ph
        _el(svg, "line", x1=left, x2=left + pw, y1=f"{y:.1f}", y2=f"{y:.1f}", stroke="#9aa3b5" if t == 0 else "#e6e9ef")
        _el(svg, "text", _fmt_tick(t), x=left - 6, y=f"{y + 4:.1f}", text_anchor="end")
    for t in xt:
        x = px(t)
        _el(svg, "line", x1=x, x2=x, y1=top + ph, y2=top + ph + 4, stroke="#9aa3b5")
        _el(svg, "text", str(int(t)), x=x, y=top + ph + 16, text_anchor="middle")
    _el(
        svg,
        "text",
        _inert(f"{scope_title(scope.scope)} rated match number"),
        x=left + pw / 2,
        y=height - 6,
        text_anchor="middle",
    )
    _el(svg, "text", "μ − 3σ", transform=f"translate(13 {top + ph / 2}) rotate(-90)", text_anchor="middle")
    # Draw the lowest-ranked first so the leaders are on top.
    for i, (s, pts) in reversed(list(enumerate(lines))):
        colour = PALETTE[i % len(PALETTE)]
        style: dict[str, str | int] = {"fill": "none", "stroke": colour, "stroke_width": 2, "stroke_linejoin": "round"}
        if s.faults_total:  # faulty bots: dotted, so overlapping lines stay apart
            style["stroke_dasharray"] = "2 3"
        elif i >= len(PALETTE):
            style["stroke_dasharray"] = "6 3"
        line = _el(
            svg, "polyline", **style, points=" ".join(f"{px(number[p.index])},{py(p.conservative)}" for p in pts)
        )
        _el(line, "title", _inert(f"#{s.rank_label} {s.name}: {s.conservative:.2f}"))
        last = pts[-1]
        _el(svg, "circle", cx=px(number[last.index]), cy=py(last.conservative), r=3, fill=colour)
    for i, (s, _) in enumerate(lines):  # legend, in rank order
        y = top + 10 + i * 18
        if y > top + ph:
            _el(svg, "text", f"… {len(lines) - i} more", x=left + pw + 14, y=y)
            break
        short = s.name if len(s.name) <= 22 else s.name[:21] + "…"
        key: dict[str, str | int] = {"stroke": PALETTE[i % len(PALETTE)], "stroke_width": 3}
        if s.faults_total:
            key["stroke_dasharray"] = "2 3"
        _el(svg, "line", x1=left + pw + 12, x2=left + pw + 32, y1=y - 4, y2=y - 4, **key)
        label = _el(svg, "text", x=left + pw + 38, y=y)
        _el(label, "title", _inert(s.name)).tail = _inert(
            f"{s.rank_label}. {short}" + (f" {FAULT_MARK}" if s.faults_total else "")
        )
    return Markup(ET.tostring(svg, encoding="unicode"))


_STANDING_CLASSES = ["num", "name", "num", "num", "num cons", "num", "num", "num", "num", "text"]


def _standings(scope: ScopeReport) -> list[dict[str, Any]]:
    rows = []
    for s in scope.standings:
        cells = [
            s.rank_label,
            marked_name(s) if s.faults_total else s.name,
            f"{s.mu:.2f}",
            f"{s.sigma:.2f}",
            f"{s.conservative:.2f}",
            s.matches,
            format_mean_place(s, "–"),
            format_adjusted_place(s),
            s.firsts,
            format_faults(s),
        ]
        rows.append({"faulty": bool(s.faults_total), "cells": list(zip(cells, _STANDING_CLASSES))})
    return rows


def _h2h(scope: ScopeReport) -> dict[str, Any]:
    bots = list(scope.standings)
    rows = []
    for a in bots:
        cells: list[dict[str, Any] | None] = []
        for b in bots:
            if a.name == b.name:
                cells.append({"self": True})
                continue
            try:
                h = scope.pair(a.name, b.name)
            except KeyError:
                cells.append(None)
                continue
            tip = f"{a.name} vs {b.name}: above {h.above}, below {h.below}, tied {h.tied}"
            if h.share is None or h.ci95 is None:
                cells.append(
                    {"self": False, "cls": None, "tip": tip, "main": "–", "small": f"{h.above}-{h.below}-{h.tied}"}
                )
                continue
            lo, hi = h.ci95
            cells.append(
                {
                    "self": False,
                    "cls": "win" if lo > 0.5 else "loss" if hi < 0.5 else "",
                    "tip": tip,
                    "main": f"{100 * h.share:.0f}%",
                    "small": f"{h.above}-{h.below}-{h.tied} · [{100 * lo:.0f}–{100 * hi:.0f}]",
                }
            )
        rows.append({"rank": a.rank_label, "name": a.name, "cells": cells})
    return {"columns": [{"name": b.name, "rank": b.rank_label} for b in bots], "rows": rows}


def _scope(scope: ScopeReport) -> dict[str, Any]:
    return {
        "slug": _slug(scope.scope),
        "title": scope_title(scope.scope),
        "summary": scope_summary(scope),
        "standings": _standings(scope),
        "plot": rating_plot(scope),
        "h2h": _h2h(scope) if len(scope.standings) > 1 else None,
    }


def _notable(report: RatingReport, extras: dict[tuple[str, int | None], dict[str, str]]) -> dict[str, Any] | None:
    if not report.notable:
        return None
    groups = notable_groups(report)
    rows = []
    for g in groups[:NOTABLE_LIMIT]:
        extra = extras.get((g.first.match_id, g.first.seat), {})
        rows.append(
            {
                "faulty": g.reason in FAULT_KINDS,
                "bot": g.bot or "(whole match)",
                "reason": g.reason,
                "count": len(g.matches),
                "ids": [
                    {"id": m.match_id, "link": extra.get("replay") if k == 0 else None}
                    for k, m in enumerate(g.matches[:IDS_SHOWN])
                ],
                "more": f" and {len(g.matches) - IDS_SHOWN} more" if len(g.matches) > IDS_SHOWN else "",
                "detail": g.first.detail or "",
                "tail": extra.get("tail"),
            }
        )
    return {
        "count": len(report.notable),
        "groups": len(groups),
        "headers": NOTABLE_GROUP_HEADERS,
        "rows": rows,
        "hidden": max(0, len(groups) - NOTABLE_LIMIT),
    }


def _adaptive(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        # with its player count: two adaptive entries of one game (players 3 and 4) share a key
        "slug": "adaptive-" + _slug(f"{entry['key']}-p{entry['players']}"),
        "key": entry["key"],
        "players": entry["players"],
        "line": adaptive_line(entry),
        "headers": ADAPTIVE_HEADERS,
        "rows": adaptive_rows(entry),
        "note": ADAPTIVE_NOTE,
    }


def render_html(
    report: RatingReport,
    *,
    title: str = "Leaderboard",
    extras: dict[tuple[str, int | None], dict[str, str]] | None = None,
    written: str = "",
) -> str:
    """The whole leaderboard.html page. ``extras`` maps a notable group's first match, as
    (match id, seat), to that seat's stored stderr ``tail`` and the relative path of its
    ``replay`` page, where known."""
    return render(
        "leaderboard.html.j2",
        title=title,
        written=written,
        status_class="status" if report.complete else "status incomplete",
        status=status_line(report),
        params=params_line(report),
        luck=luck_line(report),
        deals=deals_line(report),
        sandbox=sandbox_line(report),
        standing_headers=[
            (h, "name" if c in ("name", "text") else "") for h, c in zip(STANDING_HEADERS, _STANDING_CLASSES)
        ],
        scopes=[_scope(s) for s in shown_scopes(report)],
        adaptive=[_adaptive(a) for a in report.adaptive],
        notable=_notable(report, extras or {}),
    )
