"""leaderboard.html: one static page, no server, no external resources, no script.

Per scope: the standings, an inline SVG line plot of each bot's conservative rating
(mu - 3 sigma) after each of its rated matches (x = the match's number within that
scope, so a game's plot runs over its own matches; faulty bots dotted and marked), and
the head-to-head matrix; then the notable matches grouped by bot and kind, with the
stored stderr tail and a link to a replay of the first match of each group. Every text from the results (bot
names, match ids, fault details) goes through ``escape`` (``html.escape`` of ``arena.inert.visible``).
"""

from __future__ import annotations

import math
from html import escape as _html_escape
from typing import Any, Sequence

from arena.inert import visible

from arena.report.leaderboard import (ADAPTIVE_HEADERS, ADAPTIVE_NOTE, FAULT_MARK, IDS_SHOWN,
                                      adaptive_line, adaptive_rows, NOTABLE_GROUP_HEADERS,
                                      STANDING_HEADERS, deals_line, format_adjusted_place, format_faults, format_mean_place,
                                      luck_line, marked_name,
                                      notable_groups,
                                      params_line, sandbox_line, scope_summary, scope_title, shown_scopes,
                                      status_line)
from arena.report.ratings import FAULT_KINDS, HistoryPoint, RatingReport, ScopeReport

def escape(text: object) -> str:
    """A text from the results as inert HTML: markup escaped, control and bidi characters
    shown as escapes (a name cannot reverse or hide the text after it)."""
    return _html_escape(visible(text, keep="\n"))


# Colour-blind-friendly palette (Okabe-Ito, then Tableau) for up to 16 distinct lines.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
           "#000000", "#4E79A7", "#F28E2B", "#59A14F", "#E15759", "#B07AA1", "#9C755F",
           "#76B7B2", "#BAB0AC")
MAX_POINTS = 600        # per line; more are thinned (the last point is always kept)
NOTABLE_LIMIT = 200

CSS = """
:root { --fg: #1d2330; --muted: #5b6475; --line: #d9dee7; --bg: #f6f7fa; --card: #fff;
        --accent: #0b5cad; --win: #dcefe2; --loss: #f7dede; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: var(--fg); background: var(--bg); }
header { background: #1d2330; color: #fff; padding: 20px 32px; }
header h1 { margin: 0 0 4px; font-size: 24px; }
header p { margin: 0; color: #c5cbd8; font-size: 13px; }
nav { margin-top: 12px; }
nav a { color: #fff; margin-right: 16px; text-decoration: none; border-bottom: 1px solid #7f8aa3; }
main { max-width: 1120px; margin: 0 auto; padding: 16px 24px 48px; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px;
          padding: 16px 24px 20px; margin: 20px 0; }
h2 { margin: 4px 0 2px; font-size: 20px; }
h3 { margin: 20px 0 6px; font-size: 15px; color: var(--muted); text-transform: uppercase;
     letter-spacing: .04em; }
p.summary, p.note { color: var(--muted); margin: 0 0 10px; font-size: 13px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 10px; border-bottom: 1px solid var(--line); text-align: right;
         white-space: nowrap; }
th { background: #eef1f6; font-weight: 600; font-size: 13px; }
td.name, th.name { text-align: left; white-space: normal; word-break: break-all; }
td.text { text-align: left; white-space: normal; }
table.notable td.name { word-break: normal; }
tbody tr:hover { background: #f3f6fb; }
td.cons { font-weight: 600; }
tr.faulty td { background: #fdf0ef; }
tr.faulty td.name { color: #a3261b; }
details pre { white-space: pre-wrap; font-size: 12px; max-width: 640px; }
table.h2h td, table.h2h th { text-align: center; font-size: 13px; }
table.h2h td.name, table.h2h th.name { text-align: left; }
table.h2h td small { display: block; color: var(--muted); font-size: 11px; }
table.h2h td.self { background: #f0f0f0; }
table.h2h td.win { background: var(--win); }
table.h2h td.loss { background: var(--loss); }
figure { margin: 14px 0 0; }
figcaption { color: var(--muted); font-size: 12px; }
svg { width: 100%; height: auto; display: block; }
svg text { font: 11px system-ui, sans-serif; fill: #39414f; }
code { background: #eef1f6; padding: 1px 4px; border-radius: 3px; }
p.status { margin: 0 0 10px; font-size: 13px; color: #c5cbd8; }
p.status.incomplete { background: #b3261e; color: #fff; font-size: 18px; font-weight: 700;
                      padding: 8px 12px; border-radius: 6px; }
"""


def _status_banner(report: RatingReport) -> str:
    cls = "status" if report.complete else "status incomplete"
    return f'<p class="{cls}">{escape(status_line(report))}</p>'


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


def rating_plot(scope: ScopeReport, *, width: int = 1040, height: int = 340) -> str:
    """An inline SVG: one line per bot of its conservative rating over the schedule index."""
    left, right, top, bottom = 54, 190, 14, 40
    pw, ph = width - left - right, height - top - bottom
    lines = [(s, _thin(s.history)) for s in scope.standings if s.history]
    label = escape(f"Conservative rating over the {scope_title(scope.scope)} matches")
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'role="img" aria-label="{label}">')
    if not lines:
        return (head + f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle">'
                "no rated matches yet</text></svg>")
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

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * pw

    def py(y: float) -> float:
        return top + (y1 - y) / (y1 - y0) * ph

    parts = [head, f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#fbfcfe" '
                   'stroke="#d9dee7"/>']
    for t in yt:
        y = py(t)
        parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'stroke="{"#9aa3b5" if t == 0 else "#e6e9ef"}"/>'
                     f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                     f'{_fmt_tick(t)}</text>')
    for t in xt:
        x = px(t)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top + ph}" y2="{top + ph + 4}" '
                     f'stroke="#9aa3b5"/><text x="{x:.1f}" y="{top + ph + 16}" '
                     f'text-anchor="middle">{int(t)}</text>')
    parts.append(f'<text x="{left + pw / 2}" y="{height - 6}" text-anchor="middle">'
                 f'{escape(scope_title(scope.scope))} rated match number</text>')
    parts.append(f'<text transform="translate(13 {top + ph / 2}) rotate(-90)" '
                 'text-anchor="middle">μ − 3σ</text>')
    # Draw the lowest-ranked first so the leaders are on top.
    for i, (s, pts) in reversed(list(enumerate(lines))):
        colour = PALETTE[i % len(PALETTE)]
        coords = " ".join(f"{px(number[p.index]):.1f},{py(p.conservative):.1f}" for p in pts)
        dash = ' stroke-dasharray="6 3"' if i >= len(PALETTE) else ""
        if s.faults_total:  # faulty bots: dotted, so overlapping lines stay apart
            dash = ' stroke-dasharray="2 3"'

        name = escape(s.name)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                     f'stroke-linejoin="round"{dash} points="{coords}"><title>#{s.rank_label} {name}: '
                     f'{s.conservative:.2f}</title></polyline>')
        last = pts[-1]
        parts.append(f'<circle cx="{px(number[last.index]):.1f}" cy="{py(last.conservative):.1f}" '
                     f'r="3" fill="{colour}"/>')
    for i, (s, _) in enumerate(lines):  # legend, in rank order
        y = top + 10 + i * 18
        if y > top + ph:
            parts.append(f'<text x="{left + pw + 14}" y="{y}">… {len(lines) - i} more</text>')
            break
        colour = PALETTE[i % len(PALETTE)]
        short = s.name if len(s.name) <= 22 else s.name[:21] + "…"
        dash = ' stroke-dasharray="2 3"' if s.faults_total else ""
        mark = f" {FAULT_MARK}" if s.faults_total else ""
        parts.append(f'<line x1="{left + pw + 12}" x2="{left + pw + 32}" y1="{y - 4}" '
                     f'y2="{y - 4}" stroke="{colour}" stroke-width="3"{dash}/>'
                     f'<text x="{left + pw + 38}" y="{y}"><title>{escape(s.name)}</title>'
                     f'{s.rank_label}. {escape(short)}{mark}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _standings_table(scope: ScopeReport) -> str:
    cls = ["num", "name", "num", "num", "num cons", "num", "num", "num", "num", "text"]
    head = "".join(f'<th class="{"name" if c in ("name", "text") else ""}">{escape(h)}</th>'
                   for h, c in zip(STANDING_HEADERS, cls))
    body = []
    for s in scope.standings:
        cells = [s.rank_label, s.name, f"{s.mu:.2f}", f"{s.sigma:.2f}", f"{s.conservative:.2f}",
                 s.matches, format_mean_place(s, "–"), format_adjusted_place(s), s.firsts,
                 format_faults(s)]
        row_cls = ' class="faulty"' if s.faults_total else ""
        if s.faults_total:
            cells[1] = marked_name(s)
        body.append(f"<tr{row_cls}>" + "".join(f'<td class="{c}">{escape(str(v))}</td>'
                                               for v, c in zip(cells, cls)) + "</tr>")
    return (f'<table class="standings"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def _h2h_table(scope: ScopeReport) -> str:
    bots = list(scope.standings)
    head = '<th class="name">bot \\ vs</th>' + "".join(
        f'<th title="{escape(b.name)}">#{b.rank_label}</th>' for b in bots)
    rows = []
    for a in bots:
        cells = [f'<td class="name">#{a.rank_label} {escape(a.name)}</td>']
        for b in bots:
            if a.name == b.name:
                cells.append('<td class="self">–</td>')
                continue
            try:
                h = scope.pair(a.name, b.name)
            except KeyError:
                cells.append("<td></td>")
                continue
            tip = escape(f"{a.name} vs {b.name}: above {h.above}, below {h.below}, "
                         f"tied {h.tied}")
            if h.share is None or h.ci95 is None:
                cells.append(f'<td title="{tip}">–<small>{h.above}-{h.below}-{h.tied}'
                             "</small></td>")
                continue
            lo, hi = h.ci95
            cls = "win" if lo > 0.5 else "loss" if hi < 0.5 else ""
            cells.append(f'<td class="{cls}" title="{tip}">{100 * h.share:.0f}%'
                         f"<small>{h.above}-{h.below}-{h.tied} · "
                         f"[{100 * lo:.0f}–{100 * hi:.0f}]</small></td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<table class="h2h"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _scope_section(scope: ScopeReport) -> str:
    title = escape(scope_title(scope.scope))
    parts = [f'<section id="{_slug(scope.scope)}" class="scope">',
             f"<h2>{title}</h2>", f'<p class="summary">{escape(scope_summary(scope))}</p>',
             _standings_table(scope),
             "<figure>", rating_plot(scope),
             "<figcaption>Conservative rating μ − 3σ of each bot after each of its rated "
             "matches (hover a line for its name).</figcaption></figure>"]
    if len(scope.standings) > 1:
        parts += ["<h3>Head-to-head</h3>",
                  '<p class="note">Cell: share of decided meetings in which the row bot '
                  "placed above the column bot; below it: above-below-tied · 95% Wilson "
                  "interval (%). Green / red: the interval lies above / below 50%.</p>",
                  _h2h_table(scope)]
    parts.append("</section>")
    return "\n".join(parts)


def _notable_section(report: RatingReport, extras: dict[tuple[str, int | None], dict[str, str]]) -> str:
    parts = ['<section id="notable">', "<h2>Notable matches</h2>"]
    if not report.notable:
        parts.append('<p class="summary">None: no faults, no capped games.</p></section>')
        return "\n".join(parts)
    groups = notable_groups(report)
    parts.append(f'<p class="summary">{len(report.notable)} matches in {len(groups)} groups by bot and kind. '
                 "List a group with <code>arena matches &lt;results&gt; --bot B --fault KIND</code>; "
                 "the first match of each group links to its replay.</p>")
    head = "".join(f'<th class="{"" if h == "matches" else "name"}">{escape(h)}</th>'
                   for h in NOTABLE_GROUP_HEADERS)
    body = []
    for g in groups[:NOTABLE_LIMIT]:
        extra = extras.get((g.first.match_id, g.first.seat), {})
        ids = []
        for k, m in enumerate(g.matches[:IDS_SHOWN]):
            link = extra.get("replay") if k == 0 else None
            ids.append(f'<a href="{escape(link)}">{escape(m.match_id)}</a>' if link else escape(m.match_id))
        more = f" and {len(g.matches) - IDS_SHOWN} more" if len(g.matches) > IDS_SHOWN else ""
        detail = escape(g.first.detail or "")
        if extra.get("tail"):
            detail += f'<details><summary>stderr tail</summary><pre>{escape(extra["tail"])}</pre></details>'
        row_cls = ' class="faulty"' if g.reason in FAULT_KINDS else ""
        body.append(f'<tr{row_cls}><td class="name">{escape(g.bot or "(whole match)")}</td>'
                    f'<td class="text">{escape(g.reason)}</td><td>{len(g.matches)}</td>'
                    f'<td class="text">{", ".join(ids)}{more}</td><td class="text">{detail}</td></tr>')
    parts.append(f'<table class="notable"><thead><tr>{head}</tr></thead>'
                 f'<tbody>{"".join(body)}</tbody></table>')
    if len(groups) > NOTABLE_LIMIT:
        parts.append(f'<p class="note">… {len(groups) - NOTABLE_LIMIT} more groups in leaderboard.json.</p>')
    parts.append("</section>")
    return "\n".join(parts)


def _adaptive_section(entry: dict[str, Any]) -> str:
    head = "".join(f'<th class="{"name" if h == "bot" else ""}">{escape(h)}</th>' for h in ADAPTIVE_HEADERS)
    body = "".join("<tr>" + "".join(f'<td class="{"name" if i == 1 else "num"}">{escape(c)}</td>'
                                    for i, c in enumerate(row)) + "</tr>" for row in adaptive_rows(entry))
    return "\n".join([f'<section id="adaptive-{_slug(entry["key"])}" class="scope">',
                      f"<h2>Adaptive schedule: {escape(entry['key'])}</h2>",
                      f'<p class="summary">{escape(adaptive_line(entry))}</p>',
                      f'<table class="standings"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>',
                      f'<p class="note">{escape(ADAPTIVE_NOTE)}</p>', "</section>"])


def render_html(report: RatingReport, *, title: str = "Leaderboard",
                extras: dict[tuple[str, int | None], dict[str, str]] | None = None, written: str = "") -> str:
    """The whole leaderboard.html page. ``extras`` maps a notable group's first match, as
    (match id, seat), to that seat's stored stderr ``tail`` and the relative path of its
    ``replay`` page, where known."""
    nav = "".join(f'<a href="#{_slug(s.scope)}">{escape(scope_title(s.scope))}</a>'
                  for s in shown_scopes(report)) + '<a href="#notable">Notable matches</a>'
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
        f"<header>{_status_banner(report)}<h1>{escape(title)}</h1>"
        + (f'<p class="written">{escape(written)}</p>' if written else "")
        + f"<p>{escape(params_line(report))}</p>"
        f"<p>{escape(luck_line(report))}</p>"
        f"<p class=\"deals\">{escape(deals_line(report))}</p>"
        f"<p>{escape(sandbox_line(report))}</p>"
        f"<nav>{nav}</nav></header>", "<main>",
        *(_scope_section(s) for s in shown_scopes(report)),
        *(_adaptive_section(a) for a in report.adaptive),
        _notable_section(report, extras or {}), "</main>", "</body>", "</html>", ""])
