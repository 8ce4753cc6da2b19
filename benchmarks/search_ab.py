"""The search bot against an older version of itself, side by side, in process.

    python benchmarks/search_ab.py play LABEL PLAYERS --old-commit 1bd9efc --budget 0.1 --deals 12 \
        [--opponents A,B] --out F
    python benchmarks/search_ab.py summary F [F ...]
    python benchmarks/search_ab.py identical --old-commit 1bd9efc [--games 2] [--sims 60]

``play`` takes the matches of tournaments/strength.yaml that ``search_strength.py table``
takes (the entry LABEL, its search bot at ``--budget`` CPU seconds a decision with one of its
measured fields, the first ``--deals`` deals, every seat rotation), and plays each deal twice:
with the old bot (``bots/search/search_bot.py`` at ``--old-commit``, copied to a temporary
file) and with the bot of this tree, old first, deal by deal, so that both meet the same load.
Every match is appended to ``--out`` as a JSON line with its ``version``, and a match already
there is not played again. Each row also holds the search bot's simulations and CPU seconds.

``summary`` prints, per table and version: the search bot's mean place and its paired difference
with the heuristic per deal (95% Student-t over deals, as search_strength.py), the paired
difference new - old per deal, and the simulations per CPU second of each version.

``identical`` asks both versions for the decision at the same observations with the same
generator state and the same number of simulations, along games where the new bot plays
(30% of its moves replaced by random ones, to reach varied positions), in every game (two
Divers Weights variants, two Palace player counts), and counts the decisions that differ.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bot_strength as bs  # noqa: E402
import search_strength as ss  # noqa: E402


class Counted:
    """A loaded search bot whose simulations and CPU seconds are added up."""

    def __init__(self, bot: bs.LoadedBot) -> None:
        self.bot = bot
        self.sims = 0
        self.cpu = 0.0
        inner = bot.choose

        def choose(observation: dict[str, Any], match: Any) -> int:
            match.memory.pop("last_sims", None)
            t = time.process_time()
            a = inner(observation, match)
            self.cpu += time.process_time() - t
            self.sims += match.memory.get("last_sims", 0)
            return a

        bot.choose = choose


def old_bot(commit: str) -> Path:
    text = subprocess.run(
        ["git", "show", f"{commit}:bots/search/search_bot.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    path = Path(tempfile.mkdtemp(prefix="search-ab-")) / "search_bot.py"
    path.write_text(text)
    return path


def play(args: argparse.Namespace) -> None:
    field = frozenset(args.opponents.split(",")) if args.opponents else None
    matches, paths = ss.table_matches(ss.STRENGTH, args.label, args.players, [args.budget], args.deals, field)
    done = set()
    if args.out.exists():
        done = {(r["version"], r["id"]) for r in map(json.loads, args.out.read_text().splitlines()) if r}
    name = f"search-{args.budget:g}s"
    versions = {"old": old_bot(args.old_commit), "new": ss.SEARCH}
    others = {n: ss.load_named(p, n) for n, p in paths.items() if n != name and not n.startswith("search")}
    by_deal: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for m in matches:
        by_deal[m["deal"]].append(m)
    for deal, ms in by_deal.items():
        for version, path in versions.items():
            todo = [m for m in ms if (version, m["id"]) not in done]
            if not todo:
                continue
            search = Counted(ss.load_named(path, name))
            for m in todo:
                search.sims = 0
                search.cpu = 0.0
                row = ss.play([m], {**others, name: search.bot}, None)[0]
                row.update(version=version, sims=search.sims, search_cpu_s=round(search.cpu, 3))
                with open(args.out, "a") as f:
                    f.write(json.dumps(row) + "\n")
        print(f"{deal} done", flush=True)


def summary(files: list[Path]) -> None:
    rows = [json.loads(ln) for p in files for ln in p.read_text().splitlines() if ln.strip()]
    tables: dict[tuple[str, int, tuple[str, ...]], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        tables[(r["game"], r["players"], tuple(sorted(r["bots"])))].append(r)
    for (game, players, names), trs in sorted(tables.items()):
        search = next(b for b in names if b.startswith("search"))
        copies = ss.heuristic_copies(game, names)
        per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))  # version -> deal -> diffs
        place: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        sims: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        by = defaultdict(list)
        for r in trs:
            by[(r["version"], r["deal"])].append(r)
        deals = sorted(
            {
                d
                for v, d in by
                if (("old", d) in by and ("new", d) in by and len(by[("old", d)]) == len(by[("new", d)]) == players)
            }
        )
        for (version, deal), rs in by.items():
            if deal not in deals:
                continue
            for r in rs:
                pl = dict(zip(r["bots"], r["places"]))
                h = sum(pl[c] for c in copies) / len(copies)
                per[version][deal].append(pl[search] - h)
                place[version][deal].append(pl[search])
                sims[version][0] += r["sims"]
                sims[version][1] += r["search_cpu_s"]
        print(f"\n{game}, {players} players: {', '.join(names)} ({len(deals)} deals, every rotation)")
        mean_diff = {}
        for version in ("old", "new"):
            d = {k: sum(v) / len(v) for k, v in per[version].items()}
            mean_diff[version] = d
            m, h = ss.mean_ci(list(d.values()))
            pm, ph = ss.mean_ci([sum(v) / len(v) for v in place[version].values()])
            s, c = sims[version]
            print(
                f"  {version}: search place {pm:.2f} ± {ph:.2f}, search - heuristic {m:+.2f} ± {h:.2f}, "
                f"{s / c:,.0f} simulations per CPU second ({c:.0f} s)"
            )
        m, h = ss.mean_ci([mean_diff["new"][k] - mean_diff["old"][k] for k in deals])
        ratio = (sims["new"][0] / sims["new"][1]) / (sims["old"][0] / sims["old"][1])
        print(f"  new - old (search - heuristic, paired by deal): {m:+.2f} ± {h:.2f}; speed new/old {ratio:.2f}")


IDENTICAL = [
    ("tightwad", 4, {}),
    ("divers-weights", 2, {}),
    ("divers-weights", 4, {}),
    ("divers-weights", 3, {"bidding": True}),
    ("palace", 3, {}),
    ("palace", 2, {}),
]


def identical(args: argparse.Namespace) -> None:
    import random

    from games import REGISTRY

    old_path = old_bot(args.old_commit)
    for game, players, options in IDENTICAL:
        same = differ = 0
        for g in range(args.games):
            seed = 100 + g
            old, new = bs.load_bot(old_path), bs.load_bot(ss.SEARCH)
            state = REGISTRY[game].new_game(players, seed, options)
            names = [f"search-{args.sims}sims"] * players
            mo = [old.start(bs.start_message(state, game, s, seed, names)) for s in range(players)]
            mn = [new.start(bs.start_message(state, game, s, seed, names)) for s in range(players)]
            pick = random.Random(seed)
            k = 0
            while not state.is_over():
                for seat in tuple(state.to_move()):
                    if state.is_over() or seat not in state.to_move():
                        break
                    obs = json.loads(json.dumps(state.observation(seat)))
                    k += 1
                    mo[seat].memory["rnd"] = random.Random(k)
                    mn[seat].memory["rnd"] = random.Random(k)
                    a, b = old.choose(obs, mo[seat]), new.choose(obs, mn[seat])
                    same += a == b
                    differ += a != b
                    state.apply(seat, b if pick.random() < 0.7 else pick.randrange(len(obs["legal_actions"])))
        print(
            f"{game}, {players} players, {options or 'default options'}: {same} decisions the same, {differ} different",
            flush=True,
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("play")
    p.add_argument("label")
    p.add_argument("players", type=int)
    p.add_argument("--old-commit", required=True)
    p.add_argument("--budget", type=float, default=0.1)
    p.add_argument("--deals", type=int, default=12)
    p.add_argument("--opponents")
    p.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("summary")
    s.add_argument("files", type=Path, nargs="+")
    i = sub.add_parser("identical")
    i.add_argument("--old-commit", required=True)
    i.add_argument("--games", type=int, default=2, help="games per variant")
    i.add_argument("--sims", type=int, default=60)
    args = ap.parse_args()
    if args.cmd == "play":
        play(args)
    elif args.cmd == "identical":
        identical(args)
    else:
        summary(args.files)
    return 0


if __name__ == "__main__":
    sys.exit(main())
