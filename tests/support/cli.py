"""Running `arena` in process (click's runner) and judging its failures: one line on stderr,
no traceback, a non-zero exit (or the one given)."""

from __future__ import annotations

from click.testing import CliRunner, Result

from arena.cli import cli


def invoke(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line_error(result: Result, *pieces: str, code: int | None = None) -> str:
    """The result failed (with exit ``code`` if given) with exactly one line on stderr, no
    traceback, holding every piece; returns the line."""
    if code is None:
        assert result.exit_code != 0, result.output
    else:
        assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("arena: error: "), line
    for piece in pieces:
        assert piece in line, f"{piece!r} not in {line!r}"
    return line
