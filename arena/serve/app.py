"""The ladder's web face: Starlette pages (Jinja2) and the JSON API (docs/ladder.md).

Auth: a session cookie (after the login form) or ``Authorization: Bearer <token>``
(scripts). Every form POST carries a CSRF token equal to the ``arena_csrf`` cookie
(double submit; cookies are SameSite=Strict); a script with a bearer token needs none.
Every bad request gets a 4xx with a one-line reason; an unexpected error is logged and
answered 500 without a traceback.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import math
import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from arena.serve import accounts
from arena.serve.accounts import User
from arena.serve.ladder import MAX_UPLOAD_BYTES
from arena.serve.side import Ladderside, _may_see_source
from arena.tournament.config import SAFE_NAME, SAFE_NAME_TEXT

__all__ = ["CSRF_COOKIE", "Ladderside", "SESSION_COOKIE", "create_app"]

log = logging.getLogger("arena.serve")

SESSION_COOKIE = "arena_session"
CSRF_COOKIE = "arena_csrf"
RECENT = 50
READS = ("GET", "HEAD")  # Starlette answers HEAD with a GET route: it must never reach a POST branch


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
        if user.disabled:
            raise HTTPException(403, f"the account {user.name} is disabled by the ladder's organiser; ask them")
        request.state.bearer = True
        return user
    sid = request.cookies.get(SESSION_COOKIE)
    return accounts.user_for_session(side.db, sid) if sid else None


def _require_user(request: Request) -> User:
    user = current_user(request)
    if user is None:
        raise HTTPException(401, "log in or send 'Authorization: Bearer <token>'")
    return user


def _csrf_expected(request: Request) -> str:
    """The token this visitor's forms carry. With a session: an HMAC of its id under the
    server's key, so a cookie planted by a neighbour on the same host (another port) cannot
    forge it, and a login changes it. Before one (the login and invite forms): the
    ``arena_csrf`` cookie (double submit). '' when there is neither."""
    sid = request.cookies.get(SESSION_COOKIE)
    if sid:
        return hmac.new(_side(request).csrf_key, sid.encode(), hashlib.sha256).hexdigest()
    return request.cookies.get(CSRF_COOKIE, "")


def _csrf_ok(request: Request, sent: str | None) -> bool:
    expected = _csrf_expected(request)
    return bool(expected) and bool(sent) and secrets.compare_digest(expected, str(sent))


FORM_KEY = "arena.form"


class CloseForms:
    """Closes the form a request parsed when the request ends, however its handler ended: an
    upload's spooled file is released then, not whenever the garbage collector finds it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        finally:
            form = scope.pop(FORM_KEY, None)
            if form is not None:
                await form.close()


FORM_MAX_BYTES = 16 * 1024  # a login, invite, logout or retire form


FIELDS_KEY = "arena.fields"  # the text fields read from a form refused as too large (_fields_before)


async def _form(request: Request, limit: int = FORM_MAX_BYTES, too_large: str = "", keep_fields: bool = False) -> Any:
    """The request's form, its body read up to ``limit`` bytes (413 beyond, saying ``too_large``).
    With ``keep_fields``, a form refused as too large still has the text fields sent before its
    file read from the body's first ``FORM_MAX_BYTES`` (``request.scope[FIELDS_KEY]``), so that
    its page comes back with what was typed; the rest of the body is never read."""
    too_large = too_large or f"the form is larger than {limit} bytes; send only the form's own fields"
    length = request.headers.get("content-length")
    if length is not None:
        if not (length.isascii() and length.isdigit()):
            raise HTTPException(400, "Content-Length is not a number")
    body = bytearray()
    seconds = _side(request).ladder.settings.body_timeout_s
    try:
        async with asyncio.timeout(seconds):
            if length is not None and int(length) > limit:
                if keep_fields:
                    async for chunk in request.stream():
                        body += chunk
                        if len(body) >= FORM_MAX_BYTES:
                            break
                    request.scope[FIELDS_KEY] = _fields_before(request, bytes(body))
                raise HTTPException(413, too_large)
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:
                    if keep_fields:
                        request.scope[FIELDS_KEY] = _fields_before(request, bytes(body))
                    raise HTTPException(413, too_large)
    except TimeoutError:
        raise HTTPException(
            408,
            f"the request's body took longer than {seconds:g} s to arrive; send it again",
            headers={"Connection": "close"},  # the rest of the body may still be on its way
        ) from None
    request._body = bytes(body)  # what request.form() parses
    try:
        form = await request.form(max_files=1, max_fields=10)
        request.scope[FORM_KEY] = form  # closed when the request ends (CloseForms)
        return form
    except HTTPException:
        raise
    except Exception as exc:  # noqa: BLE001 - any parse failure of a hostile body is the client's
        raise HTTPException(
            400, f"the form could not be read ({type(exc).__name__}); send multipart/form-data"
        ) from None


def _fields_before(request: Request, body: bytes) -> dict[str, str]:
    """The text fields of a multipart body that arrive whole in its first ``FORM_MAX_BYTES``: what
    a visitor typed above a form's file input (a browser sends the fields in the form's order)."""
    from python_multipart import FormParser
    from python_multipart.multipart import parse_options_header

    kind, options = parse_options_header(request.headers.get("content-type", ""))
    boundary = options.get(b"boundary")
    if kind != b"multipart/form-data" or not boundary:
        return {}
    fields: dict[str, str] = {}

    def on_field(field: Any) -> None:
        if field.field_name and len(fields) < 10:
            fields[field.field_name.decode("utf-8", "replace")] = (field.value or b"").decode("utf-8", "replace")

    try:
        FormParser("multipart/form-data", on_field, lambda _file: None, boundary=boundary).write(body[:FORM_MAX_BYTES])
    except Exception:  # noqa: BLE001 - a malformed body keeps what was read before it went wrong
        pass
    return fields


# ---- pages ------------------------------------------------------------------------

_ENV = Environment(loader=PackageLoader("arena.serve", "templates"), autoescape=select_autoescape(["html"]))
_ENV.filters["utc"] = lambda t: time.strftime("%Y-%m-%d %H:%M", time.gmtime(t))  # Unix seconds, as UTC
_ENV.filters["size"] = lambda n: _size(n)  # bytes, as a person reads them


def _page(request: Request, template: str, status: int = 200, cache_key: Any = None, **context: Any) -> HTMLResponse:
    """A page of ``template``. With ``cache_key``, a visitor who is not logged in gets the page
    rendered once per key (it holds no form, so no CSRF token): the pages everyone polls."""
    anonymous = SESSION_COOKIE not in request.cookies and "authorization" not in request.headers
    csrf = _csrf_expected(request) or secrets.token_urlsafe(24)
    side = _side(request)
    cached = side.pages.get(template) if cache_key is not None and anonymous else None
    if cached is not None and cached[0] == cache_key:
        text = cached[1]
    else:
        user = None if anonymous else _user_or_none(request)
        text = _ENV.get_template(template).render(
            user=user,
            csrf="" if anonymous and cache_key is not None else csrf,
            ladder=side.ladder,
            refresh_ms=int(side.ladder.settings.refresh_s * 1000),
            **context,
        )
        if cache_key is not None and anonymous:
            side.pages[template] = (cache_key, text)
    response = HTMLResponse(text, status_code=status)
    if SESSION_COOKIE not in request.cookies and not request.cookies.get(CSRF_COOKIE):
        response.set_cookie(CSRF_COOKIE, csrf, httponly=True, samesite="strict")
    return response


def _user_or_none(request: Request) -> User | None:
    try:
        return current_user(request)
    except HTTPException:
        return None


# The pages and API reads everyone polls run on the event loop itself: each is a few cached
# bytes or one short read of a WAL database (never waiting for a writer), cheaper than the
# hand-off to a thread. Uploads, checks and replays, which may take longer, go to threads.


async def home(request: Request) -> Response:
    side = _side(request)
    board = side.leaderboard()
    return _page(request, "leaderboard.html", cache_key=side.board_key, board=board)


async def matches_page(request: Request) -> Response:
    """The recent matches, or with ``?bot=NAME`` those of one bot's versions (its bot page links here)."""
    side = _side(request)
    bot = request.query_params.get("bot") or None
    if bot is not None and not SAFE_NAME.match(bot):
        raise HTTPException(400, f"bot must be a bot name ({SAFE_NAME_TEXT})")
    rows = side.recent_matches(RECENT, bot)
    ids = {r["name"]: r["id"] for r in side.db.all("SELECT id, name FROM bots")}  # a seat's page: its bot's
    return _page(
        request,
        "matches.html",
        cache_key=(bot, side.recent[(RECENT, bot)][1], len(ids)),
        matches=rows,
        bot=bot,
        bot_ids={name: ids.get(name.rpartition(".v")[0]) for m in rows for name in m["bots"]},
    )


async def bot_page(request: Request) -> Response:
    user = current_user(request)
    doc = await run_in_threadpool(_side(request).bot_doc, _int(request.path_params["bot_id"]), user)
    return _page(
        request,
        "bot.html",
        bot=doc,
        mine="source" in (doc["versions"][0] if doc["versions"] else {}),
        plots=_rating_plots(doc["history"]),
        bundled=_side(request).db.one("SELECT owner_id FROM bots WHERE id = ?", doc["id"])["owner_id"] is None,
        **_version_states(doc),
    )


def _version_states(doc: dict[str, Any]) -> dict[str, Any]:
    """What the bot page tells an entrant about its versions: which one plays (the latest that
    passed its check; None when retired or none passed), which are being checked, and the
    latest one if its check failed after the one playing."""
    versions = doc["versions"]
    passed = [v["version"] for v in versions if v["status"] == "ok"]
    playing = passed[-1] if passed and not doc["retired"] and not doc["owner_disabled"] else None
    last = versions[-1] if versions else None
    return {
        "playing": playing,
        "checking": [v["version"] for v in versions if v["status"] == "checking"],
        "failed": last["version"] if last and last["status"] == "failed" else None,
    }


def _rating_plots(history: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """Each version's rating plot, all on one μ scale: the same height is the same μ in every
    plot, so a bot's versions compare at a glance ('is my new version better?')."""
    shown = [h for h in history if h["points"]]
    if not shown:
        return []
    lo = min(p[1] - p[2] for h in shown for p in h["points"])
    hi = max(p[1] + p[2] for h in shown for p in h["points"])
    return [(h["version"], rating_plot(h["points"], lo=lo, hi=hi)) for h in shown]


def rating_plot(
    points: list[list[float]],
    width: int = 600,
    height: int = 160,
    lo: float | None = None,
    hi: float | None = None,
) -> dict[str, Any]:
    """An inline SVG plot of a rating history (drawn here: no script, no CDN): μ as a line,
    μ ± σ as a band; x is the match number in play order; y from ``lo`` to ``hi`` (default:
    this history's own range)."""
    xs = [p[0] for p in points]
    lo = min(p[1] - p[2] for p in points) if lo is None else lo
    hi = max(p[1] + p[2] for p in points) if hi is None else hi
    x0, xspan = xs[0], max(1, xs[-1] - xs[0])
    yspan = max(1e-9, hi - lo)

    def at(x: float, y: float) -> str:
        return f"{(x - x0) / xspan * (width - 10) + 5:.1f},{(hi - y) / yspan * (height - 10) + 5:.1f}"

    band = [at(p[0], p[1] + p[2]) for p in points] + [at(p[0], p[1] - p[2]) for p in reversed(points)]
    return {
        "width": width,
        "height": height,
        "line": " ".join(at(p[0], p[1]) for p in points),
        "band": " ".join(band),
        "hi": round(hi, 1),
        "lo": round(lo, 1),
        "first": int(xs[0]),
        "last": int(xs[-1]),
        "mu": points[-1][1],
        "sigma": points[-1][2],
    }


async def replay_page(request: Request) -> Response:
    from arena.report.replay_view import replay_html

    side = _side(request)
    mid = request.path_params["match_id"]
    allowed = await run_in_threadpool(side.replay_allowed, mid)
    if allowed is None:
        raise HTTPException(404, f"no match {mid[:100]!r}")
    if not allowed:
        raise HTTPException(
            403, "this deal is still being played; its replay is shown once every seat rotation of the deal is stored"
        )
    record = await run_in_threadpool(side.public_record, mid)
    return HTMLResponse(replay_html(record, links=_replay_links(side, record)))


def _replay_links(side: Ladderside, record: dict[str, Any]) -> list[tuple[str, str]]:
    """The replay's way back: the leaderboard, the matches, the page of each bot that played."""
    links = [("/", f"{side.ladder.name} ladder"), ("/matches", "matches")]
    for seat in sorted(record.get("bots") or (), key=lambda b: b.get("seat", 0)):
        name = str(seat.get("name") or "")
        bot = side.db.one("SELECT id, name FROM bots WHERE name = ?", name.rpartition(".v")[0])
        if bot is not None:
            links.append((f"/bots/{bot['id']}", name))
    return links


async def source_page(request: Request) -> Response:
    side = _side(request)
    v = _owners_version(request, "see your bot's source", "a bot's source")
    return PlainTextResponse(await run_in_threadpool(side.source_text, Path(v["path"])))


def _owners_version(request: Request, log_in_to: str, what: str) -> Any:
    """The version row ``?version=N`` (0 or none: the latest) of the bot in the path, for its
    owner and the organiser only: 404, 401 or 403 otherwise, each saying why."""
    side = _side(request)
    user = current_user(request)
    bot = side.db.one("SELECT * FROM bots WHERE id = ?", _int(request.path_params["bot_id"]))
    if bot is None:
        raise HTTPException(404, "no such bot")
    if user is None:
        raise HTTPException(401, f"log in to {log_in_to}")
    if not _may_see_source(user, bot):
        raise HTTPException(403, f"{what} is shown to its owner and the organiser only")
    n = _int(request.query_params.get("version", "0") or "0", "version", 0)  # 0: the latest
    v = side.db.one("SELECT * FROM versions WHERE bot_id = ? AND (n = ? OR ? = 0) ORDER BY n DESC", bot["id"], n, n)
    if v is None:
        raise HTTPException(404, "no such version")
    return {**dict(v), "bot_name": bot["name"]}


def _local_path(value: Any) -> str:
    """``value`` if it is a path of this site ('/upload'), else '': a login's way back never
    leads to another site ('//evil.example', 'https://...', '/\\evil.example')."""
    if not isinstance(value, str) or len(value) > 200 or not value.startswith("/") or value.startswith("//"):
        return ""
    return "" if "\\" in value or not value.isprintable() else value


async def log_page(request: Request) -> Response:
    """A version's stderr log (botkit's log, on_result lines, tracebacks): its owner's and the
    organiser's only, as its source; the end of each worker's file."""
    side = _side(request)
    v = _owners_version(request, "read your bot's log", "a bot's log")
    return PlainTextResponse(await run_in_threadpool(side.log_text, f"{v['bot_name']}.v{v['n']}"))


async def login_page(request: Request) -> Response:
    if request.method in READS:
        return _page(request, "login.html", next=_local_path(request.query_params.get("next")))
    side = _side(request)
    if not side.login_limit.allow(_client(request)):
        return _form_error(
            request, "login.html", 429, f"too many login attempts; wait {_wait(side.login_limit)}", side.login_limit
        )
    form = await _form(request)
    if not _csrf_ok(request, form.get("csrf_token")):
        raise HTTPException(403, "the form's CSRF token is missing or stale; reload the page and try again")
    user = await run_in_threadpool(
        accounts.check_password, side.db, str(form.get("name", "")), str(form.get("password", ""))
    )
    back = _local_path(form.get("next"))
    if user is None:
        return _form_error(request, "login.html", 401, "wrong name or password", name=_typed(form, "name"), next=back)
    if user.disabled:  # said only to whoever knows its password
        error = f"the account {user.name} is disabled by the ladder's organiser; ask them"
        return _form_error(request, "login.html", 403, error, name=_typed(form, "name"), next=back)
    response = RedirectResponse(back or "/", status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        accounts.new_session(side.db, user.id),
        httponly=True,
        samesite="strict",
        max_age=accounts.SESSION_MAX_AGE_S,
    )
    return response


async def invite_page(request: Request) -> Response:
    """An invite link: choose a name and password (once); then logged in."""
    from arena.errors import ArenaError

    side = _side(request)
    token = request.path_params["token"]
    if len(token) > 100 or not await run_in_threadpool(accounts.invite_valid, side.db, token):
        raise HTTPException(
            404, "this invite link was used already, has expired or never existed; ask the organiser for another"
        )
    if request.method in READS:
        return _page(request, "invite.html", token=token)
    if not side.login_limit.allow(_client(request)):
        return _form_error(
            request,
            "invite.html",
            429,
            f"too many attempts; wait {_wait(side.login_limit)}",
            side.login_limit,
            token=token,
        )
    form = await _form(request)
    if not _csrf_ok(request, form.get("csrf_token")):
        raise HTTPException(403, "the form's CSRF token is missing or stale; reload the page and try again")
    try:
        user = await run_in_threadpool(
            accounts.redeem_invite, side.db, token, str(form.get("name", "")).strip(), str(form.get("password", ""))
        )
    except ArenaError as exc:
        return _form_error(request, "invite.html", 400, str(exc), token=token, name=_typed(form, "name"))
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        accounts.new_session(side.db, user.id),
        httponly=True,
        samesite="strict",
        max_age=accounts.SESSION_MAX_AGE_S,
    )
    return response


async def logout(request: Request) -> Response:
    form = await _form(request)
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
    if request.method in READS:
        if user is None:
            return RedirectResponse("/login?next=/upload", status_code=303)
        return _page(request, "upload.html")
    try:
        doc = await _upload(request, user, form_post=True)
    except HTTPException as exc:
        if exc.status_code in (401,):
            raise
        # parsed unless refused before its body was read; refused as too large, the fields sent before the file
        form = request.scope.get(FORM_KEY) or request.scope.get(FIELDS_KEY)
        return _form_error(
            request,
            "upload.html",
            exc.status_code,
            exc.detail,
            headers=exc.headers,
            name=_typed(form, "name") if form is not None else "",
        )
    return RedirectResponse(doc["url"], status_code=303)


async def retire_page(request: Request) -> Response:
    user = _require_user(request)
    form = await _form(request)
    if not _csrf_ok(request, form.get("csrf_token")):
        raise HTTPException(403, "the form's CSRF token is missing or stale; reload the page and try again")
    bot_id = _int(request.path_params["bot_id"])
    _side(request).retire(user, bot_id)
    return RedirectResponse(f"/bots/{bot_id}", status_code=303)


def _typed(form: Any, field: str) -> str:
    """What the visitor typed in a text field of ``form``, for its page shown again after a
    refusal (a form keeps its values; a browser never refills a password or a file)."""
    value = form.get(field)
    return value[:200] if isinstance(value, str) else ""


async def favicon(request: Request) -> Response:
    """No icon: every browser asks, and a 404 is an error in its console."""
    return Response(status_code=204)


# ---- the JSON API -----------------------------------------------------------------


async def api_leaderboard(request: Request) -> Response:
    return Response(_side(request).leaderboard_json(), media_type="application/json")


async def api_matches(request: Request) -> Response:
    limit = _int(request.query_params.get("limit", str(RECENT)), "limit", 1, 500)
    bot = request.query_params.get("bot")
    if bot is not None and not SAFE_NAME.match(bot):
        raise HTTPException(400, f"bot must be a bot name ({SAFE_NAME_TEXT})")
    return Response(_side(request).recent_matches_json(limit, bot), media_type="application/json")


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
        raise HTTPException(
            403, "send the X-CSRF-Token header (the csrf_token of this session's page forms) or use a bearer token"
        )
    bot_id = _int(request.path_params["bot_id"])
    _side(request).retire(user, bot_id)
    return JSONResponse({"id": bot_id, "retired": True})


async def _upload(request: Request, user: User | None, *, form_post: bool) -> dict[str, Any]:
    side = _side(request)
    if user is None:
        raise HTTPException(401, "log in or send 'Authorization: Bearer <token>' to upload a bot")
    if not side.upload_limit.allow(f"{_client(request)}/{user.id}"):
        raise HTTPException(
            429, f"too many uploads; wait {_wait(side.upload_limit)}", headers=_retry_after(side.upload_limit)
        )
    most = side.ladder.settings.upload_max_bytes
    too_large = _too_large(most)
    form = await _form(  # the bot file plus room for the form's other fields
        request, most + FORM_MAX_BYTES, too_large, keep_fields=form_post
    )
    bearer = getattr(request.state, "bearer", False)
    sent = form.get("csrf_token") if form_post else (form.get("csrf_token") or request.headers.get("x-csrf-token"))
    if not bearer and not _csrf_ok(request, sent):
        raise HTTPException(403, "the form's CSRF token is missing or stale; reload the page and try again")
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        raise HTTPException(400, "no file: send the bot as the multipart field 'file'")
    data = await upload.read(most + 1)
    if len(data) > most:
        raise HTTPException(413, too_large)
    name = form.get("name")
    return await run_in_threadpool(
        side.accept_upload, user, upload.filename or "", data, name if isinstance(name, str) and name.strip() else None
    )


def _too_large(most: int) -> str:
    """The 413's one line: the limit, and who can raise it while it is below the most a ladder allows."""
    line = f"the bot file is larger than {most} bytes ({_size(most)}), this ladder's limit; send a smaller file"
    if most < MAX_UPLOAD_BYTES:
        line += f", or ask the ladder's organiser to raise ladder.upload_max_bytes (at most {_size(MAX_UPLOAD_BYTES)})"
    return line


def _size(n: int) -> str:
    """A number of bytes as a person reads it: '256 KiB', '1.5 MiB', '900 bytes'."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} bytes"


MAX_ID = 10**12 - 1  # ids and counts from a URL: longer digit strings are never parsed


def _int(text: str, what: str = "bot id", low: int = 1, high: int = MAX_ID) -> int:
    """A whole number from a URL in ``low``..``high``, else a 400 saying which: ASCII digits only
    (str.isdigit also takes '²' and '５'), a minus sign only to say the number is too small."""
    digits = text[1:] if text.startswith("-") else text
    if not (digits.isascii() and digits.isdigit()):
        raise HTTPException(400, f"{what} {text[:30]!r} is not a whole number (digits 0-9); give {low} to {high}")
    if len(digits) > 30 or len(digits.lstrip("0")) > len(str(high)) or not low <= int(text) <= high:
        raise HTTPException(400, f"{what} {text[:30]} is out of range; give {low} to {high}")
    return int(text)


# ---- errors -----------------------------------------------------------------------


def _wants_json(request: Request) -> bool:
    """Errors go to scripts as JSON, to browsers as a page."""
    return request.url.path.startswith("/api/") or "text/html" not in request.headers.get("accept", "")


def _retry_s(limit: accounts.RateLimit) -> int:
    """A refused client gets its next allowance within one refill interval."""
    return max(1, math.ceil(limit.every_s))


def _retry_after(limit: accounts.RateLimit) -> dict[str, str]:
    return {"Retry-After": str(_retry_s(limit))}


def _wait(limit: accounts.RateLimit) -> str:
    """What a refusal tells a person: the interval of its Retry-After header."""
    return f"{_retry_s(limit)} seconds"


def _form_error(
    request: Request,
    template: str,
    status: int,
    error: str,
    limit: accounts.RateLimit | None = None,
    headers: Mapping[str, str] | None = None,
    **context: Any,
) -> Response:
    """A form refused: its page again with the reason for a browser, the JSON error for a script."""
    headers = dict(headers or {}, **(_retry_after(limit) if limit is not None else {}))
    if _wants_json(request):
        return JSONResponse({"error": error, "status": status}, status_code=status, headers=headers)
    response = _page(request, template, status=status, error=error, **context)
    response.headers.update(headers)
    return response


async def _http_error(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 400)
    detail = str(getattr(exc, "detail", "") or "bad request")
    headers = dict(getattr(exc, "headers", None) or {})  # 405's Allow, 429's Retry-After
    if status == 429:
        headers.setdefault("Retry-After", "60")
    if _wants_json(request):
        return JSONResponse({"error": detail, "status": status}, status_code=status, headers=headers)
    response = _page(request, "error.html", status=status, error=detail, code=status)
    response.headers.update(headers)
    return response


async def _server_error(request: Request, exc: Exception) -> Response:
    log.error("%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, exc, exc_info=exc)
    error = "internal error; the organiser finds it in the server log"
    if not _wants_json(request):  # a browser gets the site's page, as for a 4xx
        try:
            return _page(request, "error.html", status=500, error=error, code=500)
        except Exception:  # noqa: BLE001 - the page itself failed: the plain answer below
            log.exception("the error page for %s failed", request.url.path)
    return JSONResponse({"error": error, "status": 500}, status_code=500)


def create_app(side: Ladderside) -> Starlette:
    routes = [
        Route("/", home),
        Route("/matches", matches_page),
        Route("/matches/{match_id:path}/replay", replay_page),
        Route("/bots/{bot_id}", bot_page),
        Route("/bots/{bot_id}/source", source_page),
        Route("/bots/{bot_id}/log", log_page),
        Route("/bots/{bot_id}/retire", retire_page, methods=["POST"]),
        Route("/login", login_page, methods=["GET", "POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/invite/{token}", invite_page, methods=["GET", "POST"]),
        Route("/upload", upload_page, methods=["GET", "POST"]),
        Route("/favicon.ico", favicon),
        Route("/api/leaderboard", api_leaderboard),
        Route("/api/matches", api_matches),
        Route("/api/bots", api_upload, methods=["POST"]),
        Route("/api/bots/{bot_id}", api_bot),
        Route("/api/bots/{bot_id}/retire", api_retire, methods=["POST"]),
        Mount("/static", app=StaticFiles(packages=[("arena.serve", "static")]), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(CloseForms)],
        exception_handlers={HTTPException: _http_error, Exception: _server_error},
    )
    app.state.side = side
    return app
