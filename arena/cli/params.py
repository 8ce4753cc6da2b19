"""Option types of the `arena` commands: each refuses a bad value at parse time, in one
line naming the option (click adds which), before any work is done."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from arena.records import TIME_BOUNDS
from arena.tournament.config import output_problem


class Seconds(click.ParamType):
    """A finite number of seconds within the tournament file's range for the same field."""

    name = "seconds"

    def __init__(self, field: str | None = None, bounds: tuple[float, float] | None = None) -> None:
        self.low, self.high = bounds or TIME_BOUNDS[field or ""]

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            number = value
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                self.fail(
                    f"{value!r} is not a number of seconds; give one from {self.low:g} to {self.high:g}", param, ctx
                )
        if not math.isfinite(number) or not self.low <= number <= self.high:
            self.fail(f"{value!r} is out of range; give seconds from {self.low:g} to {self.high:g}", param, ctx)
        return number


class OutputFile(click.ParamType):
    """A file to write at the end of the command: its folder must exist and be writable now,
    not after a match was played or a benchmark measured."""

    name = "file"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        path = Path(value).expanduser()
        problem = output_problem(path)
        if problem:
            self.fail(problem, param, ctx)
        return path


limit_option = click.option(
    "--limit",
    "limits",
    multiple=True,
    metavar="KEY=VALUE",
    help="A bot limit over its default, as a tournament file's limits: set it, e.g. memory_mb=4096 (docs/sandbox.md).",
)
