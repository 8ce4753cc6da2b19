"""`arena bench` with no subcommand: a tiny run completes and reports every measure.

Smoke only: performance figures are never asserted (docs/performance.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from arena.bench.suite import IDS


def test_tiny_bench_runs_every_measure_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "bench", "--tiny", "--json", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
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
