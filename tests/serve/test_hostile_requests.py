"""Requests a careless or hostile entrant sends (found by an audit of a running ladder): each
gets a 4xx with its reason, never a 500, never another entrant's data, and never a refused
upload left on disk. In process (Starlette's TestClient); no matchmaker runs here."""

from __future__ import annotations

import io
import re
import threading
import zipfile
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx2")

from arena.serve.accounts import RateLimit  # noqa: E402
from arena.serve.app import CSRF_COOKIE  # noqa: E402
from tests.serve.in_process import bearer, client, ladder_app, upload  # noqa: E402
from tests.serve.ladder_fixtures import BOTS, wait_until  # noqa: E402


@pytest.fixture(scope="module")
def ladder_env(tmp_path_factory):
    app, tokens, side = ladder_app(
        tmp_path_factory.mktemp("hostile"),
        {"ann": False, "ben": False, "cat": False},
        upload_max_bytes=65536,
        extra="  max_bots_per_entrant: 0\n",  # these tests enter many bots as one entrant
    )
    side.upload_limit = RateLimit(burst=1000, every_s=0.01)
    yield app, tokens, side
    side.close()


QUITTER = b"import sys\nsys.exit(3)\n"  # fails its check at once: the checker's queue stays short


def zipped(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


def checked(c: Any, token: str, bot_id: int) -> dict:
    def done():
        v = c.get(f"/api/bots/{bot_id}", headers=bearer(token)).json()["versions"][-1]
        return v["status"] != "checking" and v

    return wait_until(done, what=f"the check of bot {bot_id}")


def test_ids_take_ascii_digits_only(ladder_env):
    app, tokens, _ = ladder_env
    c = client(app)
    for path in ("/api/bots/%C2%B2", "/bots/%C2%B2", "/bots/%C2%B2/source", "/api/matches?limit=%C2%B2"):
        r = c.get(path, headers=bearer(tokens["ann"]))
        assert r.status_code == 400 and "digits 0-9" in r.json()["error"], path
    assert c.get("/api/bots/%EF%BC%95").status_code == 400  # a full-width 5 is not bot 5
    r = c.post("/api/bots/%C2%B2/retire", headers=bearer(tokens["ann"]))
    assert r.status_code == 400


def test_numbers_out_of_their_range_are_refused_naming_the_range(ladder_env):
    app, _, _ = ladder_env
    c = client(app)
    for limit in ("0", "501", "-1", "9" * 40):  # docs/ladder.md: limit 1..500, never clamped silently
        r = c.get(f"/api/matches?limit={limit}")
        assert r.status_code == 400 and "limit" in r.json()["error"] and "1 to 500" in r.json()["error"], limit
    assert [c.get(f"/api/matches?limit={n}").status_code for n in (1, 500)] == [200, 200]
    for bot_id in ("-1", str(10**23)):
        r = c.get(f"/api/bots/{bot_id}")
        error = r.json()["error"]
        assert r.status_code == 400 and "out of range" in error and "digits" not in error, bot_id


def test_head_is_a_get_and_spends_no_allowance(ladder_env):
    app, tokens, side = ladder_env
    side.login_limit = RateLimit(burst=2, every_s=3600.0)
    c = client(app)
    assert [c.head("/login").status_code for _ in range(4)] == [200] * 4
    assert c.head("/upload", headers=bearer(tokens["ann"])).status_code == 200
    csrf = c.cookies.get(CSRF_COOKIE)
    r = c.post("/login", data={"name": "ann", "password": "correct horse", "csrf_token": csrf}, follow_redirects=False)
    assert r.status_code == 303  # the HEADs took nothing from the bucket of two
    side.login_limit = RateLimit(burst=100, every_s=1.0)


def test_refusals_by_rate_say_when_to_retry_in_the_clients_format(ladder_env):
    app, _, side = ladder_env
    side.login_limit = RateLimit(burst=1, every_s=12.0)
    c = client(app)
    c.get("/login")
    csrf = c.cookies.get(CSRF_COOKIE)
    form = {"name": "ann", "password": "wrong horse!", "csrf_token": csrf}
    r = c.post("/login", data=form)
    assert r.status_code == 401 and r.json()["error"] == "wrong name or password"  # a script gets JSON
    r = c.post("/login", data=form)
    assert r.status_code == 429 and r.headers["retry-after"] == "12"
    assert r.json()["error"] == "too many login attempts; wait 12 seconds"  # as long as the header says
    r = c.post("/login", data=form, headers={"Accept": "text/html"})
    assert r.status_code == 429 and r.headers["retry-after"] == "12" and "<form" in r.text  # a browser, the page
    assert "wait 12 seconds" in r.text
    side.login_limit = RateLimit(burst=100, every_s=1.0)


def test_a_wrong_method_names_the_allowed_ones(ladder_env):
    app, _, _ = ladder_env
    r = client(app).put("/api/leaderboard")
    assert r.status_code == 405 and "GET" in r.headers["allow"]


def test_forms_over_their_bound_say_which_bound(ladder_env):
    app, tokens, side = ladder_env
    c = client(app)
    r = c.post("/login", data={"name": "x" * 20000})
    assert r.status_code == 413 and "form is larger than 16384" in r.json()["error"]
    r = upload(c, tokens["ann"], b"#" * 70000 + b"\n", "big.py")
    most = side.ladder.settings.upload_max_bytes
    assert r.status_code == 413 and f"larger than {most} bytes" in r.json()["error"]


def test_a_bot_named_as_a_prefix_sees_no_other_entrants_faults_or_matches(ladder_env):
    from tests.support.record_factory import make_record

    app, tokens, side = ladder_env
    c = client(app)
    body = QUITTER
    victim = upload(c, tokens["ann"], body + b"# ann\n", "v.py", "tank.vortex").json()["bot_id"]
    mine = upload(c, tokens["ben"], body + b"# ben\n", "t.py", "tank").json()["bot_id"]
    mid = "tightwad/p3/d998/r0/00112233445566778899"
    side.store.record_match(
        make_record(
            998 * 16,
            ["tank.vortex.v1", "alpha.v1", "beta.v1"],
            [2, 0, 1],
            match_id=mid,
            faults=[{"kind": "crash", "detail": "exited with code 1", "stderr_tail": "ANN-SECRET"}, None, None],
        )
    )
    assert c.get(f"/api/bots/{mine}", headers=bearer(tokens["ben"])).json()["faults"] == []
    assert "ANN-SECRET" not in c.get(f"/api/bots/{mine}", headers=bearer(tokens["ben"])).text
    assert c.get("/api/matches?bot=tank").json()["matches"] == []
    faults = c.get(f"/api/bots/{victim}", headers=bearer(tokens["ann"])).json()["faults"]
    assert faults[0]["stderr_tail"] == "ANN-SECRET"  # its owner still sees it
    theirs = wait_until(lambda: c.get("/api/matches?bot=tank.vortex").json()["matches"], what="the match listed")
    assert [m["match_id"] for m in theirs] == [mid]


def test_names_that_differ_only_in_case_are_one_name(ladder_env, tmp_path):
    from arena.errors import ArenaError
    from arena.serve.accounts import add_user as add_account

    app, tokens, side = ladder_env
    c = client(app)
    body = QUITTER
    assert upload(c, tokens["ann"], body, "annbot.py", "casebot").status_code == 202
    r = upload(c, tokens["ben"], body, "CASEBOT.py", "CASEBOT")
    assert r.status_code == 409 and "'casebot'" in r.json()["error"]
    with pytest.raises(ArenaError, match="'ann' exists already"):
        add_account(side.data, "ANN", "long enough")


def test_an_upload_refused_for_its_name_leaves_nothing_on_disk(ladder_env):
    app, tokens, side = ladder_env
    c = client(app)
    body = QUITTER
    assert upload(c, tokens["ann"], body, "owned.py", "ownedbot").status_code == 202
    before = sorted(p for p in (side.data / "bots").rglob("*") if p.is_file())
    r = upload(c, tokens["ben"], body + b"# a different file\n", "owned.py", "ownedbot")
    assert r.status_code == 403
    assert sorted(p for p in (side.data / "bots").rglob("*") if p.is_file()) == before


def test_uploads_at_the_same_moment_each_get_a_version(ladder_env):
    app, tokens, side = ladder_env
    body = QUITTER
    codes: list[int] = []
    start = threading.Barrier(6)

    def send(i: int) -> None:
        c = client(app)
        start.wait()
        codes.append(upload(c, tokens["cat"], body + f"# {i}\n".encode(), "race.py", "racebot").status_code)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert codes == [202] * 6
    numbers = [
        r["n"]
        for r in side.db.all("SELECT v.n FROM versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = 'racebot'")
    ]
    assert sorted(numbers) == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        ({"a": b"x", "a/b": b"y"}, "as a file and a folder"),
        ({"./": b"", ".": b"x"}, "has no file name"),
        ({"/".join(["d"] * 40) + "/main.py": b"x"}, "nested deeper than 32"),
        ({"n" * 300 + ".py": b"x"}, "longer than 255 bytes"),
    ],
)
def test_an_archive_with_impossible_paths_fails_its_check_in_one_line_without_server_paths(
    ladder_env, tmp_path, monkeypatch, files, reason
):
    monkeypatch.setenv("ARENA_BOT_ENVS", str(tmp_path / "envs"))
    app, tokens, side = ladder_env
    c = client(app)
    r = upload(c, tokens["ann"], zipped(files), "weird.zip", "weird")
    assert r.status_code == 202, r.text
    v = checked(c, tokens["ann"], r.json()["bot_id"])
    report = v["check"]
    assert v["status"] == "failed" and reason in report and "\n" not in report.strip(), report
    assert str(side.data) not in report and str(tmp_path) not in report and "Error:" not in report
    assert report.startswith("weird.zip: ")


@pytest.mark.parametrize("how", ["liar", "crc", "method9", "deflate", "truncated"])
def test_a_damaged_or_lying_archive_fails_its_check_in_one_line_and_logs_no_traceback(
    ladder_env, tmp_path, monkeypatch, caplog, how
):
    """A member that decompresses past the size it claims, a bad CRC, deflate64, a corrupt
    stream, a cut .tar.gz: the entrant reads why, the server's log holds no traceback."""
    from tests.support.bot_folders import damaged_archive, liar_zip

    monkeypatch.setenv("ARENA_BOT_ENVS", str(tmp_path / "envs"))
    app, tokens, _ = ladder_env
    c = client(app)
    if how == "liar":
        archive = liar_zip(tmp_path / "liar.zip", QUITTER, real_bytes=32 << 20, crc_matches=False)
    else:
        archive = damaged_archive(tmp_path, how, QUITTER)
    r = upload(c, tokens["ann"], archive.read_bytes(), archive.name, "damaged")
    assert r.status_code == 202, r.text
    v = checked(c, tokens["ann"], r.json()["bot_id"])
    report = v["check"]
    assert v["status"] == "failed" and "repack it" in report and "\n" not in report.strip(), report
    assert report.startswith("damaged.") and str(tmp_path) not in report
    assert not [rec for rec in caplog.records if rec.exc_info], [rec.getMessage() for rec in caplog.records]


@pytest.mark.slow
def test_identical_bot_folders_under_two_names_both_pass_and_show_their_source(ladder_env, tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_BOT_ENVS", str(tmp_path / "envs"))
    app, tokens, _ = ladder_env
    c = client(app)
    archive = zipped({"main.py": (BOTS / "upload_me.py").read_bytes(), "weights.bin": b"\0\1\2"})
    first = upload(c, tokens["ann"], archive, "same.zip", "samefiles").json()["bot_id"]
    second = upload(c, tokens["ben"], archive, "same.zip", "samefiles2").json()["bot_id"]
    for token, bot_id in ((tokens["ann"], first), (tokens["ben"], second)):
        v = checked(c, token, bot_id)
        assert v["status"] == "ok", v["check"]
        source = c.get(v["source"], headers=bearer(token))
        assert source.status_code == 200
        assert "==> main.py <==\n" in source.text and "==> weights.bin <== (3 bytes, not shown)" in source.text


def page_token(c: Any, path: str = "/") -> str:
    """The csrf_token of a page's forms, as a logged-in visitor's page script reads it."""
    found = re.search(r'name="csrf_token" value="([^"]+)"', c.get(path).text)
    assert found, f"no form token on {path}"
    return found.group(1)


def log_in(c: Any, name: str = "ann", password: str = "correct horse") -> str:
    """Log ``c`` in through the form (double submit of the arena_csrf cookie); returns the
    session's form token."""
    c.get("/login")
    data = {"name": name, "password": password, "csrf_token": c.cookies.get(CSRF_COOKIE)}
    assert c.post("/login", data=data, follow_redirects=False).status_code == 303
    return page_token(c)


def test_a_planted_csrf_cookie_cannot_forge_a_sessions_form(ladder_env):
    """Double submit alone trusts whoever can set the arena_csrf cookie (another app on the same
    host, any port); a logged-in visitor's token is bound to the session instead."""
    app, _, side = ladder_env
    side.login_limit = RateLimit(burst=100, every_s=1.0)
    c = client(app)
    token = log_in(c)
    c.cookies.set(CSRF_COOKIE, "planted")
    r = c.post("/api/bots", data={"csrf_token": "planted"}, files={"file": ("p.py", QUITTER)})
    assert r.status_code == 403 and "CSRF" in r.json()["error"]
    assert token != "planted" and page_token(c, "/upload") == token  # the session's, whatever the cookie
    r = c.post("/api/bots", data={"csrf_token": token, "name": "sessionbot"}, files={"file": ("p.py", QUITTER)})
    assert r.status_code == 202, r.text
    old = c.cookies.get("arena_session")
    c.post("/logout", data={"csrf_token": token})
    c.cookies.set("arena_session", old)  # the session ended: its token went with it
    r = c.post("/api/bots", data={"csrf_token": token, "name": "sessionbot"}, files={"file": ("p.py", QUITTER)})
    assert r.status_code == 401


def test_login_takes_the_name_in_any_case_as_names_are_unique_regardless_of_case(ladder_env):
    app, _, side = ladder_env
    side.login_limit = RateLimit(burst=100, every_s=1.0)
    c = client(app)
    log_in(c, "ANN")
    assert c.cookies.get("arena_session")
    assert '<span class="who">ann</span>' in c.get("/").text  # the account as it was made
    other = client(app)
    other.get("/login")
    data = {"name": "ANN", "password": "wrong horse!", "csrf_token": other.cookies.get(CSRF_COOKIE)}
    assert other.post("/login", data=data).status_code == 401


def test_a_session_scripts_retire_is_told_which_csrf_token_to_send(ladder_env):
    """Logged in, the API's X-CSRF-Token is the csrf_token of the session's pages (bound to the
    session); the 403 sent scripts to the arena_csrf cookie, which is HttpOnly and, once logged
    in, never accepted."""
    app, tokens, side = ladder_env
    side.login_limit = RateLimit(burst=100, every_s=1.0)
    side.upload_limit = RateLimit(burst=100, every_s=1.0)
    c = client(app)
    r = c.post("/api/bots", headers=bearer(tokens["ann"]), data={"name": "retireme"}, files={"file": ("r.py", QUITTER)})
    assert r.status_code == 202, r.text
    bot_id = r.json()["bot_id"]
    token = log_in(c)
    r = c.post(f"/api/bots/{bot_id}/retire", headers={"X-CSRF-Token": c.cookies.get(CSRF_COOKIE)})
    assert r.status_code == 403
    assert "arena_csrf" not in r.json()["error"] and "csrf_token" in r.json()["error"]
    r = c.post(f"/api/bots/{bot_id}/retire", headers={"X-CSRF-Token": token})
    assert r.status_code == 200 and r.json()["retired"] is True


def test_an_archives_source_page_lists_it_once_not_at_every_view(ladder_env, tmp_path, monkeypatch):
    """Listing a .tar.gz reads its whole stream: a bomb's owner made the server decompress
    250 MiB at every view of its source page."""
    from arena.match import botfolder

    _, _, side = ladder_env
    archive = tmp_path / "bots" / ("0" * 64) / "bot.zip"
    archive.parent.mkdir(parents=True)
    archive.write_bytes(zipped({"main.py": b"print('hi')\n", "w.bin": b"\0" * 1000}))
    calls = []
    real = botfolder._members
    monkeypatch.setattr(botfolder, "_members", lambda path: calls.append(path) or real(path))
    pages = [side.source_text(archive) for _ in range(5)]
    assert len(calls) == 1 and all("w.bin (1000 bytes)" in p for p in pages)
