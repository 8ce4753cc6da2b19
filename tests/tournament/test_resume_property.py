"""Issue 11's invariant: whatever sequence of changes and interrupted runs led to a
results folder, its final leaderboard (CSV and JSON) is byte-identical to that of
`arena run --fresh` of the final tournament file in the same folder.

Changes: add, remove or edit a bot, change the seed, the deals or a game option.
An interrupted run is modelled by deleting some stored matches afterwards (what a
kill -9 leaves: a store holding part of the schedule). Kept to a few examples so it
runs in well under a minute; the bots are fast deterministic random players.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.report.run import run_and_publish
from arena.tournament.load import load_tournament

ROOT = Path(__file__).resolve().parents[2]
RANDOM = (ROOT / "bots" / "random_bot.py").read_text()
NAMES = ("ann", "bob", "cid", "dee")

change = st.one_of(
    st.tuples(st.just("toggle"), st.sampled_from(NAMES)),  # add or remove a bot
    st.tuples(st.just("edit"), st.sampled_from(NAMES)),
    st.tuples(st.just("seed"), st.integers(1, 3)),
    st.tuples(st.just("deals"), st.integers(1, 2)),
    st.tuples(st.just("bidding"), st.booleans()),
)
step = st.tuples(change, st.floats(0.0, 1.0))  # then run, then forget this share of stored matches


class Folder:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.roster = {"ann", "bob", "cid"}
        self.versions = dict.fromkeys(NAMES, 0)
        self.seed, self.deals, self.bidding = 1, 1, False
        (root / "bots").mkdir()

    def apply(self, what: str, arg) -> None:
        if what == "toggle":
            if arg in self.roster and len(self.roster) > 2:
                self.roster.discard(arg)
            else:
                self.roster.add(arg)
        elif what == "edit":
            self.versions[arg] += 1
        else:
            setattr(self, what, arg)

    def write(self) -> Path:
        paths = []
        for name in sorted(self.roster):
            path = self.root / "bots" / f"{name}.py"
            path.write_text(RANDOM + f"\n# {name} version {self.versions[name]}\n")
            paths.append(str(path))
        text = (
            f"name: prop\nseed: {self.seed}\nbots: [{', '.join(paths)}]\n"
            f"games:\n  - id: divers-weights\n    players: [2]\n    deals: {self.deals}\n"
            f"    options: {{bidding: {str(self.bidding).lower()}}}\n"
            "time_control: {startup_s: 60, move_s: 30}\nworkers: 1\nsandbox: none\ntrust_bots: true\n"
            f"results: {self.root / 'res'}\n"
        )
        path = self.root / "t.yaml"
        path.write_text(text)
        return path

    def run(self, **kw):
        with open(os.devnull, "w") as devnull:
            return run_and_publish(load_tournament(self.write()), out=devnull, err=devnull, **kw)

    def forget(self, share: float) -> None:
        con = sqlite3.connect(self.root / "res" / "results.sqlite")
        ids = [r[0] for r in con.execute("SELECT match_id FROM matches ORDER BY match_id")]
        gone = ids[: int(len(ids) * share)]
        with con:
            con.executemany("DELETE FROM seats WHERE match_id = ?", [(m,) for m in gone])
            con.executemany("DELETE FROM matches WHERE match_id = ?", [(m,) for m in gone])
        con.close()

    def boards(self) -> dict[str, bytes]:
        return {n: (self.root / "res" / n).read_bytes() for n in ("leaderboard.csv", "leaderboard.json")}


@settings(max_examples=4)
@given(st.lists(step, min_size=1, max_size=3))
def test_any_history_of_changes_and_resumes_ends_as_a_fresh_run(steps):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Folder(Path(tmp))
        folder.run()
        for (what, arg), share in steps:
            folder.apply(what, arg)
            folder.run()
            folder.forget(share)
        resumed = folder.run()
        assert resumed.complete
        after_resume = folder.boards()
        fresh = folder.run(fresh=True)
        assert fresh.complete and fresh.played == fresh.scheduled == resumed.scheduled
        assert folder.boards() == after_resume
