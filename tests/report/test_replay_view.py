"""The visual replay: frames rebuilt from a match record, and the page itself checked
in a real headless Chromium against the record (what each view draws, stepping,
faults marked at their decision)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.report.replay_view import replay_frames, replay_html
from games import get_game
from tests import support

HERE = Path(__file__).resolve().parent
RANDOM = HERE / "bots" / "random_player.py"
ILLEGAL = support.BOTS / "illegal_answer.py"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]

GAMES = [("tightwad", 3, 7), ("divers-weights", 3, 5), ("palace", 3, 2)]


def play_record(tmp_path: Path, game: str, bots: list[Path], seed: int, html: Path | None = None) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "arena",
        "play",
        game,
        *map(str, bots),
        "--seed",
        str(seed),
        "--json",
        "--sandbox",
        "none",
    ]
    if html is not None:
        cmd += ["--html", str(html)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    record = json.loads(out.stdout)
    faulted = any(f is not None for f in record["faults"])
    assert out.returncode == (1 if faulted else 0), out.stderr  # arena play exits 1 when a bot faulted
    return record


@pytest.mark.parametrize("game,players,seed", GAMES)
def test_frames_hold_every_seats_own_observation_at_every_decision(tmp_path, game, players, seed):
    record = play_record(tmp_path, game, [RANDOM] * players, seed)
    data = replay_frames(record)
    assert len(data["frames"]) == len(record["decisions"]) + 1 and data["frames"][-1]["end"]
    state = get_game(game).new_game(players, record["deal_seed"], record["options"])
    for frame, d in zip(data["frames"], record["decisions"]):
        assert frame["obs"] == [state.observation(s) for s in range(players)]
        assert (frame["seat"], frame["action"], frame["text"]) == (d["seat"], d["action"], d["text"])
        assert [frame["action"], d["text"]] in frame["legal"]
        state.apply(d["seat"], d["action"])
    assert state.is_over()


def test_a_tampered_record_is_refused_in_one_line(tmp_path):
    record = play_record(tmp_path, "tightwad", [RANDOM] * 3, 1)
    record["decisions"][5]["action"] = 99
    with pytest.raises(ArenaError) as err:
        replay_frames(record)
    assert "decision 5" in str(err.value) and "\n" not in str(err.value)


def test_cards_carry_their_rank_label_and_aces_are_A(tmp_path):
    data = replay_frames(play_record(tmp_path, "palace", [RANDOM] * 3, 2))
    labels = {c["rank"]: c["label"] for c in data["cards"]}
    assert labels["Ace"] == "A" and labels["Crown"] == "C" and labels["7"] == "7"
    assert "c.label" in replay_html(play_record(tmp_path, "tightwad", [RANDOM] * 3, 1))


def test_palace_frames_carry_each_decisions_public_events_in_order(tmp_path):
    record = play_record(tmp_path, "palace", [RANDOM] * 3, 2)
    data = replay_frames(record)
    state = get_game("palace").new_game(3, record["deal_seed"], record["options"])
    for d in record["decisions"]:
        state.apply(d["seat"], d["action"])
    logged = [e for f in data["frames"][:-1] for e in f["events"]]
    assert logged == [state._event_json(e) for e in state._log]  # the engine's whole public log, none twice
    assert {e["type"] for e in logged} >= {"swaps", "play", "draw"}
    tightwad = replay_frames(play_record(tmp_path, "tightwad", [RANDOM] * 3, 1))
    assert all("events" not in f for f in tightwad["frames"])


def test_the_page_is_self_contained(tmp_path):
    html = replay_html(play_record(tmp_path, "palace", [RANDOM] * 4, 3))
    for external in ("http://", "https://", "<link", "src="):
        assert external not in html


def test_a_writer_killed_mid_page_leaves_the_old_page_whole(tmp_path):
    """The page was written in place: a process killed mid-write (here by the file size limit's
    SIGXFSZ after 4 KiB) left half a page at the path, e.g. a replay linked from leaderboard.html."""
    import resource
    import signal

    record = play_record(tmp_path, "palace", [RANDOM] * 4, 3)
    (tmp_path / "record.json").write_text(json.dumps(record))
    page = tmp_path / "replay.html"
    page.write_text("<p>the old page</p>\n")
    limit = 4096
    assert len(replay_html(record).encode()) > 4 * limit
    write = (
        "import json, signal, sys; from arena.report.replay_view import write_replay_html; "
        "signal.signal(signal.SIGXFSZ, signal.SIG_DFL); "  # Python ignores it: be killed, as by a kill
        "write_replay_html(json.load(open(sys.argv[1])), sys.argv[2])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", write, str(tmp_path / "record.json"), str(page)],
        capture_output=True,
        timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
    )
    assert proc.returncode == -signal.SIGXFSZ, proc.stderr
    assert page.read_text() == "<p>the old page</p>\n"


# --- in a real browser -------------------------------------------------------------------------


def _browser():
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[browser]')")
    return sync_playwright, CHROMIUM


def _drawn(page, seat: int) -> dict:
    """What the page draws in one seat's box: its face-up hand cards and its card backs."""
    return page.evaluate(
        """(s) => {
        const box = document.querySelector(`.seat[data-seat='${s}']`);
        const hand = box.querySelector('.row');
        return {cards: [...hand.querySelectorAll('.card[data-card]')].map(e => Number(e.dataset.card)),
                backs: hand.querySelectorAll('.card.back').length,
                faulted: box.classList.contains('faulted'),
                text: box.textContent};
    }""",
        seat,
    )


@pytest.mark.slow
@pytest.mark.parametrize("game,players,seed", GAMES)
def test_the_replay_draws_what_the_record_says_in_chromium(tmp_path, game, players, seed):
    sync_playwright, chromium = _browser()
    bots = [RANDOM] * players
    bots[1] = ILLEGAL  # a fault to mark
    page_file = tmp_path / "replay.html"
    record = play_record(tmp_path, game, bots, seed, html=page_file)
    frames = replay_frames(record)["frames"]
    fault_at = record["faults"][1]["decision"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page()
            page.goto(page_file.as_uri())
            page.wait_for_function("document.body.dataset.ready || document.body.dataset.error", timeout=30_000)
            assert page.evaluate("document.body.dataset.error") is None
            frame_no = lambda: int(page.evaluate("document.body.dataset.frame"))  # noqa: E731

            # omniscient view: every seat's hand, face up, as the record's observations say
            checked = 0
            for target in sorted({0, 1, fault_at, fault_at + 1, len(frames) // 2, len(frames) - 1}):
                page.evaluate(
                    "(n) => { const s = document.getElementById('slider'); s.value = n;"
                    " s.dispatchEvent(new Event('input')); }",
                    target,
                )
                assert frame_no() == target
                f = frames[target]
                for s in range(players):
                    assert _drawn(page, s)["cards"] == f["obs"][s]["hand"]
                if not f.get("end"):
                    chosen = page.text_content("#legal li.chosen .text")
                    assert chosen == f["text"]
                    shown = page.text_content("#decision")
                    assert (f"{f['ms']} ms" if f["ms"] is not None else "no time") in shown and f["status"] in shown
                if target == fault_at:
                    assert "fault at this decision: seat 1" in page.text_content("#decision")
                checked += 1

                # one seat's view: exactly its observation (own hand face up, the others as backs)
                for viewer in range(players):
                    page.select_option("#view", str(viewer))
                    obs = f["obs"][viewer]
                    shown = json.loads(page.text_content("#obsjson"))
                    assert shown == obs
                    for s in range(players):
                        drawn = _drawn(page, s)
                        if s == viewer:
                            assert drawn["cards"] == obs["hand"]
                        else:
                            assert drawn["cards"] == []
                            sizes = obs.get("hand_sizes") or [t["hand_size"] for t in obs["tableaux"]]
                            assert drawn["backs"] == sizes[s]
                page.select_option("#view", "all")
            assert checked >= 4

            # stepping: keys, buttons, the end
            page.keyboard.press("Home")
            assert frame_no() == 0
            page.keyboard.press("ArrowRight")
            page.keyboard.press("ArrowRight")
            assert frame_no() == 2
            page.click("#prev")
            assert frame_no() == 1
            page.keyboard.press("End")
            assert frame_no() == len(frames) - 1
            page.click("#next")
            assert frame_no() == len(frames) - 1
            for s, seat in enumerate(record["seats"]):
                drawn = _drawn(page, s)
                assert f"place {seat['place'] + 1}" in drawn["text"]
                assert drawn["faulted"] == (seat["fault"] is not None)
        finally:
            browser.close()


@pytest.mark.slow
def test_the_page_links_decisions_scrolls_to_the_choice_and_logs_palace_in_chromium(tmp_path):
    sync_playwright, chromium = _browser()
    page_file = tmp_path / "replay.html"
    record = play_record(tmp_path, "palace", [RANDOM] * 3, 2, html=page_file)
    frames = replay_frames(record)["frames"]
    # a decision whose chosen action sits far down a long list (the set-up swaps offer hundreds)
    deep = next(f["n"] for f in frames[:-1] if [x[0] for x in f["legal"]].index(f["action"]) > 30)
    two_digit = next(f["n"] for f in frames[:-1] if f["legal"][-1][0] >= 10)
    ace = next(c for c in replay_frames(record)["cards"] if c["rank"] == "Ace")["id"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 800})
            page.goto(page_file.as_uri() + "#d40")
            page.wait_for_function("document.body.dataset.ready || document.body.dataset.error", timeout=30_000)
            frame_no = lambda: int(page.evaluate("document.body.dataset.frame"))  # noqa: E731
            assert frame_no() == 40
            page.keyboard.press("ArrowRight")
            assert frame_no() == 41 and page.evaluate("location.hash") == "#d41"
            page.evaluate("location.hash = '#d7'")
            page.wait_for_function("document.body.dataset.frame === '7'")

            # the log holds every public event before this decision, the previous decision's in bold
            events = [e for f in frames[:7] for e in f["events"]]
            assert page.locator("#log li").count() == len(events)
            assert page.locator("#log li.new").count() == len(frames[6]["events"])

            page.evaluate(f"location.hash = '#d{deep}'")
            page.wait_for_function(f"document.body.dataset.frame === '{deep}'")
            seen = page.evaluate("""() => { const box = document.getElementById('legal').getBoundingClientRect();
                const li = document.querySelector('#legal li.chosen').getBoundingClientRect();
                return li.top >= box.top - 1 && li.bottom <= box.bottom + 1; }""")  # sub-pixel rounding
            assert seen, "the chosen action is scrolled into view"

            page.evaluate(f"location.hash = '#d{two_digit}'")
            page.wait_for_function(f"document.body.dataset.frame === '{two_digit}'")
            clipped = page.evaluate("""() => { const box = document.getElementById('legal').getBoundingClientRect();
                return [...document.querySelectorAll('#legal .num')].filter(n => {
                    const r = n.getBoundingClientRect();
                    return n.scrollWidth > n.clientWidth || r.left < box.left; }).map(n => n.textContent); }""")
            assert clipped == []
            labels = page.evaluate(
                """(id) => [...document.querySelectorAll(`.card[data-card='${id}'] .rank`)]
                .map(e => e.textContent)""",
                ace,
            )
            page.evaluate(
                "() => { const s = document.getElementById('slider'); s.value = 0;"
                " s.dispatchEvent(new Event('input')); }"
            )
            everywhere = page.evaluate(
                "[...document.querySelectorAll('.card[data-card] .rank')].map(e => e.textContent)"
            )
            assert "1" not in everywhere and "A" in everywhere and set(labels) <= {"A"}
        finally:
            browser.close()


def test_the_page_fits_a_phone_and_stepping_never_scrolls_the_window_sideways_in_chromium(tmp_path):
    """At 375 px the two columns (the table and a 340 px panel) made the page 504 px wide, and
    each step's scrollIntoView of the chosen action scrolled the whole window sideways: the
    seats were cut off at the left. The panel now goes under the table on a narrow screen, and
    a step scrolls only the list of actions."""
    sync_playwright, chromium = _browser()
    page_file = tmp_path / "replay.html"
    record = play_record(tmp_path, "tightwad", [RANDOM] * 3, 1)
    record["match_id"] = "tightwad/p3/d4508/r0/b229781a5107b82e"  # a ladder's: its title has no space to wrap at
    page_file.write_text(replay_html(record))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 375, "height": 700})
            page.goto(page_file.as_uri())
            page.wait_for_function("document.body.dataset.ready || document.body.dataset.error", timeout=30_000)
            for _ in range(4):
                assert page.evaluate("document.documentElement.scrollWidth") <= 375
                assert page.evaluate("[window.scrollX, window.scrollY]") == [0, 0]
                page.keyboard.press("ArrowRight")
            seen = page.evaluate("""() => { const box = document.getElementById('legal').getBoundingClientRect();
                const li = document.querySelector('#legal li.chosen').getBoundingClientRect();
                return li.top >= box.top - 1 && li.bottom <= box.bottom + 1; }""")
            assert seen, "the chosen action is still scrolled into view within its list"
        finally:
            browser.close()


def test_a_seat_s_view_never_shows_another_seat_s_hidden_choice_in_chromium(tmp_path):
    """One seat's view drew the decision panel as the omniscient view does: in a Divers Weights
    trick, seat 1's view showed seat 0's card ("seat 0 chose: play ...") before seat 1 chose,
    and every seat's view showed how many legal moves another seat had (a hint of its hand)."""
    sync_playwright, chromium = _browser()
    page_file = tmp_path / "replay.html"
    record = play_record(tmp_path, "divers-weights", [RANDOM] * 3, 5)
    page_file.write_text(replay_html(record))
    frames = replay_frames(record)["frames"]
    # a trick: seat 0 chooses with seats 1 and 2, who cannot see its card yet
    trick = next(f for f in frames[:-1] if f["seat"] == 0 and f["obs"][0]["to_move"] == [0, 1, 2])
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page()
            page.goto(page_file.as_uri() + f"#d{trick['n']}")
            page.wait_for_function("document.body.dataset.ready || document.body.dataset.error", timeout=30_000)
            assert page.evaluate("document.body.dataset.frame") == str(trick["n"])
            count = f"of {trick['legal_count']} legal"
            for view in ("all", "0", "1", "2"):
                page.select_option("#view", view)
                shown = page.text_content("#decision")
                assert "seat 0" in shown
                assert (trick["text"] in shown) == (view in ("all", "0")), (view, shown)
                assert (count in shown) == (view in ("all", "0")), (view, shown)
        finally:
            browser.close()
