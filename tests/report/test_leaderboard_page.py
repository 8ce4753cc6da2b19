"""The leaderboard page of a real tournament with faulty bots: faults marked, notable
matches grouped with the stored crash tail and a replay link, `--format html`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import support

HERE = Path(__file__).resolve().parent
BOTS = {
    "alpha": HERE / "bots" / "random_player.py",
    "beta": HERE / "bots" / "random_player.py",
    "crasher": HERE / "bots" / "crash_loudly.py",
    "illegal": support.BOTS / "illegal_answer.py",
}


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("page")
    for name, src in BOTS.items():
        (tmp / f"{name}.py").write_text(src.read_text())
    (tmp / "t.yaml").write_text(f"""
name: faulty
seed: 3
bots: [{", ".join(str(tmp / f"{n}.py") for n in BOTS)}]
games:
  - {{id: tightwad, players: [3], deals: 1}}
  - {{id: palace, players: [2], deals: 1}}
workers: 1
sandbox: none
trust_bots: true
results: {tmp / "results"}
""")
    out = arena("run", str(tmp / "t.yaml"), cwd=tmp)
    assert "Traceback" not in out.stderr, out.stderr
    return tmp / "results"


def test_format_html_writes_the_page_and_prints_its_path(results):
    out = arena("leaderboard", str(results), "--format", "html", cwd=results)
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()) == results / "leaderboard.html"


def test_faulty_bots_are_marked_and_notable_matches_grouped_with_tail_and_replay(results):
    arena("leaderboard", str(results), "--format", "html", cwd=results)
    page = (results / "leaderboard.html").read_text()
    for bot in ("crasher", "illegal"):
        assert re.search(rf'<tr class="faulty">(?:(?!</tr>).)*{bot} ⚠', page), bot
    assert not re.search(r'<tr class="faulty">(?:(?!</tr>).)*alpha', page.split('id="notable"')[0])
    notable = page.split('<section id="notable">')[1]
    rows = re.findall(r"<tr[^>]*><td class=\"name\">([^<]+)</td><td class=\"text\">([^<]+)</td><td>(\d+)</td>", notable)
    assert ("crasher", "crash") in [(b, k) for b, k, _ in rows] and ("illegal", "illegal") in [
        (b, k) for b, k, _ in rows
    ]
    assert len(rows) == len({(b, k) for b, k, _ in rows})  # one row per (bot, kind)
    assert "the strategy table is empty" in notable  # the stored stderr tail
    links = re.findall(r'href="(replays/[^"]+\.html)"', notable)
    assert len(links) == len(rows)
    for link in links:
        replay = (results / link).read_text()
        assert "DecompressionStream" in replay


def test_every_game_plot_runs_over_its_own_matches(results):
    page = (results / "leaderboard.html").read_text()
    for game, n in (("Tightwad", 4 * 3), ("Palace", 6 * 2)):  # 4 groups of 3 x 3 rotations; 6 pairs x 2
        section = page.split(f"<h2>{game}</h2>")[1].split("</section>")[0]
        assert f"{game} rated match number" in section
        ticks = [int(x) for x in re.findall(r'text-anchor="middle">(\d+)</text>', section)]
        assert ticks and max(ticks) <= n


def test_open_writes_the_page_and_hands_it_to_the_browser(results, tmp_path):
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "fake-browser"
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    browser.chmod(0o755)
    env = {**os.environ, "BROWSER": str(browser)}
    out = subprocess.run(
        [sys.executable, "-m", "arena", "leaderboard", str(results), "--open"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=results,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    for _ in range(50):
        if opened.exists():
            break
        time.sleep(0.1)
    assert opened.read_text().strip() == (results / "leaderboard.html").resolve().as_uri()


@pytest.mark.slow
def test_the_page_and_its_replays_render_offline_in_chromium(results):
    """The page and the replays it links open from the folder with the network off: nothing
    fetched, no script error, every table and plot drawn, every replay ready."""
    from tests.report.test_replay_view import CHROMIUM_FLAGS, _browser

    sync_playwright, chromium = _browser()
    arena("leaderboard", str(results), "--format", "html", cwd=results)
    page_file = results / "leaderboard.html"
    links = re.findall(r'href="(replays/[^"]+\.html)"', page_file.read_text())
    assert links
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context(offline=True)
            fetched: list[str] = []
            errors: list[str] = []
            context.on("request", lambda r: fetched.append(r.url))
            page = context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(page_file.as_uri())
            scopes = page.evaluate("document.querySelectorAll('section.scope').length")
            assert scopes == 3  # Overall, Palace, Tightwad
            assert page.evaluate("document.querySelectorAll('section.scope svg polyline').length") >= 4
            assert page.evaluate("document.querySelectorAll('table.standings tbody tr').length") == 3 * 4
            for link in links:
                page.goto((results / link).as_uri())
                page.wait_for_function("document.body.dataset.ready || document.body.dataset.error", timeout=30_000)
                assert page.evaluate("document.body.dataset.error") is None
            assert errors == []
            assert all(url.startswith("file://") for url in fetched), fetched
        finally:
            browser.close()
