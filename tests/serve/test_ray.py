"""`arena serve --executor ray`: the matchmaker feeds Ray actors through the same top-up hook
as the local pool, and stores every record once (a local Ray instance of this test's own). A bot
folder plays there too: it reaches the Ray workers by content, as in `arena run`."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading

import pytest

from arena.serve.ladder import load_ladder
from arena.serve.matchmaker import Matchmaker
from arena.serve.server import import_bundled
from tests.serve.ladder_fixtures import BOTS, ladder_file, safe_sandbox, wait_until


@pytest.mark.slow
def test_the_matchmaker_plays_deal_sets_on_ray(tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'decktet-arena[ray]'")
    sandbox = safe_sandbox()
    data = tmp_path / "data"
    data.mkdir()
    folder = tmp_path / "foldbot"
    folder.mkdir()
    (folder / "main.py").write_text((BOTS / "alpha.py").read_text())
    (folder / "notes.txt").write_text("data beside the entry file\n")
    path = ladder_file(tmp_path)
    path.write_text(path.read_text().replace("{builtin: random, name: gamma}", f"{{path: {folder}, name: foldbot}}"))
    ladder = load_ladder(path)
    import_bundled(ladder, data)
    ray.init(address=None, num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    stop = threading.Event()
    mm = Matchmaker(ladder, data, sandbox, workers=2, executor="ray")
    failed: list[BaseException] = []

    def play() -> None:
        try:
            mm.run(stop.is_set)
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            failed.append(exc)

    thread = threading.Thread(target=play, daemon=True)
    try:
        thread.start()

        def stored() -> int:
            if not (data / "results.sqlite").exists():
                return 0
            try:
                with sqlite3.connect(f"file:{data / 'results.sqlite'}?mode=ro", uri=True) as conn:
                    return conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
            except sqlite3.Error:  # created, its tables not yet
                return 0

        wait_until(lambda: failed or stored() >= 9, timeout_s=240, what="matches played on Ray")
        assert not failed, failed
    finally:
        stop.set()
        thread.join(120)
        ray.shutdown()
    assert not thread.is_alive() and not failed
    with sqlite3.connect(data / "results.sqlite") as conn:
        rows = conn.execute("SELECT match_id, players, deal FROM matches").fetchall()
        bots = {r[0] for r in conn.execute("SELECT bot FROM seats")}
    assert "foldbot.v1" in bots, f"the folder bot never played on Ray: {bots}"
    sets = {
        r[0]: (r[1], json.loads(r[2]))
        for r in sqlite3.connect(data / "ladder.sqlite").execute("SELECT id, players, bots FROM deal_sets")
    }
    per_set: dict[int, int] = {}
    for _, players, deal in rows:  # each stored match belongs to a set, at most one per rotation
        assert deal in sets and sets[deal][0] == players
        per_set[deal] = per_set.get(deal, 0) + 1
        assert per_set[deal] <= players
    assert len({r[0] for r in rows}) == len(rows)
    assert json.loads((data / "standings.json").read_text())["matches"] >= 1  # what the server reads


def test_the_matchmakers_refusal_is_the_servers_one_line(tmp_path, monkeypatch):
    """Said only in run.log before ("the matchmaker failed ... start it again"): the server now says
    the matchmaker's line itself, with its exit code, whether it stopped while starting or later."""
    from arena.errors import ArenaError, MachineTrouble
    from arena.serve import matchmaker as mm
    from arena.serve.server import _await_start, _refusal

    ladder = load_ladder(ladder_file(tmp_path))
    data = tmp_path / "data"
    data.mkdir()

    def refuse(self, should_stop=None, started=None):
        raise ArenaError("cannot reach Ray at 10.0.0.1:6379 (--ray-address): nothing there answers")

    monkeypatch.setattr(mm.Matchmaker, "run", refuse)  # the fork inherits it
    proc = mm.start_matchmaker(ladder, data, None, executor="ray")
    with pytest.raises(ArenaError) as info:
        _await_start(proc, data)
    assert str(info.value) == "cannot reach Ray at 10.0.0.1:6379 (--ray-address): nothing there answers"
    proc.join(30)
    assert proc.exitcode == mm.MATCHMAKER_REFUSED

    def later(self, should_stop=None, started=None):
        started()
        raise MachineTrouble("every Ray worker was lost")

    monkeypatch.setattr(mm.Matchmaker, "run", later)
    proc = mm.start_matchmaker(ladder, data, None, executor="ray")
    _await_start(proc, data)  # it started: the server serves
    proc.join(30)
    refusal = _refusal(proc)  # what the server raises once its watcher saw the matchmaker stop
    assert isinstance(refusal, MachineTrouble) and str(refusal) == "every Ray worker was lost"
