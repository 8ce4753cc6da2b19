"""Leaderboards from a ``RatingReport``: a terminal text, and files for people and machines.

``render_terminal(report)`` gives the text the CLI prints; the file formats below are
written by ``arena.report.standings.write_reports`` (keys ``md``, ``csv``, ``json``, ``html``):

* ``leaderboard.md``: per scope (``overall`` first, then each game) a standings table
  and a head-to-head table, then the notable matches.
* ``leaderboard.csv``: one row per (scope, bot), columns ``CSV_COLUMNS`` (``status`` =
  complete or INCOMPLETE, ``scheduled``, ``counted``, then ``deals``, ``secret`` or
  ``public (seed N)``, and the last, ``sandbox``, ``level:safe`` or ``level:unsafe`` per level
  run, separated by spaces; each repeats on every row).

Every format starts with (or, in the CSV, carries) whether the tournament is complete:
``scheduled`` matches in the tournament, ``counted`` of them stored as played.
* ``leaderboard.json``: ``report.to_json()``, the stable form described below.
* ``leaderboard.html``: one static page (no server, no external resources, no
  script) with the same tables and one inline SVG plot per scope of every bot's
  conservative rating after each of its matches (x = schedule index).

Standings are sorted by the conservative rating mu - 3 sigma, descending; equal
values by bot name. ``mean place`` is 1-based (1.0 = always first).

leaderboard.json, format ``decktet-arena-leaderboard`` version 1 (also in
docs/leaderboard-json.md). Fields are only ever added within a version; a renamed or
removed field, or a changed meaning, bumps ``version``. Floats are rounded to 6 decimals::

    {
      "format": "decktet-arena-leaderboard", "version": 1,
      "complete": bool,                # counted == scheduled, no adaptive race playing
      "scheduled": int,                # matches of the tournament's schedule
      "counted": int,                  # of them, stored as played and counted below
      "rating": {"system": "trueskill", "conservative": "mu - 3 * sigma",
                 "params": {"mu", "sigma", "beta", "tau", "draw_probability"}},
      "deals": {"mode": "secret"} | {"mode": "public", "seed": int} | null,
      "scopes": [                      # "overall" first, then games by id
        {"scope": "overall" | <game id>, "games": [<game id>, ...],
         "matches": int, "rated": int, "skipped": int,   # skipped: sandbox fault / numeric
         "standings": [                # by rank
           {"rank": 1, "bot": str, "mu": float, "sigma": float, "conservative": float,
            "matches": int (rated), "mean_place": float | null (1-based),
            "mean_place_ci95": float | null,   # half-width of its 95% interval (deals as clusters)
            "adjusted_place": float | null,    # luck-adjusted mean place (docs/luck.md); null: unavailable
            "adjusted_place_ci95": float | null,
            "deals": int, "worst_place": int,  # the interval's deals; places run 1..worst_place
            "mean_place_interval": [low, high] | null,      # clipped to the places; null: < 5 deals
            "adjusted_place_interval": [low, high] | null,
            "shared_rank": int, "tied": bool,  # tie = same conservative to 2 decimals, shown "=N"
            "firsts": int, "unrated": int, "faults_total": int,
            "faults": {kind: int},     # kinds: timeout crash protocol illegal resource sandbox
            "history": [[index, mu, sigma], ...]}],      # after each rated match
         "head_to_head": [             # by (bot, opponent); rated matches where both sat
           {"bot": str, "opponent": str, "above": int, "below": int, "tied": int,
            "share": float | null,     # above / (above + below)
            "ci95": [low, high] | null}]}],              # Wilson score interval
      "notable": [                     # schedule order
        {"match_id": str, "index": int, "game": str,
         "reason": <fault kind> | "all_faulted" | "capped" | "numeric",
         "seat": int | null, "bot": str | null, "detail": str | null}],
      "sandbox": [{"level": str, "safe": bool}],  # levels the matches ran at; safe for untrusted bots
      "luck": null | {"reference": str, "rollouts": int, "available": bool,  # null: no baselines stored
                "beta": [{"game", "players", "beta"}],   # 0: no correction (adjusted = plain)
                "reference_deals": [{"game", "players", "options", "deals"}]}
    }
"""

from __future__ import annotations

import csv
import io
import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from tabulate import tabulate

from arena.inert import inert_json, visible
from arena.report.ratings import (
    FAULT_KINDS,
    MIN_DEALS_FOR_INTERVAL,
    OVERALL,
    BotStanding,
    NotableMatch,
    RatingReport,
    ScopeReport,
)

CSV_COLUMNS = (
    "scope",
    "rank",
    "bot",
    "mu",
    "sigma",
    "conservative",
    "matches",
    "mean_place",
    "mean_place_ci95",
    "adjusted_place",
    "adjusted_place_ci95",
    "firsts",
    "unrated",
    "faults_total",
    *(f"faults_{k}" for k in FAULT_KINDS),
    "status",
    "scheduled",
    "counted",
    "deals",
    "sandbox",
)
STANDING_HEADERS = (
    "rank",
    "bot",
    "μ",
    "σ",
    "conservative",
    "matches",
    "mean place",
    "luck-adjusted",
    "firsts",
    "faults",
)
FILES = {"md": "leaderboard.md", "csv": "leaderboard.csv", "json": "leaderboard.json", "html": "leaderboard.html"}


def scope_title(scope: str) -> str:
    """'Overall' or the game id as a heading ('divers_weights' -> 'Divers weights')."""
    return "Overall" if scope == OVERALL else scope.replace("_", " ").capitalize()


def format_faults(standing: BotStanding) -> str:
    """'0', or the total with the kinds: '3 (timeout 2, crash 1)'."""
    if not standing.faults:
        return "0"
    kinds = ", ".join(f"{k} {n}" for k, n in standing.faults.items())
    return f"{standing.faults_total} ({kinds})"


FAULT_MARK = "⚠"  # after the name of a bot with any fault in the scope
STANDING_ALIGN = ("right", "left", "right", "right", "right", "right", "right", "right", "right", "left")


def marked_name(standing: BotStanding) -> str:
    return f"{standing.name} {FAULT_MARK}" if standing.faults_total else standing.name


TOO_FEW_DEALS = "too few deals"


def _place_text(value: float, half: float | None, interval: tuple[float, float] | None, standing: BotStanding) -> str:
    """'1.69 ± 0.12'; '1.69 [1.00, 1.81]' when the interval is clipped to the places
    1..worst; '2.00 (too few deals)' below MIN_DEALS_FOR_INTERVAL deals (a t interval from
    2 deals is ± 12.7 standard errors, or ± 0.00 when they agreed); '1.00 (same in all 6
    deals)' when every deal gave the same place, rather than a certain-looking ± 0.00."""
    if interval is None or half is None:
        return f"{value:.2f} ({TOO_FEW_DEALS})"
    if half == 0:
        return f"{value:.2f} (same in all {standing.deals} deals)"
    low, high = interval
    if low > value - half or high < value + half:
        return f"{value:.2f} [{low:.2f}, {high:.2f}]"
    return f"{value:.2f} ± {half:.2f}"


def format_mean_place(standing: BotStanding, missing: str = "-") -> str:
    """The mean place with its 95% interval (``_place_text``)."""
    if standing.mean_place is None:
        return missing
    return _place_text(standing.mean_place, standing.mean_place_ci95, standing.mean_place_interval, standing)


def format_adjusted_place(standing: BotStanding, missing: str = "n/a") -> str:
    """The luck-adjusted mean place as the mean place is shown; ``missing`` when it is
    unavailable (no stored baselines for some of the bot's matches)."""
    if standing.adjusted_place is None:
        return missing
    return _place_text(
        standing.adjusted_place, standing.adjusted_place_ci95, standing.adjusted_place_interval, standing
    )


def shown_scopes(report: RatingReport) -> tuple[ScopeReport, ...]:
    """The scopes people read: with a single game, its own table only (Overall would repeat
    it). The JSON and CSV keep every scope, ``overall`` first, for programs."""
    games = [s for s in report.scopes if s.scope != OVERALL]
    return tuple(games) if len(games) == 1 else tuple(report.scopes)


def luck_line(report: RatingReport) -> str:
    """What the luck-adjusted column is, and why it may be unavailable."""
    text = (
        "luck-adjusted: the mean place minus beta times how a fixed reference policy fared from "
        "the same seats of the same deals (unbiased; docs/luck.md)"
    )
    luck = report.luck
    if luck is None and report.luck_off:
        return text + "; n/a: the tournament file computes no luck baselines (luck_rollouts: 0)."
    if luck is None:
        return text + "; n/a: no luck baselines are stored for these results (arena run computes them)."
    note = f"; reference {luck.get('reference')}, {luck.get('rollouts')} games per seat and deal"
    betas = luck.get("beta") or []
    if betas:
        note += "; beta " + ", ".join(f"{b['game']} {b['players']}p {b['beta']:g}" for b in betas)
    aivat = luck.get("aivat") or {}
    if betas and any(b["beta"] == 0 for b in betas):
        note += (
            " (beta 0: no baseline correction)"
            if aivat.get("matches")
            else " (beta 0: no correction, the plain mean place)"
        )
    if aivat.get("matches"):
        what = [
            w
            for w, n in (
                ("the builtin random players' draws", aivat.get("draws")),
                ("the face-down cards revealed", aivat.get("reveals")),
            )
            if n
        ]
        lucky = " and of ".join(what or ["the builtin random players' draws"])
        note += f"; minus the luck of {lucky} in {aivat['matches']} matches (AIVAT)"
    if not luck.get("available"):
        note += "; n/a: baselines missing for some matches (run `arena run` again to compute them)"
    return text + note + "."


def standing_rows(scope: ScopeReport) -> list[list[Any]]:
    """The standings table of a scope, in STANDING_HEADERS order, formatted."""
    return [
        [
            s.rank_label,
            marked_name(s),
            f"{s.mu:.2f}",
            f"{s.sigma:.2f}",
            f"{s.conservative:.2f}",
            s.matches,
            format_mean_place(s),
            format_adjusted_place(s),
            s.firsts,
            format_faults(s),
        ]
        for s in scope.standings
    ]


def h2h_cell(scope: ScopeReport, bot: str, opponent: str) -> str:
    """'58% (7-5-1)': share of decided meetings won, then above-below-tied; '' if none."""
    try:
        h = scope.pair(bot, opponent)
    except KeyError:
        return ""
    share = "-" if h.share is None else f"{100 * h.share:.0f}%"
    return f"{share} ({h.above}-{h.below}-{h.tied})"


def h2h_table(scope: ScopeReport) -> tuple[list[str], list[list[str]]]:
    """Head-to-head matrix: a row per bot (by rank), a column per opponent (its rank)."""
    bots = [s.name for s in scope.standings]
    headers = ["bot \\ vs"] + [f"#{s.rank_label}" for s in scope.standings]
    rows = []
    for s in scope.standings:
        rows.append(
            [f"#{s.rank_label} {s.name}"]
            + ["x" if other == s.name else h2h_cell(scope, s.name, other) for other in bots]
        )
    return headers, rows


H2H_NOTE = (
    "Cell: share of decided meetings in which the row bot placed above the column "
    "bot (95% Wilson interval in leaderboard.json/html), then above-below-tied."
)


def notable_rows(report: RatingReport, limit: int | None = None) -> list[list[Any]]:
    """Notable matches as table rows: index, match id, game, what, bot (seat), detail."""
    items = report.notable if limit is None else report.notable[:limit]
    return [
        [n.index, n.match_id, n.game, n.reason, "" if n.bot is None else f"{n.bot} (seat {n.seat})", n.detail or ""]
        for n in items
    ]


NOTABLE_HEADERS = ("index", "match id", "game", "what", "bot", "detail")
NOTABLE_GROUP_HEADERS = ("bot", "what", "matches", "first match ids", "detail (first match)")
NOTABLE_GROUP_ALIGN = ("left", "left", "right", "left", "left")
IDS_SHOWN = 3


@dataclass(frozen=True)
class NotableGroup:
    """Notable matches of one bot (None: the match as a whole) for one reason."""

    bot: str | None
    reason: str
    matches: tuple[NotableMatch, ...]

    @property
    def first(self) -> NotableMatch:
        return self.matches[0]


def notable_groups(report: RatingReport) -> list[NotableGroup]:
    """The notable matches grouped by bot and reason, the largest groups first."""
    groups: dict[tuple[str | None, str], list[NotableMatch]] = {}
    for n in report.notable:
        groups.setdefault((n.bot, n.reason), []).append(n)
    return sorted(
        (NotableGroup(bot, reason, tuple(ms)) for (bot, reason), ms in groups.items()),
        key=lambda g: (-len(g.matches), g.bot or "", g.reason),
    )


def notable_group_rows(groups: list[NotableGroup]) -> list[list[Any]]:
    rows = []
    for g in groups:
        ids = ", ".join(m.match_id for m in g.matches[:IDS_SHOWN])
        if len(g.matches) > IDS_SHOWN:
            ids += ", …"
        rows.append([g.bot or "(whole match)", g.reason, len(g.matches), ids, g.first.detail or ""])
    return rows


def status_line(report: RatingReport) -> str:
    """The first thing every leaderboard says: complete, or INCOMPLETE and how far."""
    if report.complete:
        return f"Complete: all {report.scheduled} scheduled matches counted."
    if report.counted >= report.scheduled:  # stopped between an adaptive schedule's rounds
        return (
            f"INCOMPLETE: {report.counted} of {report.scheduled} scheduled matches counted, and the adaptive "
            f"schedule {', '.join(report.adaptive_playing)} has rounds still to play; run `arena run` again to finish."
        )
    return (
        f"INCOMPLETE: {report.counted} of {report.scheduled} scheduled matches counted; "
        "run `arena run` again to finish."
    )


def scope_summary(scope: ScopeReport) -> str:
    text = f"{scope.rated} rated matches"
    if scope.skipped:
        text += f", {scope.skipped} skipped (every seat faulted, sandbox fault or unratable)"
    if scope.scope == OVERALL and scope.games:
        text += f"; games: {', '.join(scope.games)}"
    return text


def params_line(report: RatingReport) -> str:
    p = report.params
    return (
        f"TrueSkill mu={p.mu:g} sigma={p.sigma:.4g} beta={p.beta:.4g} tau={p.tau:.4g} "
        f"draw_probability={p.draw_probability:g}; sorted by conservative = mu - 3 sigma; "
        "mean place is 1-based (1 = first), ± the half-width of its 95% interval (the seats of "
        "one deal counted as one sample, since they share the cards; [low, high] where the interval "
        f"reaches past the places; none from under {MIN_DEALS_FOR_INTERVAL} deals); =N: tied at rank N."
    )


def deals_line(report: RatingReport) -> str:
    """How the deals were drawn; public deals are said loudly (bots could compute every hand)."""
    deals = report.deals
    if deals is None:
        return "Deals: unknown (no tournament recorded)."
    if deals.get("mode") == "public":
        return (
            f"Deals: PUBLIC (deals: public, seed {deals.get('seed')}): anyone, bots included, "
            "could compute every hand; reproducible research results, not a fair competition."
        )
    return "Deals: secret (drawn from the results folder's secret; no bot could predict them)."


def sandbox_line(report: RatingReport) -> str:
    """Which sandbox level(s) the matches ran at, and whether each is safe for untrusted bots."""
    if not report.sandbox:
        return "Sandbox: unknown (no stored match says)."
    return (
        "Sandbox: "
        + ", ".join(
            f"{lvl} ({'safe for untrusted bots' if safe else 'NOT safe for untrusted bots: the bots were trusted'})"
            for lvl, safe in report.sandbox
        )
        + "."
    )


ADAPTIVE_STATUS = {
    "decided": "decided",
    "cap": "stopped at its cap, NOT decided",
    "playing": "still playing, not yet decided",
}
ADAPTIVE_HEADERS = [
    "rank",
    "bot",
    "rating",
    "share [95%]",
    "deal sets",
    "ranks possible",
    "decided",
    "decided ahead of",
]
ADAPTIVE_ALIGN = ("right", "left", "right", "left", "right", "left", "left", "left")


def adaptive_line(entry: dict[str, Any]) -> str:
    """One adaptive entry in one line: what it decides, where it stands, decided pairs."""
    target = f"the top {entry['top']} in order" if entry.get("top") else "the whole ranking"
    pairs = len(entry["decided_pairs"])
    n = len(entry["standings"])
    margin = entry.get("margin") or 0
    zone = f" (bots closer than {margin:g} in share either way round)" if margin else ""
    return (
        f"Adaptive schedule {entry['key']} ({entry['players']} players): {target} at "
        f"confidence {entry['confidence']:g}{zone}: {ADAPTIVE_STATUS.get(entry['status'], entry['status'])} "
        f"after {entry['matches']} matches in {entry['rounds']} rounds (cap {entry['cap']}); "
        f"{pairs} of {n * (n - 1) // 2} pairs decided."
    )


def adaptive_rows(entry: dict[str, Any]) -> list[list[str]]:
    """One row per bot; the last cell names the bots it is decided ahead of by their own
    pair test (every decided pair appears once, in its winner's row)."""
    ahead: dict[str, list[str]] = {}
    for a, b in entry["decided_pairs"]:
        ahead.setdefault(a, []).append(b)
    rows = []
    for i, s in enumerate(entry["standings"], 1):
        lo, hi = s["ranks"]
        rating = s.get("rating")
        rows.append(
            [
                str(i),
                s["bot"],
                f"{rating:+.3f}" if isinstance(rating, (int, float)) else "",
                f"{s['score']:.3f} [{s['low']:.3f}, {s['high']:.3f}]",
                str(s["samples"]),
                str(lo) if lo == hi else f"{lo}-{hi}",
                "yes" if s["decided"] else "no",
                ", ".join(ahead.get(s["bot"], [])) or "-",
            ]
        )
    return rows


ADAPTIVE_NOTE = (
    "Rating: fitted to every deal set's shares (same deal, same seats), so a pair also learns from "
    "the opponents both bots met; a pair is decided by a sequential test on its rating difference "
    "at the entry's confidence (bots closer than the margin may be decided either way round); "
    "decided pairs join by transitivity into the ranks possible. Share: of opponents finished "
    "ahead of, in the groups the schedule drew for it (docs/tournament.md#adaptive)."
)


def render_terminal(report: RatingReport, *, results: str = "<results>", notable_limit: int = 15) -> str:
    """The leaderboards as plain text for the terminal."""
    out: list[str] = [status_line(report), ""]
    for scope in shown_scopes(report):
        title = scope_title(scope.scope)
        out += [title, "=" * len(title), scope_summary(scope), ""]
        out.append(
            tabulate(
                _cells(standing_rows(scope)),
                headers=STANDING_HEADERS,
                tablefmt="simple",
                disable_numparse=True,
                colalign=STANDING_ALIGN,
            )
        )
        if len(scope.standings) > 1:
            headers, rows = h2h_table(scope)
            out += [
                "",
                "Head-to-head:",
                tabulate(
                    _cells(rows),
                    headers=headers,
                    tablefmt="simple",
                    disable_numparse=True,
                    colalign=_h2h_align(headers),
                ),
            ]
        out.append("")
    for entry in report.adaptive:
        out += [
            visible(adaptive_line(entry), keep=""),
            tabulate(
                _cells(adaptive_rows(entry)),
                headers=ADAPTIVE_HEADERS,
                tablefmt="simple",
                disable_numparse=True,
                colalign=ADAPTIVE_ALIGN,
            ),
            ADAPTIVE_NOTE,
            "",
        ]
    out.append(deals_line(report))
    out.append(params_line(report))
    out.append(luck_line(report))
    out.append(sandbox_line(report))
    out.append(H2H_NOTE)
    if report.notable:
        groups = notable_groups(report)
        shown = groups[:notable_limit]
        out += [
            "",
            f"Notable matches: {len(report.notable)} in {len(groups)} groups by bot and kind "
            f"(list them with `arena matches {results} --bot B --fault KIND`; "
            f"see one with `arena replay {results} <match id> --html replay.html`):",
            tabulate(
                _cells(notable_group_rows(shown)),
                headers=NOTABLE_GROUP_HEADERS,
                tablefmt="simple",
                disable_numparse=True,
                colalign=NOTABLE_GROUP_ALIGN,
            ),
        ]
        if len(groups) > notable_limit:
            out.append(f"... {len(groups) - notable_limit} more groups in leaderboard.md/html")
    return "\n".join(out) + "\n"


def _cells(rows: list[list[Any]]) -> list[list[Any]]:
    """Table cells for the terminal: each on one line, control characters shown as escapes."""
    return [[c if isinstance(c, (int, float)) else visible(c, keep="") for c in row] for row in rows]


def _h2h_align(headers: list[str]) -> tuple[str, ...]:
    return ("left",) + ("right",) * (len(headers) - 1)


# Markdown punctuation a result text could use to make a link, an image, emphasis, code or a
# table cell break, and what makes GitHub link a bare address: the : of "scheme:/", the . of
# "www." and the @ of an e-mail address. Plain sentences keep their other punctuation, and a
# _ inside a word (random_bot), which CommonMark never reads as emphasis, stays as it is.
_MD_PUNCT = re.compile(r"[\\`*\[\]|~@]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|:(?=/)|(?<=[wW]{3})\.")


def _md_escape(text: str) -> str:
    """A text from the results made inert in Markdown: it shows as itself, never as markup
    (a link, an image, HTML, emphasis) nor as control characters."""
    text = visible(str(text).replace("\n", " "), keep="")
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_PUNCT.sub(lambda m: "\\" + m.group(0), text)


def render_markdown(
    report: RatingReport, *, title: str = "Leaderboard", notable_limit: int = 50, written: str = ""
) -> str:
    """leaderboard.md: a standings table and a head-to-head table per scope (``written``:
    when and from how many matches, a line under the status)."""
    esc = _md_escape
    status = status_line(report)
    out = [
        f"# {esc(title)}",
        "",
        f"**{esc(status)}**" if not report.complete else esc(status),
        "",
        *([esc(written), ""] if written else []),
        params_line(report),
        "",
        esc(luck_line(report)),
        "",
        esc(deals_line(report)),
        "",
        esc(sandbox_line(report)),
        "",
    ]
    for scope in shown_scopes(report):
        out += [f"## {esc(scope_title(scope.scope))}", "", esc(scope_summary(scope)), ""]
        # only the name is a bot's text: the figures are ours ("2.50 [1.93, 3.00]" stays readable)
        rows = [[esc(c) if i == 1 else c for i, c in enumerate(row)] for row in standing_rows(scope)]
        out += [
            tabulate(rows, headers=STANDING_HEADERS, tablefmt="pipe", disable_numparse=True, colalign=STANDING_ALIGN),
            "",
        ]
        if len(scope.standings) > 1:
            headers, h_rows = h2h_table(scope)
            out += [
                f"### Head-to-head ({esc(scope_title(scope.scope))})",
                "",
                H2H_NOTE,
                "",
                tabulate(
                    [[esc(c) for c in r] for r in h_rows],
                    headers=headers,
                    tablefmt="pipe",
                    disable_numparse=True,
                    colalign=_h2h_align(headers),
                ),
                "",
            ]
    for entry in report.adaptive:
        out += [
            f"## Adaptive schedule: {esc(entry['key'])} ({entry['players']} players)",
            "",
            esc(adaptive_line(entry)),
            "",
            tabulate(
                [[esc(c) for c in r] for r in adaptive_rows(entry)],
                headers=ADAPTIVE_HEADERS,
                tablefmt="pipe",
                disable_numparse=True,
                colalign=ADAPTIVE_ALIGN,
            ),
            "",
            ADAPTIVE_NOTE,
            "",
        ]
    out += ["## Notable matches", ""]
    if report.notable:
        groups = notable_groups(report)
        out += [
            f"{len(report.notable)} matches in {len(groups)} groups by bot and kind. List a group with "
            "`arena matches <results> --bot B --fault KIND`; see one with "
            "`arena replay <results> <match id> --html replay.html`.",
            "",
            tabulate(
                [[esc(c) for c in r] for r in notable_group_rows(groups[:notable_limit])],
                headers=NOTABLE_GROUP_HEADERS,
                tablefmt="pipe",
                disable_numparse=True,
                colalign=NOTABLE_GROUP_ALIGN,
            ),
        ]
        if len(groups) > notable_limit:
            out += ["", f"... {len(groups) - notable_limit} more groups in leaderboard.html"]
    else:
        out.append("None: no faults, no capped games.")
    return "\n".join(out) + "\n"


def render_csv(report: RatingReport) -> str:
    """leaderboard.csv: one row per (scope, bot), columns CSV_COLUMNS."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    sandbox = " ".join(f"{lvl}:{'safe' if safe else 'unsafe'}" for lvl, safe in report.sandbox)
    for scope in report.scopes:
        for s in scope.standings:
            writer.writerow(
                [
                    scope.scope,
                    s.rank,
                    s.name,
                    f"{s.mu:.6f}",
                    f"{s.sigma:.6f}",
                    f"{s.conservative:.6f}",
                    s.matches,
                    "" if s.mean_place is None else f"{s.mean_place:.6f}",
                    "" if s.mean_place_ci95 is None else f"{s.mean_place_ci95:.6f}",
                    "" if s.adjusted_place is None else f"{s.adjusted_place:.6f}",
                    "" if s.adjusted_place_ci95 is None else f"{s.adjusted_place_ci95:.6f}",
                    s.firsts,
                    s.unrated,
                    s.faults_total,
                    *(s.faults.get(k, 0) for k in FAULT_KINDS),
                    "complete" if report.complete else "INCOMPLETE",
                    report.scheduled,
                    report.counted,
                    _deals_cell(report),
                    sandbox,
                ]
            )
    return buf.getvalue()


def _deals_cell(report: RatingReport) -> str:
    deals = report.deals
    if deals is None:
        return ""
    return f"public (seed {deals.get('seed')})" if deals.get("mode") == "public" else "secret"


def render_json(report: RatingReport) -> str:
    """leaderboard.json text (see the module docstring). Each rating history is written
    on one line: with 100,000 matches, one number per line takes a minute."""
    data = report.to_json(histories=False)
    mark = f"history-{uuid.uuid4().hex}-"
    histories: list[str] = []
    for scope, scope_data in zip(report.scopes, data["scopes"]):
        for standing, standing_data in zip(scope.standings, scope_data["standings"]):
            histories.append(standing.history.json_text())
            standing_data["history"] = f"{mark}{len(histories) - 1}"
    text = inert_json(json.dumps(data, indent=1, ensure_ascii=False))  # printed as it is written
    parts = text.split(f'"{mark}')
    if len(parts) != len(histories) + 1:  # a result text held the mark: the plain way
        return inert_json(json.dumps(report.to_json(), indent=1, ensure_ascii=False)) + "\n"
    out = [parts[0]]
    for part in parts[1:]:
        number, rest = part.split('"', 1)
        out.append(histories[int(number)] + rest)
    return "".join(out) + "\n"
