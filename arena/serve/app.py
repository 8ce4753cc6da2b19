"""The ladder's web face: Starlette pages (Jinja2) and the JSON API (docs/ladder.md).

Auth: a session cookie (after the login form) or ``Authorization: Bearer <token>``
(scripts). Every form POST carries a CSRF token equal to the ``arena_csrf`` cookie
(double submit; cookies are SameSite=Strict); a script with a bearer token needs none.
Every bad request gets a 4xx with a one-line reason; an unexpected error is logged and
answered 500 without a traceback.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import queue
import secrets
import threading
import time
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from arena.serve import accounts
from arena.serve.accounts import RateLimit, User
from arena.serve.db import LadderDB
from arena.tournament.config import SAFE_NAME, SAFE_NAME_TEXT

log = logging.getLogger("arena.serve")

API_FORMAT = "decktet-arena-ladder"
API_VERSION = 1
SESSION_COOKIE = "arena_session"
CSRF_COOKIE = "arena_csrf"
RECENT = 50
LEADERBOARD_MIN_S = 1.0   # the leaderboard is computed again at most this often


class Ladderside:
    """Everything the handlers share: the ladder, its databases, the checker, caches."""

    def __init__(self, ladder: Any, data: Path, sandbox: Any) -> None:
        from arena.tournament.store import ResultStore

        self.ladder = ladder
        self.data = Path(data)
        self.sandbox = sandbox
        self.db = LadderDB(self.data)
        self.store = ResultStore(self.data)
        self.login_limit = RateLimit(burst=5, every_s=12.0)
        self.upload_limit = RateLimit(burst=5, every_s=30.0)
        self.board: dict[str, Any] | None = None
        self.board_key: tuple[Any, ...] = ()
        self.board_at = 0.0
        self.board_lock = threading.Lock()
        self.checks: queue.Queue = queue.Queue()
        self.checker = threading.Thread(target=self._check_loop, name="checker", daemon=True)
        self.checker.start()
        for row in self.db.all("SELECT id FROM versions WHERE status = 'checking'"):
            self.checks.put(row["id"])  # uploads a restart interrupted

    # ---- conformance checks of uploads ------------------------------------------

    def _check_loop(self) -> None:
        from arena.cli.check import run_check
        from arena.tournament.roster import BotEntry
        from arena.tournament.runner import limits_from, time_control_from

        while True:
            vid = self.checks.get()
            if vid is None:
                return
            row = self.db.one("SELECT v.*, b.name FROM versions v JOIN bots b ON b.id = v.bot_id WHERE v.id = ?", vid)
            if row is None:
                continue
            entry = BotEntry(name=row["name"], path=Path(row["path"]), sha256=row["sha256"], kind=row["kind"])
            try:
                report = run_check(entry, sandbox=self.sandbox, limits=limits_from(self.ladder.tournament),
                                   time_control=time_control_from(self.ladder.tournament))
                status, text = ("ok" if report.ok else "failed"), report.render()
            except Exception as exc:  # noqa: BLE001 - a check that cannot run fails the upload, not the server
                log.exception("check of %s v%d failed", row["name"], row["n"])
                status, text = "failed", f"the check could not run: {type(exc).__name__}: {exc}"
            self.db.run("UPDATE versions SET status = ?, report = ? WHERE id = ?", status, text, vid)
            log.info("upload %s v%d: check %s", row["name"], row["n"], status)

    def close(self) -> None:
        self.checks.put(None)

    # ---- reading ----------------------------------------------------------------

    def leaderboard(self) -> dict[str, Any]:
        """The /api/leaderboard document, computed again when matches or the roster changed."""
        with self.store._lock:
            n = self.store.conn.execute("SELECT MAX(rowid) FROM matches").fetchone()[0] or 0  # O(1), unlike COUNT
        roster = self.db.one("SELECT COUNT(*) AS v, COALESCE(SUM(status = 'ok'), 0) AS ok,"
                             " (SELECT COALESCE(SUM(retired), 0) FROM bots) AS r FROM versions")
        key = (n, roster["v"], roster["ok"], roster["r"])
        board, old_key = self.board, self.board_key
        stale = board is None or (key != old_key and (key[1:] != old_key[1:]   # the roster changed: at once
                                                      or time.monotonic() - self.board_at >= LEADERBOARD_MIN_S))
        if not stale:
            return board
        # one reader computes; the others keep getting the last board meanwhile (never a queue of readers)
        if not self.board_lock.acquire(blocking=board is None or key[1:] != old_key[1:]):
            return board
        try:
            if self.board_key != key or self.board is None:
                self.board = self._compute_board(n)
                self.board_key, self.board_at = key, time.monotonic()
            return self.board
        finally:
            self.board_lock.release()

    def _compute_board(self, n: int) -> dict[str, Any]:
        from arena.report.ratings import compute_ratings

        report = compute_ratings(self.store.iter_results(scheduled=False))
        owners = {r["id"]: r["name"] for r in self.db.all("SELECT id, name FROM users")}
        current = {self.db.version_name(r): r for r in self.db.playing_versions()}
        scopes = []
        names = ["overall"] + [g.id for g in self.ladder.tournament.games]
        by_scope = {s.scope: s for s in report.scopes}
        for scope in dict.fromkeys(names):
            rated = {b.name: b for b in by_scope[scope].standings} if scope in by_scope else {}
            rows = []
            for vname, r in current.items():
                b = rated.get(vname)
                mu, sigma = (b.mu, b.sigma) if b else (25.0, 25.0 / 3)
                rows.append({"bot_id": r["bot_id"], "bot": r["name"], "version": r["n"],
                             "owner": owners.get(r["owner_id"], "organiser"),
                             "mu": round(mu, 3), "sigma": round(sigma, 3),
                             "conservative": round(mu - 3 * sigma, 3), "matches": b.matches if b else 0,
                             "mean_place": None if not b or b.mean_place is None else round(b.mean_place, 3),
                             "faults": b.faults_total if b else 0})
            rows.sort(key=lambda x: (-x["conservative"], x["bot"]))
            for i, row in enumerate(rows, 1):
                row["rank"] = i
            scopes.append({"scope": scope, "standings": rows})
        played = by_scope["overall"].matches if "overall" in by_scope else 0
        return {"format": API_FORMAT, "version": API_VERSION, "ladder": self.ladder.name, "matches": played,
                "rating": {"system": "trueskill", "conservative": "mu - 3 * sigma"}, "scopes": scopes}

    def recent_matches(self, limit: int, bot: str | None = None) -> list[dict[str, Any]]:
        sql = ("SELECT m.match_id, m.game, m.players, m.started_at, m.duration_s FROM matches m"
               + (" WHERE m.match_id IN (SELECT match_id FROM seats WHERE bot LIKE ?)" if bot else "")
               + " ORDER BY m.rowid DESC LIMIT ?")
        args: tuple[Any, ...] = ((bot + ".v%", limit) if bot else (limit,))
        with self.store._lock:
            conn = self.store.conn
            rows = conn.execute(sql, args).fetchall()
            out = []
            for mid, game, players, started, duration in rows:
                seats = conn.execute("SELECT bot, place, score, fault_kind FROM seats WHERE match_id = ?"
                                     " ORDER BY seat", (mid,)).fetchall()
                out.append({"match_id": mid, "game": game, "players": players, "started_at": started,
                            "duration_s": duration, "bots": [s[0] for s in seats], "places": [s[1] for s in seats],
                            "scores": [s[2] for s in seats], "faults": [s[3] for s in seats],
                            "replay": f"/matches/{mid}/replay" if self._deal_done(conn, mid, players) else None})
        return out

    @staticmethod
    def _deal_done(conn: Any, match_id: str, players: int) -> bool:
        """Whether every rotation of this match's deal is stored: only then may its cards be shown."""
        prefix = match_id.rsplit("/r", 1)[0] + "/r"
        like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        n = conn.execute("SELECT COUNT(*) FROM matches WHERE match_id LIKE ? ESCAPE '\\'", (like,)).fetchone()[0]
        return n >= players

    def bot_doc(self, bot_id: int, user: User | None) -> dict[str, Any]:
        bot = self.db.one("SELECT b.*, u.name AS owner FROM bots b LEFT JOIN users u ON u.id = b.owner_id"
                          " WHERE b.id = ?", bot_id)
        if bot is None:
            raise HTTPException(404, f"no bot {bot_id}")
        mine = _may_see_source(user, bot)
        versions = []
        for v in self.db.all("SELECT * FROM versions WHERE bot_id = ? ORDER BY n", bot_id):
            item = {"version": v["n"], "sha256": v["sha256"], "status": v["status"],
                    "created": round(v["created"], 3), "name": f"{bot['name']}.v{v['n']}"}
            if mine:
                item["check"] = v["report"]
                item["source"] = f"/bots/{bot_id}/source?version={v['n']}"
            versions.append(item)
        board = self.leaderboard()
        ratings = {s["scope"]: next(({k: r[k] for k in ("rank", "mu", "sigma", "conservative", "matches")}
                                     for r in s["standings"] if r["bot_id"] == bot_id), None)
                   for s in board["scopes"]}
        faults = []
        with self.store._lock:
            rows = self.store.conn.execute(
                "SELECT match_id, bot, fault_kind, fault_detail FROM seats WHERE bot LIKE ? AND fault_kind"
                " IS NOT NULL ORDER BY rowid DESC LIMIT 20", (bot["name"] + ".v%",)).fetchall()
        for mid, name, kind, detail in rows:
            item = {"match_id": mid, "version": name, "kind": kind, "detail": detail}
            if mine:
                item["stderr_tail"] = self._stderr_tail(mid, name)
            faults.append(item)
        return {"format": API_FORMAT, "version": API_VERSION, "id": bot["id"], "name": bot["name"],
                "owner": bot["owner"] or "organiser", "retired": bool(bot["retired"]), "versions": versions,
                "ratings": ratings, "faults": faults}

    def _stderr_tail(self, match_id: str, bot: str) -> str:
        try:
            record = self.store.get_record(match_id)
        except (KeyError, Exception):  # noqa: BLE001 - a missing or altered record shows no tail
            return ""
        seats = sorted(record.get("bots") or (), key=lambda b: b.get("seat", 0))  # every record has "bots"
        for seat, fault in zip(seats, record.get("faults") or ()):
            if fault and seat.get("name") == bot:
                return str(fault.get("stderr_tail") or "")[-2000:]
        return ""

    # ---- uploads ----------------------------------------------------------------

    def accept_upload(self, user: User, filename: str, data: bytes, name: str | None) -> dict[str, Any]:
        """Store an uploaded bot as a new version, queued for the conformance check."""
        from arena.tournament.roster import SNAPSHOTS

        suffix = Path(filename or "").suffix
        if suffix == ".py":
            kind = "python"
        elif data.startswith(b"#!"):
            kind = "executable"
        else:
            raise HTTPException(400, "the file is neither a .py file nor a script starting with #!; "
                                     "upload one bot file (e.g. mybot.py)")
        if not data.strip():
            raise HTTPException(400, "the file is empty; upload your bot's source")
        name = (name or Path(filename or "").stem).strip()
        if not SAFE_NAME.match(name):
            raise HTTPException(400, f"bot name {name[:70]!r} is not allowed; use {SAFE_NAME_TEXT}")
        sha = hashlib.sha256(data).hexdigest()
        home = self.data / SNAPSHOTS / sha
        home.mkdir(parents=True, exist_ok=True)
        for d in (home.parent, home):
            d.chmod(0o755)  # the sandbox may run the bot under another uid
        path = home / (name + (suffix if kind == "python" else ""))
        tmp = home / f".{path.name}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        tmp.chmod(0o755 if kind == "executable" else 0o644)
        os.replace(tmp, path)
        with self.db.conn:
            bot = self.db.one("SELECT * FROM bots WHERE name = ?", name)
            if bot is None:
                bot_id = self.db.run("INSERT INTO bots (name, owner_id, created) VALUES (?, ?, ?)",
                                     name, user.id, time.time())
            elif bot["owner_id"] != user.id and not user.organiser:
                raise HTTPException(403, f"the bot name {name!r} belongs to another entrant; choose another name")
            else:
                bot_id = bot["id"]
                self.db.run("UPDATE bots SET retired = 0 WHERE id = ?", bot_id)
        n = self.db.add_version(bot_id, sha, path, kind, "checking")
        vid = self.db.one("SELECT id FROM versions WHERE bot_id = ? AND n = ?", bot_id, n)["id"]
        self.checks.put(vid)
        log.info("upload by %s: %s v%d (%d bytes), checking", user.name, name, n, len(data))
        return {"bot_id": bot_id, "name": name, "version": n, "status": "checking", "url": f"/bots/{bot_id}"}

    def retire(self, user: User, bot_id: int) -> None:
        bot = self.db.one("SELECT * FROM bots WHERE id = ?", bot_id)
        if bot is None:
            raise HTTPException(404, f"no bot {bot_id}")
        if not _may_see_source(user, bot):
            raise HTTPException(403, "only the bot's owner or the organiser can retire it")
        self.db.run("UPDATE bots SET retired = 1 WHERE id = ?", bot_id)


def _may_see_source(user: User | None, bot: Any) -> bool:
    return user is not None and (user.organiser or (bot["owner_id"] is not None and bot["owner_id"] == user.id))


# ---- request helpers ------------------------------------------------------------


def _side(request: Request) -> Ladderside:
    return request.app.state.side


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def current_user(request: Request) -> User | None:
    """The bearer token's user, else the session's; a bad bearer token is a 401."""
    side = _side(request)
    auth = request.headers.get("authorization", "")
    if auth:
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise HTTPException(401, "Authorization must be 'Bearer <token>'")
        user = accounts.user_for_token(side.db, token.strip())
        if user is None:
            raise HTTPException(401, "unknown API token; ask the organiser for one (arena serve-admin add-user)")
        request.state.bearer = True
        return user
    sid = request.cookies.get(SESSION_COOKIE)
    return accounts.user_for_session(side.db, sid) if sid else None


def _require_user(request: Request) -> User:
    user = current_user(request)
    if user is None:
        raise HTTPException(401, "log in or send 'Authorization: Bearer <token>'")
    return user


def _csrf_ok(request: Request, sent: str | None) -> bool:
    cookie = request.cookies.get(CSRF_COOKIE, "")
    return bool(cookie) and bool(sent) and secrets.compare_digest(cookie, str(sent))


async def _form(request: Request, limit: int) -> Any:
    """The request's form, its body read up to ``limit`` bytes (413 beyond)."""
    length = request.headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise HTTPException(400, "Content-Length is not a number")
        if int(length) > limit:
            raise HTTPException(413, f"the upload is larger than {limit} bytes; send one bot file under that size")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise HTTPException(413, f"the upload is larger than {limit} bytes; send one bot file under that size")
    request._body = bytes(body)  # what request.form() parses
    try:
        return await request.form(max_files=1, max_fields=10)
    except HTTPException:
        raise
    except Exception as exc:  # noqa: BLE001 - any parse failure of a hostile body is the client's
        raise HTTPException(400, f"the form could not be read ({type(exc).__name__}); send multipart/form-data") from None


# ---- pages ------------------------------------------------------------------------

_ENV = Environment(loader=PackageLoader("arena.serve", "templates"), autoescape=select_autoescape(["html"]))


def _page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    user = getattr(request.state, "user", None)
    if user is None and not getattr(request.state, "user_known", False):
        try:
            user = current_user(request)
        except HTTPException:
            user = None
    csrf = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(24)
    text = _ENV.get_template(template).render(user=user, csrf=csrf, ladder=_side(request).ladder,
                                              refresh_ms=int(_side(request).ladder.settings.refresh_s * 1000),
                                              **context)
    response = HTMLResponse(text, status_code=status)
    if not request.cookies.get(CSRF_COOKIE):
        response.set_cookie(CSRF_COOKIE, csrf, httponly=True, samesite="strict")
    return response


async def home(request: Request) -> Response:
    board = await run_in_threadpool(_side(request).leaderboard)
    return _page(request, "leaderboard.html", board=board)


async def matches_page(request: Request) -> Response:
    rows = await run_in_threadpool(_side(request).recent_matches, RECENT)
    return _page(request, "matches.html", matches=rows)


async def bot_page(request: Request) -> Response:
    user = current_user(request)
    doc = await run_in_threadpool(_side(request).bot_doc, _int(request.path_params["bot_id"]), user)
    return _page(request, "bot.html", bot=doc, mine="source" in (doc["versions"][0] if doc["versions"] else {}))


async def replay_page(request: Request) -> Response:
    from arena.report.replay_view import replay_html

    side = _side(request)
    mid = request.path_params["match_id"]
    with side.store._lock:
        row = side.store.conn.execute("SELECT players FROM matches WHERE match_id = ?", (mid,)).fetchone()
        if row is None:
            raise HTTPException(404, f"no match {mid[:100]!r}")
        if not side._deal_done(side.store.conn, mid, row[0]):
            raise HTTPException(403, "this deal is still being played; its replay is shown once every seat "
                                     "rotation of the deal is stored")
    record = await run_in_threadpool(side.store.get_record, mid)
    return HTMLResponse(replay_html(record))


async def source_page(request: Request) -> Response:
    side = _side(request)
    user = current_user(request)
    bot = side.db.one("SELECT * FROM bots WHERE id = ?", _int(request.path_params["bot_id"]))
    if bot is None:
        raise HTTPException(404, "no such bot")
    if user is None:
        raise HTTPException(401, "log in to see your bot's source")
    if not _may_see_source(user, bot):
        raise HTTPException(403, "a bot's source is shown to its owner and the organiser only")
    n = _int(request.query_params.get("version", "0") or "0")
    v = side.db.one("SELECT * FROM versions WHERE bot_id = ? AND (n = ? OR ? = 0) ORDER BY n DESC", bot["id"], n, n)
    if v is None:
        raise HTTPException(404, "no such version")
    return PlainTextResponse(Path(v["path"]).read_bytes().decode("utf-8", "replace"))


async def login_page(request: Request) -> Response:
    if request.method == "GET":
        return _page(request, "login.html")
    side = _side(request)
    if not side.login_limit.allow(_client(request)):
        return _page(request, "login.html", status=429, error="too many login attempts; wait a minute")
    form = await _form(request, 16 * 1024)
    if not _csrf_ok(request, form.get("csrf_token")):
        raise HTTPException(403, "the form's CSRF token is missing or stale; reload the page and try again")
    user = await run_in_threadpool(accounts.check_password, side.db, str(form.get("name", "")),
                                   str(form.get("password", "")))
    if user is None:
        return _page(request, "login.html", status=401, error="wrong name or password")
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(SESSION_COOKIE, accounts.new_session(side.db, user.id), httponly=True, samesite="strict",
                        max_age=14 * 86400)
    return response


async def logout(request: Request) -> Response:
    form = await _form(request, 16 * 1024)
    if not _csrf_ok(request, form.get("csrf_token")):
        raise HTTPException(403, "the form's CSRF token is missing or stale; reload the page and try again")
    sid = request.cookies.get(SESSION_COOKIE)
    if sid:
        accounts.end_session(_side(request).db, sid)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response


async def upload_page(request: Request) -> Response:
    user = current_user(request)
    if request.method == "GET":
        if user is None:
            return RedirectResponse("/login", status_code=303)
        return _page(request, "upload.html")
    try:
        doc = await _upload(request, user, form_post=True)
    except HTTPException as exc:
        if exc.status_code in (401,):
            raise
        return _page(request, "upload.html", status=exc.status_code, error=exc.detail)
    return RedirectResponse(doc["url"], status_code=303)


async def retire_page(request: Request) -> Response:
    user = _require_user(request)
    form = await _form(request, 16 * 1024)
    if not _csrf_ok(request, form.get("csrf_token")):
        raise HTTPException(403, "the form's CSRF token is missing or stale; reload the page and try again")
    bot_id = _int(request.path_params["bot_id"])
    _side(request).retire(user, bot_id)
    return RedirectResponse(f"/bots/{bot_id}", status_code=303)


# ---- the JSON API -----------------------------------------------------------------


async def api_leaderboard(request: Request) -> Response:
    return JSONResponse(await run_in_threadpool(_side(request).leaderboard))


async def api_matches(request: Request) -> Response:
    limit = min(max(_int(request.query_params.get("limit", str(RECENT))), 1), 500)
    bot = request.query_params.get("bot")
    if bot is not None and not SAFE_NAME.match(bot):
        raise HTTPException(400, f"bot must be a bot name ({SAFE_NAME_TEXT})")
    rows = await run_in_threadpool(_side(request).recent_matches, limit, bot)
    return JSONResponse({"format": API_FORMAT, "version": API_VERSION, "matches": rows})


async def api_bot(request: Request) -> Response:
    user = current_user(request)
    return JSONResponse(await run_in_threadpool(_side(request).bot_doc, _int(request.path_params["bot_id"]), user))


async def api_upload(request: Request) -> Response:
    user = current_user(request)
    doc = await _upload(request, user, form_post=False)
    return JSONResponse(doc, status_code=202)


async def api_retire(request: Request) -> Response:
    user = _require_user(request)
    if not getattr(request.state, "bearer", False) and not _csrf_ok(request, request.headers.get("x-csrf-token")):
        raise HTTPException(403, "send the X-CSRF-Token header (the arena_csrf cookie) or use a bearer token")
    bot_id = _int(request.path_params["bot_id"])
    _side(request).retire(user, bot_id)
    return JSONResponse({"id": bot_id, "retired": True})


async def _upload(request: Request, user: User | None, *, form_post: bool) -> dict[str, Any]:
    side = _side(request)
    if user is None:
        raise HTTPException(401, "log in or send 'Authorization: Bearer <token>' to upload a bot")
    if not side.upload_limit.allow(f"{_client(request)}/{user.id}"):
        raise HTTPException(429, "too many uploads; wait a minute")
    form = await _form(request, side.ladder.settings.upload_max_bytes + 16 * 1024)
    bearer = getattr(request.state, "bearer", False)
    sent = form.get("csrf_token") if form_post else (form.get("csrf_token") or request.headers.get("x-csrf-token"))
    if not bearer and not _csrf_ok(request, sent):
        raise HTTPException(403, "the form's CSRF token is missing or stale; reload the page and try again")
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        raise HTTPException(400, "no file: send the bot as the multipart field 'file'")
    data = await upload.read(side.ladder.settings.upload_max_bytes + 1)
    if len(data) > side.ladder.settings.upload_max_bytes:
        raise HTTPException(413, f"the bot file is larger than {side.ladder.settings.upload_max_bytes} bytes")
    name = form.get("name")
    return await run_in_threadpool(side.accept_upload, user, upload.filename or "", data,
                                   name if isinstance(name, str) and name.strip() else None)


def _int(text: str) -> int:
    if not text.isdigit() or len(text) > 12:
        raise HTTPException(400, f"{text[:30]!r} is not a number")
    return int(text)


# ---- errors -----------------------------------------------------------------------


async def _http_error(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 400)
    detail = str(getattr(exc, "detail", "") or "bad request")
    headers = {"Retry-After": "60"} if status == 429 else None
    if request.url.path.startswith("/api/") or "text/html" not in request.headers.get("accept", ""):
        return JSONResponse({"error": detail, "status": status}, status_code=status, headers=headers)
    return _page(request, "error.html", status=status, error=detail, code=status)


async def _server_error(request: Request, exc: Exception) -> Response:
    log.error("%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, exc, exc_info=exc)
    return JSONResponse({"error": "internal error; the organiser finds it in the server log", "status": 500},
                        status_code=500)


def create_app(side: Ladderside) -> Starlette:
    from starlette.routing import Router  # noqa: F401 - keeps the import explicit for readers

    routes = [
        Route("/", home),
        Route("/matches", matches_page),
        Route("/matches/{match_id:path}/replay", replay_page),
        Route("/bots/{bot_id}", bot_page),
        Route("/bots/{bot_id}/source", source_page),
        Route("/bots/{bot_id}/retire", retire_page, methods=["POST"]),
        Route("/login", login_page, methods=["GET", "POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/upload", upload_page, methods=["GET", "POST"]),
        Route("/api/leaderboard", api_leaderboard),
        Route("/api/matches", api_matches),
        Route("/api/bots", api_upload, methods=["POST"]),
        Route("/api/bots/{bot_id}", api_bot),
        Route("/api/bots/{bot_id}/retire", api_retire, methods=["POST"]),
        Mount("/static", app=StaticFiles(packages=[("arena.serve", "static")]), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_error, Exception: _server_error})
    app.state.side = side
    return app
