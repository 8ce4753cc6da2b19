"""What the ladder's handlers share (``Ladderside``): the ladder, its two databases, the
upload checker thread, and the reads behind the pages and the JSON API (docs/ladder.md
has the shapes): the leaderboard (computed again at most once a second while matches
arrive, by one reader at a time), recent matches, a bot's document, uploads, retiring.
Handlers and HTTP concerns live in app.py."""

from __future__ import annotations

import hashlib
import logging
import os
import queue
import threading
import time
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException

from arena.serve.accounts import RateLimit, User
from arena.serve.db import LadderDB
from arena.tournament.config import SAFE_NAME, SAFE_NAME_TEXT

log = logging.getLogger("arena.serve")

API_FORMAT = "decktet-arena-ladder"
API_VERSION = 1
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
        from arena.serve.matchmaker import rate_in_play_order

        report = rate_in_play_order(self.store, self.data / "ratings-cache-server.json.z")
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
