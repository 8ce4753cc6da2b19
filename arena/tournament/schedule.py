"""The schedule: every match of a tournament, with its seeds, fixed up front.

A match is named by its content: ``match_key`` hashes the game entry, player
count, resolved options, deal seed and the bots in their seats with each bot's
SHA-256, and the match id ends with that hash. A changed tournament file or bot
file therefore changes exactly the matches it touches; the store keeps the others
(see arena/tournament/runner.py).

The bots of a game entry are its ``bots`` (names from the roster), else the whole
roster, always in roster (name) order, so an entry without ``bots`` schedules exactly
what it did before the key existed.

Duplicate format: a *group* of bots plays each *deal* once in every cyclic
*rotation* of the seats, so every bot holds every hand of the deal once. All
groups of a game entry and player count play the same deals (the deal seed does
not depend on the group), like duplicate bridge. Deal and match seeds come from the
results folder's secret (``deals: secret``, the default) or from the public
tournament seed (``deals: public``), and the match's identity; who meets whom and
the seating come from the tournament seed. Never from time or completion order.

Gauntlet (``schedule: gauntlet``): the groups of a round robin that hold exactly one of
the entry's ``gauntlet`` bots, so each gauntlet bot meets every combination of the
others (the field) on the same deals, and gauntlet bots never sit together (cutechess's
gauntlet with several seeds); the field never plays without one.

Order (``index``): by deal, then game entry, then player count, then group,
then rotation. A run stopped early has therefore played the first deals of
every group of every game, each in all its rotations.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import itertools
import json
import math
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from arena.records.spec import MatchSpec  # noqa: F401 (re-exported: the schedule makes them)
from arena.tournament.adaptive import AdaptivePlan
from arena.tournament.adaptive import plan as adaptive_plan
from arena.tournament.config import GameEntry, Tournament
from arena.tournament.roster import BotEntry
from games.rng import DealRng, derive_seed


def canonical_json(value: Any) -> str:
    """Key-sorted, compact JSON: one text per value, for seeds."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def deal_seed(key: int | str, game: str, players: int, options: dict[str, Any], deal: int, redeal: int = 0) -> int:
    """The seed of one deal (``key`` from ``deal_key``); shared by every group and rotation.
    ``redeal`` n > 0: the n-th replacement of that deal, for a group that must not play it
    because a replay page showed it (arena/tournament/fair_play.py)."""
    if redeal:
        return derive_seed(key, game, players, canonical_json(options), deal, "redeal", redeal)
    return derive_seed(key, game, players, canonical_json(options), deal)


def deal_key(tournament: Tournament, deal_secret: str | None) -> int | str:
    """What deal and match seeds derive from: the folder's secret, or the public seed.

    Nothing a bot sees may reveal the secret deals: not the public seed, not the match id,
    not its own seed (which derives from the match seed, so from the secret too).
    """
    if tournament.deals == "public":
        return tournament.seed
    if not deal_secret:
        raise ValueError(
            "secret deals need the results folder's deal secret (ResultStore.deal_secret()), or deals: public"
        )
    return f"secret:{deal_secret}"


def match_key(
    entry_key: str, game: str, players: int, options: dict[str, Any], dseed: int, seats: Sequence[tuple[str, str]]
) -> str:
    """Hex SHA-256 naming one match by what it is: game entry, players, options, deal
    seed and (bot name, bot SHA-256) per seat in seat order. Nothing positional (group
    or schedule index) goes in, so adding a bot leaves the other matches' keys alone."""
    text = canonical_json(
        {
            "entry": entry_key,
            "game": game,
            "players": players,
            "options": options,
            "deal_seed": str(dseed),
            "seats": [list(s) for s in seats],
        }
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def match_id(key: str, players: int, deal: int, rotation: int, content: str) -> str:
    return f"{key}/p{players}/d{deal:02d}/r{rotation}/{content[:16]}"


def round_robin_size(bots: int, players: int, deals: int) -> int:
    """Matches of a full round robin at one player count."""
    return math.comb(bots, players) * deals * players


def gauntlet_size(gauntlet: int, field: int, players: int, deals: int) -> int:
    """Matches of a gauntlet at one player count: each gauntlet bot with every group of the field."""
    return gauntlet * math.comb(field, players - 1) * deals * players


def sampled_groups(bots: int, players: int, deals: int, matches_per_bot: int, counts: int = 1) -> int:
    """Groups drawn at one player count of a sampled entry with ``counts`` player counts.

    Each bot should play about ``matches_per_bot / counts`` matches at this count; a
    group gives each of its bots ``deals * players`` matches. At least enough groups
    for every bot to play once.
    """
    target = matches_per_bot / counts
    need = math.ceil(bots * target / (deals * players * players))
    return max(need, math.ceil(bots / players), 1)


SHOWN_NAMES = 20  # roster names listed in an error message, at most


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN_NAMES])
    return shown + (f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else "")


def entry_bots(tournament: Tournament, index: int, roster: Sequence[str]) -> list[str]:
    """The names of the bots that play game entry ``index``, in roster (name) order: its
    ``bots`` if given, else the whole roster. Raises ``ConfigError`` for a name not in it."""
    g = tournament.games[index]
    names = sorted(roster)
    if g.bots is None:
        return names
    known = set(names)
    for j, name in enumerate(g.bots):
        if name not in known:
            close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'? " if close else ""
            shown = name if len(name) <= 60 else name[:57] + "..."
            raise tournament.config_error(
                ("games", index, "bots", j),
                f"no bot named {shown!r} in the roster; {hint}use one of the roster's names: {_listed(names)}",
            )
    wanted = set(g.bots)
    return [n for n in names if n in wanted]


def check_schedule(tournament: Tournament, bots: Sequence[BotEntry]) -> None:
    """Raise ``ConfigError`` if a game entry cannot be scheduled with these bots."""
    roster = sorted(b.name for b in bots)
    for i, g in enumerate(tournament.games):
        names = entry_bots(tournament, i, roster)
        n = len(names)
        for p in g.players:
            if p > n:
                field, whose = ("players", "the roster") if g.bots is None else ("bots", "the list")
                raise tournament.config_error(
                    ("games", i, field),
                    f"{g.id} with {p} players needs at least {p} bots, {whose} has {n} ({_listed(names)}); "
                    f"add bots or remove {p} from players",
                )
        if g.schedule == "gauntlet":
            _check_gauntlet(tournament, i, names)
            continue
        if g.schedule == "round-robin":
            total = sum(round_robin_size(n, p, g.deals) for p in g.players)
            if total > g.max_matches:
                parts = ", ".join(f"{math.comb(n, p)} groups of {p}" for p in g.players)
                suggest = max(1, g.max_matches * min(g.players) // n)
                raise tournament.config_error(
                    ("games", i, "schedule"),
                    f"a round robin of {n} bots is {total} matches ({parts}, each playing "
                    f"{g.deals} deals in every seat rotation), more than "
                    f"max_matches {g.max_matches}; use schedule: sampled with e.g. "
                    f"matches_per_bot: {suggest} (or raise max_matches)",
                )
        elif g.schedule == "adaptive":
            p = g.players[0]
            if g.max_matches < p:  # its cap: not one deal set would fit, nothing would be played
                raise tournament.config_error(
                    ("games", i, "max_matches"),
                    f"an adaptive schedule of {g.id} with {p} players plays deal sets of {p} matches "
                    f"(one per seat rotation), and max_matches {g.max_matches} holds none; "
                    f"use max_matches: {p} or more, or remove it (default 2000)",
                )
            top = g.adaptive_settings.top
            if top is not None and top >= n:
                raise tournament.config_error(
                    ("games", i, "adaptive", "top"),
                    f"top {top} needs more than {top} bots, the entry has {n} ({_listed(names)}); "
                    f"use top: {n - 1} or less, or remove top to decide the whole ranking",
                )
        else:  # counted from the group numbers, never drawn: a huge request costs nothing
            mpb = g.matches_per_bot or 1
            total = sum(sampled_groups(n, p, g.deals, mpb, len(g.players)) * g.deals * p for p in g.players)
            if total > g.max_matches:
                raise tournament.config_error(
                    ("games", i, "matches_per_bot"),
                    f"a sampled schedule of {n} bots with matches_per_bot {mpb} and {g.deals} deals "
                    f"is {total} matches, more than max_matches {g.max_matches}; lower matches_per_bot "
                    f"or deals (or raise max_matches)",
                )


def _check_gauntlet(tournament: Tournament, index: int, names: list[str]) -> None:
    g = tournament.games[index]
    assert g.gauntlet is not None
    known = set(names)
    for j, name in enumerate(g.gauntlet):
        if name not in known:
            close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'? " if close else ""
            shown = name if len(name) <= 60 else name[:57] + "..."
            whose = "the roster" if g.bots is None else "the entry's bots"
            raise tournament.config_error(
                ("games", index, "gauntlet", j),
                f"no bot named {shown!r} in {whose}; {hint}use one of: {_listed(names)}",
            )
    field = [n for n in names if n not in set(g.gauntlet)]
    for p in g.players:
        if len(field) < p - 1:
            raise tournament.config_error(
                ("games", index, "gauntlet"),
                f"{g.id} with {p} players needs a field of at least {p - 1} bots besides the gauntlet, "
                f"it has {len(field)} ({_listed(field) or 'none'}); add bots or take some out of gauntlet",
            )
    total = sum(gauntlet_size(len(g.gauntlet), len(field), p, g.deals) for p in g.players)
    if total > g.max_matches:
        raise tournament.config_error(
            ("games", index, "schedule"),
            f"a gauntlet of {len(g.gauntlet)} bot(s) against a field of {len(field)} is {total} matches, "
            f"more than max_matches {g.max_matches}; lower deals (or raise max_matches)",
        )


def gauntlet_groups(names: Sequence[str], gauntlet: Sequence[str], players: int) -> list[tuple[str, ...]]:
    """The round robin's groups (roster order) that hold exactly one gauntlet bot."""
    chosen = set(gauntlet)
    return [c for c in itertools.combinations(names, players) if len(chosen.intersection(c)) == 1]


def _seating(seed: int, key: str, players: int, members: Sequence[str]) -> list[str]:
    """The group's base seat order: shuffled so no bot always sits left of another.
    Seeded by the members, not the group's number, which shifts with the roster."""
    order = sorted(members)
    DealRng(derive_seed(seed, "seating", key, players, *order)).shuffle(order)
    return order


SWAP_BUDGET = 20_000  # swap proposals at most (about a third of a second)
SWAPS_PER_SEAT = 50


def draw_groups(seed: int, key: str, names: Sequence[str], players: int, count: int) -> list[tuple[str, ...]]:
    """``count`` groups of ``players`` distinct bots, as even as we can cheaply make them.

    First a greedy draw: the bots that have played least fill each group (so every
    bot's group count stays within one of every other's), preferring among them
    those who have met the chosen members least. Greedy drawing paints itself into
    corners, so then a bounded hill climb swaps two bots between two groups (which
    keeps every bot's count) whenever that evens out how often pairs meet. All
    choices come from a generator seeded by ``seed``, ``key`` and ``players``.
    """
    rng = DealRng(derive_seed(seed, "sample", key, players))
    groups = _draw_once(rng, names, players, count)
    budget = min(SWAP_BUDGET, SWAPS_PER_SEAT * count * players)
    return _even_out(rng, groups, budget)


def _draw_once(rng: DealRng, names: Sequence[str], players: int, count: int) -> list[tuple[str, ...]]:
    plays = dict.fromkeys(names, 0)
    met: Counter[tuple[str, str]] = Counter()

    def meetings(b: str, others: Sequence[str]) -> int:
        return sum(met[_pair(b, c)] for c in others if c != b)

    out = []
    for _ in range(count):
        tiebreak = {b: rng.next64() for b in names}
        chosen: list[str] = []
        while len(chosen) < players:
            rest = [b for b in names if b not in chosen]
            low = min(plays[b] for b in rest)
            bucket = [b for b in rest if plays[b] == low]
            if chosen:
                pick = min(bucket, key=lambda b: (meetings(b, chosen), tiebreak[b]))
            elif len(bucket) <= 4 * players:  # only matters near the end of a round
                pick = min(bucket, key=lambda b: (-meetings(b, bucket), tiebreak[b]))
            else:
                pick = min(bucket, key=tiebreak.__getitem__)
            chosen.append(pick)
        for b in chosen:
            plays[b] += 1
        for a, b in itertools.combinations(sorted(chosen), 2):
            met[(a, b)] += 1
        out.append(tuple(chosen))
    return out


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def _even_out(rng: DealRng, drawn: list[tuple[str, ...]], budget: int) -> list[tuple[str, ...]]:
    """Swap bots between groups while the sum of squared pair meetings does not grow."""
    groups = [list(g) for g in drawn]
    met: Counter[tuple[str, str]] = Counter()
    for g in groups:
        for a, b in itertools.combinations(g, 2):
            met[_pair(a, b)] += 1
    if len(groups) < 2:
        return drawn
    for _ in range(budget):
        i, j = rng.randbelow(len(groups)), rng.randbelow(len(groups))
        one, two = groups[i], groups[j]
        xi, yi = rng.randbelow(len(one)), rng.randbelow(len(two))
        x, y = one[xi], two[yi]
        if i == j or x in two or y in one:
            continue
        changes = []
        for a in one:
            if a != x:
                changes += [(_pair(x, a), -1), (_pair(y, a), 1)]
        for b in two:
            if b != y:
                changes += [(_pair(y, b), -1), (_pair(x, b), 1)]
        delta = 0
        for pair, step in changes:
            c = met[pair]
            delta += (c + step) ** 2 - c * c
            met[pair] = c + step
        # Equal moves are taken half the time, to wander along plateaus.
        if delta < 0 or (delta == 0 and rng.randbelow(2) == 0):
            one[xi], two[yi] = y, x
        else:
            for pair, step in changes:
                met[pair] -= step
    return [tuple(g) for g in groups]


def _groups(tournament: Tournament, g: GameEntry, names: list[str], p: int) -> list[tuple[tuple[str, ...], int]]:
    """(members, deal offset) per group, in group order."""
    if g.schedule == "round-robin":
        return [(c, 0) for c in itertools.combinations(names, p)]
    if g.schedule == "gauntlet":
        return [(c, 0) for c in gauntlet_groups(names, g.gauntlet or (), p)]
    count = sampled_groups(len(names), p, g.deals, g.matches_per_bot or 1, len(g.players))
    seen: Counter[frozenset[str]] = Counter()
    out = []
    for members in draw_groups(tournament.seed, g.key, names, p, count):
        # A group drawn again plays fresh deals rather than replaying the same ones.
        out.append((members, seen[frozenset(members)] * g.deals))
        seen[frozenset(members)] += 1
    return out


def build_schedule(
    tournament: Tournament,
    bots: Sequence[BotEntry],
    deal_secret: str | None = None,
    *,
    revealed: Collection[tuple[str, int, int]] = (),
    stored: Collection[str] = (),
    results: Mapping[str, tuple[Sequence[str], Sequence[int]]] | None = None,
    plans: list[AdaptivePlan] | None = None,
) -> list[MatchSpec]:
    """Every match of the tournament, in schedule order; raises ``ConfigError``.

    ``deal_secret`` (``ResultStore.deal_secret()``) is required unless ``deals: public``.
    With secret deals, a group whose rotations of a deal are not all in ``stored`` (match
    ids) never plays a deal in ``revealed`` ((game, players, deal seed): shown on a replay
    page): it plays all its rotations of a replacement deal instead (``deal_seed``'s
    ``redeal``). Finished groups keep their deal; nothing changes while nothing is revealed.
    An adaptive entry's matches depend on the stored ``results`` (match id -> (bots in seat
    order, places)): its rounds so far and the next one (arena/tournament/adaptive.py); its
    plan is appended to ``plans`` if given. Its groups follow the same replacement rule.
    """
    check_schedule(tournament, bots)
    key = deal_key(tournament, deal_secret)
    # deals: public: anyone can compute every deal, so replacing one would hide nothing
    revealed = set(revealed) if tournament.deals != "public" else set()
    stored = set(stored) if revealed else set()
    roster = [b.name for b in bots]
    sha = {b.name: getattr(b, "sha256", "") for b in bots}  # a benchmark roster may have no files
    rows = []
    for entry_index, g in enumerate(tournament.games):
        names = entry_bots(tournament, entry_index, roster)
        if g.schedule == "adaptive":
            rows += _adaptive_rows(tournament, g, entry_index, names, key, sha, results or {}, plans, revealed, stored)
            continue
        for p in g.players:
            options = g.options_for(p)
            for group, (members, offset) in enumerate(_groups(tournament, g, names, p)):
                seats = _seating(tournament.seed, g.key, p, members)
                for d in range(g.deals):
                    deal = offset + d
                    redeal = 0
                    while True:
                        dseed = deal_seed(key, g.id, p, options, deal, redeal)
                        block = []
                        for r in range(p):
                            order = tuple(seats[(s + r) % p] for s in range(p))
                            content = match_key(g.key, g.id, p, options, dseed, [(b, sha[b]) for b in order])
                            block.append((r, order, content, match_id(g.key, p, deal, r, content)))
                        if not revealed or (g.id, p, dseed) not in revealed or all(b[3] in stored for b in block):
                            break
                        redeal += 1
                    for r, order, content, mid in block:
                        rows.append(
                            (
                                (d, entry_index, p, group, deal, r),
                                MatchSpec(
                                    match_id=mid,
                                    index=0,
                                    game=g.id,
                                    players=p,
                                    options=dict(options),
                                    group=group,
                                    deal=deal,
                                    rotation=r,
                                    deal_seed=dseed,
                                    match_seed=derive_seed(key, mid),
                                    bots=order,
                                    key=content,
                                ),
                            )
                        )
    rows.sort(key=lambda row: row[0])
    return [dataclasses.replace(m, index=i) for i, (_, m) in enumerate(rows)]


def _adaptive_rows(
    tournament: Tournament,
    g: GameEntry,
    entry_index: int,
    names: list[str],
    key: int | str,
    sha: dict[str, str],
    results: Mapping[str, tuple[Sequence[str], Sequence[int]]],
    plans: list[AdaptivePlan] | None,
    revealed: Collection[tuple[str, int, int]] = (),
    stored: Collection[str] = (),
) -> list[tuple[tuple[int, ...], MatchSpec]]:
    """The (sort key, match) rows of an adaptive entry: one deal set per group of each round,
    round ``r`` playing deal ``r``, seated and named exactly as a round robin's group. As in a
    round robin, a group that has not stored all its rotations of a revealed deal plays a
    replacement deal (fair play: build_schedule)."""
    p = g.players[0]
    options = g.options_for(p)
    settings = g.adaptive_settings
    cap = min(g.max_matches, round_robin_size(len(names), p, g.deals))

    options_text = canonical_json(options)

    def deal_set(number: int, members: tuple[str, ...], group: int = 0) -> list[MatchSpec]:
        redeal = 0
        while True:
            named = _named_deal_set(
                tournament.seed,
                g.key,
                g.id,
                p,
                options_text,
                key,
                number,
                members,
                tuple(sha[b] for b in members),
                redeal,
            )
            if not revealed or (g.id, p, named[0][1]) not in revealed or all(n[0] in stored for n in named):
                break
            redeal += 1
        return [
            MatchSpec(
                match_id=mid,
                index=0,
                game=g.id,
                players=p,
                options=dict(options),
                group=group,
                deal=number,
                rotation=r,
                deal_seed=dseed,
                match_seed=mseed,
                bots=order,
                key=content,
            )
            for r, (mid, dseed, mseed, order, content) in enumerate(named)
        ]

    def outcome(number: int, members: tuple[str, ...]) -> list[tuple[Sequence[str], Sequence[int]]] | None:
        got = []
        for m in deal_set(number, members):
            stored = results.get(m.match_id)
            if stored is None:
                return None
            got.append(stored)
        return got

    found = adaptive_plan(
        names,
        p,
        confidence=settings.confidence,
        top=settings.top,
        margin=settings.margin,
        seed=tournament.seed,
        key=g.key,
        game=g.id,
        cap=cap,
        outcome=outcome,
    )
    if plans is not None:
        plans.append(found)
    rows = []
    for number, groups in enumerate(found.rounds):
        for group, (members, _) in enumerate(groups):
            for m in deal_set(number, members, group):
                rows.append(((number, entry_index, p, group, number, m.rotation), m))
    return rows


@functools.lru_cache(maxsize=1 << 16)
def _named_deal_set(
    seed: int,
    entry_key: str,
    game: str,
    p: int,
    options_text: str,
    key: int | str,
    number: int,
    members: tuple[str, ...],
    shas: tuple[str, ...],
    redeal: int = 0,
) -> tuple[tuple[str, int, int, tuple[str, ...], str], ...]:
    """(match id, deal seed, match seed, seat order, content hash) of each rotation of a group's
    deal set. Cached: an adaptive run plans its rounds again from the start each time."""
    options = json.loads(options_text)
    sha = dict(zip(members, shas))
    seats = _seating(seed, entry_key, p, members)
    dseed = deal_seed(key, game, p, options, number, redeal)
    out = []
    for r in range(p):
        order = tuple(seats[(s + r) % p] for s in range(p))
        content = match_key(entry_key, game, p, options, dseed, [(b, sha[b]) for b in order])
        mid = match_id(entry_key, p, number, r, content)
        out.append((mid, dseed, derive_seed(key, mid), order, content))
    return tuple(out)
