"""`arena duel`: is NEW better than OLD? A sequential test on paired duplicate deals.

NEW and OLD play the same deals, each in every seat: against a fixed field (the same
field bots in the same seats around them, builtin random by default), or, in a
two-player game without a field, against each other in both seat orders. The sample of
one deal is the mean place of OLD minus the mean place of NEW over the deal's seat
rotations (places 0 = best, so a positive sample favours NEW): one number per deal, as
fastchess and fishtest pair the two games of an opening. The deals feed a sequential test
by betting (arena/stats/sequential.py, exact error bounds; fishtest's GSPRT is there for
comparison) in deal order; the duel stops at the first deal whose evidence crosses a
bound, or at the cap (--max-matches). docs/duel.md has the hypotheses and what the test
assumes.

A duel results folder is a normal results folder: the same store, deal secret,
sandbox selection and worker pool as `arena run` (arena/tournament/runner.py), with its
own schedule (this module's ``deal_matches``, fed deal by deal to the pool while the test
is undecided). Matches are named by their content, so a rerun resumes: the stored deals
are tested again in deal order, from the first, and the missing ones are played. The
decision depends only on the deals' results in deal order, never on the number of
workers or on interruptions. At the end, the folder's schedule is the deals the test
used, so `arena leaderboard`, `arena matches` and `arena replay` show exactly those.
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
import signal
import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import games
from arena.errors import ArenaError, WorkersLost
from arena.interrupts import this_process_only
from arena.records import Limits, MatchRecord
from arena.stats.sequential import SequentialTest, Status, check_error_rates, logistic_elo, logistic_score
from arena.tournament.roster import BotEntry
from arena.tournament.runner import Progress
from arena.tournament.schedule import MatchSpec, deal_seed, match_id, match_key
from games.rng import derive_seed

DEFAULT_MARGIN = 0.2  # mean places per match: H1 says NEW is this much better
DEFAULT_MAX_MATCHES = 10_000
MAX_MATCHES = 1_000_000  # arena.tournament.config.MAX_MATCHES_CAP
MAX_ELO = 2000.0
NEW, OLD = "new", "old"  # the two roles; the field's are "field-1", "field-2", ...

# exit codes of `arena duel` besides 0 (a hypothesis accepted), 2 (bad input), 130 (interrupted)
EXIT_INCOMPLETE = 1  # matches the harness could not play: rerun to go on
EXIT_CAPPED = 3  # --max-matches reached with neither hypothesis accepted


@dataclass(frozen=True)
class Hypotheses:
    """H0: the mean place difference (OLD minus NEW, per match) is mu0; H1: it is mu1 > mu0.
    ``elo``: the (elo0, elo1) they were given as, if they were."""

    mu0: float
    mu1: float
    elo: tuple[float, float] | None = None


def elo_to_difference(elo: float, players: int) -> float:
    """The mean place difference of an Elo-like difference: (players - 1) (2 s - 1), s its
    logistic score. Two players head to head: NEW's score against OLD is exactly s."""
    return (players - 1) * (2 * logistic_score(elo) - 1)


def difference_to_elo(difference: float, players: int) -> float:
    """The inverse of ``elo_to_difference`` (±inf at the ends of the range)."""
    return logistic_elo(0.5 + difference / (2 * (players - 1)))


def hypotheses(
    players: int, margin: float | None = None, elo0: float | None = None, elo1: float | None = None
) -> Hypotheses:
    """The duel's hypotheses from --margin or --elo0/--elo1; one-line ArenaError if they are bad."""
    span = players - 1
    if margin is not None and (elo0 is not None or elo1 is not None):
        raise ArenaError("--margin and --elo0/--elo1 both state the hypotheses; give one of them")
    if (elo0 is None) != (elo1 is None):
        raise ArenaError("--elo0 and --elo1 go together, e.g. --elo0 0 --elo1 40")
    if elo0 is not None and elo1 is not None:
        for name, value in (("--elo0", elo0), ("--elo1", elo1)):
            if not math.isfinite(value) or abs(value) > MAX_ELO:
                raise ArenaError(f"{name} {value:g}: give a finite Elo difference from {-MAX_ELO:g} to {MAX_ELO:g}")
        if elo0 >= elo1:
            raise ArenaError(
                f"--elo0 {elo0:g} is not below --elo1 {elo1:g}; H0 (elo0) must be below H1 (elo1), "
                "e.g. --elo0 0 --elo1 40"
            )
        mu0, mu1 = elo_to_difference(elo0, players), elo_to_difference(elo1, players)
        if not mu0 < mu1:  # distinct bounds the float mapping makes one (the test needs two means)
            raise ArenaError(
                f"--elo0 {elo0!r} and --elo1 {elo1!r} are too close: both are a mean place difference of "
                f"{mu0:.6g}; give bounds further apart, e.g. --elo0 0 --elo1 40"
            )
        return Hypotheses(mu0, mu1, (elo0, elo1))
    m = DEFAULT_MARGIN if margin is None else margin
    if not math.isfinite(m) or not 0 < m < span:
        raise ArenaError(
            f"--margin {m:g}: give a mean place difference above 0 and below {span:g} "
            f"(players minus 1), e.g. --margin {min(DEFAULT_MARGIN, span / 2):g}"
        )
    return Hypotheses(0.0, m)


def duel_test(players: int, hyp: Hypotheses, alpha: float, beta: float) -> SequentialTest:
    """The sequential test of a duel: its deals' samples lie in [-(players - 1), players - 1]."""
    span = float(players - 1)
    return SequentialTest(hyp.mu0, hyp.mu1, alpha, beta, -span, span)


def seat_seeds(key: int | str, dseed: int, rotation: int) -> int:
    """The match seed of a deal's matches in one seat rotation, NEW's and OLD's alike: each seat
    (so each field bot, and NEW or OLD) gets the same bot seed (arena.match.referee.bot_seed) in
    both, so a field player that draws its moves from its seed answers the same position the same
    way, and a change of NEW is not drowned in the field's own luck (duplicate play of the field's
    choices as well as the cards). It tells nothing about the cards, as every match seed."""
    return derive_seed(key, "duel-seats", dseed, rotation)


def layout(players: int, head_to_head: bool) -> list[tuple[int, int, tuple[str, ...]]]:
    """One deal's matches in schedule order: (group, rotation, role per seat).

    Head to head: NEW and OLD, both seat orders (group 0). Otherwise group 0 is NEW with
    the field, group 1 OLD with the same field, each in every cyclic rotation of the seats
    [X, field-1, ..., field-(players-1)], so in each rotation NEW and OLD sit in the same
    seat with the same field bots around them."""
    if head_to_head:
        return [(0, 0, (NEW, OLD)), (0, 1, (OLD, NEW))]
    out = []
    for group, side in enumerate((NEW, OLD)):
        base = (side, *(f"field-{i}" for i in range(1, players)))
        for r in range(players):
            out.append((group, r, tuple(base[(s + r) % players] for s in range(players))))
    return out


def deal_sample(matches: list[tuple[tuple[str, ...], tuple[int, ...]]]) -> float:
    """The sample of one deal from its matches' (role per seat, place per seat): the mean
    place of OLD minus that of NEW over the deal's rotations (each holds both, or one each)."""
    total = 0
    for roles, places in matches:
        for role, place in zip(roles, places):
            if role == OLD:
                total += place
            elif role == NEW:
                total -= place
    rotations = len(matches) if any(NEW in r and OLD in r for r, _ in matches) else len(matches) // 2
    return total / rotations


@dataclass(frozen=True)
class Duel:
    """What one duel plays and tests (bots already resolved and named)."""

    game: str
    players: int
    options: dict[str, Any]
    new: BotEntry
    old: BotEntry
    field: tuple[BotEntry, ...]  # players - 1 bots, or none: head to head (two players)
    hyp: Hypotheses
    alpha: float = 0.05
    beta: float = 0.05
    max_matches: int = DEFAULT_MAX_MATCHES

    @property
    def head_to_head(self) -> bool:
        return not self.field

    @property
    def matches_per_deal(self) -> int:
        return 2 if self.head_to_head else 2 * self.players

    @property
    def max_deals(self) -> int:
        return max(1, self.max_matches // self.matches_per_deal)

    @property
    def entries(self) -> list[BotEntry]:
        return [self.new, self.old, *self.field]

    def roles(self) -> dict[str, str]:
        """role -> bot name."""
        out = {NEW: self.new.name, OLD: self.old.name}
        out.update({f"field-{i}": e.name for i, e in enumerate(self.field, 1)})
        return out

    def test(self) -> SequentialTest:
        return duel_test(self.players, self.hyp, self.alpha, self.beta)

    def deal_matches(self, key: int | str, deal: int) -> list[MatchSpec]:
        """The matches of one deal (``key``: arena.tournament.schedule.deal_key's)."""
        names = self.roles()
        sha = {e.name: e.sha256 for e in self.entries}
        dseed = deal_seed(key, self.game, self.players, self.options, deal)
        out = []
        for i, (group, r, roles) in enumerate(layout(self.players, self.head_to_head)):
            order = tuple(names[role] for role in roles)
            content = match_key("duel", self.game, self.players, self.options, dseed, [(b, sha[b]) for b in order])
            mid = match_id(self.game, self.players, deal, r, content)
            out.append(
                MatchSpec(
                    match_id=mid,
                    index=deal * self.matches_per_deal + i,
                    game=self.game,
                    players=self.players,
                    options=dict(self.options),
                    group=group,
                    deal=deal,
                    rotation=r,
                    deal_seed=dseed,
                    match_seed=seat_seeds(key, dseed, r),
                    bots=order,
                    key=content,
                )
            )
        return out

    def sample(self, matches: list[MatchSpec], places: dict[str, tuple[int, ...]]) -> float | None:
        """The deal's sample from the stored places of its matches, None while one is missing."""
        if any(m.match_id not in places for m in matches):
            return None
        role = {v: k for k, v in self.roles().items()}
        return deal_sample([(tuple(role[b] for b in m.bots), places[m.match_id]) for m in matches])

    def describe(self) -> dict[str, Any]:
        """The duel's settings, stored with the folder's tournament config."""
        return {
            "game": self.game,
            "players": self.players,
            "new": self.new.name,
            "old": self.old.name,
            "field": [e.name for e in self.field],
            "mu0": self.hyp.mu0,
            "mu1": self.hyp.mu1,
            "elo": list(self.hyp.elo) if self.hyp.elo else None,
            "alpha": self.alpha,
            "beta": self.beta,
            "max_matches": self.max_matches,
        }


def make_duel(
    game: str,
    new: str,
    old: str,
    *,
    players: int | None = None,
    field: tuple[str, ...] = (),
    margin: float | None = None,
    elo0: float | None = None,
    elo1: float | None = None,
    alpha: float = 0.05,
    beta: float = 0.05,
    max_matches: int = DEFAULT_MAX_MATCHES,
) -> Duel:
    """Check the command line's values and resolve the bots; one-line ArenaError on bad input."""
    from arena.tournament.roster import bot_entry

    spec = games.REGISTRY.get(game)
    if spec is None:
        import difflib

        close = difflib.get_close_matches(game, list(games.REGISTRY), n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise ArenaError(f"unknown game {game!r}; {hint}known games: {', '.join(games.REGISTRY)}")
    p = spec.min_players if players is None else players
    if not spec.min_players <= p <= spec.max_players:
        raise ArenaError(f"--players {p}: {game} takes {spec.min_players} to {spec.max_players} players")
    try:
        check_error_rates(alpha, beta)
    except ValueError as exc:
        raise ArenaError(f"--{exc}") from None
    if not 1 <= max_matches <= MAX_MATCHES:
        raise ArenaError(f"--max-matches {max_matches}: give a number of matches from 1 to {MAX_MATCHES}")
    hyp = hypotheses(p, margin, elo0, elo1)
    if len(field) > p - 1:
        raise ArenaError(
            f"--field: {len(field)} bots given, a {p}-player duel seats {p - 1} around NEW or OLD; give at most {p - 1}"
        )
    e_new, e_old = bot_entry(new, allow_builtin=True), bot_entry(old, allow_builtin=True)
    if e_new.name == e_old.name:
        e_new, e_old = _renamed(e_new, "new"), _renamed(e_old, "old")
    taken = {e_new.name, e_old.name}
    field_entries: list[BotEntry] = []
    if field or p > 2:
        given = [bot_entry(f, allow_builtin=True) for f in (field or ("builtin:random",))]
        for i in range(p - 1):  # the given bots in turn, each seat its own player
            entry = given[i % len(given)]
            name = f"{entry.name}-{i + 1}" if entry.kind == "builtin" or len(given) < p - 1 else entry.name
            while name in taken:
                name += "-f"
            taken.add(name)
            field_entries.append(dataclasses.replace(entry, name=name[-64:]))
    options = spec.resolve_options(p, {})
    duel = Duel(game, p, options, e_new, e_old, tuple(field_entries), hyp, alpha, beta, max_matches)
    if max_matches < duel.matches_per_deal:  # a duel plays whole deals: fewer would be exceeded
        raise ArenaError(
            f"--max-matches {max_matches}: one deal of this duel is {duel.matches_per_deal} matches "
            f"(NEW and OLD in every seat); give at least {duel.matches_per_deal}"
        )
    return duel


def _renamed(entry: BotEntry, suffix: str) -> BotEntry:
    return dataclasses.replace(entry, name=f"{entry.name[:60]}-{suffix}")


def default_results(duel: Duel) -> str:
    return f"results/duel-{duel.game}-p{duel.players}-{duel.new.name}-vs-{duel.old.name}"


def duel_tournament(
    duel: Duel,
    results: str,
    *,
    sandbox: str = "auto",
    trust_bots: bool = False,
    move_s: float = 1.0,
    startup_s: float = 10.0,
    workers: int | None = None,
    limits: Limits | None = None,
) -> Any:
    """The tournament model a duel's folder is recorded with (sandbox, limits, time control)."""
    from arena.tournament.config import SAFE_NAME, parse_tournament

    name = f"duel-{duel.new.name}-vs-{duel.old.name}"
    if not SAFE_NAME.match(name):
        name = "duel"
    bots: list[dict[str, Any]] = []
    for e in duel.entries:
        bots.append(
            {"builtin": e.builtin, "name": e.name} if e.kind == "builtin" else {"path": str(e.path), "name": e.name}
        )
    data = {
        "name": name,
        "seed": 0,
        "bots": bots,
        "results": results,
        "sandbox": sandbox,
        "trust_bots": trust_bots,
        "luck_rollouts": 0,
        "workers": workers or "auto",
        "time_control": {"move_s": move_s, "startup_s": startup_s},
        "limits": (limits or Limits()).to_json(),
        "games": [
            {
                "id": duel.game,
                "players": [duel.players],
                "deals": min(duel.max_deals, 100_000),
                "bots": [e.name for e in duel.entries],
            }
        ],
    }
    try:
        return parse_tournament(data, SOURCE)
    except ArenaError as exc:
        raise _in_options(exc) from None


SOURCE = "arena duel"
# the tournament fields a duel fills from its options (click checks the others' values)
_OPTION_OF = {"results": "--results", "sandbox": "--sandbox"}


def _in_options(exc: ArenaError) -> ArenaError:
    """A tournament field's error in the terms of the duel's command line: '--results: ...; e.g.
    --results DIR', not the tournament file's 'arena duel: results: ...; e.g. results: DIR'."""
    text = str(exc)
    for name, option in _OPTION_OF.items():
        if text.startswith(f"{SOURCE}: {name}: "):
            text = option + ": " + text[len(f"{SOURCE}: {name}: ") :].replace(f"e.g. {name}: ", f"e.g. {option} ")
            return ArenaError(text)
    return exc


# ---- playing it -------------------------------------------------------------------


@dataclass
class DuelOutcome:
    status: Status  # the test after the deals it used
    matches: int  # matches of those deals
    played: int = 0  # matches played by this run
    already: int = 0  # matches of this duel stored before it
    capped: bool = False
    interrupted: bool = False
    incomplete: list[str] = field(default_factory=list)  # why the duel cannot go on now
    broken: list[tuple[str, int]] = field(default_factory=list)  # (bot, matches): faulted in every one
    sandbox_level: str = ""
    results: Path = Path(".")

    @property
    def decision(self) -> str | None:
        return self.status.decision


class _Feeder:
    """The parent's side of a duel: feeds deals to the pool and tests them in deal order."""

    def __init__(
        self, duel: Duel, key: int | str, store: Any, summary: Any, workers: int, places: dict[str, tuple[int, ...]]
    ) -> None:
        self.duel = duel
        self.key = key
        self.store = store
        self.summary = summary
        self.workers = workers
        self.places = places
        self.test = duel.test()
        self.status = self.test.status()
        self.deals: dict[int, list[MatchSpec]] = {}
        self.tested = 0  # deals fed to the test, in order
        self.enqueued = 0  # deals whose matches went to the pool
        self.advance()
        self.enqueued = self.tested

    def matches(self, deal: int) -> list[MatchSpec]:
        if deal not in self.deals:
            self.deals[deal] = self.duel.deal_matches(self.key, deal)
        return self.deals[deal]

    @property
    def done(self) -> bool:
        return self.status.decision is not None or self.tested >= self.duel.max_deals

    def advance(self) -> None:
        while not self.done:
            x = self.duel.sample(self.matches(self.tested), self.places)
            if x is None:
                return
            self.status = self.test.add(x)
            self.deals.pop(self.tested, None)  # tested: its matches are not needed again
            self.tested += 1

    def on_stored(self, mid: str) -> None:
        self.places[mid] = MatchRecord.from_json(self.store.get_record(mid)).result.places
        self.advance()

    def top_up(self, queue: deque) -> None:
        if self.done or self.summary.given_up or self.summary.harness_failures:
            queue.clear()  # decided, or a deal that cannot be completed now: no more matches
            return
        while len(queue) < 2 * self.workers and self.enqueued < self.duel.max_deals:
            queue.extend(m for m in self.matches(self.enqueued) if m.match_id not in self.places)
            self.enqueued += 1


def status_line(duel: Duel, status: Status, matches: int) -> str:
    """The live line: matches, LLR with its bounds, the difference with its 95% interval."""
    lo, hi = status.interval
    text = (
        f"duel: {matches} matches ({status.n} deals) · LLR {status.llr:+.2f} in "
        f"({status.lower:.2f}, {status.upper:.2f}) · {duel.new.name} - {duel.old.name}: "
        f"{status.mean:+.3f} places {_interval(lo, hi, '.3f')}"
    )
    if duel.hyp.elo is not None:
        elo = [_shown(difference_to_elo(v, duel.players)) for v in (status.mean, lo, hi)]
        text += f" · {elo[0]:+.0f} Elo {_interval(elo[1], elo[2], '.0f')}"
    if status.n:  # fastchess's W-L-D and LOS, by deal
        text += f" · deals W-L-D {status.ahead}-{status.behind}-{status.n - status.ahead - status.behind}"
        if status.los is not None:
            text += f" · LOS {100 * status.los:.1f}%"
        if duel.head_to_head:
            text += f" · pairs Ptnml(0-2) {pentanomial(status)}"
    return text


def _shown(elo: float) -> float:
    """``elo`` rounded as shown (whole points), so that -0.3 reads +0, not -0; ±inf and nan kept."""
    return round(elo) + 0.0 if math.isfinite(elo) else elo


def pentanomial(status: Status) -> list[int]:
    """Head to head, fastchess's pentanomial: how many deals gave NEW 0, 0.5, 1, 1.5 and 2 points
    over its two games (a win 1, a tie 0.5). A deal's sample is OLD's mean place minus NEW's,
    in {-1, -0.5, 0, 0.5, 1}, so NEW's points are 2 * (sample + 1) / 2 = sample + 1."""
    out = [0] * 5
    for sample, count in status.counts:
        out[round(2 * (sample + 1))] += count
    return out


def _interval(lo: float, hi: float, fmt: str) -> str:
    """[lo, hi] 95%; an end past the range of Elo shows as ±inf, as fastchess shows it."""
    if not (math.isfinite(lo) or math.isfinite(hi)) or math.isnan(lo) or math.isnan(hi):
        return "[95%: n/a]"
    return f"[{lo:+{fmt}}, {hi:+{fmt}}] 95%"


def opening_line(duel: Duel, results: str | Path) -> str:
    """The first line `arena duel` says: who plays whom, the hypotheses, the bounds, where."""
    h0, h1 = hypotheses_text(duel)
    against = "each other, both seat orders" if duel.head_to_head else ", ".join(e.name for e in duel.field)
    return (
        f"arena duel: {duel.game}, {duel.players} players: {duel.new.name} (NEW) and "
        f"{duel.old.name} (OLD) against {against}; H0: {h0}; H1: {h1}; alpha {duel.alpha:g}, "
        f"beta {duel.beta:g}; at most {duel.max_matches} matches; results in {Path(results)}"
    )


def resume_command(args: list[str]) -> str:
    """The command line that goes on with this duel (its arguments, without --fresh)."""
    import shlex

    return "arena duel " + " ".join(shlex.quote(a) for a in args if a != "--fresh")


def hypotheses_text(duel: Duel) -> tuple[str, str]:
    """What H0 and H1 say, in the duel's units."""
    return tuple(f"{claim} ({detail})" if detail else claim for claim, detail in _claims(duel))  # type: ignore[return-value]


def _claims(duel: Duel) -> tuple[tuple[str, str], tuple[str, str]]:
    """(claim, detail) of H0 and of H1."""
    new, old, h = duel.new.name, duel.old.name, duel.hyp
    if h.elo is not None:
        return (
            (_elo_claim(new, old, h.elo[0], at_least=False), f"mean place difference {h.mu0:+.3f}"),
            (_elo_claim(new, old, h.elo[1], at_least=True), f"difference {h.mu1:+.3f}"),
        )
    return (f"{new} is not better than {old}", ""), (
        f"{new} is better than {old} by at least {h.mu1:g} places per match",
        "",
    )


def _elo_claim(new: str, old: str, elo: float, *, at_least: bool) -> str:
    """NEW's strength against OLD is at least (H1) or at most (H0) ``elo``, in words that stay
    true when the bound is 0 or negative ("better by at least -20 Elo" read as "better")."""
    if at_least:
        if elo > 0:
            return f"{new} is better than {old} by at least {elo:g} Elo"
        if elo == 0:
            return f"{new} is at least as good as {old}"
        return f"{new} is at most {-elo:g} Elo worse than {old}"
    if elo > 0:
        return f"{new} is at most {elo:g} Elo better than {old}"
    if elo == 0:
        return f"{new} is not better than {old}"
    return f"{new} is worse than {old} by at least {-elo:g} Elo"


def verdict_line(duel: Duel, outcome: DuelOutcome) -> str:
    """The last line: the accepted hypothesis, or why there is none."""
    s = outcome.status
    lo, hi = s.interval
    where = (
        f"LLR {s.llr:+.2f} after {outcome.matches} matches; {duel.new.name} - {duel.old.name} "
        f"{s.mean:+.3f} places {_interval(lo, hi, '.3f')}"
    )
    (h0, h0_detail), (h1, h1_detail) = _claims(duel)
    if s.decision == "H1":
        return f"H1: {h1} ({'; '.join(filter(None, (h1_detail, where)))})"
    if s.decision == "H0":
        return f"H0: {h0} ({'; '.join(filter(None, (h0_detail, where)))})"
    if outcome.capped:
        return f"no decision: --max-matches {duel.max_matches} reached with neither hypothesis accepted ({where})"
    return f"no decision yet ({where})"


def _bounds_args(d: dict[str, Any]) -> str:
    """The options that state a stored duel's hypotheses (its ``describe``)."""
    elo = d.get("elo")
    if isinstance(elo, list) and len(elo) == 2:
        return f"--elo0 {elo[0]:g} --elo1 {elo[1]:g}"
    mu1 = d.get("mu1")
    return f"--margin {mu1:g}" if isinstance(mu1, (int, float)) else "--margin ?"


def bounds_changes(previous: Any, duel: Duel) -> str:
    """'the test's bounds changed (--margin 0.2 -> 0.1): ...' against the duel the folder's
    previous run recorded ('' if the same, or if none was recorded). The stored deals are
    tested again from the first under the new bounds, which is sound only if they were not
    chosen from what the old ones showed."""
    config = previous.get("config") if isinstance(previous, dict) else None
    before = config.get("duel") if isinstance(config, dict) else None
    if not isinstance(before, dict):
        return ""
    now = duel.describe()
    diffs = []
    if (before.get("mu0"), before.get("mu1"), before.get("elo")) != (now["mu0"], now["mu1"], now["elo"]):
        diffs.append(f"{_bounds_args(before)} -> {_bounds_args(now)}")
    for key in ("alpha", "beta"):
        if before.get(key) != now[key]:
            old = before.get(key)
            diffs.append(
                f"--{key} {old:g} -> {now[key]:g}" if isinstance(old, (int, float)) else f"--{key} {now[key]:g}"
            )
    if not diffs:
        return ""
    return (
        f"the test's bounds changed ({', '.join(diffs)}): the stored deals are tested again from the first "
        "under the new ones (the error rates hold only if the bounds were not chosen from the results)"
    )


def run_duel(
    duel: Duel,
    tournament: Any,
    *,
    fresh: bool = False,
    workers: int | None = None,
    sandbox_level: str | None = None,
    err: TextIO,
    resume_hint: str = "",
) -> DuelOutcome:
    """Play the duel's missing deals until the test decides or the cap; see the module."""
    from arena.tournament import runner
    from arena.tournament.folder_lock import FolderLock

    results = Path(tournament.results_dir)
    new_folder = not results.exists()
    try:
        runner.make_results_folder(results, tournament)
    except ArenaError as exc:
        raise _in_options(exc) from None
    in_main = threading.current_thread() is threading.main_thread()
    old_term = signal.signal(signal.SIGTERM, this_process_only(runner._on_sigterm)) if in_main else None
    try:
        with FolderLock(results):
            return _run_locked(
                duel,
                tournament,
                results,
                fresh=fresh,
                workers=workers,
                sandbox_level=sandbox_level,
                err=err,
                resume_hint=resume_hint,
            )
    except KeyboardInterrupt:  # while starting (the pool's own interrupt is an outcome)
        if not runner.forget_unstarted(results, new_folder) and resume_hint:
            err.write(f"arena: resume with: {resume_hint}\n")
        raise
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, old_term)


def _run_locked(
    duel: Duel,
    tournament: Any,
    results: Path,
    *,
    fresh: bool,
    workers: int | None,
    sandbox_level: str | None,
    err: TextIO,
    resume_hint: str,
) -> DuelOutcome:
    from arena.match.detect import open_sandbox
    from arena.tournament import runner
    from arena.tournament.roster import snapshot_bots
    from arena.tournament.schedule import deal_key
    from arena.tournament.store import ResultStore, StoreError

    level_lines = io.StringIO()
    sandbox = open_sandbox(sandbox_level or tournament.sandbox, level_lines)
    if any(e.kind != "builtin" for e in duel.entries):  # builtin players run in process
        safe = runner.get_safe_level(runner.asked_level(tournament, sandbox_level))
        fix = f"{safe}, or add --trust-bots if you wrote or trust every bot of the duel"  # it has no file
        runner.require_safe_sandbox(sandbox, tournament, fix=fix, sandbox_level=sandbox_level)
    store = ResultStore(results)
    try:
        if fresh:
            store.reset()
        try:
            store.claim(tournament.name)
            key = deal_key(tournament, store.deal_secret())
        except StoreError as exc:
            raise ArenaError(str(exc)) from None
        entries = snapshot_bots(duel.entries, results)
        snap = {e.name: e for e in entries}
        duel = dataclasses.replace(
            duel, new=snap[duel.new.name], old=snap[duel.old.name], field=tuple(snap[e.name] for e in duel.field)
        )
        config = {**tournament.model_dump(mode="json"), "duel": duel.describe()}
        done = store.completed_ids()  # a deal of these bots stored: the first deal is played first
        stored = any(m.match_id in done for m in duel.deal_matches(key, 0))
        news = runner.joined_news(  # a changed bot's stored deals stop counting; a new time control's do not
            runner.roster_changes(store.bots(), entries),
            runner.settings_changes(store.tournament(), config) if stored else "",
            bounds_changes(store.tournament(), duel) if stored else "",
        )
        store.init_tournament(tournament.name, config, [e.to_json() for e in entries])
        altered = store.forget_altered()
        store.forget_harness_failures()
        err.write(level_lines.getvalue())
        if news:
            err.write(f"arena: since the last run: {news}\n")
        if altered:
            err.write(
                f"arena: {len(altered)} stored matches were altered after they were stored "
                f"(e.g. {altered[0]}); dropped, they are played again\n"
            )
        rows = list(store.iter_results(scheduled=False))
        places = {r.match_id: r.places for r in rows}
        stored_faults = {r.match_id: [(b, k) for b, k in zip(r.bots, r.faults) if k] for r in rows if any(r.faults)}
        summary = runner.RunSummary(results=results, scheduled=0, already_done=0)
        n_workers = max(1, runner.worker_count(tournament, workers))
        feeder = _Feeder(duel, key, store, summary, n_workers, places)
        mine = {m.match_id for d in range(feeder.tested) for m in duel.deal_matches(key, d)}
        outcome = DuelOutcome(
            status=feeder.status, matches=0, sandbox_level=sandbox.level, results=results, already=len(mine)
        )
        if outcome.already:
            err.write(f"arena: resuming: {feeder.tested} deals ({outcome.already} matches) already played\n")
        runner.setup_logging(results, err, fresh=fresh)
        (results / "logs").mkdir(exist_ok=True)
        progress = _DuelProgress(duel, feeder, err, stored_faults)  # a resumed duel's faults count too
        if not feeder.done:
            ctx = {
                "results": results,
                "entries": snap,
                "sandbox": sandbox,
                "limits": runner.limits_from(tournament),
                "tc": runner.time_control_from(tournament),
                "fresh": False,
                "name": tournament.name,
                "warm_bots": tournament.warm_bots,
                "parent_pid": os.getpid(),
            }
            try:
                runner._Pool(ctx, summary, progress).run([], n_workers, top_up=feeder.top_up)
            except WorkersLost as exc:
                outcome.incomplete.append(str(exc))
            except KeyboardInterrupt:
                outcome.interrupted = True
                err.write("\narena: interrupted; matches in flight are dropped, finished ones are kept\n")
                if resume_hint:
                    err.write(f"arena: resume with: {resume_hint}\n")
            outcome.played = summary.played
            outcome.incomplete += [f"given up: {g}" for g in summary.given_up]
            outcome.incomplete += [f"the harness could not play {h}" for h in summary.harness_failures]
        progress.close()  # the faults by bot and kind of the deals tested, as `arena run` ends with them
        outcome.broken = progress.always_faulted()
        outcome.status = feeder.status
        outcome.capped = feeder.status.decision is None and feeder.tested >= duel.max_deals
        used = [m for d in range(feeder.tested) for m in duel.deal_matches(key, d)]
        outcome.matches = len(used)
        store.set_schedule([(m.match_id, m.index) for m in used])
    finally:
        store.close()
    return outcome


class _DuelProgress(Progress):
    """runner.Progress's fault notes, with the duel's status as its periodic line; its fault
    counts are those of the deals the test has read, stored before this run or played in it."""

    every_s = 2.0

    def __init__(
        self, duel: Duel, feeder: _Feeder, out: TextIO, stored: dict[str, list[tuple[str, str]]] | None = None
    ) -> None:
        super().__init__(1 << 62, out)
        self.duel = duel
        self.feeder = feeder
        self.shown = -1
        self.fault_of: dict[str, list[tuple[str, str]]] = dict(stored or {})  # match id -> its faults
        self.tally: dict[tuple[str, str], int] = {}  # the faults of the deals read so far
        self.tallied = 0  # deals in ``tally``

    def update(self, match_id: str, faults: list[tuple[str, str]], reasons: tuple[str, ...] = ()) -> None:
        if faults:
            self.fault_of[match_id] = list(faults)
        self.feeder.on_stored(match_id)
        super().update(match_id, faults, reasons)

    def counted(self) -> dict[tuple[str, str], int]:
        """The faults of the deals the test has read, as the match count says (a match played
        beyond the stop, or ahead of the deals read so far, is not in either)."""
        f = self.feeder
        while self.tallied < f.tested:
            for m in self.duel.deal_matches(f.key, self.tallied):
                for key in self.fault_of.pop(m.match_id, ()):
                    self.tally[key] = self.tally.get(key, 0) + 1
            self.tallied += 1
        return self.tally

    def always_faulted(self) -> list[tuple[str, int]]:
        """(bot, its matches) for each bot that faulted in every match of the deals tested: what
        the duel measured of it is its faults, not its play."""
        per_bot: dict[str, int] = {}
        for (bot, _kind), n in self.counted().items():
            per_bot[bot] = per_bot.get(bot, 0) + n
        d, deals = self.duel, self.feeder.tested
        side = 2 if d.head_to_head else d.players  # NEW's and OLD's matches per deal
        sat = {d.new.name: side * deals, d.old.name: side * deals}
        sat.update({e.name: d.matches_per_deal * deals for e in d.field})
        return [(bot, n) for bot, n in per_bot.items() if n and n == sat.get(bot)]

    def fault_summary(self) -> list[str]:
        return [f"{bot}: {kind} x{n}" for (bot, kind), n in sorted(self.counted().items(), key=lambda kv: -kv[1])]

    def close(self) -> None:
        if self.counted():
            self.out.write("arena: faults by bot and kind: " + "; ".join(self.fault_summary()) + "\n")
            self.out.flush()

    def line(self) -> str:
        f = self.feeder
        faults = sum(self.counted().values())
        return status_line(self.duel, f.status, f.tested * self.duel.matches_per_deal) + (
            f" · faults {faults}" if faults else ""
        )
