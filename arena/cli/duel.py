"""`arena duel`: the command line of arena/tournament/duel.py (options, output, exit codes)."""

from __future__ import annotations

import sys

import click

from arena.cli import guard
from arena.cli.params import Seconds, limit_option
from arena.errors import ArenaError


@click.command()
@click.argument("game")
@click.argument("new")
@click.argument("old")
@click.option(
    "--players",
    type=click.IntRange(2, 10),
    default=None,
    help="Players per match (default: the game's smallest count).",
)
@click.option(
    "--field",
    "field",
    multiple=True,
    metavar="BOT",
    help="A bot seated around NEW and OLD (repeat for more; cycled to fill the seats). "
    "Default: builtin:random in every other seat, or, with 2 players, NEW against OLD.",
)
@click.option(
    "--margin",
    type=float,
    default=None,
    help="H1: NEW is better by at least this mean place per match (H0: not better). Default 0.2.",
)
@click.option("--elo0", type=float, default=None, help="Instead of --margin: H0 in Elo-like units (docs/duel.md).")
@click.option("--elo1", type=float, default=None, help="With --elo0: H1 in Elo-like units.")
@click.option(
    "--alpha",
    type=float,
    default=0.05,
    show_default=True,
    help="Largest chance of accepting H1 when H0 holds (0 < alpha < 0.5).",
)
@click.option(
    "--beta",
    type=float,
    default=0.05,
    show_default=True,
    help="Largest chance of accepting H0 when H1 holds (0 < beta < 0.5).",
)
@click.option(
    "--max-matches",
    type=int,
    default=10_000,
    show_default=True,
    help="Stop undecided after this many matches (exit 3).",
)
@click.option(
    "--results",
    "results",
    default=None,
    metavar="DIR",
    help="Results folder (default: results/duel-GAME-pN-NEW-vs-OLD); rerun to resume.",
)
@click.option("--fresh", is_flag=True, help="Forget this folder's stored matches (same deals) and start over.")
@click.option("--workers", type=click.IntRange(1, 256), default=None, help="Worker processes (default: one per CPU).")
@click.option("--move-s", type=Seconds("move_s"), default=1.0, show_default=True, help="Time per decision.")
@click.option(
    "--startup-s", type=Seconds("startup_s"), default=10.0, show_default=True, help="Time to start and say hello."
)
@click.option(
    "--sandbox",
    "sandbox_level",
    default="auto",
    show_default=True,
    help="Sandbox level: auto (strongest that passes its self-test), a level name, or none.",
)
@click.option("--trust-bots", is_flag=True, help="Run even at a sandbox level not safe for untrusted bots.")
@limit_option
def duel(
    game: str,
    new: str,
    old: str,
    players: int | None,
    field: tuple[str, ...],
    margin: float | None,
    elo0: float | None,
    elo1: float | None,
    alpha: float,
    beta: float,
    max_matches: int,
    results: str | None,
    fresh: bool,
    workers: int | None,
    move_s: float,
    startup_s: float,
    sandbox_level: str,
    trust_bots: bool,
    limits: tuple[str, ...],
) -> None:
    """Is NEW better than OLD? Play duplicate deals until a sequential test decides.

    Prints the test as it goes, then one line: "H1: NEW is better ..." or "H0: ...".
    Exits 0 when a hypothesis is accepted, 3 when --max-matches is reached undecided,
    1 when matches could not be played (rerun to go on), 130 when interrupted."""
    from arena.tournament import duel as d
    from arena.tournament.play import parse_limits

    def fail(message: str) -> None:
        guard.say(message)
        sys.exit(2)

    try:
        the_duel = d.make_duel(
            game,
            new,
            old,
            players=players,
            field=field,
            margin=margin,
            elo0=elo0,
            elo1=elo1,
            alpha=alpha,
            beta=beta,
            max_matches=max_matches,
        )
        folder = results or d.default_results(the_duel)
        guard.results_folder(folder)
        tournament = d.duel_tournament(
            the_duel,
            folder,
            sandbox=sandbox_level,
            trust_bots=trust_bots,
            move_s=move_s,
            startup_s=startup_s,
            workers=workers,
            limits=parse_limits(limits),
        )
        click.echo(d.opening_line(the_duel, folder), err=True)
        hint = d.resume_command(sys.argv[2:])
        outcome = d.run_duel(
            the_duel,
            tournament,
            fresh=fresh,
            workers=workers,
            sandbox_level=None if sandbox_level == "auto" else sandbox_level,
            err=sys.stderr,
            resume_hint=hint,
        )
    except ArenaError as err:
        fail(str(err))
    if outcome.interrupted:
        sys.exit(130)
    click.echo(d.status_line(the_duel, outcome.status, outcome.matches))
    for line in outcome.incomplete[:5]:
        click.echo(f"arena: {line}", err=True)
    verdict = d.verdict_line(the_duel, outcome)
    for bot, n in outcome.broken:
        click.echo(f"arena: {bot} faulted in all {n} of its matches: the verdict below is about its faults", err=True)
    if outcome.decision is not None:
        click.echo(verdict)
        return
    if outcome.capped:
        click.echo(verdict)
        sys.exit(d.EXIT_CAPPED)
    click.echo(verdict + "; rerun to go on")
    sys.exit(d.EXIT_INCOMPLETE)
