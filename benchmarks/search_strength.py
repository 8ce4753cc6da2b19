"""Strength of the reference search bot, in process, with 95% confidence intervals.

    python benchmarks/search_strength.py field [tournaments/strength.yaml] [--deal-factor 1] [--out F]
    python benchmarks/search_strength.py table LABEL PLAYERS --budgets 0.1 0.5 2 --deals 12 [--opponents A,B] [--out F]
    python benchmarks/search_strength.py summary F [F ...]

``field`` plays a tournament file's whole schedule (arena.tournament.schedule: the same
groups, seat rotations, deal and bot seeds as ``arena run``) in this process, bots named as
in the file (the search bot reads its budget from its name). ``table`` plays only the
groups of that schedule (default tournaments/strength.yaml) in which the search bot at one
budget meets the game's heuristic and the random bots and no one else (duplicate: every
deal in every seat rotation), the first ``--deals`` deals: the very matches, ids and seeds
that ``arena run`` plays among the others. Both print mean place (1 = first) per bot and game with a 95% interval, and
the paired difference search - heuristic per deal; ``--out`` appends every match as a JSON
line (and a match already in that file is not played again), and ``--summary F`` re-reads such a file instead of playing.

Budgets are CPU seconds per decision (time.process_time), so a loaded machine slows the
run down but does not weaken the bot. Intervals: Student t over deals (a deal's rotations
and groups averaged first, as they share the cards).
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bot_strength as bs  # noqa: E402

from arena.report.ratings import t95  # noqa: E402

SEARCH = ROOT / "bots" / "search" / "search_bot.py"
STRENGTH = ROOT / "tournaments" / "strength.yaml"


def mean_ci(xs: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% interval."""
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return m, float("inf")
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return m, t95(n - 1) * sd / math.sqrt(n)


def load_named(path: Path, name: str) -> bs.LoadedBot:
    bot = bs.load_bot(path)
    bot.name = name  # what the start message calls it: the search bot's budget is in its name
    return bot


def play(matches: list[dict[str, Any]], bots: dict[str, bs.LoadedBot], out: Path | None) -> list[dict[str, Any]]:
    rows = []
    for m in matches:
        t = time.process_time()
        res = bs.play_game(
            m["game"], [bots[b] for b in m["bots"]], m["deal_seed"], m["options"], match_seed=m["match_seed"]
        )
        row = {
            **m,
            "places": [p + 1 for p in res.places],
            "capped": res.capped,
            "cpu_s": round(time.process_time() - t, 2),
        }
        rows.append(row)
        if out:
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")
    return rows


def field_matches(tournament: Path, deal_factor: float) -> tuple[list[dict[str, Any]], dict[str, Path]]:
    schedule, paths = bs.field_schedule(tournament, deal_factor) if deal_factor < 10**6 else _schedule(tournament)
    return [
        {
            "id": m.match_id,
            "game": m.game,
            "players": m.players,
            "bots": list(m.bots),
            "deal": f"{m.game}/p{m.players}/{m.deal_seed}",
            "deal_seed": m.deal_seed,
            "match_seed": m.match_seed,
            "options": m.options,
        }
        for m in schedule
    ], paths


def heuristic_copies(game: str, names: Any) -> list[str]:
    """The game's heuristic among ``names``, and its copies named ``<heuristic>_2``, ``_3``."""
    h = bs.HEURISTICS[game].stem
    return [b for b in names if b == h or (b.startswith(h + "_") and b[len(h) + 1 :].isdigit())]


def fields(game: str, players: int) -> list[frozenset[str]]:
    """The opponents a search bot is measured against: the heuristic and random bots
    (2 players: the heuristic alone, and random_bot alone), or the heuristic in every other
    seat (its copies ``<heuristic>_2``, ``_3``)."""
    h = bs.HEURISTICS[game].stem
    if players == 2:
        return [frozenset({h}), frozenset({"random_bot"})]
    randoms = ["random_bot", "random_twin"] + [f"random_{k}" for k in range(3, players)]
    copies = [h] + [f"{h}_{k}" for k in range(2, players)]
    return [frozenset([h] + randoms[: players - 2]), frozenset(copies)]


def table_matches(
    tournament: Path,
    label: str,
    players: int,
    budgets: list[float],
    deals: int,
    opponents: frozenset[str] | None = None,
    first_deal: int = 0,
) -> tuple[list[dict[str, Any]], dict[str, Path]]:
    """The matches of the tournament's round robin where ``search-<budget>s`` sits with one of
    the ``fields`` of opponents (or exactly ``opponents``) and no one else: same ids, seats and
    seeds as ``arena run`` gives them, deals ``first_deal`` to ``deals - 1``."""
    matches, paths = _whole_schedule(tournament)
    out = []
    for b in budgets:
        name = f"search-{b:g}s"
        for m in matches:
            bots = set(m["bots"])
            if (
                m["id"].split("/")[0] == label
                and m["players"] == players
                and name in bots
                and frozenset(bots - {name}) in fields(m["game"], players)
                and (opponents is None or frozenset(bots - {name}) == opponents)
                and first_deal <= int(m["id"].split("/d")[1].split("/")[0]) < deals
            ):
                out.append(m)
    return out, paths


@functools.lru_cache(maxsize=4)
def _whole_schedule(tournament: Path) -> tuple[list[dict[str, Any]], dict[str, Path]]:
    """``field_matches`` at the file's own deals, built once per file (35,680 matches for
    strength.yaml: seconds of CPU); the callers only read it."""
    return field_matches(tournament, 10**6)


def _schedule(tournament: Path) -> tuple[list[Any], dict[str, Path]]:
    """The tournament's own schedule (deals as written)."""
    return bs.field_schedule(tournament, 1.0)


def complete(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Only deals played in every seat rotation (a run stopped mid-deal keeps duplicate fair)."""
    rows = list({r["id"]: r for r in rows}.values())  # a match played twice counts once
    count: dict[tuple[str, tuple[str, ...]], int] = defaultdict(int)
    for r in rows:
        count[(r["deal"], tuple(sorted(r["bots"])))] += 1
    return [r for r in rows if count[(r["deal"], tuple(sorted(r["bots"])))] >= r["players"]]


def summary(rows: list[dict[str, Any]]) -> None:
    """Per table (game, players, the set of bots at it): each bot's mean place (1 = first) with a
    95% interval over deals, and the paired difference search - heuristic per deal."""
    tables: dict[tuple[str, int, tuple[str, ...]], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        tables[(r["game"], r["players"], tuple(sorted(r["bots"])))].append(r)
    for (game, players, names), trs in sorted(tables.items()):
        heur = bs.HEURISTICS[game].stem
        per: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for r in trs:
            for bot, place in zip(r["bots"], r["places"]):
                per[bot][r["deal"]].append(place)
        means = {b: {d: sum(v) / len(v) for d, v in dd.items()} for b, dd in per.items()}
        print(f"\n{game}, {players} players: {', '.join(names)}")
        print(f"  {'bot':22} {'matches':>7} {'deals':>5} {'mean place':>10} {'95% CI':>15}")
        for bot in sorted(names, key=lambda b: sum(means[b].values()) / len(means[b])):
            m, h = mean_ci(list(means[bot].values()))
            k = sum(len(v) for v in per[bot].values())
            print(f"  {bot:22} {k:>7} {len(means[bot]):>5} {m:>10.2f}   [{m - h:.2f}, {m + h:.2f}]")
        copies = heuristic_copies(game, names)
        for bot in (b for b in names if b.startswith("search")):
            if copies:
                diffs = [means[bot][d] - sum(means[c][d] for c in copies) / len(copies) for d in means[bot]]
                m, h = mean_ci(diffs)
                verdict = "significant" if m + h < 0 else "not significant"
                print(
                    f"  {bot} - {heur}: {m:+.2f} places [{m - h:+.2f}, {m + h:+.2f}] "
                    f"over {len(diffs)} deals ({verdict})"
                )


def markdown(rows: list[dict[str, Any]]) -> None:
    """One markdown row per table: the search bot, the heuristic, random, and the difference."""
    tables: dict[tuple[str, int, tuple[str, ...]], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        tables[(r["game"], r["players"], tuple(sorted(r["bots"])))].append(r)
    print(
        "| game | players | search budget | opponents | deals (matches) | search | heuristic | random | search − heuristic |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")

    def cell(xs: list[float]) -> str:
        m, h = mean_ci(xs)
        return f"{m:.2f} ± {h:.2f}" if h != float("inf") else f"{m:.2f}"

    for (game, players, names), trs in sorted(tables.items()):
        heur = bs.HEURISTICS[game].stem
        search = next(b for b in names if b.startswith("search"))
        per: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for r in trs:
            for bot, place in zip(r["bots"], r["places"]):
                per[bot][r["deal"]].append(place)
        means = {b: {d: sum(v) / len(v) for d, v in dd.items()} for b, dd in per.items()}
        deals = sorted(means[search])
        randoms = [b for b in names if b.startswith("random")]
        rnd = [sum(means[b][d] for b in randoms) / len(randoms) for d in deals] if randoms else []
        copies = heuristic_copies(game, names)
        heur_mean = {d: sum(means[c][d] for c in copies) / len(copies) for d in deals} if copies else {}
        h = cell(list(heur_mean.values())) if copies else "–"
        diff = "–"
        if copies:
            m, hw = mean_ci([means[search][d] - heur_mean[d] for d in deals])
            diff = f"{m:+.2f} ± {hw:.2f}" if hw != float("inf") else f"{m:+.2f}"
            if m + hw < 0:
                diff += " (significant)"
        opp = ", ".join(b for b in names if b != search and b not in copies[1:])
        if len(copies) > 1:
            opp = opp.replace(heur, f"{heur} ×{len(copies)}")
        print(
            f"| {game} | {players} | {search.removeprefix('search-')} | {opp} | {len(deals)} ({len(trs)}) | "
            f"{cell([means[search][d] for d in deals])} | {h} | {cell(rnd) if rnd else '–'} | {diff} |"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("field")
    f.add_argument("tournament", nargs="?", default=str(STRENGTH))
    f.add_argument("--deal-factor", type=float, default=1.0)
    s = sub.add_parser("table")
    s.add_argument("label", help="the game entry's label (its id unless it has a label)")
    s.add_argument("players", type=int)
    s.add_argument("--budgets", type=float, nargs="+", default=[0.1, 0.5, 2.0])
    s.add_argument("--deals", type=int, default=12, help="the first DEALS deals of the entry")
    s.add_argument("--tournament", default=str(STRENGTH))
    s.add_argument("--from-deal", type=int, default=0, help="skip the deals before this one (to share a run)")
    s.add_argument("--opponents", help="only this field, its bots comma-separated (e.g. divers_heuristic)")
    for p in (f, s):
        p.add_argument("--out", type=Path, help="append every match as a JSON line")
    sm = sub.add_parser("summary")
    sm.add_argument("files", type=Path, nargs="+")
    sm.add_argument("--markdown", action="store_true", help="one table row per group, for docs/performance.md")
    args = ap.parse_args()
    if args.cmd == "summary":
        rows = [json.loads(ln) for p in args.files for ln in p.read_text().splitlines() if ln.strip()]
        rows = complete(rows)
        markdown(rows) if args.markdown else summary(rows)
        return 0
    t = time.perf_counter()
    if args.cmd == "field":
        matches, paths = field_matches(Path(args.tournament), args.deal_factor)
    else:
        field = frozenset(args.opponents.split(",")) if args.opponents else None
        matches, paths = table_matches(
            Path(args.tournament), args.label, args.players, args.budgets, args.deals, field, args.from_deal
        )
    if args.out and args.out.exists():  # resume: a match already in the file is not played again
        done = {json.loads(ln)["id"] for ln in args.out.read_text().splitlines() if ln.strip()}
        matches = [m for m in matches if m["id"] not in done]
    bots = {name: load_named(path, name) for name, path in paths.items()}
    rows = play(matches, bots, args.out)
    summary(rows)
    print(f"\n{len(rows)} matches, {time.perf_counter() - t:.0f} s wall, {time.process_time():.0f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
