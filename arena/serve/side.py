"""What the ladder's handlers share (``Ladderside``): the ladder, its two databases, the
upload checker thread, and the reads behind the pages and the JSON API (docs/ladder.md
has the shapes): the leaderboard (computed again at most once a second while matches
arrive, by one reader at a time), recent matches, a bot's document, uploads, retiring.
Handlers and HTTP concerns live in app.py.

No request rates a match: the matchmaker process rates what is stored and writes
``standings.json`` (matchmaker.py); a request reads that file when its mtime changed, and the
leaderboard built from it and the roster is kept, JSON-encoded, until either changes. Reads of
the results store go through a read-only connection per thread (WAL: never waiting for the
workers' writes, nor for each other)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import queue
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException

from arena.errors import ArenaError
from arena.serve.accounts import RateLimit, User
from arena.serve.db import LadderDB
from arena.tournament.config import SAFE_NAME, SAFE_NAME_TEXT

if TYPE_CHECKING:
    from arena.match.sandbox import SandboxInfo
    from arena.serve.ladder import Ladder
    from arena.serve.matchmaker import StandingsDoc
    from arena.tournament.roster import BotEntry

log = logging.getLogger("arena.serve")

API_FORMAT = "decktet-arena-ladder"
API_VERSION = 1
RECENT_MIN_S = 0.5  # recent matches are read again at most this often (pages poll every refresh_s)
UNPACKED_MAX_BYTES = 64 * 1024 * 1024  # an uploaded bot folder's files, unpacked
SOURCE_MAX_BYTES = 1024 * 1024  # text a source page shows
LOG_TAIL_BYTES = 64 * 1024  # of each worker's stderr log of a version, on its log page


class Ladderside:
    """Everything the handlers share: the ladder, its databases, the checker, caches."""

    def __init__(
        self, ladder: Ladder, data: Path, sandbox: SandboxInfo, *, inline: bool = True, executor: str = "local"
    ) -> None:
        from arena.tournament.store import ResultStore

        self.ladder = ladder
        self.data = Path(data)
        self.sandbox = sandbox
        self.executor = executor
        self.db = LadderDB(self.data)
        self.store = ResultStore(self.data)
        self.csrf_key = self.db.key("csrf")  # app.py: a session's form token is an HMAC of its id
        self.login_limit = RateLimit(burst=5, every_s=12.0)
        self.upload_limit = RateLimit(burst=5, every_s=30.0)
        self.inline = inline
        self.local = threading.local()
        self.ratings_doc: StandingsDoc | dict[str, Any] = {}  # {} until the first ratings
        self.ratings_mark: Any = None
        self.board: tuple[dict[str, Any], bytes] | None = None
        self.board_key: tuple[Any, ...] = ()
        self.board_lock = threading.Lock()
        self.recent: dict[tuple[int, str | None], tuple[float, int, list[Any], bytes | None]] = {}
        self.pages: dict[str, tuple[Any, str]] = {}  # app.py: pages rendered for visitors not logged in
        self.checks: queue.Queue[int | None] = queue.Queue()
        self.closing = threading.Event()  # the server stops: a check in flight is not judged
        self.checker = threading.Thread(target=self._check_loop, name="checker", daemon=True)
        self.checker.start()
        for row in self.db.all("SELECT id FROM versions WHERE status = 'checking'"):
            self.checks.put(row["id"])  # uploads a restart interrupted

    # ---- conformance checks of uploads ------------------------------------------

    def _check_loop(self) -> None:
        from arena.tournament.check import run_check
        from arena.tournament.roster import BotEntry
        from arena.tournament.runner import limits_from, time_control_from

        while True:
            vid = self.checks.get()
            if vid is None:
                return
            row = self.db.one("SELECT v.*, b.name FROM versions v JOIN bots b ON b.id = v.bot_id WHERE v.id = ?", vid)
            if row is None:
                continue
            try:
                entry = (
                    self._unpacked(row)
                    if row["kind"] == "folder"
                    else BotEntry(name=row["name"], path=Path(row["path"]), sha256=row["sha256"], kind=row["kind"])
                )
                report = run_check(
                    entry,
                    sandbox=self.sandbox,
                    limits=limits_from(self.ladder.tournament),
                    time_control=time_control_from(self.ladder.tournament),
                    matches=self.check_matches(),
                )
                status, text = ("ok" if report.ok else "failed"), report.render()
            except ArenaError as exc:  # a bot folder that cannot be used: its one line says why
                status, text = "failed", str(exc)
            except Exception as exc:  # noqa: BLE001 - a check that cannot run fails the upload, not the server
                log.exception("check of %s v%d failed", row["name"], row["n"])
                status, text = "failed", f"the check could not run: {type(exc).__name__}: {exc}"
            if self.closing.is_set():
                # the server stops: the exit kills the check's bots (a "crash" that is not the bot's);
                # still 'checking', the version is checked again at the next start
                log.info("upload %s v%d: check cut short by the server's stop", row["name"], row["n"])
                return
            if status == "failed":
                self._drop_unpacked(Path(row["path"]))
            self.db.run("UPDATE versions SET status = ?, report = ? WHERE id = ?", status, self.public(text), vid)
            log.info("upload %s v%d: check %s", row["name"], row["n"], status)

    @staticmethod
    def _drop_unpacked(path: Path) -> None:
        """A failed archive's unpacked copy leaves the bot cache at once (an entrant's failing
        uploads would otherwise each keep up to 64 MiB there until a prune); one in use stays."""
        from arena.match import bot_cache, botfolder

        try:
            if not botfolder.is_archive(path) or not path.is_file():
                return
            folder = botfolder.unpacked_folder(path)
            if folder.is_dir():
                bot_cache.remove(bot_cache.CacheEntry("unpacked", folder, 0, 0.0, False))
        except OSError as exc:
            log.warning("could not remove the unpacked copy of %s: %s", path.name, exc)

    def public(self, text: str) -> str:
        """``text`` as an entrant may read it: this machine's folders (the data folder, the bot
        cache, the arena's own package, whose botkit is in every Python bot's traceback) left
        out of every path, which keeps its last part ('bots/<sha>/x.zip' is 'x.zip')."""
        import arena
        from arena.match.bot_cache import cache_root

        package = Path(arena.__file__).parent
        roots = {str(p) for folder in (self.data, cache_root(), package) for p in (folder, folder.resolve())}
        for root in sorted(roots, key=len, reverse=True):
            text = re.sub(r"(?<![\w./-])" + re.escape(root.rstrip("/")) + r"/(?:[^\s'\":]*/)?", "", text)
        return text

    def public_record(self, match_id: str) -> dict[str, Any]:
        """A stored match record as anyone may see it in its replay: no fault's stderr tail or cause (its
        owner's and the organiser's only, on the bot's page) and no folder of this machine."""

        def scrub(value: Any) -> Any:
            if isinstance(value, dict):
                return {k: scrub(v) for k, v in value.items() if k not in ("stderr_tail", "stderr_cause")}
            if isinstance(value, list):
                return [scrub(v) for v in value]
            return self.public(value) if isinstance(value, str) and "/" in value else value

        return scrub(self.store.get_record(match_id))

    def check_matches(self) -> list[tuple[str, int, dict[str, Any]]]:
        """`arena check`'s conformance matches, on what this ladder plays: each game at each of
        its seat counts with its options (a Tightwad-only ladder does not wait for Palace)."""
        t = self.ladder.tournament
        return [(g.id, p, dict(g.options_for(p))) for g in t.games for p in g.players]

    def _unpacked(self, row: sqlite3.Row) -> BotEntry:
        """An uploaded bot folder (an archive): unpacked, its requirements installed (wheels
        only, arena/match/botfolder.py), copied into the data folder; the version's path and
        sha256 become the folder's. Raises ArenaError with the reason."""
        from arena.match import botfolder
        from arena.tournament.roster import BotEntry, _entry, snapshot_bots

        path = Path(row["path"])
        if path.is_dir():  # unpacked already (a restart after its check began)
            return BotEntry(name=f"{row['name']}.v{row['n']}", path=path, sha256=row["sha256"], kind="folder")
        members = botfolder._members(path)
        unpacked = sum(size for _, size, _ in members)
        if unpacked > UNPACKED_MAX_BYTES:
            raise ArenaError(
                f"the archive unpacks to {unpacked} bytes, over the ladder's {UNPACKED_MAX_BYTES}; "
                "leave large files out"
            )
        entry = _entry(path, row["name"])
        entry = snapshot_bots([entry], self.data)[0]
        self.db.run("UPDATE versions SET path = ?, sha256 = ? WHERE id = ?", str(entry.path), entry.sha256, row["id"])
        return entry

    def close(self) -> None:
        self.closing.set()
        self.checks.put(None)

    # ---- reading ----------------------------------------------------------------

    @property
    def reader(self) -> sqlite3.Connection:
        """This thread's read-only connection to the results store: readers never wait for a
        writer or for each other (WAL), and hold no lock of the store's own connection."""
        conn = getattr(self.local, "reader", None)
        if conn is None:
            from arena.tournament.store import ResultStore

            conn = self.local.reader = ResultStore(self.data, read_only=True).conn
        return conn

    def _ratings(self) -> StandingsDoc | dict[str, Any]:
        """The ratings document (matchmaker.report_doc): the matchmaker's ``standings.json``
        when one runs (``inline`` False), else computed here when matches were stored."""
        from arena.serve.matchmaker import STANDINGS_FILE

        if not self.inline:
            path = self.data / STANDINGS_FILE
            try:
                mtime = path.stat().st_mtime_ns
            except OSError:
                mtime = None
            if mtime is not None and mtime != self.ratings_mark:
                import json

                try:
                    self.ratings_doc, self.ratings_mark = json.loads(path.read_bytes()), mtime
                except (OSError, ValueError):
                    pass  # replaced while read: the next request reads it again
            return self.ratings_doc
        from arena.serve.luck import adjusted, ladder_rollouts, read_through
        from arena.serve.matchmaker import rate_rows, report_doc, rows_in_play_order

        last = self.reader.execute("SELECT MAX(rowid) FROM matches").fetchone()[0] or 0  # O(1), unlike COUNT
        mark = (last, min(read_through(self.data), last))
        if mark != self.ratings_mark:
            with self.store.reading():  # one consistent view for the rows, the ratings and the luck figures
                rows = rows_in_play_order(self.store)
                report = rate_rows(self.store, rows, self.data / "ratings-cache-server.json.z")
                report, luck_matches = adjusted(
                    report, rows, self.store, ladder_rollouts(self.ladder.tournament), mark[1]
                )
            self.ratings_doc, self.ratings_mark = report_doc(report, last, luck_matches), mark
        return self.ratings_doc

    def leaderboard(self) -> dict[str, Any]:
        """The /api/leaderboard document, built again only when the ratings or the roster changed."""
        return self._board()[0]

    def leaderboard_json(self) -> bytes:
        """The same, serialised once per change (what /api/leaderboard sends)."""
        return self._board()[1]

    def _board(self) -> tuple[dict[str, Any], bytes]:
        roster = self.db.one(
            "SELECT (SELECT COUNT(*) FROM versions) AS v,"
            " (SELECT COALESCE(SUM(status = 'ok'), 0) FROM versions) AS ok,"
            " (SELECT COALESCE(SUM(retired), 0) FROM bots) AS r,"
            " (SELECT COUNT(*) FROM users) AS u,"
            " (SELECT COALESCE(SUM(disabled), 0) FROM users) AS d"
        )
        with self.board_lock:  # one thread builds; the others wait for it (a build is cheap: no rating)
            ratings = self._ratings()
            key = (id(ratings), ratings.get("stored"), tuple(roster))
            if self.board is None or key != self.board_key:
                import json

                board = self._compute_board(ratings)
                self.board = (board, json.dumps(board, separators=(",", ":")).encode())
                self.board_key = key
            return self.board

    def _compute_board(self, ratings: StandingsDoc | dict[str, Any]) -> dict[str, Any]:
        owners = {r["id"]: r["name"] for r in self.db.all("SELECT id, name FROM users")}
        current = {self.db.version_name(r): r for r in self.db.playing_versions()}
        scopes = []
        names = ["overall"] + [g.id for g in self.ladder.tournament.games]
        by_scope = ratings.get("scopes", {})
        for scope in dict.fromkeys(names):
            rated = by_scope.get(scope, {})
            rows = []
            for vname, r in current.items():
                b = rated.get(vname)
                mu, sigma = (b[0], b[1]) if b else (25.0, 25.0 / 3)
                rows.append(
                    {
                        "bot_id": r["bot_id"],
                        "bot": r["name"],
                        "version": r["n"],
                        "owner": owners.get(r["owner_id"], "organiser"),
                        "mu": round(mu, 3),
                        "sigma": round(sigma, 3),
                        "conservative": round(mu - 3 * sigma, 3),
                        "matches": b[2] if b else 0,
                        "mean_place": None if not b or b[3] is None else round(b[3], 3),
                        "adjusted_place": _place(b, 5),
                        "faults": b[4] if b else 0,
                    }
                )
            rows.sort(key=lambda x: (-x["conservative"], x["bot"]))
            for i, row in enumerate(rows, 1):
                row["rank"] = i
            scopes.append({"scope": scope, "standings": rows})
        return {
            "format": API_FORMAT,
            "version": API_VERSION,
            "ladder": self.ladder.name,
            "matches": ratings.get("matches", 0),
            "luck_matches": ratings.get("luck_matches", 0),
            "rating": {"system": "trueskill", "conservative": "mu - 3 * sigma"},
            "scopes": scopes,
        }

    def recent_matches(self, limit: int, bot: str | None = None) -> list[dict[str, Any]]:
        """The last ``limit`` stored matches (of ``bot``'s versions), newest first; read again when
        a match was stored, at most every ``RECENT_MIN_S`` (the same list object until then)."""
        key = (limit, bot)
        now = time.monotonic()
        hit = self.recent.get(key)
        if hit is not None and now - hit[0] < RECENT_MIN_S:
            return hit[2]
        last = self.reader.execute("SELECT MAX(rowid) FROM matches").fetchone()[0] or 0
        if hit is not None and hit[1] == last:
            self.recent[key] = (now, last, hit[2], hit[3])
            return hit[2]
        rows = self._recent_matches(limit, bot)
        if len(self.recent) > 64:  # bounded: ?limit= and ?bot= are the client's to choose
            self.recent.clear()
        self.recent[key] = (now, last, rows, None)
        return rows

    def recent_matches_json(self, limit: int, bot: str | None = None) -> bytes:
        """The /api/matches document of ``recent_matches``, serialised once per list."""
        import json

        rows = self.recent_matches(limit, bot)
        hit = self.recent.get((limit, bot))
        if hit is not None and hit[2] is rows and hit[3] is not None:
            return hit[3]
        body = json.dumps(
            {"format": API_FORMAT, "version": API_VERSION, "matches": rows}, separators=(",", ":")
        ).encode()
        if hit is not None and hit[2] is rows:
            self.recent[(limit, bot)] = (hit[0], hit[1], rows, body)
        return body

    def _recent_matches(self, limit: int, bot: str | None = None) -> list[dict[str, Any]]:
        conn = self.reader
        names = self._version_names(bot) if bot else []
        if bot and not names:
            return []
        sql = (
            "SELECT m.match_id, m.game, m.players, m.started_at, m.duration_s, m.idx FROM matches m"
            + (f" WHERE m.match_id IN (SELECT match_id FROM seats WHERE bot IN ({_marks(names)}))" if bot else "")
            + " ORDER BY m.rowid DESC LIMIT ?"
        )
        args: tuple[Any, ...] = (*names, limit)
        with _snapshot(conn):
            rows = conn.execute(sql, args).fetchall()
            seats: dict[str, list[Any]] = {}
            if rows:
                for mid, bot_, place, score, fault in conn.execute(
                    f"SELECT match_id, bot, place, score, fault_kind FROM seats WHERE match_id IN ({_marks(rows)})"
                    " ORDER BY match_id, seat",
                    [r[0] for r in rows],
                ):
                    seats.setdefault(mid, []).append((bot_, place, score, fault))
            out = []
            for mid, game, players, started, duration, idx in rows:
                mine = seats.get(mid, [])
                out.append(
                    {
                        "match_id": mid,
                        "game": game,
                        "players": players,
                        "started_at": started,
                        "duration_s": duration,
                        "bots": [s[0] for s in mine],
                        "places": [s[1] for s in mine],
                        "scores": [s[2] for s in mine],
                        "faults": [s[3] for s in mine],
                        "replay": f"/matches/{mid}/replay" if self._deal_done(conn, game, players, idx) else None,
                    }
                )
        return out

    @staticmethod
    def _deal_done(conn: sqlite3.Connection, game: str, players: int, idx: int) -> bool:
        """Whether every rotation of this match's deal set is stored: only then may its cards be
        shown (fair play: a replay never shows a deal that can still be played). A set's matches
        have the schedule indexes set id * INDEX_STRIDE + rotation (matchmaker.py)."""
        from arena.serve.matchmaker import INDEX_STRIDE

        first = idx - idx % INDEX_STRIDE
        n = conn.execute(
            "SELECT COUNT(*) FROM matches WHERE game = ? AND idx BETWEEN ? AND ?",
            (game, first, first + INDEX_STRIDE - 1),
        ).fetchone()[0]
        return n >= players

    def replay_allowed(self, match_id: str) -> bool | None:
        """None: no such match; else whether its replay may be shown (``_deal_done``)."""
        conn = self.reader
        row = conn.execute("SELECT game, players, idx FROM matches WHERE match_id = ?", (match_id,)).fetchone()
        return None if row is None else self._deal_done(conn, *row)

    def _version_names(self, name: str) -> list[str]:
        """The seat names bot ``name``'s versions play under (``<name>.v<n>``), exactly: a range
        of names would also take another entrant's ``<name>.vortex``."""
        return [
            self.db.version_name(r)
            for r in self.db.all(
                "SELECT b.name, v.n FROM versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = ?", name
            )
        ]

    def bot_doc(self, bot_id: int, user: User | None) -> dict[str, Any]:
        bot = self.db.one(
            "SELECT b.*, u.name AS owner, COALESCE(u.disabled, 0) AS owner_disabled FROM bots b"
            " LEFT JOIN users u ON u.id = b.owner_id WHERE b.id = ?",
            bot_id,
        )
        if bot is None:
            raise HTTPException(404, f"no bot {bot_id}")
        mine = _may_see_source(user, bot)
        versions = []
        for v in self.db.all("SELECT * FROM versions WHERE bot_id = ? ORDER BY n", bot_id):
            item = {
                "version": v["n"],
                "sha256": v["sha256"],
                "status": v["status"],
                "created": round(v["created"], 3),
                "name": f"{bot['name']}.v{v['n']}",
            }
            if mine:
                item["check"] = v["report"]
                item["source"] = f"/bots/{bot_id}/source?version={v['n']}"
            versions.append(item)
        board = self.leaderboard()
        ratings = {
            s["scope"]: next(
                (
                    {k: r[k] for k in ("rank", "mu", "sigma", "conservative", "adjusted_place", "matches")}
                    for r in s["standings"]
                    if r["bot_id"] == bot_id
                ),
                None,
            )
            for s in board["scopes"]
        }
        faults = []
        names = self._version_names(bot["name"])
        rows = self.reader.execute(
            f"SELECT match_id, bot, fault_kind, fault_detail FROM seats WHERE bot IN ({_marks(names)}) AND fault_kind"
            " IS NOT NULL ORDER BY rowid DESC LIMIT 20",
            names,
        ).fetchall()
        faults_total = self.reader.execute(
            f"SELECT COUNT(*) FROM seats WHERE bot IN ({_marks(names)}) AND fault_kind IS NOT NULL", names
        ).fetchone()[0]
        for mid, name, kind, detail in rows:
            fault = self._fault_of(mid, name)
            at = fault.get("decision")
            at = at if isinstance(at, int) and not isinstance(at, bool) else None
            item = {
                "match_id": mid,
                "version": name,
                "kind": kind,
                "detail": detail,
                "decision": at,  # the decision it faulted at: the replay's #d<n>, `arena replay --from`
                "replay": (
                    f"/matches/{mid}/replay" + ("" if at is None else f"#d{at}") if self.replay_allowed(mid) else None
                ),
            }
            if mine:
                item["stderr_tail"] = self.public(str(fault.get("stderr_tail") or "")[-2000:])
            faults.append(item)
        with self.board_lock:
            rated = self._ratings()
            history = rated.get("history", {})
            overall = rated.get("scopes", {}).get("overall", {})
        for item in versions:  # every version is rated under its own name: they compare here
            b = overall.get(item["name"])
            item["rating"] = (
                None
                if not b
                else {
                    "mu": round(b[0], 3),
                    "sigma": round(b[1], 3),
                    "conservative": round(b[0] - 3 * b[1], 3),
                    "matches": b[2],
                    "mean_place": None if b[3] is None else round(b[3], 3),
                    "adjusted_place": _place(b, 5),
                    "faults": b[4],
                }
            )
        plots = [{"version": v["version"], "points": history[v["name"]]} for v in versions if v["name"] in history]
        return {
            "format": API_FORMAT,
            "version": API_VERSION,
            "id": bot["id"],
            "name": bot["name"],
            "owner": bot["owner"] or "organiser",
            "retired": bool(bot["retired"]),
            "owner_disabled": bool(bot["owner_disabled"]),
            "versions": versions,
            "ratings": ratings,
            "history": plots,
            "faults": faults,
            "faults_total": faults_total,
        }

    def _fault_of(self, match_id: str, bot: str) -> dict[str, Any]:
        """``bot``'s fault in a stored match record as stored (its decision, its stderr tail);
        {} when the record is missing or altered."""
        try:
            record = self.store.get_record(match_id)
        except (KeyError, Exception):  # noqa: BLE001 - a missing or altered record shows no details
            return {}
        seats = sorted(record.get("bots") or (), key=lambda b: b.get("seat", 0))  # every record has "bots"
        for seat, fault in zip(seats, record.get("faults") or ()):
            if isinstance(fault, dict) and seat.get("name") == bot:
                return fault
        return {}

    # ---- uploads ----------------------------------------------------------------

    def accept_upload(self, user: User, filename: str, data: bytes, name: str | None) -> dict[str, Any]:
        """Store an uploaded bot as a new version, queued for the conformance check."""
        if user.disabled:
            raise HTTPException(403, f"the account {user.name} is disabled by the ladder's organiser; ask them")
        from arena.match.botfolder import ARCHIVES
        from arena.tournament.roster import SNAPSHOTS

        base = Path(filename or "").name
        suffix = Path(base).suffix
        archive = next((a for a in ARCHIVES if base.endswith(a)), None)
        if archive is not None:
            kind, suffix = "folder", archive
        elif suffix == ".py":
            kind = "python"
        elif data.startswith(b"#!"):
            kind = "executable"
        else:
            raise HTTPException(
                400,
                "the file is neither a .py file, a script starting with #!, nor a bot folder "
                "as .zip or .tar.gz; upload one bot (e.g. mybot.py)",
            )
        if not data.strip():
            raise HTTPException(400, "the file is empty; upload your bot's source")
        name = (name or (base[: -len(archive)] if archive else Path(base).stem)).strip()
        if not SAFE_NAME.match(name):
            raise HTTPException(400, f"bot name {name[:70]!r} is not allowed; use {SAFE_NAME_TEXT}")
        bot_id = self._claim(user, name, write=False)  # a refused upload writes nothing
        sha = hashlib.sha256(data).hexdigest()
        home = self.data / SNAPSHOTS / sha
        self._not_a_repeat(bot_id, name, sha, kind)
        home.mkdir(parents=True, exist_ok=True)
        for d in (home.parent, home):
            d.chmod(0o755)  # the sandbox may run the bot under another uid
        path = home / (name + (suffix if kind in ("python", "folder") else ""))
        tmp = home / f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp"
        tmp.write_bytes(data)
        tmp.chmod(0o755 if kind == "executable" else 0o644)
        os.replace(tmp, path)
        try:
            with self.db.transaction():  # two uploads at once: one claims a new name, each gets its number
                self._not_a_repeat(self._claim(user, name, write=False), name, sha, kind)  # a form sent twice at once
                bot_id = self._claim(user, name, write=True)
                vid, n = self.db.add_version(bot_id, sha, path, kind, "checking", upload_sha256=sha)
        except HTTPException:
            if self.db.one("SELECT 1 FROM versions WHERE path = ?", str(path)) is None:
                path.unlink(missing_ok=True)  # lost the name to another entrant meanwhile
            raise
        self.checks.put(vid)
        log.info("upload by %s: %s v%d (%d bytes), checking", user.name, name, n, len(data))
        return {"bot_id": bot_id, "name": name, "version": n, "status": "checking", "url": f"/bots/{bot_id}"}

    def _not_a_repeat(self, bot_id: int, name: str, sha: str, kind: str) -> None:
        """409 when the upload (SHA-256 ``sha``) is the very file bot ``bot_id``'s latest version was
        uploaded as, unless that version failed its check or the bot is retired (an upload brings it
        back): a form sent twice, or a script run again, would start the bot's rating again for the
        same code. Compared by the digest of the file as uploaded: an archive's version holds its
        unpacked folder's digest and path once checked, so comparing those alone missed every
        archive sent again after its check. An older version's file is taken (going back to it is a
        choice, as a new version)."""
        if not bot_id:
            return
        latest = self.db.one(
            "SELECT v.* FROM versions v JOIN bots b ON b.id = v.bot_id WHERE v.bot_id = ? AND NOT b.retired"
            " ORDER BY v.n DESC",
            bot_id,
        )
        if latest is None or latest["status"] == "failed":
            return
        if sha not in (latest["upload_sha256"], latest["sha256"], Path(latest["path"]).parent.name):
            return
        what = "archive" if kind == "folder" else "file"
        state = {"ok": "it passed its check and plays", "checking": "it is being checked"}.get(
            latest["status"], latest["status"]
        )
        raise HTTPException(
            409,
            f"this {what} is the same as {name} v{latest['n']} ({state}); nothing new to upload: "
            "change the bot first (a new version starts its rating again)",
        )

    def _claim(self, user: User, name: str, *, write: bool) -> int:
        """The id of bot ``name`` for ``user`` to upload to (with ``write``: made, or brought back
        from retirement); 403 if it is another entrant's, 409 if it differs from one only in case
        ('Ann' would pass for 'ann' on a leaderboard). 0 for a new name without ``write``."""
        bot = self.db.one("SELECT * FROM bots WHERE name = ? COLLATE NOCASE", name)
        if bot is not None and bot["name"] != name:
            raise HTTPException(
                409, f"the bot name {name!r} is taken as {bot['name']!r}; names must differ by more than case"
            )
        if bot is not None and bot["owner_id"] != user.id and not user.organiser:
            raise HTTPException(403, f"the bot name {name!r} belongs to another entrant; choose another name")
        if bot is not None and bot["owner_id"] is None:  # the next start would put the file's code back
            raise HTTPException(
                409, f"{name!r} is a bundled bot: change its file in the ladder file (its next start adds the version)"
            )
        if (bot is None or bot["retired"]) and not user.organiser:
            self._room_for_a_bot(user, name)
        if not write:
            return 0 if bot is None else bot["id"]
        if bot is None:
            return self.db.run(
                "INSERT INTO bots (name, owner_id, created) VALUES (?, ?, ?)", name, user.id, time.time()
            )
        self.db.run("UPDATE bots SET retired = 0 WHERE id = ?", bot["id"])
        return bot["id"]

    def _room_for_a_bot(self, user: User, name: str) -> None:
        """409 when ``user`` already has ``max_bots_per_entrant`` bots not retired and ``name`` would
        be one more (a new name, or a retired bot brought back): each bot costs every entrant
        matches, and one account must not crowd the ladder. Organisers are not counted."""
        most = self.ladder.settings.max_bots_per_entrant
        playing = [
            r["name"]
            for r in self.db.all("SELECT name FROM bots WHERE owner_id = ? AND retired = 0 ORDER BY name", user.id)
        ]
        if most and len(playing) >= most:
            raise HTTPException(
                409,
                f"you have {len(playing)} bots not retired ({', '.join(playing)}), the most this ladder allows; "
                f"to enter {name!r}, retire one on its page, or upload the code as a new version of one",
            )

    def source_text(self, path: Path) -> str:
        """A version's source page: the file, or every file of a bot folder under its name (text
        in full, up to ``SOURCE_MAX_BYTES`` in all; the rest by size), or an uploaded archive's
        member list until its check unpacks it."""
        from arena.match import botfolder

        try:
            if path.is_dir():
                parts, budget = [], SOURCE_MAX_BYTES
                for rel, file in botfolder.folder_files(path):
                    size = file.stat().st_size
                    data = file.read_bytes() if size <= budget else b"\0"
                    if b"\0" in data[:8192]:
                        parts.append(f"==> {rel} <== ({size} bytes, not shown)")
                    else:
                        budget -= size
                        parts.append(f"==> {rel} <==\n{data.decode('utf-8', 'replace')}")
                return "\n".join(parts)
            if botfolder.is_archive(path):
                return f"{path.name}: an archive, unpacked by its check; its files:\n{_archive_listing(str(path))}"
            with path.open("rb") as f:
                return f.read(SOURCE_MAX_BYTES).decode("utf-8", "replace")
        except ArenaError as exc:
            return self.public(str(exc))
        except OSError:
            raise HTTPException(404, "this version's files are no longer in the data folder") from None

    def log_text(self, version_name: str) -> str:
        """A version's stderr log as its owner may read it: the end (``LOG_TAIL_BYTES``) of each
        worker's file (logs/<worker>/<name>.stderr.log), this machine's folders left out."""
        parts = []
        for path in sorted((self.data / "logs").glob(f"*/{version_name}.stderr.log")):
            try:
                with path.open("rb") as f:
                    size = f.seek(0, os.SEEK_END)
                    f.seek(max(0, size - LOG_TAIL_BYTES))
                    data = f.read()
                    if size > LOG_TAIL_BYTES:  # from the first whole line on
                        data = data[data.find(b"\n") + 1 :]
                    text = data.decode("utf-8", "replace")
            except OSError:
                continue
            cut = f" (its last {LOG_TAIL_BYTES // 1024} KiB of {size} bytes)" if size > LOG_TAIL_BYTES else ""
            parts.append(f"==> {path.parent.name}{cut} <==\n{self.public(text)}")
        if not parts:
            return f"{version_name}: no log yet (a bot's stderr is kept once it has played a match)\n"
        return "\n".join(parts)

    def retire(self, user: User, bot_id: int) -> None:
        bot = self.db.one("SELECT * FROM bots WHERE id = ?", bot_id)
        if bot is None:
            raise HTTPException(404, f"no bot {bot_id}")
        if not _may_see_source(user, bot):
            raise HTTPException(403, "only the bot's owner or the organiser can retire it")
        self.db.run("UPDATE bots SET retired = 1 WHERE id = ?", bot_id)


@functools.lru_cache(maxsize=64)
def _archive_listing(path: str) -> str:
    """An uploaded archive's members: listing a .tar.gz reads the whole stream, so each is
    listed once (its path names its content: bots/<sha256>/...), not at every page view."""
    from arena.match import botfolder

    members = botfolder._members(Path(path))
    return "\n".join(f"{name} ({size} bytes)" for name, size, read in members if read is not None)


def _place(rating: list[Any] | None, at: int) -> float | None:
    """A place of a standings.json entry, rounded; None when unavailable (or from an older file)."""
    got = rating[at] if rating and len(rating) > at else None
    return None if got is None else round(got, 3)


def _marks(items: Sequence[Any]) -> str:
    """The ``?`` placeholders of an SQL ``IN (...)`` of ``items``."""
    return ",".join("?" * len(items))


@contextlib.contextmanager
def _snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction: the rows of several queries come from the same moment."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


def _may_see_source(user: User | None, bot: sqlite3.Row) -> bool:
    return user is not None and (user.organiser or (bot["owner_id"] is not None and bot["owner_id"] == user.id))
