"""What a wheel holds: every file of the packages (modules and package data: the pages'
templates and static files, the luck weights, the ladder's pages, the benchmarks' bots), and
the benchmarks' sample field holds what the checkout's does: symlinks in the source tree, files in
a wheel (tests/bench/test_bench_suite.py runs `arena bench --tiny` from such a copy, outside the
checkout)."""

from __future__ import annotations

from pathlib import Path

from arena.bench import SAMPLE
from tests.bench.wheel_files import ROOT, source_files, wheel_files


def test_every_file_of_the_packages_goes_into_the_wheel():
    shipped = set(wheel_files())
    missing = [str(p) for p in source_files() if p not in shipped]
    assert missing == [], f"not in the wheel: add to [tool.setuptools.package-data] in pyproject.toml: {missing}"
    # what the arena reads at run time, named so that a glob or a listing error cannot hide them
    for needed in (
        "arena/report/templates/leaderboard.html.j2",
        "arena/report/static/replay.js",
        "arena/luck/data/palace_weights.json",
        "arena/serve/templates/leaderboard.html",
        "arena/serve/static/ladder.js",
        "arena/bot_helper/botkit.py",
        "arena/bench/bots/prompt_bot.py",
        "arena/bench/sample/bots/random_bot.py",
        "arena/bench/sample/tournaments/spring.yaml",
    ):
        assert Path(needed) in shipped, needed


def test_the_benchmarks_sample_field_is_the_checkouts_spring_field_byte_for_byte():
    assert SAMPLE == ROOT / "arena" / "bench" / "sample"
    spring_roster = sorted(p.name for p in (ROOT / "bots").glob("*.py"))  # spring.yaml: bots: [bots/*.py]
    copies = sorted(p.name for p in (SAMPLE / "bots").iterdir() if p.name != "__pycache__")  # what Python compiled
    assert copies == spring_roster, "copy bots/*.py into arena/bench/sample/bots (the benchmarks play them)"
    for name in copies:
        assert (SAMPLE / "bots" / name).read_bytes() == (ROOT / "bots" / name).read_bytes(), (
            f"arena/bench/sample/bots/{name} differs from bots/{name}: copy it again"
        )
    spring = "tournaments/spring.yaml"
    assert (SAMPLE / spring).read_bytes() == (ROOT / spring).read_bytes(), f"copy {spring} to arena/bench/sample/"
