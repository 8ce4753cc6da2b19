"""Accounts: argon2 password hashes, API tokens and session ids (stored as SHA-256
only, so a copy of the database gives no working credential), and rate limits."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from arena.errors import ArenaError
from arena.serve.db import LadderDB, reported
from arena.tournament.config import SAFE_NAME, SAFE_NAME_TEXT

_HASHER = PasswordHasher()
MIN_PASSWORD = 8
MAX_STDIN_PASSWORD = 4096  # bytes; the login form's whole body is 16 KiB (app.FORM_MAX_BYTES)


@dataclass(frozen=True)
class User:
    id: int
    name: str
    organiser: bool
    disabled: bool = False  # by the organiser (serve-admin users --disable): no login, no upload, its bots idle


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def add_user(data: Path, name: str, password: str, *, organiser: bool = False) -> str:
    """Create an account; returns its first API token (shown once). Raises ArenaError."""
    if not SAFE_NAME.match(name):
        raise ArenaError(f"user name {name!r} is not allowed; use {SAFE_NAME_TEXT}")
    if len(password) < MIN_PASSWORD:
        raise ArenaError(f"the password is shorter than {MIN_PASSWORD} characters; choose a longer one")
    with reported(data):
        db = LadderDB(data)
        taken = db.one("SELECT name FROM users WHERE name = ? COLLATE NOCASE", name)
        if taken:
            raise ArenaError(f"user {taken['name']!r} exists already in {data}; choose another name")
        uid = db.run(
            "INSERT INTO users (name, pw_hash, organiser, created) VALUES (?, ?, ?, ?)",
            name,
            _HASHER.hash(password),
            int(organiser),
            time.time(),
        )
        return new_token(db, uid)


def add_user_line(data: Path, name: str, password: Callable[[], str], organiser: bool = False) -> str:
    """`serve-admin add-user`: the folder made (one line if it cannot be) before ``password()`` is
    asked for, then the account; the line it prints, with the API token (shown once)."""
    from arena.serve.db import data_folder

    data_folder(data)
    token = add_user(data, name, password(), organiser=organiser)
    return f"user {name} added; API token (shown once): {token}"


def reset_line(data: Path, name: str, password: Callable[[], str]) -> str:
    """`serve-admin reset`: the folder and the name checked before ``password()`` is asked for, then
    ``reset_user``; the line it prints, with the new API token (shown once)."""
    shown, token = reset_user(existing_ladder(data, name), name, password())
    return f"user {shown}: new password set, logged out, old API tokens revoked; API token (shown once): {token}"


def reset_user(data: Path, name: str, password: str) -> tuple[str, str]:
    """A lost password or API token: give the account ``name`` (any case) a new password, end
    its sessions, revoke every API token it has and return (its name, a new token, shown once).
    Also what to do with an account someone else may hold. Raises ArenaError."""
    if len(password) < MIN_PASSWORD:
        raise ArenaError(f"the password is shorter than {MIN_PASSWORD} characters; choose a longer one")
    with reported(data):
        db = LadderDB(data)
        row = _known_user(db, data, name)
        db.run("UPDATE users SET pw_hash = ? WHERE id = ?", _HASHER.hash(password), row["id"])
        db.run("DELETE FROM tokens WHERE user_id = ?", row["id"])
        db.run("DELETE FROM sessions WHERE user_id = ?", row["id"])
        return row["name"], new_token(db, row["id"])


def _known_user(db: LadderDB, data: Path, name: str) -> Any:
    """The account ``name`` (any case), or an ArenaError naming the users there are."""
    row = _named(db, name)
    if row is None:
        names = [r["name"] for r in db.all("SELECT name FROM users ORDER BY name COLLATE NOCASE LIMIT 21")]
        known = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "") if names else "none yet"
        raise ArenaError(f"--data {data}: no user {name!r}; its users: {known}")
    return row


def existing_ladder(data: Path, user: str | None = None) -> Path:
    """A data folder that holds a ladder's accounts already (reading or resetting one makes none),
    and with ``user``, that account: checked before a password is asked for."""
    if not (Path(data) / "ladder.sqlite").is_file():
        raise ArenaError(f"--data {data}: no ladder here (no ladder.sqlite); give the folder `arena serve --data` uses")
    if user is not None:
        with reported(data):
            _known_user(LadderDB(data), data, user)
    return Path(data)


def admin_password(stdin: TextIO | None, prompt: Callable[[], str]) -> str:
    """`serve-admin add-user`'s password: the first line of ``stdin`` (--password-stdin), else
    ``prompt()``, which needs a terminal (getpass would read stdin with a warning, then stop)."""
    if stdin is not None:
        line = stdin.buffer.readline(MAX_STDIN_PASSWORD + 1)  # bounded: stdin may be /dev/zero
        if len(line.rstrip(b"\n")) > MAX_STDIN_PASSWORD:
            raise ArenaError(
                f"--password-stdin: the first line is longer than {MAX_STDIN_PASSWORD} bytes; give the password "
                f"alone on the first line, at most {MAX_STDIN_PASSWORD} bytes"
            )
        try:  # strict UTF-8: other bytes could never be typed into the login form
            return line.decode("utf-8").rstrip("\n")
        except UnicodeDecodeError:
            raise ArenaError(
                "--password-stdin: the password is not UTF-8 text; give it in UTF-8, as the login form sends it"
            ) from None
    try:
        open("/dev/tty", "rb").close()  # where getpass asks
    except OSError:
        raise ArenaError(
            "no terminal to ask for the password on; give it on standard input with --password-stdin"
        ) from None
    return prompt()


def users_report(data: Path, disable: str | None = None, enable: str | None = None) -> str:
    """`serve-admin users`: disable or enable an account (``disable``/``enable``: its name, any
    case), then list every account, one a line. A disabled account cannot log in (its sessions
    end), its API tokens are refused, and its bots are dealt no new deal set and leave the
    leaderboard; its matches, replays and bot pages stay. Enabling it undoes that (its tokens
    work again). The server need not stop: it reads the accounts at every request."""
    if disable is not None and enable is not None:
        raise ArenaError("give --disable or --enable, not both")
    existing_ladder(data)
    said = ""
    with reported(data):
        db = LadderDB(data)
        if disable is not None or enable is not None:
            row = _known_user(db, data, str(disable if disable is not None else enable))
            db.run("UPDATE users SET disabled = ? WHERE id = ?", int(disable is not None), row["id"])
            if disable is not None:
                db.run("DELETE FROM sessions WHERE user_id = ?", row["id"])
            said = f"user {row['name']}: {'disabled' if disable is not None else 'enabled'}\n"
        rows = db.all(
            "SELECT u.name, u.organiser, u.disabled, u.created,"
            " (SELECT COUNT(*) FROM bots b WHERE b.owner_id = u.id AND NOT b.retired) AS bots,"
            " (SELECT COUNT(*) FROM bots b WHERE b.owner_id = u.id) AS all_bots"
            " FROM users u ORDER BY u.name COLLATE NOCASE"
        )
    if not rows:
        return said + "no users yet (arena serve-admin add-user, or invite)"
    width = max(4, *(len(r["name"]) for r in rows))
    lines = [f"{'name':<{width}}  {'role':<9}  {'state':<8}  {'bots':>4}  joined (UTC)"]
    for r in rows:
        bots = f"{r['bots']}/{r['all_bots']}"
        role, state = ("organiser" if r["organiser"] else "entrant"), ("disabled" if r["disabled"] else "active")
        joined = time.strftime("%Y-%m-%d %H:%M", time.gmtime(r["created"]))
        lines.append(f"{r['name']:<{width}}  {role:<9}  {state:<8}  {bots:>4}  {joined}")
    return said + "\n".join(lines) + "\n(bots: not retired/all)"


INVITE_DAYS = 14


def invite(data: Path, url: str, *, organiser: bool = False) -> str:
    """`serve-admin invite`: a new invite's link; a bad ``url`` or a folder that cannot be made is
    refused before any invite is made."""
    from arena.serve.db import data_folder

    invite_link(url, "")
    data_folder(data)
    return invite_link(url, new_invite(data, organiser=organiser))


def new_invite(data: Path, *, organiser: bool = False) -> str:
    """A one-time invite token (only its SHA-256 is stored): its link lets one person choose
    a name and password; valid for ``INVITE_DAYS`` days."""
    token = secrets.token_urlsafe(24)
    with reported(data):
        LadderDB(data).run(
            "INSERT INTO invites (hash, organiser, created) VALUES (?, ?, ?)", _sha(token), int(organiser), time.time()
        )
    return token


def invite_link(url: str, token: str) -> str:
    """The link an invite is sent as; ``url`` is the ladder's address as entrants see it."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise ArenaError(f"--url {url[:80]!r}: give the ladder's http(s) address, e.g. https://ladder.example.org")
    return f"{url.rstrip('/')}/invite/{token}"


def invite_valid(db: LadderDB, token: str) -> bool:
    return (
        db.one(
            "SELECT 1 FROM invites WHERE hash = ? AND used_by IS NULL AND created > ?",
            _sha(token),
            time.time() - INVITE_DAYS * 86400,
        )
        is not None
    )


def redeem_invite(db: LadderDB, token: str, name: str, password: str) -> User:
    """Create the account an invite allows (once); raises ArenaError with the reason."""
    if not SAFE_NAME.match(name):
        raise ArenaError(f"user name {name[:70]!r} is not allowed; use {SAFE_NAME_TEXT}")
    if len(password) < MIN_PASSWORD:
        raise ArenaError(f"the password is shorter than {MIN_PASSWORD} characters; choose a longer one")
    pw_hash = _HASHER.hash(password)
    with db.transaction():
        row = db.one(
            "SELECT organiser FROM invites WHERE hash = ? AND used_by IS NULL AND created > ?",
            _sha(token),
            time.time() - INVITE_DAYS * 86400,
        )
        if row is None:
            raise ArenaError("this invite link was used already or has expired; ask the organiser for another")
        if db.one("SELECT 1 FROM users WHERE name = ? COLLATE NOCASE", name):  # 'Ann' would pass for 'ann'
            raise ArenaError(f"the name {name!r} is taken; choose another name")
        uid = db.run(
            "INSERT INTO users (name, pw_hash, organiser, created) VALUES (?, ?, ?, ?)",
            name,
            pw_hash,
            row["organiser"],
            time.time(),
        )
        db.run("UPDATE invites SET used_by = ? WHERE hash = ?", uid, _sha(token))
    return User(uid, name, bool(row["organiser"]))


def new_token(db: LadderDB, user_id: int) -> str:
    token = "arena_" + secrets.token_urlsafe(32)
    db.run("INSERT INTO tokens (hash, user_id, created) VALUES (?, ?, ?)", _sha(token), user_id, time.time())
    return token


def _user(row: object) -> User | None:
    if row is None:
        return None
    return User(row["id"], row["name"], bool(row["organiser"]), bool(row["disabled"]))  # type: ignore[index]


def _named(db: LadderDB, name: str) -> Any:
    """The account ``name``, in any case: names are unique regardless of case ('Ann' cannot join
    beside 'ann'), so 'ann' is 'Ann'; an exact match first, for a database made before that rule."""
    return db.one("SELECT * FROM users WHERE name = ? COLLATE NOCASE ORDER BY name = ? DESC LIMIT 1", name, name)


def check_password(db: LadderDB, name: str, password: str) -> User | None:
    row = _named(db, name)
    if row is None:
        _HASHER.hash(password)  # the same time whether or not the name exists
        return None
    try:
        _HASHER.verify(row["pw_hash"], password)
    except (VerificationError, InvalidHashError):
        return None
    return _user(row)


def user_for_token(db: LadderDB, token: str) -> User | None:
    return _user(db.one("SELECT u.* FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = ?", _sha(token)))


SESSION_MAX_AGE_S = 14 * 86400  # the session cookie's max_age (app.py)


def new_session(db: LadderDB, user_id: int) -> str:
    """A new session's id; the expired sessions go (a login made a row that stayed for good)."""
    sid = secrets.token_urlsafe(32)
    now = time.time()
    db.run("DELETE FROM sessions WHERE created <= ?", now - SESSION_MAX_AGE_S)
    db.run("INSERT INTO sessions (hash, user_id, created) VALUES (?, ?, ?)", _sha(sid), user_id, now)
    return sid


def user_for_session(db: LadderDB, sid: str, max_age_s: float = SESSION_MAX_AGE_S) -> User | None:
    """The session's user; None for a disabled account (logged out: disabling one ends its sessions)."""
    return _user(
        db.one(
            "SELECT u.* FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.hash = ? AND s.created > ?"
            " AND NOT u.disabled",
            _sha(sid),
            time.time() - max_age_s,
        )
    )


def end_session(db: LadderDB, sid: str) -> None:
    db.run("DELETE FROM sessions WHERE hash = ?", _sha(sid))


class RateLimit:
    """A token bucket per key (client address): ``burst`` at once, then one per ``every_s``."""

    def __init__(self, burst: int, every_s: float) -> None:
        self.burst = burst
        self.every_s = every_s
        self.buckets: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()

    def allow(self, key: str) -> bool:
        now = time.monotonic()
        with self.lock:
            tokens, last = self.buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) / self.every_s)
            ok = tokens >= 1.0
            self.buckets[key] = (tokens - 1.0 if ok else tokens, now)
            if len(self.buckets) > 100_000:  # bounded memory under a flood of addresses
                self.buckets.clear()
            return ok
