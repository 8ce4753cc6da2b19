"""How many matches a ladder plays once its store is large (docs/ladder.md, Performance).

The demo ladder (ladders/demo.yaml: the bundled bots, 2 workers, the machine's sandbox) plays
for SECONDS on a copy of a data folder whose results store already holds MATCHES synthetic
matches (arena/bench/make_store.py), with the matchmaker's rating cache already warm. It
prints the matches stored per second of wall time (from the matchmaker's start to the end of
its drain, the last ratings pass included).

    python benchmarks/ladder_at_scale.py [--matches 100000] [--seconds 60] [--runs 2]

To compare with an older commit, run it again with that commit's code first on the path
(from outside the checkout, so the current folder does not come first):
``git worktree add /tmp/old <commit>; cd /tmp && PYTHONPATH=/tmp/old python <repo>/benchmarks/ladder_at_scale.py``.
"""

from __future__ import annotations

import argparse
import io
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _max_rowid(data: Path) -> int:
    con = sqlite3.connect(data / "results.sqlite")
    try:
        return con.execute("SELECT MAX(rowid) FROM matches").fetchone()[0] or 0
    finally:
        con.close()


def prepare(template: Path, matches: int) -> None:
    """The data folder every run copies: the synthetic store, the demo ladder's bots, a warm rating cache."""
    from arena.bench.make_store import make_store
    from arena.serve.ladder import load_ladder
    from arena.serve.matchmaker import Matchmaker
    from arena.serve.server import import_bundled
    from arena.tournament.store import ResultStore

    make_store(template, matches)
    ladder = load_ladder(ROOT / "ladders" / "demo.yaml")
    import_bundled(ladder, template)
    Matchmaker(ladder, template, None).publish_standings(ResultStore(template))


def run(template: Path, seconds: float) -> tuple[int, float]:
    """(matches stored, wall seconds) of one matchmaker run on a fresh copy of ``template``."""
    from arena.match.detect import open_sandbox
    from arena.serve.ladder import load_ladder
    from arena.serve.matchmaker import Matchmaker
    from arena.tournament.store import ResultStore

    data = template.with_name("run")
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(template, data)
    try:
        ladder = load_ladder(ROOT / "ladders" / "demo.yaml")
        before = _max_rowid(data)
        m = Matchmaker(ladder, data, open_sandbox("auto", io.StringIO()), workers=2)
        m.publish_standings(ResultStore(data))  # what run() does first, off the clock
        start = time.monotonic()
        m.run(lambda: time.monotonic() > start + seconds)
        return _max_rowid(data) - before, time.monotonic() - start
    finally:
        shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=100_000, help="synthetic matches already stored")
    ap.add_argument("--seconds", type=float, default=60.0, help="how long the ladder plays, each run")
    ap.add_argument("--runs", type=int, default=2)
    a = ap.parse_args()
    import arena

    with tempfile.TemporaryDirectory(prefix="ladder-at-scale-") as tmp:
        template = Path(tmp) / "template"
        t = time.perf_counter()
        prepare(template, a.matches)
        print(f"{a.matches} stored matches and a warm rating cache in {time.perf_counter() - t:.0f} s", flush=True)
        for i in range(a.runs):
            played, wall = run(template, a.seconds)
            print(
                f"run {i + 1} ({Path(arena.__file__).parents[1]}): {played} matches in {wall:.1f} s, "
                f"{played / wall:.2f} a second",
                flush=True,
            )


if __name__ == "__main__":  # the worker pool starts processes that import this file again
    main()
