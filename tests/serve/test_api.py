"""The ladder's HTTP API and pages in process (Starlette's TestClient): authentication,
CSRF, size limits, ownership, and a clear 4xx for every bad request. Uploads are checked
by the real conformance checker in the real sandbox; no matchmaker runs here."""

from __future__ import annotations

import base64
import gzip
import json
import re

import pytest
from click.testing import CliRunner

pytest.importorskip("starlette")
pytest.importorskip("httpx2")

from arena.cli import cli  # noqa: E402
from arena.serve.app import CSRF_COOKIE, Ladderside, create_app  # noqa: E402
from arena.serve.ladder import load_ladder  # noqa: E402
from arena.serve.server import import_bundled  # noqa: E402
from tests.serve.in_process import bearer, client, ladder_app, upload  # noqa: E402
from tests.serve.ladder_fixtures import BOTS, ladder_file, wait_until  # noqa: E402


@pytest.fixture(scope="module")
def ladder_env(tmp_path_factory):
    app, tokens, side = ladder_app(tmp_path_factory.mktemp("ladder"), {"ann": False, "ben": False, "org": True})
    yield app, tokens, side
    side.close()


def test_uploads_need_credentials(ladder_env):
    app, tokens, _ = ladder_env
    c = client(app)
    body = (BOTS / "upload_me.py").read_bytes()
    r = upload(c, None, body)
    assert r.status_code == 401 and "Bearer" in r.json()["error"]
    r = upload(c, "arena_not-a-token", body)
    assert r.status_code == 401 and "unknown API token" in r.json()["error"]
    r = c.post("/api/bots", headers={"Authorization": "Basic abc"}, files={"file": ("b.py", body)})
    assert r.status_code == 401


@pytest.mark.slow
def test_an_upload_is_checked_then_listed_and_only_its_owner_sees_the_source(ladder_env):
    app, tokens, side = ladder_env
    c = client(app)
    r = upload(c, tokens["ann"], (BOTS / "upload_me.py").read_bytes(), "upload_me.py", "annbot")
    assert r.status_code == 202, r.text
    doc = r.json()
    assert doc["status"] == "checking" and doc["version"] == 1
    bot_id = doc["bot_id"]

    def passed():
        versions = c.get(f"/api/bots/{bot_id}", headers=bearer(tokens["ann"])).json()["versions"]
        return versions[0]["status"] != "checking" and versions[0]

    version = wait_until(passed, what="the conformance check")
    assert version["status"] == "ok", version.get("check")
    assert "RESULT: PASS" in version["check"]
    board = c.get("/api/leaderboard").json()
    overall = next(s for s in board["scopes"] if s["scope"] == "overall")
    mine = [row for row in overall["standings"] if row["bot"] == "annbot"]
    assert mine and mine[0]["owner"] == "ann" and mine[0]["matches"] == 0

    # the source: its owner and the organiser, nobody else
    assert c.get(f"/bots/{bot_id}/source", headers=bearer(tokens["ann"])).text == (BOTS / "upload_me.py").read_text()
    assert c.get(f"/bots/{bot_id}/source", headers=bearer(tokens["org"])).status_code == 200
    assert c.get(f"/bots/{bot_id}/source", headers=bearer(tokens["ben"])).status_code == 403
    assert c.get(f"/bots/{bot_id}/source").status_code == 401
    assert "check" not in c.get(f"/api/bots/{bot_id}", headers=bearer(tokens["ben"])).json()["versions"][0]

    # another entrant can neither replace nor retire it; the owner can do both
    assert upload(c, tokens["ben"], b"print(1)\n", "x.py", "annbot").status_code == 403
    assert c.post(f"/api/bots/{bot_id}/retire", headers=bearer(tokens["ben"])).status_code == 403
    r = upload(c, tokens["ann"], (BOTS / "dies_at_hello.py").read_bytes(), "dies.py", "annbot")
    assert r.status_code == 202 and r.json()["version"] == 2
    failed = wait_until(
        lambda: (
            (v := c.get(f"/api/bots/{bot_id}", headers=bearer(tokens["ann"])).json()["versions"])[1]["status"]
            != "checking"
            and v[1]
        ),
        what="the second check",
    )
    assert failed["status"] == "failed" and "handshake" in failed["check"]
    # a failed version does not play: the passed one stays current
    assert [row["version"] for row in side.leaderboard()["scopes"][0]["standings"] if row["bot"] == "annbot"] == [1]
    assert c.post(f"/api/bots/{bot_id}/retire", headers=bearer(tokens["ann"])).status_code == 200
    assert not [row for row in side.leaderboard()["scopes"][0]["standings"] if row["bot"] == "annbot"]


def test_oversized_and_malformed_uploads_get_a_clear_4xx(ladder_env):
    from arena.serve.accounts import RateLimit

    app, tokens, side = ladder_env
    side.upload_limit = RateLimit(burst=100, every_s=1.0)  # this test sends many bad uploads at once
    c = client(app)
    big = b"# " + b"x" * 20_000 + b"\n"
    r = upload(c, tokens["ben"], big, "big.py")
    assert r.status_code == 413 and "larger than" in r.json()["error"]
    # who can lift the limit: an ML entrant's few MB of weights are over the default 256 KiB
    assert "ask the ladder's organiser to raise ladder.upload_max_bytes (at most 4 MiB)" in r.json()["error"]
    assert upload(c, tokens["ben"], b"\x7fELF\x00\x00", "a.out").status_code == 400
    assert upload(c, tokens["ben"], b"   \n", "empty.py").status_code == 400
    assert upload(c, tokens["ben"], b"print(1)\n", "x.py", "../../etc").status_code == 400
    r = c.post(
        "/api/bots",
        headers={**bearer(tokens["ben"]), "Content-Type": "multipart/form-data; boundary=zz"},
        content=b"--zz\r\nnot a part at all",
    )
    assert 400 <= r.status_code < 500
    r = c.post("/api/bots", headers=bearer(tokens["ben"]), data={"name": "nofile"})
    assert r.status_code == 400 and "file" in r.json()["error"]
    assert c.get("/api/bots/notanumber").status_code == 400
    assert c.get("/api/bots/999999").status_code == 404
    assert c.get("/api/matches?limit=abc").status_code == 400
    assert c.get("/api/matches?bot=../x").status_code == 400
    assert c.get("/matches/nope/replay").status_code == 404


def test_forms_need_the_csrf_token_and_login_is_rate_limited(ladder_env):
    app, _, _ = ladder_env
    c = client(app)
    page = c.get("/login")
    assert page.status_code == 200
    csrf = c.cookies.get(CSRF_COOKIE)
    assert csrf and f'value="{csrf}"' in page.text
    r = c.post("/login", data={"name": "ann", "password": "correct horse"})
    assert r.status_code == 403 and "CSRF" in r.json()["error"]
    r = c.post("/login", data={"name": "ann", "password": "correct horse", "csrf_token": "forged"})
    assert r.status_code == 403
    r = c.post("/login", data={"name": "ann", "password": "wrong horse!", "csrf_token": csrf}, follow_redirects=False)
    assert r.status_code == 401
    r = c.post("/login", data={"name": "ann", "password": "correct horse", "csrf_token": csrf}, follow_redirects=False)
    assert r.status_code == 303 and c.cookies.get("arena_session")
    # logged in by cookie: an upload form still needs the token
    r = c.post("/api/bots", files={"file": ("b.py", b"print(1)\n")})
    assert r.status_code == 403
    assert "Log out" in c.get("/").text
    # the bucket holds 5 attempts from one address; the next ones are refused
    codes = [
        c.post("/login", data={"name": "ann", "password": "nope nope", "csrf_token": csrf}).status_code
        for _ in range(6)
    ]
    assert 429 in codes


def test_the_pages_render_without_a_network(ladder_env):
    app, _, _ = ladder_env
    c = client(app)
    for path in ("/", "/matches", "/login", "/static/ladder.js", "/static/ladder.css"):
        r = c.get(path)
        assert r.status_code == 200, path
        assert "http://" not in r.text and "https://" not in r.text, path
    assert c.get("/upload", follow_redirects=False).status_code == 303  # not logged in: to the login page


def test_uploads_are_rate_limited(ladder_env):
    from arena.serve.accounts import RateLimit

    app, tokens, side = ladder_env
    side.upload_limit = RateLimit(burst=2, every_s=3600.0)
    c = client(app)
    codes = [upload(c, tokens["ben"], b"", "empty.py").status_code for _ in range(3)]
    assert codes == [400, 400, 429]


def _doc_json_blocks() -> list[dict]:
    import json
    import re

    from tests.serve.ladder_fixtures import ROOT

    text = (ROOT / "docs" / "ladder.md").read_text()
    return [json.loads(b.replace("…", "")) for b in re.findall(r"```json\n(.*?)```", text, re.S)]


def test_docs_show_the_api_shapes_the_server_sends(ladder_env):
    app, tokens, _ = ladder_env
    c = client(app)
    board_doc, matches_doc, bot_doc = _doc_json_blocks()
    board = c.get("/api/leaderboard").json()
    assert set(board) == set(board_doc)
    assert set(board["scopes"][0]["standings"][0]) == set(board_doc["scopes"][0]["standings"][0])
    assert set(c.get("/api/matches").json()) == set(matches_doc)
    bot = c.get(f"/api/bots/{board['scopes'][0]['standings'][0]['bot_id']}").json()
    assert set(bot) == set(bot_doc)
    assert set(bot["versions"][0]) == set(bot_doc["versions"][0])


def test_docs_list_every_ladder_setting():
    from arena.serve.ladder import LadderSettings
    from tests.serve.ladder_fixtures import ROOT

    text = (ROOT / "docs" / "ladder.md").read_text()
    for name in LadderSettings.model_fields:
        assert f"| `{name}` |" in text


def test_fault_stderr_tails_reach_the_owner_only_and_an_unfinished_deal_shows_no_replay(ladder_env):
    from arena.serve.accounts import RateLimit
    from tests.support.record_factory import make_record

    app, tokens, side = ladder_env
    side.upload_limit = RateLimit(burst=100, every_s=1.0)
    c = client(app)
    r = upload(c, tokens["ben"], (BOTS / "upload_me.py").read_bytes(), "upload_me.py", "benbot")
    assert r.status_code == 202
    bot_id = r.json()["bot_id"]
    mid = "tightwad/p3/d999/r0/0123456789abcdef"  # one rotation of three stored
    side.store.record_match(
        make_record(
            999 * 16,
            ["benbot.v1", "alpha.v1", "beta.v1"],
            [2, 0, 1],
            match_id=mid,
            faults=[
                {"kind": "crash", "detail": "exited with code 1", "stderr_tail": "ValueError: ben's secret trace"},
                None,
                None,
            ],
        )
    )
    mine = c.get(f"/api/bots/{bot_id}", headers=bearer(tokens["ben"])).json()["faults"]
    assert mine[0]["match_id"] == mid and mine[0]["stderr_tail"] == "ValueError: ben's secret trace"
    theirs = c.get(f"/api/bots/{bot_id}", headers=bearer(tokens["ann"])).json()["faults"]
    assert theirs[0]["kind"] == "crash" and "stderr_tail" not in theirs[0]
    assert "secret trace" not in c.get(f"/bots/{bot_id}").text
    # the recent matches are read again at most every RECENT_MIN_S: it appears within that
    row = wait_until(
        lambda: next((m for m in c.get("/api/matches").json()["matches"] if m["match_id"] == mid), None),
        timeout_s=30,
        what="the stored match in /api/matches",
    )
    assert row["replay"] is None and row["faults"] == ["crash", None, None]
    assert c.get(f"/matches/{mid}/replay").status_code == 403

    # once the deal set is whole its replay is public: without the stderr tail or this machine's
    # folders (a real record, so that the page can replay its deal)
    played = CliRunner().invoke(cli, ["play", "tightwad", *["builtin:random"] * 3, "--seed", "3", "--json"])
    real = json.loads(played.stdout)
    for rotation in range(3):
        record = dict(real, match_id=f"tightwad/p3/d998/r{rotation}/0123456789abcdef", index=998 * 16 + rotation)
        record["bots"] = [dict(b, name=n) for b, n in zip(real["bots"], ("benbot.v1", "alpha.v1", "beta.v1"))]
        record["bots"][0]["path"] = str(side.data / "bots" / "5f3a" / "upload_me.py")  # as the ladder stores it
        fault = {
            "kind": "crash",
            "detail": "exited with code 1",
            "decision": 2,
            "stderr_tail": "ValueError: ben's secret trace",
            "stderr_cause": "java.lang.IllegalStateException: ben's secret cause",  # a line above the tail
        }
        record["faults"] = [fault, None, None]
        record["seats"] = [dict(seat, fault=fault if seat["seat"] == 0 else None) for seat in real["seats"]]
        side.store.record_match(record)
    page = c.get("/matches/tightwad/p3/d998/r0/0123456789abcdef/replay")
    assert page.status_code == 200, page.text
    blob = re.search(r'<script id="data"[^>]*>([^<]*)</script>', page.text).group(1)
    shown = gzip.decompress(base64.b64decode(blob)).decode()
    assert "secret trace" not in shown and "stderr_tail" not in shown
    assert "secret cause" not in shown and "stderr_cause" not in shown
    assert "exited with code 1" in shown  # the fault itself is shown
    assert str(side.data) not in shown


@pytest.mark.slow
def test_a_bot_folder_uploads_as_an_archive_and_a_bad_one_fails_its_check_in_one_line(
    ladder_env, tmp_path, monkeypatch
):
    import io
    import zipfile

    from arena.serve.accounts import RateLimit

    monkeypatch.setenv("ARENA_BOT_ENVS", str(tmp_path / "envs"))  # where archives unpack: this test's own
    app, tokens, side = ladder_env
    side.upload_limit = RateLimit(burst=100, every_s=1.0)
    c = client(app)

    def archive(files: dict[str, bytes]) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in files.items():
                z.writestr(name, data)
        return buf.getvalue()

    r = upload(c, tokens["ann"], archive({"folderbot/notes.txt": b"no entry file here\n"}), "folderbot.zip")
    assert r.status_code == 202 and r.json()["name"] == "folderbot"
    bot_id = r.json()["bot_id"]

    def checked():
        v = c.get(f"/api/bots/{bot_id}", headers=bearer(tokens["ann"])).json()["versions"][-1]
        return v["status"] != "checking" and v

    v = wait_until(checked, what="the archive's check")
    assert v["status"] == "failed" and "no entry file" in v["check"] and "\n" not in v["check"].strip()
    # a failed archive's unpacked copy leaves the bot cache (each could hold 64 MiB until a prune)
    unpacked = tmp_path / "envs" / "unpacked"
    assert not [p for p in unpacked.iterdir() if not p.name.startswith(".")] if unpacked.is_dir() else True
    r = upload(
        c,
        tokens["ann"],
        archive({"folderbot/main.py": (BOTS / "upload_me.py").read_bytes(), "folderbot/weights.txt": b"1 2 3\n"}),
        "folderbot.zip",
    )
    assert r.status_code == 202 and r.json()["version"] == 2
    v = wait_until(checked, what="the second archive's check")
    assert v["status"] == "ok", v["check"]
    # it plays from its copy in the data folder, files and all
    row = side.db.one("SELECT path, kind FROM versions WHERE bot_id = ? AND n = 2", bot_id)
    assert row["kind"] == "folder" and str(side.data) in row["path"]
    assert sorted(p.name for p in __import__("pathlib").Path(row["path"]).iterdir()) == ["main.py", "weights.txt"]
    monkeypatch.setattr("arena.serve.side.UNPACKED_MAX_BYTES", 100_000)  # 64 MiB in the ladder
    bomb = archive({"b/main.py": b"x" * 200_000})  # compresses far below the upload bound
    assert len(bomb) < 8192
    r = upload(c, tokens["ann"], bomb, "b.zip")
    v = wait_until(
        lambda: (
            (d := c.get(f"/api/bots/{r.json()['bot_id']}", headers=bearer(tokens["ann"])).json()["versions"][-1])[
                "status"
            ]
            != "checking"
            and d
        ),
        what="the bomb's check",
    )
    assert v["status"] == "failed" and "unpacks to" in v["check"]


def test_a_ladder_never_lets_a_process_see_a_deal_twice(tmp_path):
    from arena.tournament.config import ConfigError

    path = ladder_file(tmp_path)
    path.write_text(path.read_text() + "allow_deal_memory: true\n")
    with pytest.raises(ConfigError, match="allow_deal_memory"):
        load_ladder(path)


def test_the_bot_page_plots_its_rating_history_from_the_matchmakers_standings(tmp_path):
    import random

    from arena.serve.matchmaker import HISTORY_POINTS, Matchmaker
    from tests.support.record_factory import make_record

    data = tmp_path / "data"
    data.mkdir()
    ladder = load_ladder(ladder_file(tmp_path))
    import_bundled(ladder, data)
    side = Ladderside(ladder, data, None, inline=False)  # as the server: ratings from standings.json only
    try:
        rng = random.Random(3)
        for i in range(300):
            side.store.record_match(
                make_record(
                    i * 16,
                    ["alpha.v1", "beta.v1", "gamma.v1"],
                    rng.sample(range(3), 3),
                    match_id=f"tightwad/p3/d{i}/r0/{i:016x}",
                )
            )
        assert side.leaderboard()["matches"] == 0  # nothing rated in the server's process
        Matchmaker(ladder, data, None).publish_standings(side.store)
        board = side.leaderboard()
        assert board["matches"] == 300
        c = client(create_app(side))
        alpha = next(r for r in board["scopes"][0]["standings"] if r["bot"] == "alpha")
        doc = c.get(f"/api/bots/{alpha['bot_id']}").json()
        points = doc["history"][0]["points"]
        assert doc["history"][0]["version"] == 1 and len(points) <= HISTORY_POINTS + 1
        assert points[-1][1] == pytest.approx(alpha["mu"], abs=1e-3) and points[-1][0] == 299
        page = c.get(f"/bots/{alpha['bot_id']}").text
        assert "<polyline" in page and "rating history of v1" in page
    finally:
        side.close()


def test_an_invite_link_makes_one_account_once(ladder_env):
    from arena.serve.accounts import RateLimit, new_invite

    app, _, side = ladder_env
    side.login_limit = RateLimit(burst=100, every_s=1.0)  # shared with the login test's bucket
    c = client(app)
    token = new_invite(side.data)
    page = c.get(f"/invite/{token}")
    assert page.status_code == 200 and "Join the fixture ladder" in page.text
    csrf = c.cookies.get(CSRF_COOKIE)
    assert c.post(f"/invite/{token}", data={"name": "ivy", "password": "long enough"}).status_code == 403  # no CSRF
    r = c.post(f"/invite/{token}", data={"name": "ivy", "password": "short", "csrf_token": csrf})
    assert r.status_code == 400 and "shorter than 8" in r.text
    r = c.post(
        f"/invite/{token}", data={"name": "ivy", "password": "long enough", "csrf_token": csrf}, follow_redirects=False
    )
    assert r.status_code == 303 and c.cookies.get("arena_session")
    assert "ivy" in c.get("/").text  # logged in as the new account
    assert c.get(f"/invite/{token}").status_code == 404  # used: once only
    assert c.get("/invite/not-a-token").status_code == 404
    assert side.db.one("SELECT organiser FROM users WHERE name = 'ivy'")["organiser"] == 0


def test_a_parsed_form_and_its_upload_are_closed_when_the_request_ends_even_on_a_4xx(ladder_env, monkeypatch):
    """A login form carrying a file fails its CSRF check after it is parsed: the form is still
    closed, and its upload's spooled file with it, when the request ends (not left to the
    garbage collector)."""
    from starlette.datastructures import FormData, UploadFile

    app, _, _ = ladder_env
    closed: list[FormData] = []
    original = FormData.close

    async def recording_close(self: FormData) -> None:
        await original(self)
        closed.append(self)

    monkeypatch.setattr(FormData, "close", recording_close)
    r = client(app).post("/login", files={"junk": ("junk.bin", b"x" * 1000)}, data={"username": "ann"})
    assert r.status_code == 403 and "CSRF" in r.json()["error"]
    (form,) = closed
    uploads = [v for _, v in form.multi_items() if isinstance(v, UploadFile)]
    assert len(uploads) == 1 and uploads[0].file.closed


def test_a_bundled_bot_the_ladder_file_no_longer_lists_stops_playing_until_listed_again(tmp_path):
    """The ladder file says which bundled bots play: one removed from it was still dealt sets and
    shown on the leaderboard after the next start (from its copy in the data folder)."""
    from arena.serve.db import LadderDB

    data = tmp_path / "data"
    data.mkdir()
    path = ladder_file(tmp_path)
    three = "{builtin: random, name: gamma}]"
    full = path.read_text().replace(three, "{builtin: random, name: delta}, " + three)
    db = LadderDB(data)

    def playing() -> list[str]:
        return [r["name"] for r in db.playing_versions()]

    path.write_text(full)
    import_bundled(load_ladder(path), data)
    assert playing() == ["alpha", "beta", "delta", "gamma"]
    path.write_text(full.replace("{builtin: random, name: delta}, ", ""))
    import_bundled(load_ladder(path), data)
    assert playing() == ["alpha", "beta", "gamma"]  # delta left the file: retired, its results kept
    db.run("UPDATE bots SET retired = 1 WHERE name = 'gamma'")  # the organiser retired gamma on its page
    path.write_text(full)
    import_bundled(load_ladder(path), data)
    assert playing() == ["alpha", "beta", "delta"]  # delta listed again plays; gamma stays retired


def test_an_upload_under_a_bundled_bots_name_is_refused_not_undone_at_the_next_start(ladder_env):
    """The organiser may replace any bot, but a bundled bot's code comes from the ladder file:
    an uploaded version of it was accepted (202), then replaced by the file's at the next start."""
    from arena.serve.accounts import RateLimit

    app, tokens, side = ladder_env
    side.upload_limit = RateLimit(burst=100, every_s=1.0)
    c = client(app)
    r = upload(c, tokens["org"], (BOTS / "upload_me.py").read_bytes(), "alpha.py", "alpha")
    assert r.status_code == 409 and "bundled bot" in r.json()["error"] and "ladder file" in r.json()["error"]
    assert upload(c, tokens["ben"], b"print(1)\n", "alpha.py", "alpha").status_code == 403  # as before
    assert (
        side.db.one("SELECT COUNT(*) AS n FROM versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = 'alpha'")["n"]
        == 1
    )


def test_a_check_cut_short_by_the_servers_stop_is_run_again_at_the_next_start(tmp_path, monkeypatch):
    """Stopping the server kills the bots of a check in flight (the exit's cleanup), and the check
    recorded that kill as the bot's crash: a good upload was marked failed ("exited (signal
    SIGKILL)"), and never checked again. Now its version stays 'checking', and the next start
    checks it."""
    import threading
    from types import SimpleNamespace

    from arena.tournament import check

    entered, release = threading.Event(), threading.Event()

    def killed_mid_check(entry, **_):
        entered.set()
        release.wait(30)  # the server stops meanwhile; its exit kills the bot
        return SimpleNamespace(ok=False, render=lambda: "FAIL crash: exited (signal SIGKILL)")

    monkeypatch.setattr(check, "run_check", killed_mid_check)
    app, tokens, side = ladder_app(tmp_path, {"ann": False})
    r = upload(client(app), tokens["ann"], (BOTS / "upload_me.py").read_bytes(), "upload_me.py", "annbot")
    assert r.status_code == 202, r.text
    assert entered.wait(30)
    side.close()  # as the server does when it stops
    release.set()
    side.checker.join(30)
    assert side.db.one("SELECT status FROM versions WHERE id = (SELECT MAX(id) FROM versions)")["status"] == "checking"

    monkeypatch.setattr(check, "run_check", lambda entry, **_: SimpleNamespace(ok=True, render=lambda: "PASS"))
    again = Ladderside(load_ladder(side.ladder.source), side.data, side.sandbox)  # the next start
    try:
        latest = "SELECT status FROM versions WHERE id = (SELECT MAX(id) FROM versions)"
        wait_until(lambda: again.db.one(latest)["status"] == "ok", what="the check at the next start")
    finally:
        again.close()
