"""`arena bench` with no subcommand: every measure P1..P9 and P11 in one run, one table.

Each measure returns a row: id, what it measures, the figure, the target, whether the
target is met, and its details. Figures that the shared machine's load would distort
are ratios taken side by side in one run, and medians over ``repeats``.
Nothing here is asserted in unit tests (tests/bench/test_bench_suite.py only checks
that a tiny run completes and reports every id).
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing as mp
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

from arena.bench import SAMPLE
from arena.errors import ArenaError
from arena.interrupts import as_worker, held_pool, held_while_starting

ROOT = SAMPLE  # relative paths in the measures' tournaments: package data, not the checkout
IDS = ("P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "P9", "P11")


class _Quiet:
    """A text sink for the runner's progress and warnings while timing."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


_QUIET: Any = _Quiet()


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How much work each measure does; ``tiny`` is for the smoke test."""

    engine_seconds: float = 2.0
    protocol_rounds: int = 2000
    repeats: int = 3
    tournament: str = str(ROOT / "tournaments" / "spring.yaml")  # relative paths: from ROOT
    # P5 plays its file with this many times the deals: spring.yaml's 136 matches take about
    # 2 s, and the run's fixed costs (sandbox self-test, forking, reports) would hide the scaling
    throughput_deal_scale: int = 5
    luck_deals: int = 60
    luck_rollouts: int = 32
    luck_aivat_rollouts: int | None = None  # playouts per AIVAT value (None: the leaderboards' own)
    luck_levels: tuple[float, ...] = (0.0, 0.3, 0.6)  # the heuristic's noise levels (luck.measure's eps_levels)
    luck_replays: int = 4  # plays of each deal for the ceiling
    rating_matches: int = 100_000
    rating_store: str | None = None  # an existing store to rate instead of generating one
    timeout_decisions: int = 10_000
    ray_deal_scale: int = 5  # P11 plays the tournament with this many times the deals
    # P9: fields of in-process players ranked by schedule: adaptive and by round robins
    adaptive_sizes: tuple[int, ...] = (8, 16, 32)
    adaptive_trials: tuple[int, ...] = (6, 3, 2)  # per size: a quick look (docs/performance.md: more)
    # per size: the round robins measured (nested, so every size up to the largest costs nothing)
    adaptive_deals: tuple[tuple[int, ...], ...] = ((1, 2, 4, 5, 6, 7, 8), (1, 2), (1,))
    adaptive_top: int = 3

    @classmethod
    def tiny(cls) -> Sizes:
        return cls(
            engine_seconds=0.05,
            protocol_rounds=80,
            repeats=1,
            luck_deals=3,
            luck_rollouts=2,
            luck_aivat_rollouts=1,
            luck_levels=(0.0, 0.6),  # still two levels: their order is checked
            luck_replays=2,
            rating_matches=300,
            timeout_decisions=40,
            tournament=TINY_TOURNAMENT,
            throughput_deal_scale=1,
            ray_deal_scale=1,
            adaptive_sizes=(4,),
            adaptive_trials=(2,),
            adaptive_deals=((1,),),
            adaptive_top=1,
        )


TINY_TOURNAMENT = """name: bench-tiny
seed: 1
bots: [bots/random_bot.py, bots/tightwad_heuristic.py, bots/divers_heuristic.py]
games:
  - id: tightwad
    players: [3]
    deals: 1
"""


class _RowFields(TypedDict):
    id: str  # P1 ... P11
    measure: str
    figure: str
    target: str
    met: bool | None  # None: a figure with no pass mark
    details: dict[str, Any]  # the measure's own numbers


class BenchRow(_RowFields, total=False):
    """One row of the table and of bench.json."""

    seconds: float  # how long its measure took (added by ``run_all``)


class _ResultFields(TypedDict):
    format: str
    version: int
    date: str
    machine: dict[str, Any]
    load_average_after: list[float]
    sizes: dict[str, Any]
    rows: list[BenchRow]


class BenchResult(_ResultFields, total=False):
    """What ``run_all`` measured: bench.json (docs/performance.md)."""

    command: str  # the command line that ran it (added by `arena bench`)


def _row(pid: str, measure: str, figure: str, target: str, met: bool | None, **details: Any) -> BenchRow:
    return {"id": pid, "measure": measure, "figure": figure, "target": target, "met": met, "details": details}


# ---- P1, P2: engines ------------------------------------------------------------------


def p1_p2(sizes: Sizes) -> list[BenchRow]:
    from arena.bench.measures import bench_games

    runs = [bench_games(sizes.engine_seconds) for _ in range(sizes.repeats)]
    rows = []
    for pid, key, target_key, what in (
        ("P1", "no_obs_per_s", "target_no_obs", "random play in process, decisions/s"),
        ("P2", "with_obs_per_s", "target_with_obs", "random play with every decision's full observation, decisions/s"),
    ):
        per_game = {}
        met = True
        for i, game in enumerate(r["game"] for r in runs[0]):
            value = statistics.median(run[i][key] for run in runs)
            target = runs[0][i][target_key]
            per_game[game] = {"per_s": round(value), "target": target}
            met = met and value >= target
        figure = ", ".join(f"{g} {v['per_s']:,}" for g, v in per_game.items())
        target = ", ".join(f"{g} >= {v['target']:,}" for g, v in per_game.items())
        rows.append(_row(pid, what, figure, target, met, games=per_game, players=4))
    return rows


# ---- P3: protocol round trip --------------------------------------------------------------


def p3(sizes: Sizes) -> BenchRow:
    from arena.bench.measures import bench_protocol

    runs = [bench_protocol(sizes.protocol_rounds) for _ in range(sizes.repeats)]
    same = statistics.median(r["ratio_vs_raw_same_messages"] for r in runs)
    echo = statistics.median(r["ratio_vs_raw_minimal"] for r in runs)
    return _row(
        "P3",
        "decision round trip, full harness / raw pipe of the same messages",
        f"{same:.2f}x (vs a 5-byte echo {echo:.1f}x)",
        "<= 3x",
        same <= 3.0,
        runs=runs,
    )


# ---- P4, P5: tournaments ------------------------------------------------------------------


def _tournament(source: str, results: Path, deal_scale: int = 1) -> Any:
    """The tournament of a file (or YAML text), its relative paths taken from the
    repository root, its results in ``results``, each game's deals times ``deal_scale``."""
    import yaml

    from arena.tournament.load import load_tournament

    text = Path(source).read_text(encoding="utf-8") if "\n" not in source else source
    data = yaml.safe_load(text)
    data["root"] = str(ROOT)
    data["results"] = str(results)
    data["deals"] = "public"  # the same deals in every repeat; nothing to hide from bots here
    for game in data.get("games", []):
        game["deals"] = int(game.get("deals", 1)) * deal_scale
    copy = results / "bench-tournament.yaml"
    results.mkdir(parents=True, exist_ok=True)
    copy.write_text(yaml.safe_dump(data), encoding="utf-8")
    return load_tournament(copy)


# P4's process policies, side by side: (name, fresh_processes, allow_deal_memory)
P4_POLICIES = (("fair", False, False), ("deal memory", False, True), ("fresh", True, False))


def p4(sizes: Sizes) -> BenchRow:
    """Share of one worker's wall time spent in ProcessAgent.launch and .prepare (starting
    bots: a match launches all its bots that need a process, then prepares each), under the
    default (fair: no process plays a deal twice), with one process reused for every deal
    (``allow_deal_memory: true``) and with a new process for every match, alternating."""
    shares: dict[str, list[float]] = {name: [] for name, _, _ in P4_POLICIES}
    starts: dict[str, int] = {}
    matches = 0
    for _ in range(sizes.repeats):
        for name, fresh, memory in P4_POLICIES:
            share, starts[name], matches, t = _p4_once(sizes, fresh, memory)
            shares[name].append(share)
    share = {name: statistics.median(v) for name, v in shares.items()}
    fair = share["fair"]
    figure = (
        f"{100 * fair:.1f}% ({starts['fair']} bot starts; deal memory {100 * share['deal memory']:.1f}%, "
        f"{starts['deal memory']} starts; fresh {100 * share['fresh']:.1f}%, {starts['fresh']} starts)"
    )
    return _row(
        "P4",
        f"share of a tournament's wall time spent starting bots ({matches} matches, 1 worker; "
        "fair: no process plays a deal twice, the default)",
        figure,
        "< 10% (fair)",
        fair < 0.10,
        shares=shares,
        bot_starts=starts,
        matches=matches,
        tournament=t.name,
    )


def _p4_once(sizes: Sizes, fresh: bool, deal_memory: bool) -> tuple[float, int, int, Any]:
    from arena.match.agents import ProcessAgent
    from arena.match.detect import open_sandbox
    from arena.tournament.match_player import MatchPlayer
    from arena.tournament.roster import resolve_bots
    from arena.tournament.runner import limits_from, time_control_from
    from arena.tournament.schedule import build_schedule

    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        t = _tournament(sizes.tournament, Path(tmp) / "results")
        entries = resolve_bots(t)
        schedule = build_schedule(t, entries)
        sandbox = open_sandbox(t.sandbox, _QUIET)
        player = MatchPlayer(
            {e.name: e for e in entries},
            sandbox=sandbox,
            limits=limits_from(t),
            time_control=time_control_from(t),
            log_dir=None,
            fresh=fresh,
            tournament=t.name,
            deal_memory=deal_memory,
        )
        spent = [0.0, 0]
        depth = [0]
        real = {name: getattr(ProcessAgent, name) for name in ("launch", "prepare")}

        def timing(method: Any) -> Any:
            def timed(self: Any) -> None:  # the outermost call only: prepare may call launch
                was = self.proc
                depth[0] += 1
                t0 = time.perf_counter()
                try:
                    method(self)
                finally:
                    depth[0] -= 1
                    if depth[0] == 0:
                        spent[0] += time.perf_counter() - t0
                        spent[1] += self.proc is not was and self.proc is not None

            return timed

        for name, method in real.items():
            setattr(ProcessAgent, name, timing(method))
        try:
            t0 = time.perf_counter()
            for i, m in enumerate(schedule):  # a worker knows its next match (runner._serve)
                player.play(m, schedule[i + 1] if i + 1 < len(schedule) else None)
            player.close()
            wall = time.perf_counter() - t0
        finally:
            for name, method in real.items():
                setattr(ProcessAgent, name, method)
        return spent[0] / wall, spent[1], len(schedule), t


def p5(sizes: Sizes) -> BenchRow:
    """Whole-run wall time of the same tournament with 1 and 2 workers, alternating."""
    from arena.tournament.runner import run_tournament

    walls: dict[int, list[float]] = {1: [], 2: []}
    played = 0
    for _ in range(sizes.repeats):
        for workers in (1, 2):
            with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
                t = _tournament(sizes.tournament, Path(tmp) / "results", sizes.throughput_deal_scale)
                t0 = time.perf_counter()
                summary = run_tournament(t, workers=workers, out=_QUIET, err=_QUIET)
                walls[workers].append(time.perf_counter() - t0)
                played = summary.played
    one, two = statistics.median(walls[1]), statistics.median(walls[2])
    ratio = one / two
    scale = f", deals x{sizes.throughput_deal_scale}" if sizes.throughput_deal_scale != 1 else ""
    return _row(
        "P5",
        f"tournament throughput, 2 workers / 1 worker, same file (whole run, {played} matches{scale})",
        f"{ratio:.2f}x",
        ">= 1.8x",
        ratio >= 1.8,
        wall_1_worker_s=walls[1],
        wall_2_workers_s=walls[2],
        matches=played,
        tournament=sizes.tournament,
        deal_scale=sizes.throughput_deal_scale,
        cores=os.cpu_count(),
    )


# ---- P6: luck ------------------------------------------------------------------------------


def p6(sizes: Sizes) -> BenchRow:
    from arena.bench import luck

    per_game = {}
    for game in luck.SETUPS:
        m = luck.measure(
            game,
            sizes.luck_deals,
            sizes.luck_rollouts,
            eps_levels=sizes.luck_levels,
            aivat_rollouts=sizes.luck_aivat_rollouts,
            replays=sizes.luck_replays,
        )
        strongest = m["levels"][0]
        saved = {k: round(1 - v, 3) for k, v in strongest["matches_ratio"].items()}
        # diagnostics are not schemes: eta known exactly, the coefficient before calibration
        best = max((k for k in saved if not k.endswith(("_exact", "_beta1"))), key=lambda k: saved[k])
        ratio_ci = strongest.get("matches_ratio_ci95", {}).get("leaderboard")  # 95% bootstrap over deals
        per_game[game] = {
            "saved": saved,
            "best": best,
            "levels": m["levels"],
            "saved_ci95": [round(1 - ratio_ci[1], 3), round(1 - ratio_ci[0], 3)] if ratio_ci else None,
            "order_holds": m["order_holds"],
            "agree": all(lv["agree"] for lv in m["levels"]),
            "players": m["players"],
            "deals": m["deals"],
            "leaderboard_beta": m["leaderboard_beta"],
            "ceiling": strongest.get("ceiling"),
        }

    def interval(v: dict[str, Any]) -> str:
        ci = v["saved_ci95"]
        return f" [95%: {100 * ci[0]:.0f}% to {100 * ci[1]:.0f}%]" if ci else ""

    figure = "; ".join(
        f"{g} {100 * v['saved']['leaderboard']:.0f}%{interval(v)} (rotation alone "
        f"{100 * v['saved']['rotation']:.0f}%, bot-program opponents "
        f"{100 * v['saved']['leaderboard_bot_programs']:.0f}%, best scheme "
        f"{100 * v['saved'][v['best']]:.0f}%: {v['best'].replace('_', ' ')})"
        for g, v in per_game.items()
    )
    # judged on what users get: the leaderboards' luck-adjusted place, opponents {builtin: random}
    worst = min(v["saved"]["leaderboard"] for v in per_game.values())
    return _row(
        "P6",
        "luck: fewer matches for the same confidence in the heuristic's luck-adjusted "
        "place (leaderboards; opponents {builtin: random}) than with independent deals",
        figure,
        ">= 25% fewer, each game",
        worst >= 0.25,
        games=per_game,
    )


# ---- P7: ratings at scale ----------------------------------------------------------------


def _build_boards(folder: Path) -> None:
    from arena.report.standings import load_report, write_reports

    report, _ = load_report(folder)
    write_reports(report, folder)


def _timed_child(folder: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of building every leaderboard, in a fresh process."""
    ctx = mp.get_context("spawn")
    with held_pool(ctx, 1) as pool:
        return pool.apply(_time_boards, (str(folder),))


def _time_boards(folder: str) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    _build_boards(Path(folder))
    return time.perf_counter() - t0, time.process_time() - c0


def update_speedup(matches: int = 2000, seed: int = 3) -> dict[str, float]:
    """CPU time per match of the trueskill package and of FastTrueSkill, same results
    (50 bots, 2-10 players, ties), and the largest difference in mu or sigma."""
    import random

    from arena.report.ratings import RatingParams

    params = RatingParams()
    env, fast = params.env(), params.fast()
    rng = random.Random(seed)
    bots = [f"b{i}" for i in range(50)]
    strength = {b: rng.gauss(0, 2) for b in bots}
    games = []
    for _ in range(matches):
        seats = rng.sample(bots, rng.randint(2, 10))
        perf = [round(strength[b] + rng.gauss(0, 2)) for b in seats]
        games.append((seats, [sum(q > p for q in perf) for p in perf]))
    theirs = {b: env.create_rating() for b in bots}
    t0 = time.process_time()
    for seats, ranks in games:
        for b, (r,) in zip(seats, env.rate([(theirs[b],) for b in seats], ranks=ranks)):
            theirs[b] = r
    package = time.process_time() - t0
    mine = {b: (params.mu, params.sigma) for b in bots}
    t0 = time.process_time()
    for seats, ranks in games:
        for b, r in zip(seats, fast.rate([mine[b] for b in seats], ranks)):
            mine[b] = r
    ours = time.process_time() - t0
    diff = max(max(abs(theirs[b].mu - mine[b][0]), abs(theirs[b].sigma - mine[b][1])) for b in bots)
    return {
        "package_us_per_match": round(1e6 * package / matches, 1),
        "fast_us_per_match": round(1e6 * ours / matches, 1),
        "speedup": round(package / ours, 2),
        "max_abs_difference": diff,
    }


def p7(sizes: Sizes) -> BenchRow:
    from arena.report import rating_cache

    speed = update_speedup(max(50, min(2000, sizes.rating_matches)))
    from arena.bench import make_store

    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        folder = Path(sizes.rating_store) if sizes.rating_store else Path(tmp) / "store"
        if not sizes.rating_store:
            make_store.make_store(folder, sizes.rating_matches)
        cache = folder / rating_cache.FILE_NAME
        cache.unlink(missing_ok=True)
        cold = _timed_child(folder)
        warm = [_timed_child(folder) for _ in range(sizes.repeats)]
        n = _count(folder)
    warm_wall = statistics.median(w for w, _ in warm)
    warm_cpu = statistics.median(c for _, c in warm)
    return _row(
        "P7",
        f"every leaderboard (md, csv, json, html) from {n:,} stored matches",
        f"{warm_wall:.1f} s cached ({warm_cpu:.1f} s CPU); {cold[0]:.1f} s from scratch "
        f"({cold[1]:.1f} s CPU); update {speed['speedup']:.1f}x the package's, "
        f"max difference {speed['max_abs_difference']:.1g}",
        "<= 10 s, ratings = trueskill package to 1e-9",
        warm_wall <= 10.0,
        matches=n,
        cold_wall_s=round(cold[0], 2),
        cold_cpu_s=round(cold[1], 2),
        warm=[[round(w, 2), round(c, 2)] for w, c in warm],
        update=speed,
        exactness="tests/report/test_fast_trueskill.py (1e-9 against the package)",
    )


def _count(folder: Path) -> int:
    from arena.tournament.store import ResultStore

    store = ResultStore(folder)
    try:
        return store.match_count()
    finally:
        store.close()


# ---- P8: timeouts under load -------------------------------------------------------------


def _burn(stop: Any) -> None:
    """Other matches keeping a core busy: random play in process until told to stop."""
    as_worker()  # started with the signals held (measure_timeouts)
    from games import REGISTRY
    from games.rng import DealRng
    from games.simulate import play_randomly

    rng = DealRng(1)
    seed = 0
    while not stop.is_set():
        play_randomly(REGISTRY["palace"].new_game(4, seed, {}), rng, observe=True)
        seed += 1


def p8(sizes: Sizes) -> BenchRow:
    from arena.match.detect import open_sandbox
    from arena.match.sandbox import Limits
    from arena.match.timecontrol import TimeControl
    from arena.tournament.match_player import MatchPlayer
    from arena.tournament.roster import bot_entry
    from arena.tournament.schedule import MatchSpec

    path = Path(__file__).resolve().parent / "bots" / "prompt_bot.py"  # package data
    entries = {f"prompt{i}": dataclasses.replace(bot_entry(str(path)), name=f"prompt{i}") for i in range(4)}
    tc = TimeControl(startup_s=10.0, move_s=0.1)
    player = MatchPlayer(
        entries,
        sandbox=open_sandbox("auto", _QUIET),
        limits=Limits(),
        time_control=tc,
        log_dir=None,
        fresh=False,
        tournament="bench-p8",
    )
    ctx = mp.get_context("fork")
    stop = ctx.Event()
    burners = [ctx.Process(target=_burn, args=(stop,), daemon=True) for _ in range(os.cpu_count() or 2)]
    with held_while_starting():
        for b in burners:
            b.start()
    decisions = timeouts = matches = 0
    slowest = 0.0
    t0 = time.perf_counter()
    try:
        while decisions < sizes.timeout_decisions:
            spec = MatchSpec(
                match_id=f"bench/p8/{matches}",
                index=matches,
                game="tightwad",
                players=4,
                options={},
                deal_seed=10_000 + matches,
                match_seed=20_000 + matches,
                bots=tuple(entries),
            )
            record = player.play(spec)
            matches += 1
            decisions += len(record["decisions"])
            timeouts += sum(1 for f in record.get("faults") or [] if f and f.get("kind") == "timeout")
            slowest = max([slowest] + [d.get("ms") or 0.0 for d in record["decisions"]])
    finally:
        stop.set()
        for b in burners:
            b.join(timeout=5)
            if b.is_alive():
                b.kill()
        player.close()
    return _row(
        "P8",
        f"timeouts that fire wrongly: {decisions:,} decisions at move_s 0.1 by a bot "
        f"answering within 20 ms, {len(burners)} cores busy with other matches",
        str(timeouts),
        "0",
        timeouts == 0,
        decisions=decisions,
        matches=matches,
        slowest_decision_ms=round(slowest, 1),
        wall_s=round(time.perf_counter() - t0, 1),
    )


# ---- P9: matches an adaptive schedule saves -----------------------------------------------


def p9(sizes: Sizes) -> BenchRow:
    from arena.bench import adaptive_ranking as bench

    rows = bench.measure(
        tuple(sizes.adaptive_sizes),
        top=sizes.adaptive_top,
        workers=min(2, os.cpu_count() or 1),
        trials_by_size=dict(zip(sizes.adaptive_sizes, sizes.adaptive_trials)),
        deals_by_size=dict(zip(sizes.adaptive_sizes, sizes.adaptive_deals)),
    )
    parts = []
    met = True
    for r in rows:
        s = r["saving"]
        factor = s["factor"] if s["factor"] is not None else s["factor_at_least"]
        met = met and factor >= 4.0
        low, high = (f"{x:.2f}" if x is not None else "inf" for x in s["factor_ci95"])
        parts.append(
            f"{r['bots']} bots {'' if s['factor'] is not None else '>= '}{factor:.2f}x [{low}, {high}] "
            f"(adaptive {r['adaptive']['correct']:.0%} right in {r['trials']} trials, "
            f"{r['adaptive']['mean_matches']:.0f} matches)"
        )
    return _row(
        "P9",
        "matches a full round robin needs for the adaptive schedule's correct-order rate (top "
        f"{sizes.adaptive_top} in order, confidence 0.95, margin 0.05, tightwad 3 players; interpolated "
        "between the round robins measured), "
        "over the adaptive schedule's mean matches [95% bootstrap]",
        "; ".join(parts),
        ">= 4x at every size",
        met,
        sizes=rows,
    )


# ---- the whole run -------------------------------------------------------------------------

# ---- P11: Ray's overhead ------------------------------------------------------------------


def p11(sizes: Sizes) -> BenchRow:
    """Whole-run wall time of the same tournament on the local pool and on Ray, 2 workers each,
    alternating. Ray starts once before the timing (a cluster is up before a run), its actors
    start inside each timed run, as the local pool's workers do."""
    import importlib.util
    import logging

    from arena.tournament.runner import run_tournament

    what = "Ray's overhead per match against the local pool, 2 workers each (whole run, same file)"
    if importlib.util.find_spec("ray") is None:
        return _row("P11", what, "not measured: Ray is not installed (pip install -e '.[ray]')", "<= 10%", None)
    import ray

    walls: dict[str, list[float]] = {"local": [], "ray": []}
    played = 0
    load = [round(os.getloadavg()[0], 1)]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    try:
        for repeat in range(sizes.repeats):
            # each goes first in every other repeat: a busy machine's drift favours neither
            for executor in ("local", "ray") if repeat % 2 == 0 else ("ray", "local"):
                with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
                    t = _tournament(sizes.tournament, Path(tmp) / "results", sizes.ray_deal_scale)
                    t0 = time.perf_counter()
                    summary = run_tournament(t, workers=2, out=_QUIET, err=_QUIET, executor=executor)
                    walls[executor].append(time.perf_counter() - t0)
                    played = summary.played
                    load.append(round(os.getloadavg()[0], 1))
    finally:
        ray.shutdown()
    local, on_ray = statistics.median(walls["local"]), statistics.median(walls["ray"])
    overhead = on_ray / local - 1
    per_match_ms = 1000 * (on_ray - local) / max(played, 1)
    return _row(
        "P11",
        what,
        f"{100 * overhead:+.1f}% ({per_match_ms:+.1f} ms a match, {played} matches)",
        "<= 10%",
        overhead <= 0.10,
        wall_local_s=walls["local"],
        wall_ray_s=walls["ray"],
        load_average=load,
        matches=played,
        deal_scale=sizes.ray_deal_scale,
        tournament=sizes.tournament,
    )


MEASURES: dict[str, Callable[[Sizes], BenchRow | list[BenchRow]]] = {
    "P1+P2": p1_p2,
    "P3": p3,
    "P4": p4,
    "P5": p5,
    "P6": p6,
    "P7": p7,
    "P8": p8,
    "P9": p9,
    "P11": p11,
}


def machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average": [round(x, 2) for x in load or ()],
    }


def run_all(sizes: Sizes, only: list[str] | None = None, progress: Callable[[str], None] | None = None) -> BenchResult:
    """Every measure in order; a measure that fails is a row with its error, not a crash."""
    started = datetime.now(UTC)
    before = machine()
    rows: list[BenchRow] = []
    for key, measure in MEASURES.items():
        ids = key.split("+")
        if only and not set(ids) & set(only):
            continue
        if progress:
            progress(key)
        t0 = time.perf_counter()
        got: BenchRow | list[BenchRow]
        try:
            got = measure(sizes)
        except Exception as exc:  # noqa: BLE001 - one broken measure must not hide the rest
            got = [_row(i, "", "error", "", False, error=f"{type(exc).__name__}: {exc}") for i in ids]
        for row in got if isinstance(got, list) else [got]:
            row["seconds"] = round(time.perf_counter() - t0, 1)
            rows.append(row)
    return {
        "format": "decktet-arena-bench",
        "version": 1,
        "date": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": before,
        "load_average_after": machine()["load_average"],
        "sizes": dataclasses.asdict(sizes),
        "rows": rows,
    }


def render_table(result: BenchResult) -> str:
    from tabulate import tabulate

    m = result["machine"]
    head = (
        f"arena bench, {result['date']}: {m['cores']} cores, Python {m['python']}, "
        f"load average {m['load_average']} before, {result['load_average_after']} after"
    )
    rows = [
        [r["id"], r["measure"], r["figure"], r["target"], "-" if r["met"] is None else ("yes" if r["met"] else "NO")]
        for r in result["rows"]
    ]
    return (
        head
        + "\n"
        + tabulate(rows, headers=["id", "measure", "figure", "target", "met"], tablefmt="github", disable_numparse=True)
        + "\n"
    )


def write_json(result: dict[str, Any], path: Path) -> None:
    """`arena bench --json`: the table as JSON, or one line saying why it cannot be written."""
    try:
        Path(path).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ArenaError(f"--json {path}: cannot write ({exc.strerror or exc})") from None


def unmeasured(result: dict[str, Any], path: Path) -> str | None:
    """The line that ends a bench run in which some measure failed (None: all were measured)."""
    failed = [f"{r['id']} ({r['details'].get('error', 'error')})" for r in result["rows"] if r["figure"] == "error"]
    if not failed:
        return None
    return f"bench did not measure {'; '.join(failed)}; every other row is in the table and {path}"
