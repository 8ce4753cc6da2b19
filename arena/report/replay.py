"""Replay a stored match: re-run it decision by decision and verify it against the engine
(`arena replay`), or let a live bot take over one seat from a chosen decision.

Records are read through ``arena.records.MatchRecord`` (its one shape check); a record that
fails it is refused with one line naming the source and the fix."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena import user_file
from arena.errors import ArenaError
from arena.match.agents import Agent
from arena.match.referee import SandboxArg, final_places
from arena.match.timecontrol import TimeControl
from arena.records.record import MAX_RECORD_BYTES, MatchRecord, RecordError, RecordJson
from arena.records.spec import MatchSpec
from games import GameError, get_game
from games.core import State
from games.rng import DealRng


class ReplayMismatch(ArenaError):
    """The engine does not reproduce the record; names the first differing decision."""

    def __init__(self, decision: int | None, message: str) -> None:
        self.decision = decision
        where = "at the end" if decision is None else f"decision {decision}"
        super().__init__(f"replay mismatch {where}: {message}")


def mark_shown(source: Path, record: RecordJson) -> None:
    """Before a page showing ``record``'s hands is written from a results folder: record its deal
    as shown there, so no later run of that folder deals it again (arena/tournament/fair_play.py)."""
    if not source.is_dir():
        return
    from arena.tournament.store import ResultStore, StoreError

    try:
        with ResultStore(source) as store:
            store.reveal_deals([(record["game"], record["players"], record["deal_seed"])])
    except (StoreError, sqlite3.Error, KeyError, TypeError, ValueError) as exc:
        raise ArenaError(
            f"{source}: cannot record that the page shows this deal ({exc}); "
            "no page written: check that the folder is writable"
        ) from None


def replay_source(source: Path) -> Path:
    """What to read a record from: a tournament file (as `arena matches` and `export` take it)
    stands for its results folder; anything else is itself."""
    if source.suffix in (".yaml", ".yml") and source.is_file():
        from arena.report.standings import results_folder

        return results_folder(source)
    return source


def load_record(source: Path, match_id: str | None = None, *, seat: int | None = None) -> RecordJson:
    """A record from a JSON file, a results folder or an export (.jsonl) by match id; ``seat``
    (the one a trace shows) must be one of its seats, else the trace would silently show nothing."""
    record = _load(source, match_id)
    if seat is not None and not 0 <= seat < record["players"]:
        last = record["players"] - 1
        raise ArenaError(f"--seat {seat}: no such seat in match {record['match_id']} (seats 0..{last})")
    return record


def _load(source: Path, match_id: str | None) -> RecordJson:
    if source.is_dir():
        if not match_id:
            raise ArenaError(f"{source}: a results folder needs a match id: arena replay {source} <match id>")
        from arena.tournament.store import ResultStore

        if not (source / "results.sqlite").exists():
            raise ArenaError(f"{source}: no results.sqlite here; give the tournament's results folder")
        try:
            record = ResultStore(source, read_only=True).get_record(match_id)
        except KeyError:
            record = None
        except (zlib.error, UnicodeDecodeError, ValueError) as exc:
            why = (
                "not compressed data"
                if isinstance(exc, zlib.error)
                else "not UTF-8"
                if isinstance(exc, UnicodeDecodeError)
                else "not JSON"
            )
            raise ArenaError(
                f"{source}: match {match_id!r}: the stored record is damaged or was altered "
                f"({why}); it cannot be replayed: rerun the tournament into a new "
                "results folder to play it again"
            ) from None
        if record is None:
            raise ArenaError(
                f"{source}: no match with id {match_id!r}; list the ids with "
                f"`arena matches {source}` (--bot, --game, --fault narrow it)"
            )
        _check_shape(
            record,
            f"{source}: match {match_id!r}: the stored record",
            "it cannot be replayed: rerun the tournament into a new results folder to play it again",
        )
        return record
    if source.suffix == ".jsonl":  # a bulk export (arena export): the line of that match
        from arena.report.export import find_in_jsonl

        record = find_in_jsonl(source, match_id)
        _check_shape(record, f"{source}: match {record.get('match_id')!r}", "export it again with `arena export`")
        return record
    try:  # bounded: the path may name a named pipe or /dev/zero
        record = json.loads(user_file.read_bounded(source, MAX_RECORD_BYTES))
    except user_file.UserFileError as exc:
        raise ArenaError(
            f"{source}: {exc}; give a match record file (`arena play ... --json > file` writes one)"
        ) from None
    except (OSError, ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ArenaError(
            f"{source}: not a match record ({why}); write one with `arena play ... --json > file`"
        ) from None
    if not isinstance(record, dict) or "decisions" not in record:
        raise ArenaError(f"{source}: not a match record (no 'decisions'); write one with `arena play ... --json`")
    _check_shape(record, f"{source}: the record", "write a new one with `arena play ... --json > file`")
    if match_id and match_id != record.get("match_id"):  # one record per file: a different id is a mix-up
        raise ArenaError(
            f"{source}: holds match {record.get('match_id')!r}, not {match_id!r}; leave the id out, or give "
            "the results folder or export that holds it"
        )
    return record


def _check_shape(record: Any, what: str, fix: str) -> MatchRecord:
    """The typed record, or a one-line ``ArenaError`` naming what is missing or wrong."""
    try:
        return MatchRecord.from_json(record)
    except RecordError as exc:
        raise ArenaError(f"{what} is malformed or was altered ({exc}); {fix}") from None


def _new_state(record: RecordJson) -> State:
    try:
        spec = get_game(record["game"])
        if record.get("rules_version") != spec.rules_version:
            raise ArenaError(
                f"match {record['match_id']}: recorded with {record['game']} rules version "
                f"{record.get('rules_version')!r}, this engine is version {spec.rules_version!r}"
            )
        return spec.new_game(record["players"], record["deal_seed"], record["options"])
    except GameError as err:
        raise ArenaError(f"match {record.get('match_id')}: {err}") from None


def verify_record(record: RecordJson, observer: Callable[..., None] | None = None) -> State:
    """Replay every recorded decision through the engine; raise ReplayMismatch at
    the first difference. Returns the final state."""
    try:
        return _verify(record, observer)
    except ArenaError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, GameError) as exc:
        # past the shape check, a value of the wrong kind deep inside: altered, not a bug
        raise ReplayMismatch(
            None, f"the record is malformed or was altered ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})"
        ) from None


def _verify(record: RecordJson, observer: Callable[..., None] | None = None) -> State:
    rec = MatchRecord.from_json(record) if not isinstance(record, MatchRecord) else record
    state = _new_state(record)
    names = list(rec.bot_names)
    emit = observer or (lambda *a, **k: None)
    emit("begin", match=MatchSpec.of_record(record), names=names, state=state)
    faults_at = {f.get("decision"): (s, f) for s, f in enumerate(rec.faults) if f}
    for i, d in enumerate(rec.decisions):
        if state.is_over():
            raise ReplayMismatch(i, "the game is already over but the record goes on")
        seat, action = d.seat, d.action
        if d.n != state.decisions:
            raise ReplayMismatch(i, f"recorded as decision {d.n}, the engine is at {state.decisions}")
        if seat not in state.to_move():
            raise ReplayMismatch(i, f"recorded seat {seat} moves, the engine has {list(state.to_move())} to move")
        if not 0 <= action < len(state.legal_actions(seat)):
            raise ReplayMismatch(i, f"recorded action {action!r} is not legal here")
        text = state.action_text(seat, action)
        if text != d.text:
            raise ReplayMismatch(i, f"recorded {d.text!r}, the engine's action {action} is {text!r}")
        if i in faults_at:
            s, f = faults_at[i]
            emit("fault", seat=s, bot=names[s], fault=f)
        emit(
            "decision",
            state=state,
            seat=seat,
            bot=names[seat],
            action=action,
            text=text,
            ms=d.ms,
            status=d.status.value,
        )
        state.apply(seat, action)
    if not state.is_over():
        raise ReplayMismatch(None, f"the record ends after {len(rec.decisions)} decisions but the game is not over")
    got = state.result().to_json()
    if got != rec.game_result.to_json():
        raise ReplayMismatch(None, f"the engine's result {got} differs from the recorded {record['game_result']}")
    places = final_places(got["places"], rec.faults)
    if places != list(rec.result.places):
        raise ReplayMismatch(
            None, f"places after the fault policy {places} differ from the recorded {list(rec.result.places)}"
        )
    emit("end", record=record, state=state)
    return state


class RecordedAgent(Agent):
    """Plays a seat's recorded actions while they still apply (matched by their
    readable text), then random legal actions from its match seed."""

    def __init__(self, name: str, recorded: list[str]) -> None:
        """``recorded``: the texts of the seat's recorded actions, in order."""
        self.name = name
        self._queue = list(recorded)
        self._rng = DealRng(0)
        self._line: bytes | None = None
        self.diverged_at: int | None = None

    def begin(self, start_msg: dict[str, Any]) -> None:
        self._rng = DealRng(start_msg["seed"])

    def ask(self, act_msg: dict[str, Any], deadline: float) -> None:
        legal = act_msg["observation"]["legal_actions"]
        pick = None
        if self.diverged_at is None and self._queue:
            want = self._queue.pop(0)
            pick = next((a["id"] for a in legal if a["text"] == want), None)
            if pick is None:
                self.diverged_at = act_msg["decision"]
        elif self.diverged_at is None:
            self.diverged_at = act_msg["decision"]
        if pick is None:
            pick = self._rng.randbelow(len(legal))
        self._line = str(pick).encode()

    def answer(self, deadline: float) -> tuple[bytes, float]:
        import time

        line, self._line = self._line, None
        assert line is not None
        return line, time.monotonic()


def takeover(
    record: RecordJson,
    start: int,
    seat: int,
    agent: Agent,
    *,
    observer: Callable[..., None] | None = None,
    time_control: TimeControl | None = None,
    sandbox: SandboxArg = None,
    no_timeouts: bool = False,
    diverged: dict[int, int | None] | None = None,
) -> RecordJson:
    """Replay decisions 0..start-1 as recorded, then ``agent`` plays ``seat`` live and
    the other seats play their recorded actions while they apply, then random legal ones;
    ``diverged`` (if given) gets each other seat's first decision off the record (None: none)."""
    from arena.match.referee import play_match

    rec = MatchRecord.from_json(record)
    n = len(rec.decisions)
    if not 0 <= start <= n:
        raise ArenaError(f"--from {start}: the match has decisions 0..{n - 1}")
    if not 0 <= seat < rec.players:
        raise ArenaError(f"--bot {seat}=...: no such seat (seats 0..{rec.players - 1})")
    _new_state(record)  # checks the rules version
    start = live_start(record, start, seat)
    prefix = [(d.seat, d.action) for d in rec.decisions[:start]]
    later = rec.decisions[start:]
    agents: list[Agent] = []
    for s, bot in enumerate(rec.bots):
        if s == seat:
            agents.append(agent)
        else:
            agents.append(RecordedAgent(bot.name, [d.text for d in later if d.seat == s]))
    m = dataclasses.replace(MatchSpec.of_record(record), match_id=f"{record['match_id']}/from{start}/seat{seat}")
    new = play_match(
        m, agents, time_control=time_control, sandbox=sandbox, observer=observer, no_timeouts=no_timeouts, prefix=prefix
    )
    if diverged is not None:
        diverged.update({s: a.diverged_at for s, a in enumerate(agents) if isinstance(a, RecordedAgent)})
    return new


def live_start(record: RecordJson, start: int, seat: int) -> int:
    """Where the live play of `--from start` begins: ``start``, unless it falls inside a
    simultaneous decision (Divers Weights' tricks, Palace's set-up swaps). The referee asks
    all of its seats at once, from the same observation; replaying part of it first showed
    the live bot who had already chosen, at another decision number. So the live play begins
    at the decision's start when ``seat`` chooses in it from ``start`` on, else after it (the
    seats that chose after ``start`` play their recorded moves either way)."""
    rec = MatchRecord.from_json(record)
    state = _new_state(record)
    i, n = 0, len(rec.decisions)
    while i < n and i <= start and not state.is_over():
        first = i
        for mover in state.to_move():  # as the referee's play loop applies one round of answers
            if i >= n or state.is_over() or mover not in state.to_move() or rec.decisions[i].seat != mover:
                break
            state.apply(mover, rec.decisions[i].action)
            i += 1
        if i == first:  # the record does not follow the engine here: leave --from as given
            return start
        if first < start < i:
            return first if any(d.seat == seat for d in rec.decisions[start:i]) else i
    return start


def take_over(
    record: RecordJson,
    start: int | None,
    bot_spec: str | None,
    *,
    move_s: float = 1.0,
    sandbox_level: str = "auto",
    no_timeouts: bool = False,
    observer: Callable[..., None] | None = None,
) -> tuple[RecordJson, str]:
    """`arena replay --from K --bot SEAT=FILE`: FILE's bot takes ``SEAT`` over from decision K
    (``takeover``); returns the new record and one line comparing the seat's places."""
    if start is None or bot_spec is None:
        raise ArenaError("--from K and --bot SEAT=FILE go together, e.g. --from 12 --bot 2=bots/mybot.py")
    key, sep, path = bot_spec.partition("=")
    if not sep or not key.strip().isdigit():
        raise ArenaError(f"--bot {bot_spec!r}: expected SEAT=FILE, e.g. --bot 2=bots/mybot.py")
    seat = int(key)
    from arena.match.agents import ProcessAgent
    from arena.match.detect import open_sandbox
    from arena.records import Limits
    from arena.tournament.roster import bot_entry

    recorded = record.get("time_control")
    ponder = isinstance(recorded, dict) and recorded.get("ponder") is True  # as the bots of the match ran
    tc = TimeControl(move_s=move_s, ponder=ponder)
    sandbox = open_sandbox(sandbox_level)
    agent = ProcessAgent(bot_entry(path), sandbox=sandbox, limits=Limits(), time_control=tc, no_timeouts=no_timeouts)
    diverged: dict[int, int | None] = {}
    begins = live_start(record, start, int(key)) if 0 <= start <= len(record["decisions"]) else start
    try:
        new = takeover(
            record,
            start,
            seat,
            agent,
            observer=observer,
            time_control=tc,
            sandbox=sandbox,
            no_timeouts=no_timeouts,
            diverged=diverged,
        )
    finally:
        agent.close()
    before = MatchRecord.from_json(record).result.places[seat] + 1
    after = MatchRecord.from_json(new).result.places[seat] + 1
    said = f"seat {seat}: placed {before} in the recorded match, {after} with {agent.name} from decision {begins}"
    if begins != start:
        said += f" (--from {start} is inside a simultaneous decision, whose seats choose together)"
    return new, said + "; " + _followed(diverged)


def _followed(diverged: dict[int, int | None]) -> str:
    """How long the other seats followed the record: once the game leaves it, they play random
    legal moves, so a place after that is against random opponents."""
    off = {s: d for s, d in sorted(diverged.items()) if d is not None}
    if not off:
        return "the other seats played their recorded moves throughout"
    parts = ", ".join(f"seat {s} from decision {d}" for s, d in off.items())
    return f"off the record, random legal moves: {parts}"
