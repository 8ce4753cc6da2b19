"""`arena bench` with no subcommand: a tiny run completes and reports every measure, from an
installed copy of the packages (what a wheel holds) and an empty folder: nothing it plays comes
from the checkout's bots/ or tournaments/.

Smoke only: performance figures are never asserted (docs/performance.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from arena.bench.suite import IDS
from tests.bench.wheel_files import install_copy

# `arena bench` from the installed copy, after checking that the arena imported is that copy
BENCH = """import sys
import arena, games
site = sys.argv.pop(1)
assert arena.__file__.startswith(site + "/") and games.__file__.startswith(site + "/"), arena.__file__
from arena.cli import main
sys.argv[0] = "arena"
main()
"""


def test_tiny_bench_runs_every_measure_end_to_end_from_an_install_outside_the_checkout(tmp_path: Path) -> None:
    site = install_copy(tmp_path / "site")
    cwd = tmp_path / "empty"
    cwd.mkdir()
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-c", BENCH, str(site), "bench", "--tiny", "--json", str(out)],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert list(cwd.iterdir()) == []  # nothing written where it ran
    result = json.loads(out.read_text())
    rows = {r["id"]: r for r in result["rows"]}
    assert sorted(rows) == sorted(IDS)
    for pid, row in rows.items():
        assert row["figure"] != "error", (pid, row["details"])
        assert row["target"] and row["measure"]
        assert f"| {pid} " in proc.stdout  # the printed table has the same rows
    assert result["machine"]["cores"] >= 1 and result["machine"]["python"]
    # P6 shows each game's interval: 60 deals leave the ratio uncertain by about 30 points
    games = rows["P6"]["details"]["games"]
    assert all("saved_ci95" in g for g in games.values())
    assert any(
        g["saved_ci95"] and f"[95%: {100 * g['saved_ci95'][0]:.0f}%" in rows["P6"]["figure"] for g in games.values()
    )


def test_a_measure_that_fails_leaves_the_others_and_fails_the_run(tmp_path: Path, monkeypatch) -> None:
    """A broken measure is a row with its error, the rest are still measured and written, and
    the run exits non-zero with one line naming it (a bench that did not measure everything is
    not a success)."""
    from click.testing import CliRunner

    from arena.bench import suite
    from arena.cli import cli

    def broken(sizes: suite.Sizes) -> suite.BenchRow:
        raise RuntimeError("no engine today")

    def fine(sizes: suite.Sizes) -> suite.BenchRow:
        return suite._row("P8", "stub measure of this test", "1", "1", True)

    monkeypatch.setattr(suite, "MEASURES", {"P3": broken, "P8": fine})
    out = tmp_path / "bench.json"
    res = CliRunner().invoke(cli, ["bench", "--json", str(out)])
    assert res.exit_code == 1
    assert "| P8 " in res.output and "| P3 " in res.output
    rows = {r["id"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["P8"]["figure"] == "1" and rows["P3"]["figure"] == "error"
    last = res.output.strip().splitlines()[-1]
    assert (
        last.startswith("arena: error: bench did not measure P3 (RuntimeError: no engine today)") and str(out) in last
    )
