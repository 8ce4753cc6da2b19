"""`arena cache`: list the bot cache (environments, unpacked archives, shipped bots) and prune it."""

from __future__ import annotations

import math
from typing import Any

import click


class Days(click.ParamType):
    """A finite number of days, 0 or more."""

    name = "days"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            days = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of days; give one such as 30", param, ctx)
        if not math.isfinite(days) or not 0 <= days <= 36_500:
            self.fail(f"{value!r} is out of range; give days from 0 to 36500", param, ctx)
        return days


@click.group("cache", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object: the folder and every entry.")
@click.pass_context
def cache(ctx: click.Context, as_json: bool) -> None:
    """List what the arena keeps for bots: requirement environments, unpacked archives and
    bots shipped to this machine, least recently used first (docs/first-bot.md#the-bot-cache)."""
    if ctx.invoked_subcommand is not None:
        return
    from arena.match import bot_cache

    click.echo(bot_cache.listing(bot_cache.entries(), bot_cache.cache_root(), as_json))


@cache.command("prune")
@click.option(
    "--unused-for",
    type=Days(),
    default=30.0,
    show_default=True,
    help="Remove the entries not used for more than this many days.",
)
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
def prune(unused_for: float, dry_run: bool) -> None:
    """Remove the cache entries not used for a while. An entry that a running `arena run`
    plays from, or that a running bot process (of a run, `arena play`, `check`, a ladder) was
    started from, is kept whatever its age; every use marks an entry too. Anything removed is
    made again when needed (installed by pip again, unpacked or shipped again)."""
    from arena.match import bot_cache

    bot_cache.prune(unused_for * 86_400, dry_run=dry_run, say=click.echo)
