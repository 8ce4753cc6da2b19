"""This project's search bot against OpenSpiel's own ISMCTS, at equal CPU per decision.

    python benchmarks/openspiel_strength.py --games tightwad:3 divers-weights:2 palace:2 \\
        --deals 12 --budget 0.1 [--out F]
    python benchmarks/openspiel_strength.py --summary F

Duplicate deals, as tournaments/strength.yaml plays them: every deal is played once per seat
rotation, the search bot (bots/search/search_bot.py) in one seat and the bot folder
bots/openspiel_ismcts (OpenSpiel's own open_spiel.python.algorithms.ismcts.ISMCTSBot, written
by others: UCT c=2, one random rollout to the end of the game per simulation, the most visited
move, on the games as the OpenSpiel bridge registers them) in every other seat. Both are the
bot files a tournament runs, loaded in process as benchmarks/bot_strength.py loads any bot file
(no sandbox, no referee), and see the observations the referee sends, through JSON.

Equal CPU: both are named for ``--budget`` (``search-0.05s``, ``ismcts-0.05s``) and so think
that many CPU seconds (time.process_time) per decision, checked after each simulation (ISMCTS
runs at least two: the first only expands the root). No time control is sent, so neither
stops early on the wall clock. Both play forced moves at once. The figure per deal is the
search bot's mean place minus the mean place of the ISMCTS seats (places 1 = first; negative =
the search bot ahead), averaged over the deal's rotations; intervals are Student t 95% over
deals. Needs ``pip install -e '.[openspiel]'``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bot_strength as bs  # noqa: E402
from search_strength import mean_ci  # noqa: E402  (the same interval as the search bot's table)

from games import REGISTRY  # noqa: E402

SEARCH = ROOT / "bots" / "search" / "search_bot.py"
ISMCTS = ROOT / "bots" / "openspiel_ismcts" / "main.py"
FIRST_DEAL = 500  # deal seeds FIRST_DEAL, FIRST_DEAL + 1, ...


def play_deal(
    game_id: str, players: int, deal: int, rotation: int, budget_s: float, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One match: the search bot in seat ``rotation``, the ISMCTS bot folder in the others,
    both loaded in process and named for the budget (``search-0.05s``, ``ismcts-0.05s``)."""
    state = REGISTRY[game_id].new_game(players, deal, options)
    names = [f"ismcts-{budget_s:g}s"] * players
    names[rotation] = f"search-{budget_s:g}s"
    bots = [bs.load_bot(SEARCH if s == rotation else ISMCTS) for s in range(players)]
    for b, name in zip(bots, names):
        b.name = name
    match_seed = deal * 100 + rotation
    matches = [b.start(bs.start_message(state, game_id, s, match_seed, names)) for s, b in enumerate(bots)]
    cpu = {"search": 0.0, "ismcts": 0.0}
    decisions = {"search": 0, "ismcts": 0}
    while not state.is_over():
        for seat in tuple(state.to_move()):
            if state.is_over() or seat not in state.to_move():
                break
            who = "search" if seat == rotation else "ismcts"
            obs = json.loads(json.dumps(state.observation(seat)))  # as over the protocol
            t = time.process_time()
            action = bots[seat].act(obs, matches[seat])
            cpu[who] += time.process_time() - t
            decisions[who] += 1
            state.apply(seat, action)
    searchers = [m.memory["bot"] for s, m in enumerate(matches) if s != rotation and "bot" in m.memory]
    places = [p + 1 for p in state.result().places]
    return {
        "game": game_id,
        "players": players,
        "deal": deal,
        "rotation": rotation,
        "budget_s": budget_s,
        "places": places,
        "search_place": places[rotation],
        "ismcts_place": sum(p for s, p in enumerate(places) if s != rotation) / (players - 1),
        "cpu_s": {k: round(v, 2) for k, v in cpu.items()},
        "decisions": decisions,
        "ismcts_sims": sum(b.sims for b in searchers),
        "ismcts_searches": sum(b.searches for b in searchers),
        "capped": state.result().capped,
    }


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per game and player count: deals complete in every rotation, the mean difference
    search - ISMCTS in places with its 95% interval, and what each side did with its CPU."""
    groups: dict[tuple[str, int, float], dict[int, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    seen = set()
    for r in rows:
        key = (r["game"], r["players"], r["budget_s"], r["deal"], r["rotation"])
        if key in seen:
            continue  # a match played twice (two runs over the same deals) counts once
        seen.add(key)
        groups[(r["game"], r["players"], r["budget_s"])][r["deal"]].append(r)
    out = []
    for (game, players, budget), deals in sorted(groups.items()):
        full = {d: rs for d, rs in deals.items() if len({r["rotation"] for r in rs}) == players}
        if not full:
            continue
        diffs = [sum(r["search_place"] - r["ismcts_place"] for r in rs) / len(rs) for rs in full.values()]
        m, h = mean_ci(diffs)
        flat = [r for rs in full.values() for r in rs]
        s_place, _ = mean_ci([sum(r["search_place"] for r in rs) / len(rs) for rs in full.values()])
        i_place, _ = mean_ci([sum(r["ismcts_place"] for r in rs) / len(rs) for rs in full.values()])
        sims = sum(r["ismcts_sims"] for r in flat) / max(1, sum(r["ismcts_searches"] for r in flat))
        cpu_dec = {
            k: sum(r["cpu_s"][k] for r in flat) / max(1, sum(r["decisions"][k] for r in flat))
            for k in ("search", "ismcts")
        }
        out.append(
            {
                "game": game,
                "players": players,
                "budget_s": budget,
                "deals": len(full),
                "matches": len(flat),
                "search_place": round(s_place, 2),
                "ismcts_place": round(i_place, 2),
                "diff": round(m, 2),
                "ci": round(h, 2),
                "significant": m + h < 0 or m - h > 0,
                "ismcts_sims_per_search": round(sims, 1),
                "cpu_per_decision": {k: round(v, 3) for k, v in cpu_dec.items()},
            }
        )
    return out


def markdown(table: list[dict[str, Any]]) -> str:
    lines = [
        "| game | players | CPU s / decision | deals (matches) | search bot | OpenSpiel ISMCTS | "
        "search − ISMCTS | ISMCTS simulations / search | CPU s used / decision (search, ISMCTS) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in table:
        sig = " (significant)" if t["significant"] else ""
        lines.append(
            f"| {t['game']} | {t['players']} | {t['budget_s']:g} | {t['deals']} ({t['matches']}) | "
            f"{t['search_place']:.2f} | {t['ismcts_place']:.2f} | {t['diff']:+.2f} ± {t['ci']:.2f}{sig} | "
            f"{t['ismcts_sims_per_search']:.1f} | {t['cpu_per_decision']['search']:.3f}, "
            f"{t['cpu_per_decision']['ismcts']:.3f} |"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="+", default=["tightwad:3", "divers-weights:2", "palace:2"], help="GAME:PLAYERS")
    ap.add_argument("--deals", type=int, default=12)
    ap.add_argument(
        "--first-deal", type=int, default=FIRST_DEAL, help="deal seeds from this one on (to split a run over processes)"
    )
    ap.add_argument("--budget", type=float, default=0.1, help="CPU seconds per decision, both bots")
    ap.add_argument("--out", type=Path, help="append every match as a JSON line (resumes)")
    ap.add_argument("--summary", type=Path, nargs="+", help="only summarise these files")
    args = ap.parse_args()
    if args.summary:
        rows = [json.loads(ln) for p in args.summary for ln in p.read_text().splitlines() if ln.strip()]
        print(markdown(summary(rows)))
        return 0
    done = set()
    if args.out and args.out.exists():
        done = {
            (r["game"], r["players"], r["deal"], r["rotation"], r["budget_s"])
            for r in map(json.loads, args.out.read_text().splitlines())
        }
    rows = []
    t = time.perf_counter()
    for spec in args.games:
        game, players = spec.split(":")
        for deal in range(args.first_deal, args.first_deal + args.deals):
            for rot in range(int(players)):
                if (game, int(players), deal, rot, args.budget) in done:
                    continue
                row = play_deal(game, int(players), deal, rot, args.budget)
                rows.append(row)
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(json.dumps(row) + "\n")
    print(markdown(summary(rows)))
    print(f"\n{len(rows)} matches, {time.perf_counter() - t:.0f} s wall, {time.process_time():.0f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
