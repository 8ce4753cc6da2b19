"""The whole flow in a real browser (Playwright driving Debian's chromium, never a
downloaded one): log in, upload a bot through the form, watch it appear on the live
leaderboard and get rated, without reloading the page."""

from __future__ import annotations

import shutil
import signal

import pytest

from tests.serve.ladder_fixtures import BOTS, add_user, free_port, ladder_file, safe_sandbox, start_server, wait_until

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.mark.slow
def test_log_in_upload_and_watch_the_bot_get_rated_in_chromium(tmp_path):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    httpx = pytest.importorskip("httpx2")
    safe_sandbox()
    data = tmp_path / "data"
    add_user(data, "zoe", "zoe's password")
    port = free_port()
    server = start_server(ladder_file(tmp_path), data, port, tmp_path / "server.out")
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _answers(httpx, base), what="the server")
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            page = browser.new_page()
            page.goto(base + "/login")
            page.fill("input[name=name]", "zoe")
            page.fill("input[name=password]", "not it")
            page.click("button[type=submit]")
            assert "wrong name or password" in page.inner_text("[role=alert]")
            page.fill("input[name=name]", "zoe")
            page.fill("input[name=password]", "zoe's password")
            page.click("button[type=submit]")
            page.wait_for_url(base + "/")
            assert "zoe" in page.inner_text("header")

            page.goto(base + "/upload")  # a bad file first: the form says why, in one line
            page.set_input_files(
                "input[name=file]", {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"just some notes\n"}
            )
            page.click("button[type=submit]")
            assert "neither a .py file, a script starting with #!, nor a bot folder" in page.inner_text("[role=alert]")
            page.fill("input[name=name]", "zoes_bot")  # a file over the limit: refused, the name kept
            page.set_input_files(
                "input[name=file]", {"name": "big.py", "mimeType": "text/plain", "buffer": b"#" * 200_000}
            )
            page.click("button[type=submit]")
            assert "larger than 8192 bytes (8 KiB), this ladder's limit" in page.inner_text("[role=alert]")
            assert page.input_value("input[name=name]") == "zoes_bot"
            page.set_input_files("input[name=file]", str(BOTS / "upload_me.py"))
            page.fill("input[name=name]", "zoes_bot")
            page.click("button[type=submit]")
            page.wait_for_url(f"{base}/bots/*")
            assert page.inner_text("#bot-name") == "zoes_bot"
            assert "checking" in page.inner_text("body") or "ok" in page.inner_text("body")

            page.goto(base + "/")  # the live leaderboard: no reload from here on
            row = 'section[data-scope="overall"] tr[data-bot="zoes_bot"]'
            page.wait_for_selector(row, timeout=120_000)
            page.wait_for_function(
                f"""() => {{ const td = document.querySelector('{row} td.matches');
                                        return td && parseInt(td.textContent, 10) > 0; }}""",
                timeout=120_000,
            )
            assert page.inner_text(f"{row} td:nth-child(3)") == "zoe"
            page.click(f"{row} a")  # its page: the rating history plot
            page.wait_for_selector("svg polyline.mu")
            browser.close()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)


def _answers(httpx, base: str) -> bool:
    try:
        return httpx.get(base + "/api/leaderboard", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False
