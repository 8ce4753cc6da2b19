"""The ladder's pages as an entrant and a spectator meet them (in process, Starlette's
TestClient; no matchmaker, no sandbox): what the pages say agrees with the leaderboard and the
API, forms keep what was typed after a refusal, and a page says what to do next."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx2")

from arena.serve.app import Ladderside, create_app  # noqa: E402
from arena.serve.ladder import load_ladder  # noqa: E402
from arena.serve.server import import_bundled  # noqa: E402
from tests.serve.in_process import client  # noqa: E402
from tests.serve.ladder_fixtures import add_user, ladder_file  # noqa: E402

HTML = {"Accept": "text/html"}  # as a browser asks: errors come back as pages


@pytest.fixture
def ladder(tmp_path):
    """(app, side) of the fixture ladder with one entrant, ann; no checker runs an upload."""
    data = tmp_path / "data"
    add_user(data, "ann")
    ladder = load_ladder(ladder_file(tmp_path))
    import_bundled(ladder, data)
    side = Ladderside(ladder, data, None)
    yield create_app(side), side
    side.close()


def test_the_matches_page_counts_places_from_one_as_the_leaderboard_does(ladder):
    """The leaderboard's place column counts from 1 (first); the matches page showed the stored
    places, which count from 0, so a winner read '(0)'."""
    from tests.support.record_factory import make_record

    app, side = ladder
    side.store.record_match(
        make_record(0, ["alpha.v1", "beta.v1", "gamma.v1"], [2, 0, 1], match_id="tightwad/p3/d0/r0/00000000000000aa")
    )
    page = client(app).get("/matches").text
    assert "alpha.v1 (3)" in page and "beta.v1 (1)" in page and "gamma.v1 (2)" in page
    assert "1 = first" in page
