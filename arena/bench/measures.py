"""Benchmarks behind `arena bench`: engine speed, and the protocol round trip.

Performance is measured here, never asserted in unit tests. Figures are ratios
measured side by side in one run, because the machine is shared and noisy.
"""

from __future__ import annotations

import time
from typing import Any

from games import REGISTRY
from games.rng import DealRng
from games.simulate import play_randomly

GAME_SETUPS: dict[str, tuple[int, dict[str, Any]]] = {"tightwad": (4, {}), "divers-weights": (4, {}), "palace": (4, {})}
# players at the table of `arena bench protocol` (Divers Weights' duel is its most common table)
PROTOCOL_PLAYERS = {"divers-weights": 2}
GAME_TARGETS = {"tightwad": (100_000, 30_000), "divers-weights": (100_000, 30_000), "palace": (30_000, 30_000)}


def decisions_per_second(game: str, players: int, options: dict[str, Any], observe: bool, seconds: float) -> float:
    """Random play in process on one core; ``observe`` builds the deciding seat's
    full observation at every decision, as the referee does.

    Per second of this process's CPU time, not of wall time: on a shared machine the
    wall clock also counts the time other people's processes held the core."""
    spec = REGISTRY[game]
    rng = DealRng(12345)
    decisions = 0
    seed = 0
    start = time.process_time()
    end = start + seconds
    while time.process_time() < end:
        decisions += play_randomly(spec.new_game(players, seed, options), rng, observe=observe)
        seed += 1
    return decisions / (time.process_time() - start)


def bench_games(seconds: float = 3.0, games: list[str] | None = None) -> list[dict[str, Any]]:
    rows = []
    for game in games or list(GAME_SETUPS):
        players, options = GAME_SETUPS[game]
        plain = decisions_per_second(game, players, options, False, seconds)
        full = decisions_per_second(game, players, options, True, seconds)
        t_plain, t_full = GAME_TARGETS[game]
        rows.append(
            {
                "game": game,
                "players": players,
                "no_obs_per_s": round(plain),
                "target_no_obs": t_plain,
                "with_obs_per_s": round(full),
                "target_with_obs": t_full,
                "met": plain >= t_plain and full >= t_full,
            }
        )
    return rows


# ---- protocol round trip ----------------------------------------------------------

_RAW_CHILD = (
    "import sys, json\n"
    "for line in sys.stdin:\n"
    "    json.loads(line)\n"
    '    sys.stdout.write(\'{"type":"action","action":0}\\n\')\n'
    "    sys.stdout.flush()\n"
)


def _act_lines(game: str, players: int, n: int) -> list[tuple[Any, int]]:
    """(state snapshot, seat) pairs along random games, for realistic messages."""
    spec = REGISTRY[game]
    rng = DealRng(7)
    out: list[tuple[Any, int]] = []
    seed = 0
    while len(out) < n:
        state = spec.new_game(players, seed, {})
        seed += 1
        while not state.is_over() and len(out) < n:
            seat = state.to_move()[0]
            out.append((state.clone(), seat))
            state.apply(seat, rng.randbelow(len(state.legal_actions(seat))))
    return out


def _median_us(samples: list[float]) -> float:
    samples = sorted(samples)
    return samples[len(samples) // 2] * 1e6


def bench_protocol(
    rounds: int = 2000, game: str = "tightwad", players: int = 4, level: str = "auto", ponder: bool = False
) -> dict[str, Any]:
    """Median decision round trip: raw pipe ping-pong vs the full harness, same run.

    * raw minimal: a 5-byte line echoed by a bare Python child;
    * raw same messages: the harness's exact act lines, parsed with json by a bare
      Python child that answers id 0;
    * harness: what the referee does per decision: build the observation, encode
      it, send it to a warm sandboxed bot (bots/random_bot.py through botkit), read
      and validate its answer (``ponder`` False, the default: the bot is stopped after
      each answer and resumed before each request, as in a tournament).
    """
    import subprocess
    import sys

    from arena.errors import ArenaError
    from arena.match import protocol
    from arena.match.agents import ProcessAgent
    from arena.match.detect import detect_sandbox
    from arena.match.sandbox import Limits, SandboxUnavailable
    from arena.match.timecontrol import TimeControl
    from arena.tournament.roster import bot_entry

    try:  # first: a level that cannot run fails before any timing
        sandbox = detect_sandbox(level)
    except SandboxUnavailable as exc:
        raise ArenaError(f"--sandbox {level}: {exc}; use --sandbox auto to take the strongest available") from None
    warmup = min(50, rounds // 2)  # untimed: process start-up and caches; a short run times its second half
    positions = _act_lines(game, players, rounds)
    lines = [protocol.encode(protocol.act(s.decisions, s.observation(seat), 1.0)) + b"\n" for s, seat in positions]

    def raw(payloads: list[bytes], child: str) -> float:
        p = subprocess.Popen(
            [sys.executable, "-s", "-S", "-c", child], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        times = []
        for i, payload in enumerate(payloads):
            t = time.perf_counter()
            p.stdin.write(payload)
            p.stdout.readline()
            if i >= warmup:
                times.append(time.perf_counter() - t)
        p.stdin.close()
        p.wait()
        return _median_us(times)

    echo = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"
    raw_min = raw([b"ping\n"] * len(lines), echo)
    raw_same = raw(lines, _RAW_CHILD)

    from arena.bench import SAMPLE

    entry = bot_entry(str(SAMPLE / "bots" / "random_bot.py"))
    agent = ProcessAgent(entry, sandbox=sandbox, limits=Limits(), time_control=TimeControl(ponder=ponder))
    agent.prepare()
    spec = REGISTRY[game]
    first = positions[0][0]
    agent.begin(
        protocol.start(
            match_id="bench",
            game=game,
            rules_version=spec.rules_version,
            options=first.options,
            players=players,
            seat=0,
            seed=1,
            time_control=TimeControl().to_json(),
            cards=first.card_table(),
            bots=["bench"] * players,
        )
    )
    times = []
    for i, (state, seat) in enumerate(positions):
        t = time.perf_counter()
        obs = state.observation(seat)
        msg = protocol.act(state.decisions, obs, 1.0)
        agent.ask(msg, time.monotonic() + 5)
        line, _ = agent.answer(time.monotonic() + 5)
        protocol.parse_action(line, len(obs["legal_actions"]))
        if i >= warmup:
            times.append(time.perf_counter() - t)
    agent.close()
    harness = _median_us(times)
    return {
        "game": game,
        "players": players,
        "rounds": len(times),
        "sandbox": sandbox.level,
        "mean_act_bytes": round(sum(map(len, lines)) / len(lines)),
        "raw_minimal_us": round(raw_min, 1),
        "raw_same_messages_us": round(raw_same, 1),
        "harness_us": round(harness, 1),
        "ratio_vs_raw_same_messages": round(harness / raw_same, 2),
        "ratio_vs_raw_minimal": round(harness / raw_min, 2),
    }
