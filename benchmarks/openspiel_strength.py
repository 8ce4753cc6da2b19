"""This project's search bot against OpenSpiel's own ISMCTS, at equal CPU per decision.

    python benchmarks/openspiel_strength.py --games tightwad:3 divers-weights:2 palace:2 \\
        --deals 12 --budget 0.1 [--out F]
    python benchmarks/openspiel_strength.py --summary F

Duplicate deals, as tournaments/strength.yaml plays them: every deal is played once per seat
rotation, the search bot (bots/search/search_bot.py, loaded in process as
benchmarks/bot_strength.py loads any bot file) in one seat and OpenSpiel's ISMCTS
(open_spiel.python.algorithms.ismcts.ISMCTSBot, written by others: UCT c=2, one random
rollout to the end of the game per simulation, the most visited move) in every other seat,
on the games as ``arena.openspiel`` registers them (sequential form with hidden moves: ISMCTS
asserts sequential dynamics; its worlds come from ``resample_from_infostate``).

Equal CPU: both think ``--budget`` CPU seconds (time.process_time) per decision. The search
bot reads it from its name; ISMCTS runs OpenSpiel's simulation loop until the same budget is
spent (``TimedISMCTS``: ISMCTSBot.run_search with a CPU deadline instead of a fixed count,
at least two simulations: the first only expands the root). Both play forced moves at once. The figure per deal is the search
bot's mean place minus the mean place of the ISMCTS seats (places 1 = first; negative = the
search bot ahead), averaged over the deal's rotations; intervals are Student t 95% over deals.
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

SEARCH = ROOT / "bots" / "search" / "search_bot.py"
FIRST_DEAL = 500  # deal seeds FIRST_DEAL, FIRST_DEAL + 1, ... (chance outcomes of the bridge)




def timed_ismcts(game: Any, budget_s: float, seed: int) -> Any:
    """OpenSpiel's ISMCTSBot whose simulation loop stops after ``budget_s`` of CPU time."""
    import numpy as np
    import pyspiel
    from open_spiel.python.algorithms import ismcts, mcts

    class TimedISMCTS(ismcts.ISMCTSBot):
        sims = 0
        searches = 0

        def run_search(self, state):  # ISMCTSBot.run_search, the loop bounded by CPU time
            self.reset()
            legal_actions = state.legal_actions()
            if len(legal_actions) == 1:
                return [(legal_actions[0], 1.0)]
            self._root_node = self.create_new_node(state)
            end = time.process_time() + budget_s
            n = 0
            while n < 2 or time.process_time() < end:  # the first one only expands the root
                self.run_simulation(self.sample_root_state(state))
                n += 1
            TimedISMCTS.sims += n
            TimedISMCTS.searches += 1
            return self.get_final_policy(state, self._root_node)

    rs = np.random.RandomState(seed % 2**32)
    assert game.get_type().dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    return TimedISMCTS(game, mcts.RandomRolloutEvaluator(1, rs), uct_c=2.0, max_simulations=1,
                       random_state=rs)


def play_deal(game_id: str, players: int, deal: int, rotation: int, budget_s: float,
              options: dict[str, Any] | None = None) -> dict[str, Any]:
    """One match: the search bot in seat ``rotation``, ISMCTS in the others."""
    import pyspiel

    import arena.openspiel as aos

    params: dict[str, Any] = {"players": players, "deals": FIRST_DEAL + 10_000}
    if game_id != "tightwad":
        params["simultaneous"] = False
    params.update(options or {})
    game = pyspiel.load_game(aos.NAMES[game_id], params)
    state = game.new_initial_state()
    state.apply_action(deal)
    names = ["ismcts"] * players
    names[rotation] = f"search-{budget_s:g}s"
    search = bs.load_bot(SEARCH)
    search.name = names[rotation]
    match_seed = deal * 100 + rotation
    match = search.start(bs.start_message(state.engine, game_id, rotation, match_seed, names))
    ism = timed_ismcts(game, budget_s, match_seed)
    cpu = {"search": 0.0, "ismcts": 0.0}
    decisions = {"search": 0, "ismcts": 0}
    while not state.is_terminal():
        seat = state.current_player()
        who = "search" if seat == rotation else "ismcts"
        t = time.process_time()
        if who == "search":
            action = search.act(state.engine.observation(seat), match)
        else:
            action = int(ism.step(state))
        cpu[who] += time.process_time() - t
        decisions[who] += 1
        state.apply_action(action)
    places = [p + 1 for p in state.engine.result().places]
    return {"game": game_id, "players": players, "deal": deal, "rotation": rotation, "budget_s": budget_s,
            "places": places, "search_place": places[rotation],
            "ismcts_place": sum(p for s, p in enumerate(places) if s != rotation) / (players - 1),
            "cpu_s": {k: round(v, 2) for k, v in cpu.items()}, "decisions": decisions,
            "ismcts_sims": type(ism).sims, "ismcts_searches": type(ism).searches,
            "capped": state.engine.result().capped}


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per game and player count: deals complete in every rotation, the mean difference
    search - ISMCTS in places with its 95% interval, and what each side did with its CPU."""
    groups: dict[tuple[str, int, float], dict[int, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
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
        cpu_dec = {k: sum(r["cpu_s"][k] for r in flat) / max(1, sum(r["decisions"][k] for r in flat))
                   for k in ("search", "ismcts")}
        out.append({"game": game, "players": players, "budget_s": budget, "deals": len(full),
                    "matches": len(flat), "search_place": round(s_place, 2), "ismcts_place": round(i_place, 2),
                    "diff": round(m, 2), "ci": round(h, 2), "significant": m + h < 0 or m - h > 0,
                    "ismcts_sims_per_search": round(sims, 1),
                    "cpu_per_decision": {k: round(v, 3) for k, v in cpu_dec.items()}})
    return out


def markdown(table: list[dict[str, Any]]) -> str:
    lines = ["| game | players | CPU s / decision | deals (matches) | search bot | OpenSpiel ISMCTS | "
             "search − ISMCTS | ISMCTS simulations / search | CPU s used / decision (search, ISMCTS) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for t in table:
        sig = " (significant)" if t["significant"] else ""
        lines.append(f"| {t['game']} | {t['players']} | {t['budget_s']:g} | {t['deals']} ({t['matches']}) | "
                     f"{t['search_place']:.2f} | {t['ismcts_place']:.2f} | {t['diff']:+.2f} ± {t['ci']:.2f}{sig} | "
                     f"{t['ismcts_sims_per_search']:.1f} | {t['cpu_per_decision']['search']:.3f}, "
                     f"{t['cpu_per_decision']['ismcts']:.3f} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="+", default=["tightwad:3", "divers-weights:2", "palace:2"],
                    help="GAME:PLAYERS")
    ap.add_argument("--deals", type=int, default=12)
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
        done = {(r["game"], r["players"], r["deal"], r["rotation"], r["budget_s"])
                for r in map(json.loads, args.out.read_text().splitlines())}
    rows = []
    t = time.perf_counter()
    for spec in args.games:
        game, players = spec.split(":")
        for deal in range(FIRST_DEAL, FIRST_DEAL + args.deals):
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
