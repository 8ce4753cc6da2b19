"""The ladder's pages as an entrant and a spectator meet them (in process, Starlette's
TestClient; no matchmaker, no sandbox): what the pages say agrees with the leaderboard and the
API, forms keep what was typed after a refusal, and a page says what to do next."""

from __future__ import annotations

import hashlib
import re

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx2")

from arena.serve.app import CSRF_COOKIE, Ladderside, create_app  # noqa: E402
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
    page = re.sub(r"<[^>]+>", "", client(app).get("/matches").text)  # the text a visitor reads
    assert "alpha.v1 (3)" in page and "beta.v1 (1)" in page and "gamma.v1 (2)" in page
    assert "1 = first" in page


def _log_in(c) -> str:
    """Log ``c`` in as ann through the form; returns the session's form token."""
    c.get("/login")
    data = {"name": "ann", "password": "correct horse", "csrf_token": c.cookies.get(CSRF_COOKIE)}
    assert c.post("/login", data=data, follow_redirects=False).status_code == 303
    return re.search(r'name="csrf_token" value="([^"]+)"', c.get("/").text).group(1)


def _field(page: str, name: str) -> str | None:
    """The value a page's text input ``name`` shows (None: no value attribute)."""
    tag = re.search(rf'<input[^>]*\bname="{name}"[^>]*>', page)
    assert tag, f"no input {name}"
    value = re.search(r'\bvalue="([^"]*)"', tag.group(0))
    return None if value is None else value.group(1)


def test_a_refused_form_keeps_the_name_that_was_typed(ladder):
    """A wrong password, a short invite password, a refused bot name: the page comes back with
    the reason, and the name field still holds what the visitor typed (only the password and the
    file have to be given again, which a browser never refills)."""
    from arena.serve.accounts import new_invite

    app, side = ladder
    c = client(app)
    c.get("/login")
    csrf = c.cookies.get(CSRF_COOKIE)
    r = c.post("/login", data={"name": "ann", "password": "not it", "csrf_token": csrf}, headers=HTML)
    assert r.status_code == 401 and "wrong name or password" in r.text
    assert _field(r.text, "name") == "ann"

    token = new_invite(side.data)
    r = c.post(f"/invite/{token}", data={"name": "ivy", "password": "short", "csrf_token": csrf}, headers=HTML)
    assert r.status_code == 400 and "shorter than 8" in r.text
    assert _field(r.text, "name") == "ivy"

    form = _log_in(c)
    r = c.post(
        "/upload",
        data={"name": "my bot!", "csrf_token": form},
        files={"file": ("my_bot.py", b"print(1)\n")},
        headers=HTML,
    )
    assert r.status_code == 400 and "is not allowed" in r.text
    assert _field(r.text, "name") == "my bot!"
    assert "choose the file again" in r.text


def test_an_upload_refused_as_too_large_keeps_the_name_and_says_the_limit(ladder):
    """A file over upload_max_bytes: the page comes back with the name typed and the limit in bytes
    and in KiB. Before, a body over the bound was refused from its Content-Length without reading
    any of it, so the page lost the name; now the first bytes are read for the fields sent before
    the file (the form puts the name above the file input, and a browser sends them in that order)."""
    app, side = ladder
    c = client(app)
    form = _log_in(c)
    page = c.get("/upload").text
    assert page.index('name="name"') < page.index('name="file"')
    most = side.ladder.settings.upload_max_bytes
    assert f"At most 8 KiB ({most} bytes)" in page
    for size in (most + 1, most + 100_000):  # read and refused; refused by its Content-Length
        r = c.post(
            "/upload",
            data={"csrf_token": form, "name": "my_big_bot"},
            files={"file": ("big.py", b"#" * size)},
            headers=HTML,
        )
        assert r.status_code == 413, size
        assert f"the bot file is larger than {most} bytes (8 KiB), this ladder&#39;s limit" in r.text, size
        assert _field(r.text, "name") == "my_big_bot", size
        assert "choose the file again" in r.text
    r = c.post(  # a script gets the same line as JSON
        "/upload", data={"csrf_token": form, "name": "my_big_bot"}, files={"file": ("big.py", b"#" * 100_000)}
    )
    assert r.status_code == 413 and r.json()["error"].startswith(f"the bot file is larger than {most} bytes (8 KiB)")
    assert side.db.one("SELECT COUNT(*) AS n FROM bots WHERE name = 'my_big_bot'")["n"] == 0


def test_the_upload_form_names_every_kind_of_bot_the_ladder_takes(ladder):
    """The server takes a .py file, a #! script or a bot folder as .zip or .tar.gz
    (docs/ladder.md), but the form's label named only the first two: an entrant with a bot
    folder was told it could not upload it."""
    app, _ = ladder
    c = client(app)
    _log_in(c)
    label = re.search(r"<label>Bot file(.*?)<input", c.get("/upload").text, re.S).group(1)
    for kind in (".py", "#!", ".zip", ".tar.gz"):
        assert kind in label, kind


def _no_checks(side) -> None:
    """Stop the upload checker (it would fail every upload here: no sandbox), so that the
    versions' states are the test's to set."""
    import queue

    side.close()
    side.checker.join(10)
    assert not side.checker.is_alive()
    side.checks = queue.Queue()


def _ann_bot(side, *statuses: str) -> int:
    """A bot of ann's with one version per status, none queued for a check (the page is judged
    as it stands)."""
    ann = side.db.one("SELECT id FROM users WHERE name = 'ann'")["id"]
    bot_id = side.db.run("INSERT INTO bots (name, owner_id, created) VALUES ('annbot', ?, 0)", ann)
    for i, status in enumerate(statuses):
        vid, _ = side.db.add_version(bot_id, f"{i:064x}", side.data / f"annbot{i}.py", "python", status)
        side.db.run("UPDATE versions SET report = ? WHERE id = ?", f"report of v{i + 1}", vid)
    return bot_id


def test_the_bot_page_says_what_happens_while_a_version_is_checked_and_after_it_failed(ladder):
    """Right after an upload the bot page said 'checking' and, in every ratings row, 'not
    playing', with nothing about what happens next or that the page does not update by itself;
    a failed check said 'failed' and nothing about which version still plays."""
    app, side = ladder
    c = client(app)
    _log_in(c)
    first = _ann_bot(side, "checking")
    page = c.get(f"/bots/{first}").text
    assert "v1 is being checked" in page and "reload" in page
    assert "not playing" not in page and "waiting for its check" in page

    side.db.run("UPDATE bots SET name = 'annbot_old' WHERE id = ?", first)
    second = _ann_bot(side, "ok", "checking")
    page = c.get(f"/bots/{second}").text
    assert "v2 is being checked" in page and "v1 plays until then" in page

    side.db.run("UPDATE versions SET status = 'failed' WHERE bot_id = ? AND n = 2", second)
    page = c.get(f"/bots/{second}").text
    assert "v2 failed its check" in page and "v1 keeps playing" in page
    assert "is being checked" not in page


def test_the_owners_fault_tails_and_check_reports_name_no_folder_of_the_server(ladder):
    """docs/ladder.md: a check report names the bot's own files, never the server's folders.
    A traceback through botkit named the arena's install folder in the report, and the fault
    tails on the owner's page named the data folder too (the bot's file under bots/<sha256>/)."""
    from pathlib import Path

    import arena.bot_helper.botkit as botkit
    from tests.support.record_factory import make_record

    app, side = ladder
    c = client(app)
    _log_in(c)
    bot_id = _ann_bot(side, "ok")
    mine = side.data / "bots" / ("ab" * 32) / "annbot.py"
    tail = (
        "Traceback (most recent call last):\n"
        f'  File "{mine}", line 22, in <module>\n'
        f'  File "{botkit.__file__}", line 105, in run\n'
        "RuntimeError: gave up\n"
    )
    side.store.record_match(
        make_record(
            0,
            ["annbot.v1", "alpha.v1", "beta.v1"],
            [2, 0, 1],
            match_id="tightwad/p3/d0/r0/00000000000000ab",
            faults=[{"kind": "crash", "detail": "closed its output (exit code 1)", "stderr_tail": tail}, None, None],
        )
    )
    shown = c.get(f"/api/bots/{bot_id}").json()["faults"][0]["stderr_tail"]
    assert 'File "annbot.py", line 22' in shown and 'File "botkit.py", line 105' in shown
    install = str(Path(botkit.__file__).resolve().parents[2])
    assert str(side.data) not in shown and install not in shown
    page = c.get(f"/bots/{bot_id}").text
    assert str(side.data) not in page and install not in page

    report = side.public(f'   |   File "{botkit.__file__}", line 105, in run\n')
    assert report == '   |   File "botkit.py", line 105, in run\n'


def test_the_rating_plots_of_a_bots_versions_share_one_scale(ladder):
    """'Is my new version better?': each version's rating history was drawn on a scale of its
    own (v1 from 9.8 to 26.2, v2 from 12.1 to 26.9), so the same height meant a different μ in
    each plot and a worse version could look as high as a better one."""
    from tests.support.record_factory import make_record

    app, side = ladder
    bot_id = _ann_bot(side, "ok", "ok")
    for i in range(60):
        version, place = ("annbot.v1", 2) if i < 30 else ("annbot.v2", 0)  # v1 always last, v2 first
        others = [1, 2] if place == 0 else [0, 1]
        side.store.record_match(
            make_record(
                i * 16,
                [version, "alpha.v1", "beta.v1"],
                [place, *others],
                match_id=f"tightwad/p3/d{i}/r0/{i:016x}",
            )
        )
    page = client(app).get(f"/bots/{bot_id}").text
    scales = re.findall(r"v(\d): μ \(line\).*?, ([-\d.]+) to ([-\d.]+)[^;]*; now μ", page)
    assert [s[0] for s in scales] == ["1", "2"], page
    assert scales[0][1:] == scales[1][1:]


def _in_browser(app, pages: list[str], width: int = 375):
    """Each page of ``app`` loaded in chromium at ``width`` CSS pixels (a phone), every request
    answered in process by the TestClient (no server, no network): yields (path, page)."""
    from tests.serve.test_browser import CHROMIUM, CHROMIUM_FLAGS

    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    c = client(app)
    _log_in(c)

    def answer(route):
        url = route.request.url.removeprefix("http://ladder.test")
        r = c.get(url, headers={"Accept": "text/html"})
        route.fulfill(status=r.status_code, headers={"content-type": r.headers["content-type"]}, body=r.content)

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 800})
            page.route("http://ladder.test/**", answer)
            for path in pages:
                page.goto("http://ladder.test" + path)
                yield path, page
        finally:
            browser.close()


def test_the_ladder_pages_fit_a_phone_without_scrolling_the_whole_page_sideways(ladder):
    """At 375 px the leaderboard's tables (782 px on the demo ladder), the matches table and the
    rating plot (600 px) widened the whole page: it scrolled sideways, the header's bar ended
    at the screen's edge and the nav was cut. A wide table now scrolls inside its own box."""
    from tests.support.record_factory import make_record

    app, side = ladder
    bot_id = _ann_bot(side, "ok")
    for i in range(10):
        side.store.record_match(
            make_record(
                i * 16,
                ["annbot.v1", "alpha.v1", "beta.v1"],
                [i % 3, (i + 1) % 3, (i + 2) % 3],
                match_id=f"tightwad/p3/d{i}/r0/{i:016x}",
            )
        )
    for path, page in _in_browser(app, ["/", "/matches", f"/bots/{bot_id}", "/upload"]):
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= 375, f"{path} is {wide} px wide"


def test_a_bots_page_links_to_its_own_matches_and_its_faults_to_their_replays(ladder):
    """An entrant could not list its bot's matches on the site (the matches page showed the
    last 50 of everyone; only the JSON API took ?bot=), and a fault on the bot page named its
    match id without a link to the replay that shows it."""
    from tests.support.record_factory import make_record

    app, side = ladder
    c = client(app)
    bot_id = _ann_bot(side, "ok")
    crash = {"kind": "crash", "detail": "closed its output (exit code 1)", "decision": 2}
    for i in range(3):  # a whole deal set of three rotations: its replays are public
        side.store.record_match(
            make_record(
                5 * 16 + i,
                ["annbot.v1", "alpha.v1", "beta.v1"][i:] + ["annbot.v1", "alpha.v1", "beta.v1"][:i],
                [2, 0, 1],
                match_id=f"tightwad/p3/d5/r{i}/{i:016x}",
                faults=[crash if i == 0 else None, None, None],
            )
        )
    side.store.record_match(make_record(6 * 16, ["alpha.v1", "beta.v1", "gamma.v1"], [0, 1, 2]))
    bot_page = c.get(f"/bots/{bot_id}").text
    assert 'href="/matches?bot=annbot"' in bot_page
    assert 'href="/matches/tightwad/p3/d5/r0/0000000000000000/replay#d2"' in bot_page

    page = c.get("/matches?bot=annbot")
    assert page.status_code == 200 and "annbot" in page.text
    assert page.text.count("<td><code>tightwad/") == 3 and "gamma.v1" not in page.text
    assert c.get("/matches?bot=nobody").status_code == 200  # no such bot: no match, not an error
    assert c.get("/matches?bot=no%20such%20name", headers=HTML).status_code == 400


def test_a_faults_replay_link_opens_at_the_decision_it_faulted_and_names_it(ladder):
    """A fault's replay opened at decision 0: in a Palace match of 246 decisions its author had
    to hunt for the fault, and the page never said at which decision it happened (the number
    `arena replay --from` takes)."""
    from tests.support.record_factory import make_record

    app, side = ladder
    bot_id = _ann_bot(side, "ok")
    crash = {"kind": "crash", "detail": "closed its output (exit code 1)", "decision": 3}
    for i in range(3):
        side.store.record_match(
            make_record(
                5 * 16 + i,
                ["annbot.v1", "alpha.v1", "beta.v1"][i:] + ["annbot.v1", "alpha.v1", "beta.v1"][:i],
                [2, 0, 1],
                match_id=f"tightwad/p3/d5/r{i}/{i:016x}",
                faults=[crash if i == 0 else None, None, None],
            )
        )
    fault = client(app).get(f"/api/bots/{bot_id}").json()["faults"][0]
    assert fault["decision"] == 3 and fault["replay"].endswith("/replay#d3")
    page = client(app).get(f"/bots/{bot_id}").text
    assert "at decision 3" in page and 'replay#d3"' in page


def test_an_unexpected_error_is_a_page_for_a_browser_without_details(ladder, monkeypatch):
    """A 4xx reached a browser as a page with the site's header, but a 500 as raw JSON text
    ({"error": ..., "status": 500}) with no way back to the ladder."""
    app, side = ladder

    def broken(*args, **kwargs):
        raise RuntimeError("secret detail of the failure")

    monkeypatch.setattr(side, "bot_doc", broken)
    c = client(app)
    r = c.get("/bots/1", headers=HTML)
    assert r.status_code == 500 and r.headers["content-type"].startswith("text/html")
    assert "the organiser finds it in the server log" in r.text and 'href="/"' in r.text
    assert "secret detail" not in r.text and "Traceback" not in r.text
    r = c.get("/api/bots/1")
    assert r.status_code == 500 and r.json()["status"] == 500 and "secret" not in r.text


def test_a_replay_on_the_ladder_links_back_to_the_ladder_and_its_bots(ladder):
    """A match's replay was a dead end: no link to the leaderboard, the matches or the pages of
    the bots that played it (a spectator had only the browser's back button)."""
    import json

    from click.testing import CliRunner

    from arena.cli import cli

    app, side = ladder
    bot_id = _ann_bot(side, "ok")
    played = CliRunner().invoke(cli, ["play", "tightwad", *["builtin:random"] * 3, "--seed", "3", "--json"])
    real = json.loads(played.stdout)
    names = ("annbot.v1", "alpha.v1", "beta.v1")
    for rotation in range(3):
        record = dict(real, match_id=f"tightwad/p3/d7/r{rotation}/{rotation:016x}", index=7 * 16 + rotation)
        record["bots"] = [dict(b, name=n) for b, n in zip(real["bots"], names)]
        side.store.record_match(record)
    page = client(app).get("/matches/tightwad/p3/d7/r0/0000000000000000/replay")
    assert page.status_code == 200
    header = re.search(r"<header>(.*?)</header>", page.text, re.S).group(1)
    assert 'href="/"' in header and 'href="/matches"' in header
    assert f'href="/bots/{bot_id}"' in header
    alpha = side.db.one("SELECT id FROM bots WHERE name = 'alpha'")["id"]
    assert f'href="/bots/{alpha}"' in header


def test_the_live_leaderboard_keeps_the_keyboard_focus_when_it_redraws(ladder):
    """The leaderboard redraws its tables whenever the ratings change (every few seconds on a
    busy ladder) by replacing their rows: a keyboard user tabbing through the bot links lost the
    focus at each redraw (it fell back to the page itself) and had to start again."""
    from tests.support.record_factory import make_record

    app, side = ladder
    for path, page in _in_browser(app, ["/"], width=1200):
        link = None
        for _ in range(30):
            page.keyboard.press("Tab")
            link = page.evaluate("document.activeElement.getAttribute('href')")
            if link and link.startswith("/bots/"):
                break
        assert link and link.startswith("/bots/"), "no bot link reached with Tab"
        section = page.evaluate("document.activeElement.closest('section').dataset.scope")
        side.store.record_match(make_record(0, ["alpha.v1", "beta.v1", "gamma.v1"], [0, 1, 2]))
        page.wait_for_function("document.getElementById('match-count').textContent === '1'", timeout=30_000)
        focused = page.evaluate(
            "[document.activeElement.getAttribute('href'), document.activeElement.closest('section')?.dataset.scope]"
        )
        assert focused == [link, section]


def test_retiring_a_bot_asks_first_and_its_page_says_how_to_bring_it_back(ladder):
    """One click on 'Retire this bot' retired it at once, and the retired bot's page said only
    'retired': nothing about its kept results or that an upload under its name brings it back."""
    app, side = ladder
    c = client(app)
    form = _log_in(c)
    bot_id = _ann_bot(side, "ok")
    page = c.get(f"/bots/{bot_id}").text
    assert re.search(r'<form[^>]*action="/bots/\d+/retire"[^>]*onsubmit="return confirm\(', page)
    r = c.post(f"/bots/{bot_id}/retire", data={"csrf_token": form}, follow_redirects=True)
    assert r.status_code == 200
    assert "its results are kept" in r.text and "upload a version under the name annbot" in r.text


def test_the_versions_table_compares_the_versions_and_says_when_each_was_uploaded(ladder):
    """'Is my new version better?': the bot page rated only the version playing; an older
    version's rating (kept under its own name) was nowhere but a plot caption, and no page said
    when a version was uploaded (the API's 'created' is bare Unix seconds)."""
    import time as clock

    from tests.support.record_factory import make_record

    app, side = ladder
    bot_id = _ann_bot(side, "ok", "ok")
    side.db.run("UPDATE versions SET created = ? WHERE bot_id = ? AND n = 1", 1796640951.9, bot_id)
    for i in range(40):
        version, place = ("annbot.v1", 2) if i < 20 else ("annbot.v2", 0)
        others = [1, 2] if place == 0 else [0, 1]
        side.store.record_match(
            make_record(
                i * 16, [version, "alpha.v1", "beta.v1"], [place, *others], match_id=f"tightwad/p3/d{i}/r0/{i:016x}"
            )
        )
    versions = client(app).get(f"/api/bots/{bot_id}").json()["versions"]
    assert [v["rating"]["matches"] for v in versions] == [20, 20]
    assert versions[0]["rating"]["mean_place"] == 3.0 and versions[1]["rating"]["mean_place"] == 1.0
    page = client(app).get(f"/bots/{bot_id}").text
    table = re.search(r"<h3>Versions</h3>(.*?)</table>", page, re.S).group(1)
    assert "uploaded (UTC)" in table and clock.strftime("%Y-%m-%d %H:%M", clock.gmtime(1796640951.9)) in table
    rows = re.findall(r"<tr><td>v(\d)</td>(.*?)</tr>", table, re.S)
    assert [n for n, _ in rows] == ["1", "2"]
    assert "3.00" in rows[0][1] and "1.00" in rows[1][1]  # each version's mean place


def test_logging_in_from_the_upload_page_leads_back_to_it(ladder):
    """/upload without a session sent the visitor to the login page, which neither said why
    nor led back: after logging in they landed on the leaderboard and had to find the upload
    page again. Only a path of this site is followed (never another site)."""
    app, _ = ladder
    c = client(app)
    r = c.get("/upload", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/login?next=/upload"
    page = c.get(r.headers["location"]).text
    assert "log in to upload a bot" in page.lower()
    assert _field(page, "next") == "/upload"
    data = {"name": "ann", "password": "correct horse", "csrf_token": c.cookies.get(CSRF_COOKIE), "next": "/upload"}
    r = c.post("/login", data=data, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/upload"
    for elsewhere in ("//evil.example/upload", "https://evil.example/", "/\\evil.example", "upload"):
        c.cookies.clear()
        c.get("/login")
        data.update(csrf_token=c.cookies.get(CSRF_COOKIE), next=elsewhere)
        r = c.post("/login", data=data, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/", elsewhere


def test_the_matches_page_says_when_each_match_was_played_and_how_long_it_took(ladder):
    """The recent matches listed no time at all: a spectator could not tell a match of a minute
    ago from one of last week (the API has started_at and duration_s)."""
    from tests.support.record_factory import make_record

    app, side = ladder
    record = make_record(
        0, ["alpha.v1", "beta.v1", "gamma.v1"], [0, 1, 2], match_id="tightwad/p3/d0/r0/00000000000000cc"
    )
    record.update(started_at="2026-11-29T18:40:00Z", duration_s=1.25)
    side.store.record_match(record)
    page = client(app).get("/matches").text
    assert "started (UTC)" in page and "2026-11-29 18:40:00" in page
    assert "1.25 s" in page


def test_a_browsers_favicon_request_is_not_a_404(ladder):
    """Every browser asks for /favicon.ico; the ladder answered 404, an error in the console of
    the first page each visitor opened (the replay page too)."""
    app, _ = ladder
    r = client(app).get("/favicon.ico")
    assert r.status_code == 204 and not r.content


def test_an_owner_reads_its_bots_log_on_the_site(ladder):
    """What a bot writes to stderr (botkit's log, on_result lines: docs/first-bot.md) went to the
    data folder's logs/, which only the organiser can read: an entrant saw no line of its own
    bot's log unless it faulted. The owner (and the organiser) now read each version's log."""
    from arena.serve.accounts import add_user as add

    app, side = ladder
    bot_id = _ann_bot(side, "ok", "ok")
    for worker, text in (("worker-0", "seat 0 place 1\n"), ("worker-1", "seat 2 place 3\n")):
        folder = side.data / "logs" / worker
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "annbot.v2.stderr.log").write_text(
            f"[arena: annbot.v2: new process at 2026-12-07T10:57:24Z]\n{text}"
            f'  File "{side.data}/bots/{"ab" * 32}/annbot.py", line 3\n'
        )
    (side.data / "logs" / "worker-0" / "annbot.v1.stderr.log").write_text("old version's line\n")
    c = client(app)
    assert c.get(f"/bots/{bot_id}/log").status_code == 401
    add(side.data, "ben", "correct horse")
    c.get("/login")
    data = {"name": "ben", "password": "correct horse", "csrf_token": c.cookies.get(CSRF_COOKIE)}
    assert c.post("/login", data=data, follow_redirects=False).status_code == 303
    assert c.get(f"/bots/{bot_id}/log").status_code == 403  # another entrant's bot

    c = client(app)
    _log_in(c)
    assert f'href="/bots/{bot_id}/log?version=2"' in c.get(f"/bots/{bot_id}").text
    log = c.get(f"/bots/{bot_id}/log?version=2")
    assert log.status_code == 200 and log.headers["content-type"].startswith("text/plain")
    assert "seat 0 place 1" in log.text and "seat 2 place 3" in log.text and "old version" not in log.text
    assert str(side.data) not in log.text and 'File "annbot.py", line 3' in log.text
    assert "old version's line" in c.get(f"/bots/{bot_id}/log?version=1").text
    assert c.get(f"/bots/{bot_id}/log?version=3").status_code == 404
    (side.data / "logs" / "worker-0" / "annbot.v1.stderr.log").unlink()
    assert "no log yet" in c.get(f"/bots/{bot_id}/log?version=1").text


def test_a_long_logs_tail_starts_at_a_whole_line(ladder):
    """The log page shows the end of a long log; it began in the middle of a line ('a: mybot.v1:
    new process at ...'), cut at a byte count."""
    from arena.serve.side import LOG_TAIL_BYTES

    app, side = ladder
    bot_id = _ann_bot(side, "ok")
    folder = side.data / "logs" / "worker-0"
    folder.mkdir(parents=True)
    line = "[arena: annbot.v1: new process at 2026-12-07T10:57:24Z]\n"
    (folder / "annbot.v1.stderr.log").write_text(line * (2 * LOG_TAIL_BYTES // len(line)))
    c = client(app)
    _log_in(c)
    text = c.get(f"/bots/{bot_id}/log?version=1").text
    header, _, rest = text.partition("\n")
    assert "its last" in header and rest.startswith("[arena: annbot.v1")


def test_uploading_the_version_that_plays_again_is_refused_not_rated_from_scratch(ladder):
    """An upload of the very file the bot's latest version holds (a form sent twice, a script run
    again) was stored as a new version: the bot's rating started again from μ 25, σ 8.33 and its
    rank fell, for the same code. It is now refused with the version it repeats; an older
    version's file is still taken (going back to it is a choice)."""

    from arena.serve.accounts import User

    app, side = ladder
    _no_checks(side)
    ann_id = side.db.one("SELECT id FROM users WHERE name = 'ann'")["id"]
    ann = User(id=ann_id, name="ann", organiser=False)
    first, second = b"import botkit\n# one\n", b"import botkit\n# two\n"
    assert side.accept_upload(ann, "annbot.py", first, None)["version"] == 1
    side.db.run("UPDATE versions SET status = 'ok'")
    with pytest.raises(Exception) as refused:
        side.accept_upload(ann, "annbot.py", first, None)
    assert getattr(refused.value, "status_code", None) == 409
    assert "this file is the same as annbot v1 (it passed its check and plays)" in str(
        getattr(refused.value, "detail", "")
    )
    count = "SELECT COUNT(*) AS n FROM versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = 'annbot'"
    assert side.db.one(count)["n"] == 1
    assert side.accept_upload(ann, "annbot.py", second, None)["version"] == 2
    assert side.accept_upload(ann, "annbot.py", first, None)["version"] == 3  # back to v1's code: allowed


def test_an_archive_sent_again_after_its_check_is_refused_as_the_version_it_repeats(ladder, tmp_path, monkeypatch):
    """A bot folder's version holds its unpacked folder's digest and path once checked, so the
    same archive sent again (a form sent twice, a script run again) matched neither and became a
    new version, checked again and rated from scratch. The digest of the file as uploaded is kept
    and compared: the answer names the version it repeats, and nothing is stored or checked."""
    import io
    import zipfile

    from arena.serve.accounts import User

    monkeypatch.setenv("ARENA_BOT_ENVS", str(tmp_path / "envs"))
    app, side = ladder
    _no_checks(side)
    ann = User(id=side.db.one("SELECT id FROM users WHERE name = 'ann'")["id"], name="ann", organiser=False)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("main.py", b"import botkit\n")
        z.writestr("weights.bin", b"\0\1\2")
    archive = buf.getvalue()
    doc = side.accept_upload(ann, "annbot.zip", archive, None)
    for status in ("checking", "ok"):  # being checked, then as the checker leaves it
        with pytest.raises(Exception) as refused:
            side.accept_upload(ann, "annbot.zip", archive, None)
        assert getattr(refused.value, "status_code", None) == 409
        assert "this archive is the same as annbot v1" in str(getattr(refused.value, "detail", ""))
        row = side.db.one(
            "SELECT v.*, b.name FROM versions v JOIN bots b ON b.id = v.bot_id WHERE v.bot_id = ?", doc["bot_id"]
        )
        side._unpacked(row)  # the check's first step: the version becomes the unpacked folder
        side.db.run("UPDATE versions SET status = 'ok'")
    row = side.db.one("SELECT * FROM versions WHERE bot_id = ?", doc["bot_id"])
    assert row["sha256"] != hashlib.sha256(archive).hexdigest()  # what the comparison missed
    assert side.db.one("SELECT COUNT(*) AS n FROM versions WHERE bot_id = ?", doc["bot_id"])["n"] == 1
    assert side.checks.qsize() == 1  # the first upload's check only
    r = client(app).post(  # over HTTP, as JSON
        "/api/bots", headers={"Authorization": f"Bearer {_token(side, 'ann')}"}, files={"file": ("annbot.zip", archive)}
    )
    assert r.status_code == 409 and r.json()["error"].startswith("this archive is the same as annbot v1")


def test_a_ladder_database_made_before_upload_digests_were_kept_gains_the_column(tmp_path):
    import sqlite3

    from arena.serve.db import LadderDB

    data = tmp_path / "old"
    data.mkdir()
    conn = sqlite3.connect(data / "ladder.sqlite")
    conn.executescript(
        "CREATE TABLE versions (id INTEGER PRIMARY KEY, bot_id INTEGER NOT NULL, n INTEGER NOT NULL,"
        " sha256 TEXT NOT NULL, path TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL,"
        " report TEXT NOT NULL DEFAULT '', created REAL NOT NULL, UNIQUE (bot_id, n));"
        "INSERT INTO versions VALUES (1, 1, 1, 'ab', '/x/bots/ab/b.py', 'python', 'ok', '', 0);"
    )
    conn.commit()
    conn.close()
    db = LadderDB(data)
    LadderDB(data)  # a second process opening it after
    row = db.one("SELECT * FROM versions")
    assert row["sha256"] == "ab" and row["upload_sha256"] is None


def _token(side, name: str) -> str:
    from arena.serve.accounts import new_token

    return new_token(side.db, side.db.one("SELECT id FROM users WHERE name = ?", name)["id"])


def test_a_disabled_account_cannot_log_in_or_upload_and_its_bots_stop_while_its_results_stay(ladder):
    """`arena serve-admin users --disable ann` on a running ladder: ann's session ends, her password
    and API token are refused with the reason (a wrong password still reads as one), her bot leaves
    the roster the matchmaker deals to and the leaderboard, and its page, matches and replays stay.
    --enable undoes it, her token working again."""
    from arena.serve.accounts import users_report
    from arena.serve.matchmaker import Matchmaker
    from tests.support.record_factory import make_record

    app, side = ladder
    bot_id = _ann_bot(side, "ok")
    (side.data / "annbot0.py").write_text("import botkit\n")
    mid = "tightwad/p3/d0/r0/00000000000000ab"
    side.store.record_match(make_record(0, ["annbot.v1", "alpha.v1", "beta.v1"], [0, 1, 2], match_id=mid))
    token = _token(side, "ann")
    c = client(app)
    _log_in(c)
    board = lambda: [r["bot"] for r in side.leaderboard()["scopes"][0]["standings"]]  # noqa: E731
    assert "annbot" in board() and "annbot.v1" in Matchmaker(side.ladder, side.data, None).roster(side.db)[0]

    assert users_report(side.data, disable="ANN").startswith("user ann: disabled\n")
    assert c.get("/upload", follow_redirects=False).headers["location"] == "/login?next=/upload"  # logged out
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/login").text).group(1)  # as a browser reads it
    r = c.post("/login", data={"name": "ann", "password": "correct horse", "csrf_token": csrf}, headers=HTML)
    assert r.status_code == 403 and "the account ann is disabled by the ladder&#39;s organiser" in r.text
    r = c.post("/login", data={"name": "ann", "password": "wrong horse", "csrf_token": csrf}, headers=HTML)
    assert r.status_code == 401 and "disabled" not in r.text  # only her password learns it
    r = c.post("/api/bots", headers={"Authorization": f"Bearer {token}"}, files={"file": ("x.py", b"print(1)\n")})
    assert (
        r.status_code == 403 and r.json()["error"] == "the account ann is disabled by the ladder's organiser; ask them"
    )
    assert "annbot" not in board()
    assert "annbot.v1" not in Matchmaker(side.ladder, side.data, None).roster(side.db)[0]  # dealt no new set
    page = c.get(f"/bots/{bot_id}")
    assert page.status_code == 200 and "Its owner's account is disabled" in page.text
    assert c.get(f"/api/bots/{bot_id}").json()["owner_disabled"] is True
    assert [m["match_id"] for m in c.get("/api/matches?bot=annbot").json()["matches"]] == [mid]
    assert "ann " in users_report(side.data) and "disabled" in users_report(side.data).splitlines()[1]

    assert users_report(side.data, enable="ann").startswith("user ann: enabled\n")
    assert "annbot" in board()
    r = c.post("/api/bots", headers={"Authorization": f"Bearer {token}"}, files={"file": ("x.py", b"print(1)\n")})
    assert r.status_code == 202, r.text


def test_the_matches_page_links_each_bot_to_its_page(ladder):
    """The matches page named each seat's bot as plain text: a spectator had to go back to the
    leaderboard to find a bot's page (and an old version's bot is not on the leaderboard)."""
    from tests.support.record_factory import make_record

    app, side = ladder
    bot_id = _ann_bot(side, "ok")
    side.store.record_match(make_record(0, ["annbot.v1", "alpha.v1", "beta.v1"], [0, 1, 2]))
    page = client(app).get("/matches").text
    assert f'<a href="/bots/{bot_id}">annbot.v1</a>' in page
    alpha = side.db.one("SELECT id FROM bots WHERE name = 'alpha'")["id"]
    assert f'<a href="/bots/{alpha}">alpha.v1</a>' in page


def test_the_leaderboard_says_what_ranks_the_bots_and_what_its_columns_mean(ladder):
    """The leaderboard ranked by μ−3σ and showed μ, σ and μ−3σ with no word on what they are or
    which one ranks (a new bot at μ 25 ranks below one at μ 23: its σ is 8.33), while the place
    columns explained themselves."""
    app, _ = ladder
    page = client(app).get("/").text
    assert "ranked by μ−3σ" in page
    for column in ("μ", "σ", "μ−3σ"):
        assert re.search(rf'<th title="[^"]+">{column}</th>', page), column


def test_a_versions_hash_stays_on_one_line_on_a_wide_screen(ladder):
    """Letting code break anywhere (for a match id on a phone) also broke each version's
    12-character sha256 over two lines in the versions table at 1280 px."""
    app, side = ladder
    bot_id = _ann_bot(side, "ok")
    for _, page in _in_browser(app, [f"/bots/{bot_id}"], width=1280):
        heights = page.evaluate("[...document.querySelectorAll('td code')].map(c => c.getClientRects().length)")
        assert heights and all(n == 1 for n in heights), heights


def test_the_bot_page_says_how_many_faults_its_recent_list_is_of(ladder):
    """The leaderboard counted a bot's faults (794 on the audit's ladder) and its page listed
    'Recent faults', 20 of them, without saying so: the two numbers seemed to disagree."""
    from tests.support.record_factory import make_record

    app, side = ladder
    bot_id = _ann_bot(side, "ok")
    crash = {"kind": "crash", "detail": "closed its output (exit code 1)", "decision": 1}
    for i in range(25):
        side.store.record_match(
            make_record(
                i * 16,
                ["annbot.v1", "alpha.v1", "beta.v1"],
                [2, 0, 1],
                faults=[crash, None, None],
                match_id=f"tightwad/p3/d{i}/r0/{i:016x}",
            )
        )
    doc = client(app).get(f"/api/bots/{bot_id}").json()
    assert len(doc["faults"]) == 20 and doc["faults_total"] == 25
    page = re.sub(r"<[^>]+>", "", client(app).get(f"/bots/{bot_id}").text)
    assert "the last 20 of 25" in page


def test_a_retired_bot_comes_back_with_the_same_file(ladder):
    """A retired bot's page says an upload under its name brings it back; the refusal of a
    repeated file must not refuse that upload when it is the file the bot last played."""

    from arena.serve.accounts import User

    app, side = ladder
    _no_checks(side)
    ann = User(id=side.db.one("SELECT id FROM users WHERE name = 'ann'")["id"], name="ann", organiser=False)
    bot_id = side.accept_upload(ann, "annbot.py", b"import botkit\n", None)["bot_id"]
    side.db.run("UPDATE versions SET status = 'ok'")
    side.retire(ann, bot_id)
    assert side.accept_upload(ann, "annbot.py", b"import botkit\n", None)["version"] == 2
    assert side.db.one("SELECT retired FROM bots WHERE id = ?", bot_id)["retired"] == 0


def test_an_entrant_may_have_only_max_bots_per_entrant_bots_not_retired(tmp_path):
    """One account could enter any number of bots (a new name each upload), and each one costs
    every entrant matches; now the ladder's max_bots_per_entrant bounds the bots not retired,
    while new versions, retiring and organisers are not held back."""
    from arena.serve.accounts import User

    data = tmp_path / "data"
    add_user(data, "ann")
    add_user(data, "org", organiser=True)
    ladder = load_ladder(ladder_file(tmp_path, extra="  max_bots_per_entrant: 2\n"))
    import_bundled(ladder, data)
    side = Ladderside(ladder, data, None)
    try:
        _no_checks(side)
        uid = {r["name"]: r["id"] for r in side.db.all("SELECT id, name FROM users")}
        ann, org = User(id=uid["ann"], name="ann", organiser=False), User(id=uid["org"], name="org", organiser=True)
        side.accept_upload(ann, "one.py", b"import botkit\n# 1\n", None)
        side.accept_upload(ann, "two.py", b"import botkit\n# 2\n", None)
        with pytest.raises(Exception) as refused:
            side.accept_upload(ann, "three.py", b"import botkit\n# 3\n", None)
        assert getattr(refused.value, "status_code", None) == 409
        assert "you have 2 bots not retired (one, two)" in str(getattr(refused.value, "detail", ""))
        assert side.db.one("SELECT 1 FROM bots WHERE name = 'three'") is None  # nothing written
        assert side.accept_upload(ann, "one.py", b"import botkit\n# 1b\n", None)["version"] == 2  # a version: fine
        side.retire(ann, side.db.one("SELECT id FROM bots WHERE name = 'two'")["id"])
        assert side.accept_upload(ann, "three.py", b"import botkit\n# 3\n", None)["version"] == 1
        with pytest.raises(Exception) as back:  # bringing a retired bot back counts as one more
            side.accept_upload(ann, "two.py", b"import botkit\n# 2b\n", None)
        assert getattr(back.value, "status_code", None) == 409
        for i in range(3):  # the organiser is not counted
            side.accept_upload(org, f"org{i}.py", f"import botkit\n# {i}\n".encode(), None)
    finally:
        side.close()
