"""The face: the `arena` command (click), with `duel`'s options in their own module; what the
commands do lives below (arena.tournament.play, arena.report.replay, arena.tournament.check,
arena.bench, ...).
May import every layer below; nothing imports it.
Each subcommand parses options, calls one library function and prints; only this
module turns errors into messages and exit codes."""

from __future__ import annotations

from arena import interrupts

interrupts.while_loading()  # Ctrl-C during the imports below: one line, not a traceback

import json  # noqa: E402 - the imports from here on come after the handler above
import logging
import sys
from pathlib import Path
from typing import Any

import click

from arena import __version__
from arena.bench.suite import IDS as BENCH_IDS
from arena.cli import guard
from arena.cli.params import OutputFile, Seconds, limit_option
from arena.errors import ArenaError
from arena.inert import inert_output, raw
from arena.match.faults import FaultKind
from arena.records import RecordJson
from arena.tournament.config import MAX_SEED, MAX_WORKERS
from games import REGISTRY

GAME_IDS = list(REGISTRY)  # game choices come from the registry


def _fail(message: str, code: int = 2) -> None:
    guard.say(message)
    sys.exit(code)


class GuardedGroup(click.Group):
    """The `arena` group: every error of every command ends in one line (see arena/cli/guard.py)."""

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        logging.raiseExceptions = False  # a failing log handler must not print a traceback
        guard.results_folder(None)
        try:
            with inert_output():  # no control character of a name or message reaches the terminal
                rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except SystemExit as exc:
            interrupts.settle(exc.code)
            raise
        except (click.exceptions.Abort, KeyboardInterrupt):
            code = interrupts.settle(130)
            click.echo("arena: interrupted", err=True)
        except BrokenPipeError:
            code = 1  # the reader went away (e.g. `| head`): nothing to say to it
        except BaseException as exc:  # noqa: BLE001 - the guard: nothing may end in a raw traceback
            code = guard.handle(exc)
        else:
            code = rv if isinstance(rv, int) else 0
        if not standalone_mode:
            return code
        sys.exit(code)


@click.group(cls=GuardedGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="arena")
def cli() -> None:
    """Tournaments of bot programs playing Decktet card games."""


executor_option = click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where matches are played: local worker processes, or a Ray cluster (pip install 'decktet-arena[ray]').",
)
sandbox_option = click.option(
    "--sandbox",
    "sandbox_level",
    default="auto",
    show_default=True,
    help="Sandbox level: auto (strongest that passes its self-test), a level name, or none.",
)


@cli.command()
@click.argument("game")
@click.argument("bots", nargs=-1)
@click.option(
    "--seed",
    type=click.IntRange(0, MAX_SEED),
    default=None,
    help="Deal seed, for debugging: the same seed gives the same deal, and it is PREDICTABLE "
    "(a bot can recompute every hand from it; it is part of the match id). "
    "Default: a fresh random deal.",
)
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="A game option, e.g. bidding=true.")
@click.option("--seat", type=int, default=None, help="Only show what this seat saw.")
@click.option("--quiet", is_flag=True, help="Print only the result.")
@click.option("--json", "as_json", is_flag=True, help="Print the match record as JSON.")
@click.option(
    "--html",
    "html_out",
    type=OutputFile(),
    default=None,
    help="Also write a visual replay of the match to this HTML file (self-contained, works offline).",
)
@click.option(
    "--human",
    "humans",
    type=int,
    multiple=True,
    metavar="SEAT",
    help="A person plays this seat; the trace then shows only the human seats' own view.",
)
@click.option("--reveal", is_flag=True, help="With --human: show every seat's cards too.")
@click.option("--no-timeouts", is_flag=True, help="No time limits (to stop your bot in a debugger).")
@click.option("--move-s", type=Seconds("move_s"), default=1.0, show_default=True, help="Time per decision.")
@click.option(
    "--startup-s", type=Seconds("startup_s"), default=10.0, show_default=True, help="Time to start and say hello."
)
@sandbox_option
@limit_option
def play(
    game: str,
    bots: tuple[str, ...],
    seed: int | None,
    options: tuple[str, ...],
    seat: int | None,
    quiet: bool,
    as_json: bool,
    html_out: str | None,
    humans: tuple[int, ...],
    reveal: bool,
    no_timeouts: bool,
    move_s: float,
    startup_s: float,
    sandbox_level: str,
    limits: tuple[str, ...],
) -> None:
    """Play one match of GAME between BOTS (files, names in bots/, or builtin:random for the
    arena's own random player), printing a trace.

    Exits 0 when every bot played the match through; 1 when a bot faulted (crash,
    timeout, illegal or malformed answer, sandbox limit), after the trace or JSON.

    Example: arena play tightwad random_bot bots/random_bot.py builtin:random --seed 7
    """
    from arena.tournament.play import parse_limits, parse_options, play_one

    try:
        record = play_one(
            game,
            list(bots),
            seed=seed,
            options=parse_options(options),
            humans=list(humans),
            trace_seat=seat,
            quiet=quiet or as_json,
            no_timeouts=no_timeouts,
            move_s=move_s,
            startup_s=startup_s,
            sandbox_level=sandbox_level,
            limits=parse_limits(limits),
            out=sys.stdout,
            stdin=sys.stdin,
            trace=not as_json,
            reveal=reveal,
        )
        if html_out:
            _write_replay(record, html_out, quiet=as_json)
    except ArenaError as err:
        _fail(str(err))
    if as_json:
        click.echo(json.dumps(record, indent=1))
    _exit_if_faulted(record, humans)


def _write_replay(record: RecordJson, path: str, quiet: bool = False) -> None:
    from arena.report.replay_view import write_replay_html

    written = write_replay_html(record, path)
    if not quiet:
        click.echo(f"replay: {written}", err=True)


@cli.command()
@click.argument("tournament_file", type=click.Path(dir_okay=False))
@click.option("--fresh", is_flag=True, help="Forget stored results and start over.")
@click.option("--dry-run", is_flag=True, help="Only print which matches would be played, kept and dropped.")
@click.option("--workers", type=click.IntRange(1, MAX_WORKERS), default=None, help="Override the file's worker count.")
@sandbox_option
@executor_option
@click.option(
    "--ray-address",
    default=None,
    metavar="ADDR",
    help="With --executor ray: the cluster to join, e.g. HOST:6379 or auto (default: RAY_ADDRESS, "
    "else a cluster started here with `ray start`, else a new local Ray instance).",
)
@click.option(
    "--live",
    "live_standings",
    is_flag=True,
    help="In a terminal, also show the standings, refreshed every few seconds.",
)
def run(
    tournament_file: str,
    fresh: bool,
    dry_run: bool,
    workers: int | None,
    sandbox_level: str,
    executor: str,
    ray_address: str | None,
    live_standings: bool,
) -> None:
    """Play a tournament (resuming where it stopped) and print the leaderboards.

    Exits 0 only when every scheduled match is stored; otherwise 1 with a line
    "incomplete: N of M matches" (130 when interrupted)."""
    from arena.report.run import print_outcome, render_plan, resume_hint, run_and_publish
    from arena.tournament.load import load_tournament
    from arena.tournament.runner import plan_run

    try:
        tournament = load_tournament(tournament_file)
        guard.results_folder(tournament.results_dir)
        if dry_run:
            render_plan(plan_run(tournament, fresh=fresh), sys.stdout)
            return
        hint = resume_hint(tournament_file, executor, ray_address)
        from arena.report.live import run_console

        terminal = run_console(raw(sys.stderr), results=Path(tournament.results_dir), live_standings=live_standings)
        summary = run_and_publish(
            tournament,
            fresh=fresh,
            workers=workers,
            sandbox_level=None if sandbox_level == "auto" else sandbox_level,
            resume_hint=hint,
            executor=executor,
            ray_address=ray_address,
            err=terminal.stream if terminal else sys.stderr,
            display=terminal.display if terminal else None,
        )
    except ArenaError as err:
        _fail(str(err), getattr(err, "exit_code", 2))  # the machine (a disk gone read-only): 1
    sys.exit(print_outcome(summary, sys.stdout, sys.stderr))


@cli.command()
@click.argument("source", type=click.Path(exists=True))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "md", "csv", "json", "html"]),
    default="table",
    show_default=True,
    help="Output format (html: write leaderboard.html and print its path).",
)
@click.option(
    "--write/--no-write",
    default=None,
    help="Also rewrite the report files in the results folder, so the pages on disk show what "
    "is printed (--no-write: print only). Default: where the folder is writable; --write: "
    "an error where it is not.",
)
@click.option("--open", "open_page", is_flag=True, help="Open leaderboard.html in a browser (writes it first).")
def leaderboard(source: str, fmt: str, write: bool | None, open_page: bool) -> None:
    """Leaderboards of a tournament, from its file or its results folder."""
    from arena.report.standings import load_report, open_in_browser, render

    if Path(source).is_dir():
        guard.results_folder(source)
    try:
        report, folder = load_report(Path(source))
        guard.results_folder(folder)
        click.echo(render(report, fmt, folder, write), nl=False)  # md, csv, json: byte for byte the files'
        if open_page and (why := open_in_browser(report, folder)):
            click.echo(f"arena: {why}", err=True)
    except ArenaError as err:
        _fail(str(err))


@cli.command()
@click.argument("source", type=click.Path(exists=True))
@click.option("--bot", default=None, help="Only matches where this bot sat.")
@click.option("--game", type=click.Choice(GAME_IDS), default=None, help="Only matches of this game.")
@click.option(
    "--fault",
    type=click.Choice(["any", *(k.value for k in FaultKind)]),
    default=None,
    help="Only matches with a fault of this kind (by --bot, if given).",
)
def matches(source: str, bot: str | None, game: str | None, fault: str | None) -> None:
    """List the stored matches of a results folder (or tournament file) with their ids, for arena replay."""
    from arena.report.matches import list_matches

    if Path(source).is_dir():
        guard.results_folder(source)
    try:
        text, count = list_matches(Path(source), bot=bot, game=game, fault=fault)
    except ArenaError as err:
        _fail(str(err))
    click.echo(text)
    if count:
        click.echo(f"\n{count} matches; see one with: arena replay {source} <match id> [--html replay.html]")


@cli.command()
@click.argument("bot")
@click.option("--move-s", type=Seconds("move_s"), default=1.0, show_default=True, help="Time per decision.")
@click.option(
    "--startup-s", type=Seconds("startup_s"), default=10.0, show_default=True, help="Time to start and say hello."
)
@sandbox_option
@limit_option
def check(bot: str, move_s: float, startup_s: float, sandbox_level: str, limits: tuple[str, ...]) -> None:
    """Run BOT through the conformance suite; exit 1 if any check fails."""
    from arena.match.timecontrol import TimeControl
    from arena.tournament.check import check_bot
    from arena.tournament.play import parse_limits

    tc = TimeControl(move_s=move_s, startup_s=startup_s)
    report = check_bot(bot, sandbox_level, parse_limits(limits), tc, click.echo)  # an ArenaError: one line, exit 2
    click.echo(report.render(streamed=True))
    sys.exit(0 if report.ok else 1)


@cli.command()
@click.argument("source", type=click.Path(exists=True))
@click.argument("match_id", required=False)
@click.option("--seat", type=int, default=None, help="Only show what this seat saw.")
@click.option("--quiet", is_flag=True, help="Print only the result.")
@click.option("--from", "start", type=int, default=None, help="Replay up to this decision, then go live.")
@click.option(
    "--html",
    "html_out",
    type=OutputFile(),
    default=None,
    help="Write a visual replay of the match to this HTML file (self-contained, works offline).",
)
@click.option("--bot", "bot_spec", default=None, metavar="SEAT=FILE", help="With --from: the live bot and its seat.")
@click.option("--no-timeouts", is_flag=True, help="No time limits for the live bot.")
@click.option(
    "--move-s", type=Seconds("move_s"), default=1.0, show_default=True, help="Time per decision of the live bot."
)
@sandbox_option
def replay(
    source: str,
    match_id: str | None,
    seat: int | None,
    quiet: bool,
    start: int | None,
    html_out: str | None,
    bot_spec: str | None,
    no_timeouts: bool,
    move_s: float,
    sandbox_level: str,
) -> None:
    """Replay a stored match (SOURCE = results folder or tournament file + MATCH_ID, a record .json,
    or an export .jsonl) and verify it.

    With --from K --bot SEAT=FILE, decisions before K are replayed, then FILE plays SEAT live;
    exit 1 if it faulted.
    """
    from arena.match.trace import Tracer
    from arena.report.replay import load_record, mark_shown, replay_source, take_over, verify_record

    tracer = Tracer(sys.stdout, seat=seat, quiet=quiet)
    src = replay_source(Path(source))  # a tournament file: its results folder
    guard.results_folder(src if src.is_dir() else None)
    record = load_record(src, match_id, seat=seat)  # an ArenaError is the guard's one line
    if start is None and bot_spec is None:
        verify_record(record, tracer)
        click.echo(f"replay ok: {len(record['decisions'])} decisions reproduce the recorded result")
        if html_out:
            mark_shown(src, record)
            _write_replay(record, html_out)
        return
    new, said = take_over(
        record, start, bot_spec, move_s=move_s, sandbox_level=sandbox_level, no_timeouts=no_timeouts, observer=tracer
    )
    if html_out:
        mark_shown(src, new)
        _write_replay(new, html_out)
    click.echo(said)
    _exit_if_faulted(new, ())


def _exit_if_faulted(record: RecordJson, humans: tuple[int, ...] | list[int]) -> None:
    """Exit 1 after the output when a bot of the match faulted (`arena play`, `replay --from`)."""
    from arena.tournament.play import faulted_bots

    faulted = faulted_bots(record, humans)
    if faulted:
        click.echo(f"arena: a bot faulted, {'; '.join(faulted)}; exit code 1", err=True)
        sys.exit(1)


@cli.command("export")
@click.argument("source", type=click.Path())
@click.option(
    "-o",
    "--out",
    "out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write to this file (default: standard output).",
)
@click.option("--game", default=None, help="Only matches of this game.")
@click.option("--bot", default=None, help="Only matches where this bot sat.")
def export_cmd(source: str, out: str | None, game: str | None, bot: str | None) -> None:
    """Every stored match record of SOURCE (results folder or tournament file) as JSON Lines:
    one record per line, in schedule order (the format: docs/records.md)."""
    from arena.report.export import export_to_file, iter_records, write_records

    if Path(source).is_dir():
        guard.results_folder(source)
    try:
        if out is None:
            write_records(iter_records(Path(source), game=game, bot=bot), sys.stdout)
            return
        n = export_to_file(Path(source), Path(out), game=game, bot=bot)
    except ArenaError as err:
        _fail(str(err), getattr(err, "exit_code", 2))  # a full disk: 1
    click.echo(f"wrote {n} match records to {out}; replay one: arena replay {out} <match id>", err=True)


@cli.command("export-bot")
@click.argument("policy_file", type=click.Path(dir_okay=False))
@click.option("-o", "--out", "out", required=True, type=click.Path(dir_okay=False), help="The bot file to write.")
@click.option("--name", default="linear-policy", show_default=True, help="The name the bot says in its hello.")
def export_bot_cmd(policy_file: str, out: str, name: str) -> None:
    """Write a self-contained bot that plays POLICY_FILE (a LinearPolicy.to_json() file; see docs/rl.md)."""
    from arena.rl.bridge import export_bot, load_policy

    try:
        policy = load_policy(policy_file)
        path = export_bot(policy, out, name)
    except ValueError as err:
        _fail(str(err))
    click.echo(f"wrote {path}: a {policy['game']} bot for {policy['players']} players; try it: arena check {path}")


@cli.group(invoke_without_command=True)
@click.option(
    "--json",
    "json_path",
    type=OutputFile(),
    default="bench.json",
    show_default=True,
    help="Also write the table here as JSON.",
)
@click.option("--only", multiple=True, type=click.Choice(BENCH_IDS), help="Run only these measures (repeatable).")
@click.option(
    "--repeats",
    type=click.IntRange(1, 50),
    default=3,
    show_default=True,
    help="Repeats per measure; the median is reported.",
)
@click.option("--tiny", is_flag=True, help="Tiny sizes: checks that every measure runs, nothing more.")
@click.option(
    "--rating-store",
    type=click.Path(file_okay=False, exists=True),
    help="P7: rate this results folder instead of generating 100,000 matches.",
)
@click.pass_context
def bench(
    ctx: click.Context, json_path: Path, only: tuple[str, ...], repeats: int, tiny: bool, rating_store: str | None
) -> None:
    """Measure the harness against its targets (figures, not pass/fail).

    With no subcommand: every measure P1..P9 and P11 side by side in one run, one table, each
    figure next to its target, also written as JSON (see docs/performance.md)."""
    if ctx.invoked_subcommand is not None:
        return
    import dataclasses

    from arena.bench.suite import Sizes, render_table, run_all, unmeasured, write_json

    sizes = Sizes.tiny() if tiny else Sizes(repeats=repeats)
    if rating_store:
        sizes = dataclasses.replace(sizes, rating_store=rating_store)
    result = run_all(sizes, list(only) or None, progress=lambda key: click.echo(f"arena bench: {key} ...", err=True))
    result["command"] = "arena bench " + " ".join(sys.argv[2:])
    click.echo(render_table(result), nl=False)
    write_json(result, json_path)  # an ArenaError: one line, exit 2
    click.echo(f"written: {json_path}")
    if why := unmeasured(result, json_path):  # the other figures stand, but the run is no success
        _fail(why, 1)


@bench.command("games")
@click.option(
    "--seconds",
    type=Seconds(bounds=(0.1, 600)),
    default=3.0,
    show_default=True,
    help="Time per measurement (0.1 to 600).",
)
def bench_games_cmd(seconds: float) -> None:
    """Engine decisions per second, random play, one core, with and without observations."""
    from tabulate import tabulate

    from arena.bench.measures import bench_games

    rows = bench_games(seconds)
    click.echo(tabulate(rows, headers="keys", intfmt=","))
    click.echo("all targets met" if all(r["met"] for r in rows) else "SOME TARGETS MISSED")


@bench.command("protocol")
@click.option(
    "--rounds",
    type=click.IntRange(1, 10_000_000),
    default=2000,
    show_default=True,
    help="Decisions to play (at least 1); the first 50 (half, under 100) warm up untimed.",
)
@click.option("--game", type=click.Choice(GAME_IDS), default=GAME_IDS[0], show_default=True)
@sandbox_option
def bench_protocol_cmd(rounds: int, game: str, sandbox_level: str) -> None:
    """Decision round trip through the full harness vs a raw pipe ping-pong, same run."""
    from arena.bench.measures import PROTOCOL_PLAYERS, bench_protocol

    row = bench_protocol(rounds, game, PROTOCOL_PLAYERS.get(game, 4), sandbox_level)  # an ArenaError: one line, exit 2
    width = max(map(len, row))
    for key, value in row.items():
        click.echo(f"{key:>{width}}: {value}")


def _need_serve_extra() -> Any:
    """arena.serve.accounts, once the serve extra is installed (else one line saying to install it)."""
    from arena.serve import missing_extra

    if missing := missing_extra():
        _fail(f"the ladder needs {', '.join(missing)}: pip install -e '.[serve]'")
    from arena.serve import accounts

    return accounts


@cli.command()
@click.argument("ladder_file", type=click.Path())
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option(
    "--data",
    "data",
    type=click.Path(file_okay=False),
    required=True,
    help="The ladder's data folder (accounts, bots, results); one server per folder.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, MAX_WORKERS),
    default=None,
    help="Worker processes playing matches (default: the ladder file's workers).",
)
@executor_option
@click.option(
    "--ray-address",
    default=None,
    metavar="ADDR",
    help="With --executor ray: the cluster to join, e.g. HOST:6379 or auto (default: RAY_ADDRESS, "
    "else a cluster started here with `ray start`, else a new local Ray instance).",
)
def serve(
    ladder_file: str, host: str, port: int, data: str, workers: int | None, executor: str, ray_address: str | None
) -> None:
    """Serve a bot ladder: bots play without end, entrants upload (pip install -e '.[serve]', docs/ladder.md)."""
    _need_serve_extra()
    from arena.serve.server import serve as run_server

    if ray_address is not None and executor != "ray":
        _fail("--ray-address goes with --executor ray")
    guard.results_folder(Path(data))
    run_server(
        ladder_file, host=host, port=port, data=data, workers=workers, executor=executor, ray_address=ray_address
    )


data_option = click.option("--data", type=click.Path(file_okay=False), required=True, help="The ladder's data folder.")
stdin_option = click.option("--password-stdin", is_flag=True, help="Read the password from standard input (scripts).")


def _password(password_stdin: bool) -> str:
    return _need_serve_extra().admin_password(
        sys.stdin if password_stdin else None,
        lambda: click.prompt("password", hide_input=True, confirmation_prompt=True),
    )


@cli.group("serve-admin")
def serve_admin() -> None:
    """Manage a ladder's accounts (docs/ladder.md)."""


@serve_admin.command("invite")
@data_option
@click.option("--url", default="http://127.0.0.1:8000", show_default=True, help="The address entrants see.")
@click.option("--organiser", is_flag=True, help="The account it makes may see every bot's source and retire any bot.")
def serve_invite(data: str, url: str, organiser: bool) -> None:
    """Print a one-time invite link: its holder chooses a name and password (valid 14 days)."""
    click.echo(_need_serve_extra().invite(Path(data), url, organiser=organiser))


@serve_admin.command("add-user")
@click.argument("name")
@data_option
@click.option("--organiser", is_flag=True, help="May see every bot's source and retire any bot.")
@stdin_option
def serve_add_user(name: str, data: str, organiser: bool, password_stdin: bool) -> None:
    """Create an account NAME; prints its API token (shown once)."""
    click.echo(_need_serve_extra().add_user_line(Path(data), name, lambda: _password(password_stdin), organiser))


@serve_admin.command("reset")
@click.argument("name")
@data_option
@stdin_option
def serve_reset(name: str, data: str, password_stdin: bool) -> None:
    """A lost password or API token, or an account someone else may hold: set a new password,
    log NAME out everywhere, revoke its API tokens and print a new one (shown once)."""
    click.echo(_need_serve_extra().reset_line(Path(data), name, lambda: _password(password_stdin)))


@serve_admin.command("users")
@data_option
@click.option("--disable", metavar="NAME", help="Disable NAME first: no login or upload, its bots stop playing.")
@click.option("--enable", metavar="NAME", help="Enable NAME again first.")
def serve_users(data: str, disable: str | None, enable: str | None) -> None:
    """List the accounts; --disable/--enable one (a spammer) first, the server running or not."""
    click.echo(_need_serve_extra().users_report(Path(data), disable, enable))


def main() -> None:
    interrupts.hand_over()  # from here a KeyboardInterrupt reaches the guard: one line, exit 130
    cli(prog_name="arena")


def _add_commands() -> None:
    from arena.cli.cache import cache
    from arena.cli.duel import duel

    cli.add_command(duel)
    cli.add_command(cache)


_add_commands()
