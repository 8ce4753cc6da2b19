"""The rating cache: the rating state after the longest complete prefix of the schedule.

Rating is sequential (each match updates the ratings the next one starts from), so a
view of a large store would otherwise re-rate its whole history. Results arrive out of
order (several workers), so only a *complete prefix* is final: the rows, in schedule
order, whose indexes are exactly 0, 1, ..., k-1. Nothing stored later can come before
them, so the state after them never changes.

The file (``<results>/ratings-cache.json.z``: zlib-compressed JSON; rating histories as
base64 arrays of native doubles, hence the byte order in it) holds that state for every
scope, the notable matches so far, the parameters, k, and a SHA-256 digest of the
k rows it was built from. It is used only if the parameters and the digest of the
current first k rows agree; anything unreadable, foreign or stale is ignored and
rebuilt. It holds no code (JSON only), and floats round-trip exactly, so a report built
from it is identical to one built from scratch.

The cache cannot lie about the ratings: its first line is an HMAC-SHA-256 of the JSON after
it, keyed by the results folder's secret (``key_from_secret``: the deal secret, mode 0600,
never given to a bot). A file whose HMAC does not verify (edited, or written for another
folder) is ignored, said once in the log, and rebuilt from the store.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from arena.report.files import remove_orphans, temporary_name

if TYPE_CHECKING:
    from arena.tournament.store import ResultRow


class RatingParams(Protocol):
    """What the cache reads of ``arena.report.ratings.RatingParams`` (not imported: ratings
    imports this module)."""

    def to_json(self) -> dict[str, Any]: ...


FILE_NAME = "ratings-cache.json.z"
FORMAT = "decktet-arena-rating-cache"
VERSION = 5  # 2: per-deal place sums (the mean place's interval); 3: history rounded as published;
# 4: each bot's largest table (the scale its place interval is clipped to); 5: the HMAC line before the JSON
# (a history may carry a 4th item, its leaderboard.json text: older readers rebuild the cache)
MAX_BYTES = 1 << 30  # compressed or not, a bigger cache is not ours
_MAC_HEX = 64  # the HMAC-SHA-256 line, in hex

log = logging.getLogger(__name__)


def key_from_secret(secret: str) -> bytes:
    """The cache's HMAC key from the results folder's secret (not the secret itself)."""
    return hashlib.sha256(b"decktet-arena rating cache\0" + secret.encode()).digest()


def _mac(key: bytes, body: bytes) -> bytes:
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode()


def complete_prefix(ordered: Sequence[ResultRow]) -> int:
    """k such that ordered[i].index == i for every i < k."""
    k = 0
    for row in ordered:
        if row.index != k:
            break
        k += 1
    return k


def digest(ordered: Sequence[ResultRow], k: int) -> str:
    """SHA-256 of everything the ratings read from the first k rows."""
    rows = ordered[:k]
    if all(row.digest for row in rows):
        # rows from a store: their checked digests cover all but the schedule's index
        text = "".join([f"{row.digest} {row.index!r}\n" for row in rows])
        return "stored:" + hashlib.sha256(text.encode()).hexdigest()
    h = hashlib.sha256()
    for row in rows:
        h.update(
            repr(
                (
                    row.match_id,
                    row.index,
                    row.game,
                    row.bots,
                    row.places,
                    row.faults,
                    row.fault_details,
                    row.capped,
                    row.sandbox_fault,
                )
            ).encode()
        )
    return h.hexdigest()


def load(
    path: str | Path, params: RatingParams, ordered: Sequence[ResultRow], key: bytes
) -> tuple[int, list[dict[str, Any]], list[tuple[Any, ...]]] | None:
    """(k, scope states, notable-match fields) from a valid cache file, else None.
    ``params``: a ratings.RatingParams; ``key``: ``key_from_secret`` of the folder's secret."""
    try:
        path = Path(path)
        if path.stat().st_size > MAX_BYTES:
            return None
        inflate = zlib.decompressobj()
        text = inflate.decompress(path.read_bytes(), MAX_BYTES)
        if inflate.unconsumed_tail or not inflate.eof:  # a zip bomb, or cut short
            return None
        mac, newline, text = text[:_MAC_HEX], text[_MAC_HEX : _MAC_HEX + 1], text[_MAC_HEX + 1 :]
        if newline != b"\n":
            return None  # not this version's file (an older arena's): rebuilt
        if not hmac.compare_digest(mac, _mac(key, text)):
            log.warning(
                "%s: the rating cache does not verify against this results folder's secret "
                "(edited, or copied from another folder); ignored, the ratings are recomputed "
                "from the stored matches",
                path,
            )
            return None
        data = json.loads(text)
        if data.get("format") != FORMAT or data.get("version") != VERSION or data.get("byteorder") != sys.byteorder:
            return None
        k = data["count"]
        if type(k) is not int or not 0 < k <= complete_prefix(ordered):
            return None
        if data["params"] != params.to_json() or data["digest"] != digest(ordered, k):
            return None
        scopes = data["scopes"]
        notable = [
            (
                str(n[0]),
                int(n[1]),
                str(n[2]),
                str(n[3]),
                None if n[4] is None else int(n[4]),
                None if n[5] is None else str(n[5]),
                None if n[6] is None else str(n[6]),
            )
            for n in data["notable"]
        ]
        if not isinstance(scopes, list) or not scopes:
            return None
        return k, scopes, notable
    except (
        OSError,
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        AttributeError,
        zlib.error,
        RecursionError,
        MemoryError,
    ):
        return None


def save(
    path: str | Path,
    params: RatingParams,
    ordered: Sequence[ResultRow],
    k: int,
    scopes: list[dict[str, Any]],
    notable: Sequence[Any],
    key: bytes,
) -> None:
    """Write the state after the first k rows, sealed with ``key``; a folder we cannot write
    is no error."""
    data = {
        "format": FORMAT,
        "version": VERSION,
        "byteorder": sys.byteorder,
        "params": params.to_json(),
        "count": k,
        "digest": digest(ordered, k),
        "scopes": scopes,
        "notable": [[n.match_id, n.index, n.game, n.reason, n.seat, n.bot, n.detail] for n in notable],
    }
    path = Path(path)
    tmp = temporary_name(path)
    try:
        body = json.dumps(data, separators=(",", ":")).encode()
        tmp.write_bytes(zlib.compress(_mac(key, body) + b"\n" + body, 1))
        tmp.replace(path)
    except OSError:
        tmp.unlink(missing_ok=True)
    remove_orphans(path)
