"""The pages' templates and static files are package data: found by importlib.resources, listed
for the wheel, inlined into self-contained pages; the plots are well-formed SVG."""

from __future__ import annotations

import fnmatch
import json
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import pytest

from arena.report import pages
from arena.report.html_report import rating_plot, render_html
from arena.report.ratings import compute_ratings
from arena.report.replay_view import layout
from games import REGISTRY
from tests.support.record_factory import make_record

ROOT = Path(__file__).resolve().parents[2]
DATA_DIRS = ("arena/report/templates", "arena/report/static", "arena/luck/data")


def test_every_data_file_is_in_the_wheel_and_found_by_importlib_resources():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["arena"]
    files = [p for d in DATA_DIRS for p in sorted((ROOT / d).iterdir()) if p.is_file()]
    assert len(files) >= 7  # 2 templates, 4 static files, the weights
    for p in files:
        inside = p.relative_to(ROOT / "arena").as_posix()
        assert any(fnmatch.fnmatch(inside, g) for g in globs), f"{inside} is not in [tool.setuptools.package-data]"
        node = resources.files("arena")
        for part in inside.split("/"):
            node = node.joinpath(part)
        assert node.read_bytes() == p.read_bytes()


def test_a_page_inlines_its_static_files_and_loads_nothing():
    report = compute_ratings(
        [
            make_record(i, ["a", "b", "c"], [i % 3, (i + 1) % 3, (i + 2) % 3], match_id=f"tightwad/m{i:02d}")
            for i in range(6)
        ]
    )
    page = render_html(report, title="T")
    assert pages.static_text("leaderboard.css").strip()[:40] in page
    assert (
        "<link" not in page and "src=" not in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    )


def test_a_static_file_that_would_close_its_element_is_refused(monkeypatch):
    monkeypatch.setattr(pages, "static_text", lambda name: "let x = '</script><script>alert(1)';")
    with pytest.raises(ValueError, match="would end its element"):
        pages.inline("replay.js")


def test_the_plot_is_well_formed_svg_with_hostile_names_made_inert():
    name = 'evil<b>&"\u202e'
    recs = [
        make_record(i, ["a", name], [i % 2, 1 - i % 2], game="divers-weights", match_id=f"divers-weights/m{i}")
        for i in range(4)
    ]
    scope = compute_ratings(recs).scope("divers-weights")
    svg = ET.fromstring(str(rating_plot(scope)))
    texts = ["".join(e.itertext()) for e in svg.iter("{http://www.w3.org/2000/svg}title")]
    assert any('evil<b>&"\\u202e' in t for t in texts)  # escaped as markup by the tree, bidi shown as an escape
    assert len(svg.findall("{http://www.w3.org/2000/svg}polyline")) == 2


def test_every_game_has_a_replay_layout_naming_fields_of_its_observation():
    for game in REGISTRY:
        spec = layout(game)
        assert spec.get("public") is not None and spec.get("hand_size"), game
        obs = REGISTRY[game].new_game(REGISTRY[game].min_players, 1, None).observation(0)
        for row in spec["public"] + spec["seat"]:
            path = next(row[k] for k in ("cards", "plays", "byseat", "slots", "text") if k in row)
            if isinstance(path, str):
                assert path.split(".")[0] in obs, (game, path)
    assert json.loads(pages.static_text("replay_layouts.json"))["about"]
