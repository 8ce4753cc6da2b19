"""Strength of the sample heuristic bots against random, in process (no referee).

    python -m arena.bench.bot_strength [--scale 1.0] [--bot bots/palace_heuristic.py]
    python -m arena.bench.bot_strength --field [tournaments/spring.yaml] [--deal-factor 10]

A bot file stays a protocol program: it is executed with a fake ``botkit`` whose
``run(choose, ...)`` only captures ``choose``. Each bot gets its own ``random``
(a ``random.Random`` seeded with its start-message seed, as botkit seeds the
global one), a ``botkit.Match`` built from the game's card table, and the
observations the referee would send. The heuristic sits in a rotating seat
against random bots; seeds are fixed, so the figures are reproducible.

``--field`` plays a tournament's whole field instead (arena.tournament.schedule's groups,
seating, rotations and seeds, with more deals) and prints each bot's mean place
per game and overall, and its rank in the leaderboard's TrueSkill order.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.bench import SAMPLE
from games import REGISTRY
from games.core import Result
from games.rng import derive_seed

BOTKIT_PATH = Path(__file__).resolve().parents[1] / "bot_helper" / "botkit.py"  # package data
BOTS = SAMPLE / "bots"  # package data: copies of the checkout's sample bots
RANDOM_BOT = BOTS / "random_bot.py"
HEURISTICS = {
    "tightwad": BOTS / "tightwad_heuristic.py",
    "divers-weights": BOTS / "divers_heuristic.py",
    "palace": BOTS / "palace_heuristic.py",
}
# (game, players, games played at scale 1.0, first deal seed)
SETUPS = [
    ("tightwad", 4, 200, 1_000),
    ("divers-weights", 2, 200, 2_000),
    ("divers-weights", 4, 200, 3_000),
    ("palace", 4, 100, 4_000),
]


@dataclass
class LoadedBot:
    """A bot file's ``choose`` with its private random generator."""

    path: Path
    name: str
    choose: Callable[[dict[str, Any], Any], int]
    rng: random.Random
    botkit: types.ModuleType
    seconds: float = 0.0
    decisions: int = 0
    slowest: float = 0.0

    def start(self, start_msg: dict[str, Any]) -> Any:
        """A ``botkit.Match`` for this start message; reseeds the bot's random."""
        match = self.botkit.Match(start_msg)
        self.rng.seed(match.seed)
        return match

    def act(self, observation: dict[str, Any], match: Any) -> int:
        t = time.perf_counter()
        action = int(self.choose(observation, match))
        dt = time.perf_counter() - t
        self.seconds += dt
        self.decisions += 1
        self.slowest = max(self.slowest, dt)
        return action


def fake_botkit(captured: dict[str, Any]) -> types.ModuleType:
    """The real botkit module, except that ``run`` records its arguments."""
    mod = types.ModuleType("botkit")
    mod.__file__ = str(BOTKIT_PATH)
    exec(compile(BOTKIT_PATH.read_text(), str(BOTKIT_PATH), "exec"), mod.__dict__)

    def run(choose: Callable[..., int], name: str = "bot", on_result: Any = None) -> None:
        captured["choose"] = choose
        captured["name"] = name

    mod.run = run  # type: ignore[attr-defined]
    return mod


def load_bot(path: str | Path) -> LoadedBot:
    """Execute a Python bot file with the fake botkit and capture its ``choose``."""
    path = Path(path)
    captured: dict[str, Any] = {}
    kit = fake_botkit(captured)
    saved = sys.modules.get("botkit")
    sys.modules["botkit"] = kit
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": str(path)}
    try:
        exec(compile(path.read_text(), str(path), "exec"), namespace)
    finally:
        if saved is None:
            sys.modules.pop("botkit", None)
        else:
            sys.modules["botkit"] = saved
    if "choose" not in captured:
        raise ValueError(f"{path}: the bot never called botkit.run(choose, ...)")
    rng = random.Random(0)
    if namespace.get("random") is random:
        namespace["random"] = rng  # a private generator: bots in one process stay independent
    kit.random = rng  # botkit's simple policies draw from the same generator, as in a real process
    return LoadedBot(path, captured["name"], captured["choose"], rng, kit)


def start_message(state: Any, game: str, seat: int, match_seed: int, names: list[str]) -> dict[str, Any]:
    """What the referee's start message holds (arena/match/protocol.py ``start``)."""
    return {
        "type": "start",
        "match_id": f"bench-{match_seed}",
        "game": game,
        "rules_version": state.spec.rules_version,
        "options": state.options,
        "players": state.players,
        "seat": seat,
        "seed": derive_seed(match_seed, "bot", seat),
        "bots": names,
        "time_control": {},
        "cards": state.card_table(),
    }


def play_game(
    game: str,
    bots: list[LoadedBot],
    seed: int,
    options: dict[str, Any] | None = None,
    roundtrip: bool = False,
    match_seed: int | None = None,
) -> Result:
    """One game, seat i played by bots[i]; ``roundtrip`` sends observations through JSON.

    ``seed`` deals the game; the bots' seeds derive from ``match_seed`` (default ``seed``).
    """
    state = REGISTRY[game].new_game(len(bots), seed, options)
    names = [b.name for b in bots]
    ms = seed if match_seed is None else match_seed
    matches = [b.start(start_message(state, game, s, ms, names)) for s, b in enumerate(bots)]
    while not state.is_over():
        for seat in tuple(state.to_move()):
            if state.is_over() or seat not in state.to_move():
                break
            obs = state.observation(seat)
            if roundtrip:
                obs = json.loads(json.dumps(obs))
            state.apply(seat, bots[seat].act(obs, matches[seat]))
    return state.result()


@dataclass
class Strength:
    games: int
    mean_place: float
    random_mean_place: float
    first_share: float
    ms_per_decision: float
    slowest_ms: float


def measure(
    bot_path: str | Path, game: str, players: int, games: int, first_seed: int, options: dict[str, Any] | None = None
) -> Strength:
    """The bot in seat (i mod players) of game i, random bots elsewhere."""
    hero = load_bot(bot_path)
    randoms = [load_bot(RANDOM_BOT) for _ in range(players - 1)]
    mine: list[int] = []
    theirs: list[int] = []
    for i in range(games):
        seat = i % players
        bots = randoms[:seat] + [hero] + randoms[seat:]
        places = play_game(game, bots, first_seed + i, options).places
        mine.append(places[seat])
        theirs.extend(p for s, p in enumerate(places) if s != seat)
    return Strength(
        games,
        sum(mine) / games,
        sum(theirs) / len(theirs),
        sum(p == 0 for p in mine) / games,
        1000 * hero.seconds / max(1, hero.decisions),
        1000 * hero.slowest,
    )


def table_places(
    paths: list[str | Path], game: str, games: int, first_seed: int, options: dict[str, Any] | None = None
) -> list[float]:
    """Mean 1-based place of each bot file at one table (a seat each), seats rotated every game."""
    bots = [load_bot(p) for p in paths]
    n = len(bots)
    total = [0.0] * n
    for i in range(games):
        order = [(s + i) % n for s in range(n)]  # seat s holds bots[order[s]]
        places = play_game(game, [bots[k] for k in order], first_seed + i // n, options).places
        for s, k in enumerate(order):
            total[k] += places[s] + 1
    return [t / games for t in total]


SPRING = SAMPLE / "tournaments" / "spring.yaml"  # package data: a copy of the checkout's


@dataclass
class FieldResult:
    """A whole field played in process: 1-based places per bot and game, and the ratings."""

    places: dict[str, dict[str, list[float]]]  # bot -> game -> place of each match (1 = first)
    ratings: Any  # arena.report.ratings.RatingReport of the same matches
    matches: int
    capped: int = 0  # matches stopped by the decision cap (C4)

    def mean_place(self, bot: str, game: str | None = None) -> float:
        """Mean 1-based place of ``bot`` in ``game`` (None: every match, as the overall table)."""
        games = [game] if game else list(self.places[bot])
        got = [p for g in games for p in self.places[bot].get(g, [])]
        return sum(got) / len(got)

    def ranking(self, scope: str = "overall") -> list[str]:
        """Bot names in leaderboard order (TrueSkill conservative rating) for a scope."""
        report = next(r for r in self.ratings.scopes if r.scope == scope)
        return [b.name for b in report.standings]


def field_schedule(
    tournament: str | Path = SPRING, deal_factor: float = 10.0, roster: list[str | Path] | None = None
) -> tuple[list[Any], dict[str, Path]]:
    """The tournament's schedule with every entry's deals multiplied by ``deal_factor``.

    Same games, player counts, options, groups, seating and seeds as ``arena run``
    (arena.tournament.schedule), only more deals. Bots: the tournament's roster (paths relative
    to the current folder, as in `arena run`; the bundled spring.yaml's to its sample bots), or
    ``roster`` if given (names = file stems, as in the arena).
    """
    import yaml

    from arena.tournament.config import parse_tournament
    from arena.tournament.roster import resolve_bots
    from arena.tournament.schedule import build_schedule

    base = SAMPLE if Path(tournament).resolve() == SPRING else Path.cwd()
    t = parse_tournament(yaml.safe_load(Path(tournament).read_text()), str(tournament), base)
    if roster is None:
        paths = {b.name: b.path for b in resolve_bots(t)}
    else:
        paths = {Path(p).stem: Path(p) for p in roster}
    games = [
        g.model_copy(update={"deals": max(1, round(g.deals * deal_factor)), "max_matches": 10**9}) for g in t.games
    ]
    entries = [types.SimpleNamespace(name=n) for n in sorted(paths)]
    # public deals: a strength measurement should reproduce from the file alone
    return build_schedule(t.model_copy(update={"games": games, "deals": "public"}), entries), paths  # type: ignore[arg-type]


def play_field(
    tournament: str | Path = SPRING, deal_factor: float = 10.0, roster: list[str | Path] | None = None
) -> FieldResult:
    """Play ``field_schedule`` in process and rate it as the leaderboard does (Python bots only)."""
    from arena.report.ratings import compute_ratings
    from arena.tournament.store import ResultRow

    schedule, paths = field_schedule(tournament, deal_factor, roster)
    bots = {name: load_bot(path) for name, path in paths.items()}
    places: dict[str, dict[str, list[float]]] = {name: {} for name in bots}
    rows = []
    capped = 0
    for m in schedule:
        res = play_game(m.game, [bots[b] for b in m.bots], m.deal_seed, m.options, match_seed=m.match_seed)
        capped += res.capped
        for bot, place in zip(m.bots, res.places):
            places[bot].setdefault(m.game, []).append(place + 1)
        rows.append(
            ResultRow(
                m.match_id,
                m.index,
                m.game,
                m.players,
                tuple(m.bots),
                tuple(res.places),
                tuple(res.scores),
                (None,) * m.players,
                (None,) * m.players,
                res.capped,
                False,
            )
        )
    return FieldResult(places, compute_ratings(rows), len(schedule), capped)


def print_field(result: FieldResult) -> None:
    """Mean place per game and overall, with each scope's leaderboard rank in brackets."""
    games = sorted({g for per in result.places.values() for g in per})
    ranks = {scope: {b: i + 1 for i, b in enumerate(result.ranking(scope))} for scope in games + ["overall"]}
    print(f"{result.matches} matches ({result.capped} capped); mean place (1 = first) [TrueSkill leaderboard rank]")
    print(f"{'bot':22}" + "".join(f" {g:>19}" for g in games + ["overall"]))
    for bot in result.ranking():
        cells = [f"{result.mean_place(bot, g):.2f} [{ranks[g][bot]}]" for g in games]
        cells.append(f"{result.mean_place(bot):.2f} [{ranks['overall'][bot]}]")
        print(f"{bot:22}" + "".join(f" {c:>19}" for c in cells))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the number of games")
    ap.add_argument("--bot", help="measure this bot file in every setup instead of each game's heuristic")
    ap.add_argument(
        "--field",
        nargs="?",
        const=str(SPRING),
        metavar="TOURNAMENT",
        help="play a tournament's whole field in process (default tournaments/spring.yaml)",
    )
    ap.add_argument(
        "--deal-factor",
        type=float,
        default=10.0,
        help="--field: multiply every game entry's deals (default 10: spring -> 40/40/20)",
    )
    ap.add_argument("--roster", nargs="+", metavar="BOT", help="--field: these bot files instead of the file's")
    args = ap.parse_args()
    if args.field:
        t = time.perf_counter()
        print_field(play_field(args.field, args.deal_factor * args.scale, args.roster))
        print(f"{time.perf_counter() - t:.1f} s")
        return 0
    print(
        f"{'bot':24} {'game':15} {'n':>2} {'games':>5} {'place':>6} {'random':>6} "
        f"{'first':>6} {'ms/dec':>7} {'max ms':>7}"
    )
    for game, players, n, seed in SETUPS:
        path = Path(args.bot) if args.bot else HEURISTICS[game]
        s = measure(path, game, players, max(players, round(n * args.scale)), seed)
        print(
            f"{path.name:24} {game:15} {players:>2} {s.games:>5} {s.mean_place:>6.2f} "
            f"{s.random_mean_place:>6.2f} {s.first_share:>6.1%} {s.ms_per_decision:>7.3f} "
            f"{s.slowest_ms:>7.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
