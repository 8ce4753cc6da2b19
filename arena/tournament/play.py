"""One match of any game between bot programs and people, as `arena play` plays it: the
command line's game options read, the seats checked, a trace printed as it goes.

The human seats' logic lives here too: a person at a seat sees the table as that seat does
(``arena.match.human``), and the trace shows only the people's own seats unless asked.
"""

from __future__ import annotations

import difflib
import secrets
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from arena.errors import ArenaError, one_line
from arena.match.agents import Agent
from arena.match.faults import at_decision
from arena.records import Limits, MatchSpec, RecordJson, TimeControl
from games import REGISTRY, GameError, get_game
from games.rng import derive_seed

OPTION_TEXT_LIMIT = 1000  # characters of one --option value


def parse_limits(pairs: tuple[str, ...] | list[str]) -> Limits:
    """``--limit key=value`` pairs over the default limits, as a tournament file's ``limits:``
    sets them (an ML bot's memory, a bot's threads), or one line naming the pair and the fix."""
    from arena.records.controls import LIMIT_BOUNDS

    values: dict[str, int] = {}
    for pair in pairs:
        key, sep, raw = (part.strip() for part in pair.partition("="))
        if not sep or key not in LIMIT_BOUNDS:
            raise ArenaError(
                f"--limit {one_line(pair, 80)!r}: expected KEY=INTEGER with KEY one of {', '.join(LIMIT_BOUNDS)}, "
                "e.g. --limit memory_mb=4096"
            )
        lo, hi = LIMIT_BOUNDS[key]
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 10 and lo <= int(raw) <= hi):
            raise ArenaError(f"--limit {key}={one_line(raw, 30)}: give an integer from {lo} to {hi}")
        if key in values:  # the last would silently win
            raise ArenaError(f"--limit {key} is given twice; give each limit once")
        values[key] = int(raw)
    return Limits(**values)


def parse_options(pairs: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """``--option key=value`` pairs as a mapping of plain values (YAML scalars), or one line
    naming the pair at fault and the fix."""
    import yaml

    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ArenaError(f"--option {one_line(pair, 80)!r}: expected key=value, e.g. --option bidding=true")
        if len(raw) > OPTION_TEXT_LIMIT:
            raise ArenaError(
                f"--option {key.strip()!r}: the value is longer than {OPTION_TEXT_LIMIT} characters; "
                "give a plain value, e.g. --option decks=3"
            )
        try:
            value = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError:
            raise ArenaError(
                f"--option {one_line(pair, 80)!r}: the value is not a plain value; "
                "give a number, true/false or a word, e.g. --option decks=3"
            ) from None
        if isinstance(value, (dict, list)):
            raise ArenaError(
                f"--option {one_line(pair, 80)!r}: the value is not a plain value; "
                "give a number, true/false or a word, e.g. --option decks=3"
            )
        if key.strip() in options:  # the last would silently win
            raise ArenaError(f"--option {key.strip()!r} is given twice; give each option once")
        options[key.strip()] = value
    return options


def play_spec(game: str, options: dict[str, Any], bots: Sequence[str], *, deal: int, seed: int | None) -> MatchSpec:
    """The one match ``arena play`` plays: deal seed ``deal``, options already resolved; its id names
    ``seed`` (None: a deal from fresh randomness)."""
    return MatchSpec(
        match_id=play_match_id(game, seed),
        index=0,
        game=game,
        players=len(bots),
        options=options,
        group=0,
        deal=0,
        rotation=0,
        deal_seed=deal,
        match_seed=derive_seed(deal, "play"),
        bots=tuple(bots),
    )


def play_match_id(game: str, seed: int | None) -> str:
    """``play/<game>/<seed>`` for a chosen (so predictable) seed; a drawn seed stays out of it."""
    return f"play/{game}" if seed is None else f"play/{game}/{seed}"


def _did_you_mean(word: str, known: Any) -> str:
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.5)
    return f"did you mean {close[0]!r}? " if close else ""


def resolve_play_options(game: str, players: int, options: dict[str, Any]) -> dict[str, Any]:
    """The game's options for ``players`` seats, or one line naming the argument at fault,
    a did-you-mean and what is valid."""
    if game not in REGISTRY:
        raise ArenaError(f"unknown game {game!r}: {_did_you_mean(game, REGISTRY)}(games: {', '.join(REGISTRY)})")
    spec = get_game(game)
    if not spec.min_players <= players <= spec.max_players:
        raise ArenaError(
            f"{game} takes {spec.min_players} to {spec.max_players} players, got {players} "
            f"(bots + --human seats); give {spec.min_players} to {spec.max_players} seats"
        )
    known = {o.name: o for o in spec.options}
    for name in options:
        if name not in known:
            raise ArenaError(
                f"--option {name}: no such {game} option; {_did_you_mean(name, known)}"
                f"(options: {', '.join(sorted(known)) or 'none'})"
            )
    try:
        return spec.resolve_options(players, options)
    except GameError as err:
        raise ArenaError(f"{err}; fix the --option value") from None


def play_one(
    game: str,
    bots: list[str],
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    humans: list[int] | None = None,
    trace_seat: int | None = None,
    quiet: bool = False,
    no_timeouts: bool = False,
    move_s: float = 1.0,
    startup_s: float = 10.0,
    sandbox_level: str = "auto",
    out: TextIO = sys.stdout,
    stdin: TextIO = sys.stdin,
    trace: bool = True,
    limits: Limits | None = None,
    reveal: bool = False,
) -> RecordJson:
    """Play one match and return its record; prints a trace to ``out``.

    With human seats the trace shows only the humans' own seats (and no deal seed) unless
    ``reveal`` or an explicit ``trace_seat`` asks for more.
    """
    if reveal and not humans:
        raise ArenaError("--reveal is for games with a --human seat (without one, every seat is shown); leave it out")
    from arena.inert import raw
    from arena.match.builtin import agent_for
    from arena.match.detect import open_sandbox
    from arena.match.human import HumanAgent
    from arena.match.referee import play_match
    from arena.match.trace import Tracer
    from arena.tournament.roster import bot_entry

    seats = list(humans or [])
    twice = next((h for h in sorted(seats) if seats.count(h) > 1), None)
    if twice is not None:  # `--human 0 --human 0` was one human and one seat fewer than the user counted
        raise ArenaError(f"--human {twice} is given twice; name each human seat once")
    humans = sorted(set(seats))
    players = len(bots) + len(humans)
    resolved = resolve_play_options(game, players, options or {})
    for h in humans:
        if not 0 <= h < players:
            raise ArenaError(f"--human {h}: no such seat in a {players}-player game (seats 0..{players - 1})")
    if trace_seat is not None and not 0 <= trace_seat < players:
        raise ArenaError(f"--seat {trace_seat}: no such seat (seats 0..{players - 1})")
    entries = [bot_entry(b, allow_builtin=True) for b in bots]
    sandbox = open_sandbox(sandbox_level)
    tc = TimeControl(startup_s=startup_s, move_s=move_s)
    limits = limits or Limits()
    agents: list[Agent] = []
    people: list[HumanAgent] = []
    it = iter(entries)
    for seat in range(players):
        if seat in humans:
            # rich draws the person's table with its own control codes: the stream under the
            # guard's escaping (what it draws comes from the engine and the roster's checked names)
            people.append(HumanAgent(seat, stdin, raw(out)))
            people[-1].shows_final = True
            agents.append(people[-1])
        else:
            agents.append(agent_for(next(it), sandbox=sandbox, limits=limits, time_control=tc, no_timeouts=no_timeouts))
    # --seed N is for debugging: anyone (the bots too) can recompute that deal. Without it the
    # deal comes from fresh randomness that appears nowhere a bot can see (the record keeps it).
    deal = secrets.randbits(63) if seed is None else seed
    match = play_spec(game, resolved, [a.name for a in agents], deal=deal, seed=seed)
    private = bool(humans) and not reveal and trace_seat is None
    # a person's own decisions are drawn by their seat, never again by the trace
    tracer = (
        Tracer(
            out,
            seat=trace_seat,
            quiet=quiet,
            seats=humans if private else None,
            show_seed=not private or seed is not None,
            skip=humans,
        )
        if trace
        else None
    )

    def observer(event: str, **data: Any) -> None:
        if event == "end":  # each person sees how the match ended, from their own seat
            for person in people:
                person.show_final(data["state"].observation(person.seat))
        if tracer is not None:
            tracer(event, **data)

    try:
        return play_match(match, agents, time_control=tc, sandbox=sandbox, observer=observer, no_timeouts=no_timeouts)
    finally:
        for agent in agents:
            agent.close()


def faulted_bots(record: RecordJson, humans: list[int] | tuple[int, ...]) -> list[str]:
    """``seat N (bot): kind at decision D`` for each bot seat that faulted (a person may leave:
    not a fault); D is what `arena replay --from` takes to try a fix from there."""
    return [
        f"seat {seat} ({record['seats'][seat]['bot']}): {fault['kind']}{at_decision(fault)}"
        for seat, fault in enumerate(record["faults"])
        if fault is not None and seat not in humans
    ]
