"""The tournament file: YAML validated by pydantic models, with one-line errors.

``load_tournament(path)`` reads, validates and cross-checks a tournament file
(bots resolved, player counts against the roster, schedule size) and either
returns a ``Tournament`` or raises ``ConfigError`` whose ``str`` is one line:
``<file>: <field path>: <what is wrong>; <the fix>``. Nothing is run or written.
docs/tournament.md documents every field.
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import errno
import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

import games
from arena import user_file
from arena.errors import ArenaError
from arena.luck.reference import DEFAULT_ROLLOUTS as LUCK_ROLLOUTS  # games per seat of a deal
from arena.match.sandbox import LEVELS as _SANDBOX_LEVELS
from arena.records.controls import LIMIT_BOUNDS, TIME_BOUNDS, Limits, TimeControl  # noqa: F401 (re-exported)

# \Z, not $: $ also matches before a final newline, and "alpha\n" would be a second "alpha" in the pages
SAFE_NAME = re.compile(r"\A[A-Za-z0-9_][A-Za-z0-9._-]{0,63}\Z")
SAFE_NAME_TEXT = "1-64 letters, digits, '.', '_' or '-', not starting with '.' or '-'"
# `auto` plus the sandbox's own levels (strongest first, then `none`).
SANDBOX_LEVELS = ("auto", *_SANDBOX_LEVELS)
SCHEDULES = ("round-robin", "sampled", "gauntlet", "adaptive")
# A round robin larger than this (per game entry) must opt in: `schedule: sampled`,
# or a higher `max_matches`.
ROUND_ROBIN_LIMIT = 2000
MAX_SEED = 2**63 - 1
# Hard ceilings: beyond these a value is a mistake (or an attack), not a plan.
MAX_MATCHES_CAP = 1_000_000  # highest max_matches: weeks of play on a big machine
MAX_MATCHES_PER_BOT = 100_000
MAX_DEALS = 100_000
MAX_WORKERS = 256  # each worker is a process plus one process per warm bot
MAX_WARM_BOTS = 1024
WARM_BOTS = 64  # default: a small field's processes for fair play (one per deal seen), far below the fd limit
# The tournament file itself (checked while reading, before anything is built from it).
MAX_FILE_BYTES = 1_048_576
MAX_DEPTH = 32  # nesting of mappings and lists, aliases expanded
MAX_NUMBER_CHARS = 100  # an integer written longer is refused as YAML is read
MAX_NODES = 100_000  # values in the file, aliases expanded (stops "billion laughs")


class ConfigError(ArenaError):
    """A bad tournament file. ``str`` is one line: file, field path, problem, fix."""

    def __init__(self, file: str, message: str, field: str | None = None, line: int | None = None) -> None:
        self.file = file
        self.field = field
        self.message = " ".join(message.split())  # always one line
        self.line = line  # 1-based line in the file, when known
        where = f"{file}: {field}: " if field else f"{file}: "
        super().__init__(where + self.message)


# ---------------------------------------------------------------------------
# helpers for validators


def _fail(message: str, *sub: str | int) -> PydanticCustomError:
    """An error whose message is ours; ``sub`` extends the field path."""
    return PydanticCustomError("arena", "{msg}", {"msg": message, "sub": sub})


def _suggest(word: object, known: list[str] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(str(word), list(known), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'? " if close else ""


def _got(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime.date, datetime.time)):  # YAML reads 2026-01-01 as a date
        return f"the date {value.isoformat()} (quote it, '{value.isoformat()}', to make it text)"
    if isinstance(value, (bytes, set, frozenset)):  # !!binary, !!set
        return "binary data (!!binary)" if isinstance(value, bytes) else "a set (!!set); use a list [a, b]"
    if value is None:
        return "null"
    if isinstance(value, dict):
        kind = "a mapping"
    elif isinstance(value, list):
        kind = "a list"
    else:
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    text = json.dumps(value, default=str)
    return f"{kind} {text}" if len(text) <= 50 else kind


def _strict_int(value: object) -> bool:
    return type(value) is int


# ---------------------------------------------------------------------------
# the models


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _NamedBot(_Model):
    """A roster entry with an optional explicit name (declared after the entry's own field)."""

    @field_validator("name", check_fields=False)
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        if v is not None and not SAFE_NAME.match(v):
            raise _fail(f"bot name {v!r} is not allowed; use {SAFE_NAME_TEXT}")
        return v


class BotSpec(_NamedBot):
    """One bot file named explicitly (no glob), optionally renamed."""

    path: str
    name: str | None = None

    @field_validator("path")
    @classmethod
    def _path(cls, v: str) -> str:
        problem = path_problem(v)
        if problem:
            raise _fail(problem)
        return v


class BuiltinSpec(_NamedBot):
    """A player built into the arena (arena/match/builtin.py), optionally renamed."""

    builtin: Literal["random"]
    name: str | None = None


def _bot_kind(v: Any) -> str:
    if isinstance(v, BuiltinSpec) or (isinstance(v, dict) and "builtin" in v):
        return "~builtin"
    return "~entry" if isinstance(v, (dict, BotSpec)) else "~glob"


BotItem = Annotated[
    Annotated[str, Tag("~glob")] | Annotated[BotSpec, Tag("~entry")] | Annotated[BuiltinSpec, Tag("~builtin")],
    Discriminator(_bot_kind),
]


class Ratings(_Model):
    """TrueSkill settings; null means the ratings module's default."""

    tau: float | None = Field(None, ge=0, le=10, allow_inf_nan=False)
    draw_probability: float | None = Field(None, ge=0, lt=1, allow_inf_nan=False)


class Adaptive(_Model):
    """``schedule: adaptive``: stop when the ranking (or its top ``top``) is decided at ``confidence``,
    pairs closer than ``margin`` (in mean share difference) excepted."""

    confidence: float = Field(0.95, gt=0.5, lt=1, allow_inf_nan=False)
    top: int | None = Field(None, ge=1, le=MAX_WARM_BOTS)
    margin: float = Field(0.05, ge=0, le=0.5, allow_inf_nan=False)


class GameEntry(_Model):
    """One game of the tournament, at one or more player counts."""

    id: str
    label: str | None = None
    players: list[int]
    deals: int = Field(ge=1, le=MAX_DEALS)
    options: dict[str, Any] = Field(default_factory=dict)
    schedule: str = "round-robin"
    matches_per_bot: int | None = Field(None, ge=1, le=MAX_MATCHES_PER_BOT)
    max_matches: int = Field(ROUND_ROBIN_LIMIT, ge=1, le=MAX_MATCHES_CAP)
    # Names of the roster's bots that play this entry (None: the whole roster). Checked
    # against the roster by arena.tournament.schedule.check_schedule.
    bots: tuple[str, ...] | None = None
    # With schedule: gauntlet, the bots that play the rest of the entry's bots (the field);
    # checked against the entry's bots by arena.tournament.schedule.check_schedule.
    gauntlet: tuple[str, ...] | None = None
    # schedule: adaptive's settings (arena/tournament/adaptive.py); None: the defaults
    adaptive: Adaptive | None = None

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if v not in games.REGISTRY:
            known = ", ".join(games.REGISTRY)
            raise _fail(f"unknown game {v!r}; {_suggest(v, list(games.REGISTRY))}known games: {known}")
        return v

    @field_validator("label")
    @classmethod
    def _label(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None:
            return v
        if not SAFE_NAME.match(v):
            raise _fail(f"label {v!r} is not allowed; use {SAFE_NAME_TEXT}")
        if v in games.REGISTRY and v != info.data.get("id"):
            raise _fail(f"label {v!r} is another game's id; choose a different label")
        return v

    @field_validator("players", mode="before")
    @classmethod
    def _players(cls, v: Any, info: ValidationInfo) -> list[int]:
        counts = [v] if not isinstance(v, list) else v
        if not counts:
            raise _fail("the list is empty; give at least one player count, e.g. players: [3, 4]")
        for i, n in enumerate(counts):
            if not _strict_int(n):
                sub = (i,) if isinstance(v, list) else ()
                raise _fail(f"expected a player count (an integer), got {_got(n)}; e.g. players: [3, 4]", *sub)
        if len(set(counts)) != len(counts):
            raise _fail(f"player counts repeat in {counts}; list each count once")
        spec = games.REGISTRY.get(info.data.get("id", ""))
        if spec is not None:
            for n in counts:
                if not spec.min_players <= n <= spec.max_players:
                    lo, hi = spec.min_players, spec.max_players
                    raise _fail(f"{spec.id} takes {lo} to {hi} players, got {n}; use players between {lo} and {hi}")
        return sorted(counts)

    @field_validator("options")
    @classmethod
    def _options(cls, v: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        spec = games.REGISTRY.get(info.data.get("id", ""))
        counts = info.data.get("players")
        if spec is None or counts is None:
            return v
        known = [o.name for o in spec.options]
        for name in v:
            if name not in known:
                raise _fail(
                    f"{spec.id} has no option {name!r}; {_suggest(name, known)}known options: {', '.join(known)}", name
                )
        for n in counts:
            try:
                spec.resolve_options(n, v)
            except games.OptionError as e:
                detail = str(e).removeprefix(f"{spec.id}: option '{e.option}': ")
                where = f" with {n} players" if len(counts) > 1 and _fails_only_some(spec, counts, v) else ""
                sub = (e.option,) if e.option in v else ()
                raise _fail(f"{spec.id} option {e.option!r}{where}: {detail}", *sub) from None
        return v

    @field_validator("schedule")
    @classmethod
    def _schedule(cls, v: str) -> str:
        if v not in SCHEDULES:
            raise _fail(
                f"unknown schedule {v!r}; {_suggest(v, SCHEDULES)}use 'round-robin', 'sampled', 'gauntlet' or 'adaptive'"
            )
        return v

    @field_validator("bots", mode="before")
    @classmethod
    def _bots(cls, v: Any, info: ValidationInfo) -> Any:
        if v is None:
            return v
        example = "e.g. bots: [random_bot, greedy_bot, cautious_bot]"
        if not isinstance(v, list):
            raise _fail(
                f"expected a list of bot names from the roster, got {_got(v)}; {example}, "
                "or remove bots to play the whole roster"
            )
        counts = info.data.get("players") or []
        need = max(counts, default=1)
        if not v:
            raise _fail(
                f"the list is empty; list at least {need} bot names from the roster, "
                "or remove bots to play the whole roster"
            )
        first: dict[str, int] = {}
        for i, name in enumerate(v):
            if not isinstance(name, str):
                raise _fail(f"expected a bot name (a string), got {_got(name)}; {example}", i)
            if name in first:
                raise _fail(f"bot {_got(name)} is listed twice (also bots[{first[name]}]); list each bot once", i)
            first[name] = i
        if len(v) < need:
            game = info.data.get("id", "the game")
            raise _fail(
                f"{game} with {need} players needs at least {need} bots, the list has {len(v)}; "
                f"list at least {need} bots or remove {need} from players"
            )
        return tuple(v)

    @field_validator("gauntlet", mode="before")
    @classmethod
    def _gauntlet(cls, v: Any) -> Any:
        if v is None:
            return v
        example = "e.g. gauntlet: [mybot]"
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list) or not v:
            raise _fail(f"expected a list of one or more bot names, got {_got(v)}; {example}")
        for i, name in enumerate(v):
            if not isinstance(name, str):
                raise _fail(f"expected a bot name (a string), got {_got(name)}; {example}", i)
            if name in v[:i]:
                raise _fail(f"bot {_got(name)} is listed twice; list each bot once", i)
        return tuple(v)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        # Without `bots` (or `gauntlet`) the entry dumps exactly as before the key existed
        # (the stored config).
        data = handler(self)
        if self.bots is None:
            data.pop("bots", None)
        if self.gauntlet is None:
            data.pop("gauntlet", None)
        if self.adaptive is None:
            data.pop("adaptive", None)
        return data

    @model_validator(mode="after")
    def _sampled(self) -> GameEntry:
        if self.schedule == "sampled" and self.matches_per_bot is None:
            raise _fail("schedule 'sampled' needs matches_per_bot; add e.g. matches_per_bot: 100", "matches_per_bot")
        if self.schedule != "sampled" and self.matches_per_bot is not None:
            raise _fail(
                "matches_per_bot only applies to a sampled schedule; add schedule: sampled or remove it",
                "matches_per_bot",
            )
        if self.schedule == "gauntlet" and self.gauntlet is None:
            raise _fail(
                "schedule 'gauntlet' needs gauntlet, the bots that play the field; add e.g. gauntlet: [mybot]",
                "gauntlet",
            )
        if self.schedule != "gauntlet" and self.gauntlet is not None:
            raise _fail("gauntlet only applies to a gauntlet schedule; add schedule: gauntlet or remove it", "gauntlet")
        if self.schedule != "adaptive" and self.adaptive is not None:
            raise _fail(
                "adaptive settings only apply to an adaptive schedule; add schedule: adaptive or remove adaptive",
                "adaptive",
            )
        if self.schedule == "adaptive" and len(self.players) > 1:
            raise _fail(
                f"an adaptive schedule ranks one player count, got {self.players}; give one count, "
                "e.g. players: 3 (a second entry with a label can rank another)",
                "players",
            )
        return self

    @property
    def adaptive_settings(self) -> Adaptive:
        """The adaptive settings, defaults filled in."""
        return self.adaptive or Adaptive()

    @property
    def key(self) -> str:
        """The name this entry's matches are filed under (label, else game id)."""
        return self.label or self.id

    @property
    def spec(self) -> games.GameSpec:
        return games.get_game(self.id)

    def options_for(self, players: int) -> dict[str, Any]:
        """The resolved options (every key) for one player count."""
        return self.spec.resolve_options(players, self.options)


def _fails_only_some(spec: games.GameSpec, counts: list[int], options: dict[str, Any]) -> bool:
    ok = 0
    for n in counts:
        try:
            spec.resolve_options(n, options)
            ok += 1
        except games.OptionError:
            pass
    return ok > 0


def path_problem(text: str) -> str | None:
    """Why ``text`` cannot be a path on this machine (one line with the fix), else None: what
    the file system or Python would otherwise refuse deep inside a run."""
    if "\0" in text:
        return "the path holds a NUL byte (\\0); remove it"
    long = next((part for part in text.split("/") if len(part.encode()) > 255), None)
    if long is not None:
        return f"a name in the path ({long[:40]}...) is longer than 255 bytes; shorten it"
    if text.startswith("~") and not text.startswith("~/") and text != "~":
        try:
            Path(text).expanduser()
        except RuntimeError:
            return f"{text.split('/')[0]} is no user of this machine; write the path out in full"
    return None


def output_problem(path: Path) -> str | None:
    """Why a file cannot be written at ``path`` (one line with the fix), else None: asked
    before a command's work, not after it."""
    folder = path.parent
    if path.is_dir():
        return f"{str(path)!r} is a folder; give a file name in it"
    if not folder.is_dir():
        return f"{str(path)!r}: no folder {str(folder)!r}; create it or give another path"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{str(path)!r}: the folder {str(folder)!r} is not writable; give another path"
    return None


class Tournament(_Model):
    """A validated tournament file. Paths resolve against ``base_dir``."""

    name: str
    seed: int = Field(ge=0, le=MAX_SEED)
    # secret: deals and match seeds come from the results folder's secret (bots cannot
    # predict them); public: from ``seed``, so anyone (bots too) can recompute every hand
    deals: Literal["secret", "public"] = "secret"
    bots: list[BotItem] = Field(min_length=1)
    games: list[GameEntry] = Field(min_length=1)
    time_control: TimeControl = Field(default_factory=TimeControl)
    workers: Literal["auto"] | int = "auto"
    warm_bots: int = Field(WARM_BOTS, ge=1, le=MAX_WARM_BOTS)
    results: str = ""  # filled in: results/<name> when not given
    root: str | None = None
    sandbox: str = "auto"
    trust_bots: bool = False  # run even at a sandbox level that is not safe for untrusted bots
    fresh_processes: bool = False
    # true: a bot process may play the same deal again (another rotation or group) and
    # remember hidden cards from it; false (fair): each process plays a deal at most once
    allow_deal_memory: bool = False
    limits: Limits = Field(default_factory=Limits)
    ratings: Ratings = Field(default_factory=Ratings)
    # games per seat of each deal for the luck baselines (docs/luck.md); 0: none computed
    luck_rollouts: int = Field(LUCK_ROLLOUTS, ge=0, le=1024)

    _source: str | None = PrivateAttr(default=None)
    _text: str | None = PrivateAttr(default=None)
    _base: Path = PrivateAttr(default_factory=Path.cwd)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        # At its default, luck_rollouts is left out: the stored config of a file that does not
        # set it is exactly what it was before the key existed (readers default it again).
        data = handler(self)
        if self.luck_rollouts == LUCK_ROLLOUTS:
            data.pop("luck_rollouts", None)
        if not self.allow_deal_memory:  # likewise: the config stored before the key existed
            data.pop("allow_deal_memory", None)
        return data

    @model_validator(mode="before")
    @classmethod
    def _default_results(cls, data: Any) -> Any:
        if isinstance(data, dict) and "results" not in data and isinstance(data.get("name"), str):
            data = {**data, "results": f"results/{data['name']}"}
        return data

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not SAFE_NAME.match(v):
            raise _fail(f"{v!r} cannot be used as a folder name; use {SAFE_NAME_TEXT}, e.g. name: spring")
        return v

    @field_validator("workers", mode="before")
    @classmethod
    def _workers(cls, v: Any) -> Any:
        if v == "auto" and isinstance(v, str):
            return v
        if not _strict_int(v) or not 1 <= v <= MAX_WORKERS:
            raise _fail(
                f"expected 'auto' or an integer from 1 to {MAX_WORKERS}, got {_got(v)}; "
                "e.g. workers: auto or workers: 2"
            )
        return v

    @field_validator("bots")
    @classmethod
    def _bot_paths(cls, v: list[Any]) -> list[Any]:
        for i, item in enumerate(v):
            if isinstance(item, str) and not item.strip():
                raise _fail("the path is empty; give a bot file, folder or glob, e.g. bots/*.py", i)
            problem = path_problem(item) if isinstance(item, str) else None
            if problem:
                raise _fail(problem, i)
        return v

    @field_validator("results", "root")
    @classmethod
    def _path(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise _fail("the path is empty; give a folder, e.g. results/spring")
        problem = path_problem(v) if v is not None else None
        if problem:
            raise _fail(problem)
        return v

    @field_validator("sandbox")
    @classmethod
    def _sandbox(cls, v: str) -> str:
        if v not in SANDBOX_LEVELS:
            raise _fail(
                f"unknown sandbox level {v!r}; {_suggest(v, SANDBOX_LEVELS)}use one of {', '.join(SANDBOX_LEVELS)}"
            )
        return v

    @model_validator(mode="after")
    def _unique_keys(self) -> Tournament:
        seen: dict[tuple[str, int], int] = {}
        for i, g in enumerate(self.games):
            for n in g.players:
                first = seen.setdefault((g.key, n), i)
                if first != i:
                    raise _fail(
                        f"{g.key} with {n} players is already in games[{first}]; merge the entries "
                        f"or give this one a distinct label (e.g. label: {g.id}-2)",
                        "games",
                        i,
                        "players",
                    )
        return self

    # ---- derived values -------------------------------------------------------

    @property
    def source(self) -> str | None:
        """The tournament file as given to ``load_tournament`` (None if built in code)."""
        return self._source

    @property
    def base_dir(self) -> Path:
        """Absolute folder that relative paths (bots, results) start from."""
        return self._base

    def resolve_path(self, path: str | os.PathLike[str]) -> Path:
        """A path from the file, made absolute against ``base_dir``."""
        p = Path(path).expanduser()
        return p if p.is_absolute() else self._base / p

    @property
    def results_dir(self) -> Path:
        """Where results go (``results``, default ``results/<name>``), made absolute."""
        return self.resolve_path(self.results)

    @property
    def worker_count(self) -> int:
        """``workers`` as a number (``auto`` = the machine's CPU count)."""
        if self.workers == "auto":
            return min(os.cpu_count() or 1, MAX_WORKERS)
        return int(self.workers)

    def config_error(self, loc: tuple[str | int, ...], message: str) -> ConfigError:
        """A ``ConfigError`` about this tournament's field ``loc``."""
        return ConfigError(self._source or "<tournament>", message, format_loc(loc), _line_of(self._text, loc))


# ---------------------------------------------------------------------------
# turning pydantic errors into one line


_MODELS: dict[tuple[str, ...], type] = {
    (): Tournament,
    ("games",): GameEntry,
    ("bots",): BotSpec,
    ("time_control",): TimeControl,
    ("limits",): Limits,
    ("ratings",): Ratings,
    ("games", "adaptive"): Adaptive,
}

# field path (indexes dropped) -> (what is expected, an example)
_HELP: dict[str, tuple[str, str]] = {
    "name": (SAFE_NAME_TEXT, "name: spring"),
    "seed": (f"an integer from 0 to {MAX_SEED}", "seed: 2026"),
    "deals": ("secret or public", "deals: secret"),
    "bots": ("a list of glob strings or {path, name} entries", "bots: [bots/*.py]"),
    "bots.path": ("the path of one bot file", "- {path: bots/random_bot.py, name: random}"),
    "bots.name": ("a bot name", "- {path: bots/random_bot.py, name: random}"),
    "bots.builtin": ("the name of a builtin player: random", "- {builtin: random}"),
    "games": ("a list of games", "games: [{id: tightwad, players: [3, 4], deals: 4}]"),
    "games.id": ("a game id (" + ", ".join(games.REGISTRY) + ")", "id: tightwad"),
    "games.label": ("a short name for the entry", "label: dw-bidding"),
    "games.players": ("a player count or a list of them", "players: [3, 4]"),
    "games.deals": (f"an integer from 1 to {MAX_DEALS}", "deals: 4"),
    "games.options": ("a mapping of the game's options", "options: {bidding: true}"),
    "games.schedule": ("round-robin, sampled, gauntlet or adaptive", "schedule: sampled"),
    "games.gauntlet": ("a list of bot names of the entry", "gauntlet: [mybot]"),
    "games.adaptive": ("a mapping", "adaptive: {confidence: 0.95, top: 3}"),
    "games.adaptive.confidence": ("a number above 0.5 and below 1", "confidence: 0.95"),
    "games.adaptive.top": ("an integer of at least 1, below the number of bots", "top: 3"),
    "games.adaptive.margin": ("a number from 0 to 0.5", "margin: 0.05"),
    "games.matches_per_bot": (f"an integer from 1 to {MAX_MATCHES_PER_BOT}", "matches_per_bot: 100"),
    "games.max_matches": (f"an integer from 1 to {MAX_MATCHES_CAP}", "max_matches: 5000"),
    "games.bots": ("a list of bot names from the roster", "bots: [random_bot, greedy_bot, cautious_bot]"),
    "time_control": ("a mapping of seconds", "time_control: {startup_s: 10, move_s: 1.0}"),
    "time_control.startup_s": ("a number of seconds from {} to {}", "startup_s: 10"),
    "time_control.move_s": ("a number of seconds from {} to {}", "move_s: 1.0"),
    "time_control.bank_s": ("a number of seconds from {} to {}, or null", "bank_s: 30"),
    "time_control.grace_s": ("a number of seconds from {} to {}", "grace_s: 0.05"),
    "time_control.ponder": ("true (bots run between their turns) or false (stopped)", "ponder: false"),
    "workers": (f"'auto' or an integer from 1 to {MAX_WORKERS}", "workers: auto"),
    "warm_bots": (f"an integer from 1 to {MAX_WARM_BOTS}", f"warm_bots: {WARM_BOTS}"),
    "results": ("a folder path", "results: results/spring"),
    "root": ("a folder path, relative to the tournament file", "root: .."),
    "sandbox": ("one of " + ", ".join(SANDBOX_LEVELS), "sandbox: auto"),
    "trust_bots": ("true or false", "trust_bots: false"),
    "fresh_processes": ("true or false", "fresh_processes: false"),
    "allow_deal_memory": ("true or false", "allow_deal_memory: false"),
    "limits": ("a mapping of integer limits", "limits: {memory_mb: 1024}"),
    "ratings": ("a mapping", "ratings: {tau: 0.008, draw_probability: 0.001}"),
    "luck_rollouts": ("an integer from 0 to 1024", "luck_rollouts: 16"),
    "ratings.tau": ("a number from 0 to 10", "tau: 0.008"),
    "ratings.draw_probability": ("a number from 0 up to (not including) 1", "draw_probability: 0.001"),
}
for _f, (_lo, _hi) in TIME_BOUNDS.items():
    _what, _example = _HELP[f"time_control.{_f}"]
    _HELP[f"time_control.{_f}"] = (_what.format(f"{_lo:g}", f"{_hi:g}"), _example)
for _f in dataclasses.fields(Limits):
    _HELP[f"limits.{_f.name}"] = (
        f"an integer from {LIMIT_BOUNDS[_f.name][0]} to {LIMIT_BOUNDS[_f.name][1]}",
        f"{_f.name}: {_f.default}",
    )

_PROBLEMS = {
    "int_type": "expected an integer",
    "int_from_float": "expected an integer",
    "float_type": "expected a number",
    "string_type": "expected a string",
    "bool_type": "expected true or false",
    "list_type": "expected a list",
    "dict_type": "expected a mapping",
    "model_type": "expected a mapping",
    "dataclass_type": "expected a mapping",
    "finite_number": "expected a finite number",
    "model_attributes_type": "expected a mapping",
    "literal_error": "not an accepted value",
}


def format_loc(loc: tuple[str | int, ...]) -> str:
    """('games', 1, 'players') -> 'games[1].players'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _prioritise(errors: list[Any]) -> list[Any]:
    """A misspelt key shows up as 'missing X' plus 'unknown key Y': report Y first."""
    missing: dict[tuple[Any, ...], list[str]] = {}
    for e in errors:
        if e["type"] == "missing":
            missing.setdefault(tuple(e["loc"][:-1]), []).append(str(e["loc"][-1]))
    typos = [
        e for e in errors if e["type"] in _UNKNOWN_KEY and _suggest(e["loc"][-1], missing.get(tuple(e["loc"][:-1]), []))
    ]
    return typos + [e for e in errors if e not in typos]


# a key no field has: pydantic says so one way for a model, another for a dataclass (TimeControl, Limits)
_UNKNOWN_KEY = ("extra_forbidden", "unexpected_keyword_argument")


def _field_names(model: type | None) -> list[str]:
    if model is None:
        return []
    if dataclasses.is_dataclass(model):
        return [f.name for f in dataclasses.fields(model)]
    return list(model.model_fields)


def _describe(err: dict[str, Any]) -> tuple[tuple[str | int, ...], str]:
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("~")))
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind == "arena":
        return loc + tuple(ctx.get("sub", ())), ctx["msg"]
    generic = ".".join(p for p in loc if isinstance(p, str))
    if kind in _UNKNOWN_KEY:
        parent = tuple(p for p in loc[:-1] if isinstance(p, str))
        model = BuiltinSpec if "~builtin" in err["loc"] else _MODELS.get(parent)
        known = _field_names(model)
        hint = _suggest(loc[-1], known)
        if loc == ("ladder",):  # a ladder file given to `arena run` (or as a tournament elsewhere)
            hint = "a ladder file is served, not run: arena serve FILE --data DIR (docs/ladder.md); "
        return loc, f"unknown key; {hint}known keys here: {', '.join(known)}"
    if kind == "invalid_key":  # YAML made the key null, true or a number
        parent = loc[:-1]
        return parent, (
            f"the key {_got(err['input'])} is not a field name; write field names as words "
            "(name:, seed:, ...), or quote it ('...': ) if you mean the text"
        )
    expected, example = _HELP.get(generic, ("a valid value", ""))
    fix = f"use {expected}" + (f", e.g. {example}" if example else "")
    if kind == "missing":
        return loc, f"required field is missing; add it ({expected})" + (f", e.g. {example}" if example else "")
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        sign = {
            "greater_than": "greater than",
            "greater_than_equal": "at least",
            "less_than": "less than",
            "less_than_equal": "at most",
        }[kind]
        bound = next(iter(ctx.values()))
        return loc, f"must be {sign} {bound}, got {_got(err['input'])}; {fix}"
    if kind == "too_short":
        return loc, f"must not be empty; {fix}"
    problem = _PROBLEMS.get(kind, err["msg"][0].lower() + err["msg"][1:])
    return loc, f"{problem}, got {_got(err['input'])}; {fix}"


# ---------------------------------------------------------------------------
# YAML reading


class _TooBig(yaml.MarkedYAMLError):
    """The file is within the byte limit but expands to too much (aliases, nesting)."""


_OCTAL_1_1 = re.compile(r"[-+]?0[0-7]+")


class _Loader(yaml.SafeLoader):
    """SafeLoader with bounds and without PyYAML's silent duplicate keys.

    Composition counts every node as it would be after expanding aliases (an alias
    costs as much as what it names) and the nesting depth, and stops at ``MAX_NODES``
    and ``MAX_DEPTH`` before anything is constructed: a billion-laughs file fails
    after reading a few lines, and deep nesting fails before Python's recursion limit.
    Merge keys (``<<: *base``) work as in standard YAML.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0
        self._cost: dict[int, tuple[yaml.Node, int, int]] = {}  # id -> (node, expanded size, height)

    def _too_big(self, what: str, node_or_event: Any) -> _TooBig:
        return _TooBig(None, None, what, node_or_event.start_mark)

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node:
        alias = self.check_event(yaml.AliasEvent)
        if alias:
            event = self.peek_event()
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise self._too_big(
                f"is nested more than {MAX_DEPTH} levels deep; a tournament file needs only a few", self.peek_event()
            )
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if alias:
            cost = self._cost.get(id(node))
            if cost is None:
                raise self._too_big(
                    f"alias *{event.anchor} refers to a value that contains it; remove the recursive alias", event
                )
            size, height = cost[1], cost[2]
        else:
            children: list[yaml.Node] = []
            if isinstance(node, yaml.SequenceNode):
                children = node.value
            elif isinstance(node, yaml.MappingNode):
                children = [n for pair in node.value for n in pair]
            costs = [self._cost[id(c)] for c in children]
            size = 1 + sum(c[1] for c in costs)
            height = 1 + max((c[2] for c in costs), default=0)
            self._cost[id(node)] = (node, size, height)
        self._nodes += size if alias else 1
        if self._nodes > MAX_NODES or size > MAX_NODES:
            raise self._too_big(
                f"expands to more than {MAX_NODES} values (aliases count what they repeat); "
                "write the file without mass-repeated aliases",
                node,
            )
        if self._depth + height > MAX_DEPTH:
            raise self._too_big(
                f"is nested more than {MAX_DEPTH} levels deep once aliases are expanded; "
                "a tournament file needs only a few",
                node,
            )
        return node

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if value_node.tag == "tag:yaml.org,2002:int" and len(value_node.value) > MAX_NUMBER_CHARS:
                raise self._long_number(value_node, f"{key_node.value}: ")
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # '<<: *base' merges, and keys given here override the merged ones
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {seen[key]}); keep only one", key_node.start_mark
                )
            if isinstance(key, (str, int, float, bool)):
                seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        # Python's int() refuses over 4,300 digits (that ended as a bug's traceback); no field
        # takes more than 19, so a long number is refused here, where its line is known
        if len(node.value) > MAX_NUMBER_CHARS:
            raise self._long_number(node, "")
        digits = node.value.replace("_", "")
        if ":" in digits:  # YAML 1.1's base 60: `seed: 1:30` was 90; YAML 1.2 reads it as text
            return self.construct_scalar(node)
        if _OCTAL_1_1.fullmatch(digits):  # YAML 1.1's octal: `seed: 017` was 15; 1.2 reads 17
            return int(digits, 10)
        return super().construct_yaml_int(node)

    def construct_yaml_float(self, node: yaml.ScalarNode) -> Any:
        if ":" in node.value:  # base 60 again (`1:30.5` was 90.5): text, as in YAML 1.2
            return self.construct_scalar(node)
        return super().construct_yaml_float(node)

    def _long_number(self, node: yaml.Node, field: str) -> yaml.constructor.ConstructorError:
        return yaml.constructor.ConstructorError(
            None,
            None,
            f"{field}a number {len(node.value)} characters long; no field takes a number this large: "
            "give a value within the field's bounds (docs/tournament.md)",
            node.start_mark,
        )


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)
_Loader.add_constructor("tag:yaml.org,2002:float", _Loader.construct_yaml_float)
# YAML 1.1 (PyYAML) reads a float only with a dot and a signed exponent: `move_s: 5e-1` or `1e3`
# was text, and the field said "expected a number, got '5e-1'". YAML 1.2 reads them as numbers;
# so does this loader (after the int and float forms, which keep their meaning).
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def _line_of(text: str | None, loc: tuple[str | int, ...]) -> int | None:
    """The 1-based line of the deepest YAML node along ``loc`` (best effort)."""
    if not text:
        return None
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError:
        return None
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            hit = next(((k, v) for k, v in node.value if k.value == part), None)
            if hit is None:
                break
            line, node = hit[0].start_mark.line + 1, hit[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _read(path: Path, label: str, kind: str = "tournament file") -> tuple[str, dict[str, Any]]:
    """The file's text and its YAML; ``kind`` names it in errors (a ladder file too)."""
    try:
        raw = user_file.read_bounded(path, MAX_FILE_BYTES)  # a named pipe or /dev/zero must not hang it
        text = raw.decode("utf-8")
    except user_file.TooLarge:
        raise ConfigError(
            label,
            f"is larger than {MAX_FILE_BYTES // 1024} KiB; a {kind} is a few lines of YAML: check that this is the right file",
        ) from None
    except user_file.UserFileError as e:
        raise ConfigError(label, f"{e}; give the {kind} itself (a .yaml file)") from None
    except FileNotFoundError:
        raise ConfigError(label, f"no such file; check the path of the {kind}") from None
    except IsADirectoryError:
        raise ConfigError(label, f"is a folder; give the {kind} (.yaml)") from None
    except UnicodeDecodeError:
        raise ConfigError(label, f"is not UTF-8 text; save the {kind} as UTF-8") from None
    except OSError as e:
        fix = {
            errno.ELOOP: "point it at the real file",
            errno.ENAMETOOLONG: "a name in the path is longer than 255 bytes; shorten it",
        }.get(e.errno or 0, "check its permissions")
        raise ConfigError(label, f"cannot be read ({e.strerror}); {fix}") from None
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
        what = (e.problem or "") + (f" ({e.context})" if e.context else "")
        if isinstance(e, _TooBig):
            raise ConfigError(label, f"the YAML {what}", where, mark.line + 1 if mark else None) from None
        if isinstance(e, yaml.constructor.ConstructorError):
            if "constructor for the tag" in what:
                what += f"; remove the tag: a {kind} is plain YAML (text, numbers, lists, mappings)"
            elif "unhashable key" in what:
                what += "; a key is a field name, not a list or mapping"
            raise ConfigError(label, f"{what}", where, mark.line + 1 if mark else None) from None
        raise ConfigError(
            label,
            f"YAML syntax error: {what}; fix the YAML there (indentation, ':' after keys, quotes)",
            where,
            mark.line + 1 if mark else None,
        ) from None
    except yaml.YAMLError as e:
        raise ConfigError(label, f"YAML error: {e}; fix the YAML") from None
    except (RecursionError, MemoryError):  # the bounds above should make this unreachable
        raise ConfigError(label, f"the YAML is too large or too deeply nested; a {kind} is a few lines") from None
    if data is None:
        raise ConfigError(
            label, "the file is empty; a tournament needs at least name, seed, bots and games (see docs/tournament.md)"
        )
    if not isinstance(data, dict):
        raise ConfigError(
            label, f"expected a mapping of fields (name: ..., seed: ...) at the top, got {_got(data)}", None, 1
        )
    return text, data


# ---------------------------------------------------------------------------
# the entry points


def parse_tournament(
    data: dict[str, Any],
    source: str | None = None,
    base_dir: Path | None = None,
    text: str | None = None,
    file_dir: Path | None = None,
) -> Tournament:
    """Validate a mapping as a tournament; raises ConfigError.

    ``base_dir`` (default: the working directory) is where relative paths start,
    unless the mapping sets ``root`` (relative to ``file_dir``, default the same).
    Bots and the schedule are not checked here; ``load_tournament`` does that.
    """
    try:
        t = Tournament.model_validate(data)
    except ValidationError as e:
        errors = _prioritise(e.errors())
        loc, message = _describe(errors[0])
        more = len(errors) - 1
        if errors[0]["type"] in _UNKNOWN_KEY:  # the typo also explains a 'missing' error
            parent = tuple(errors[0]["loc"][:-1])
            typo = str(errors[0]["loc"][-1])
            more -= sum(
                1
                for x in errors
                if x["type"] == "missing" and tuple(x["loc"][:-1]) == parent and _suggest(typo, [str(x["loc"][-1])])
            )
        if more > 0:
            message += f" (and {more} more problem{'s' if more > 1 else ''})"
        raise ConfigError(source or "<tournament>", message, format_loc(loc) or None, _line_of(text, loc)) from None
    t._source = source
    t._text = text
    t._base = (base_dir or Path.cwd()).resolve()
    if t.root is not None:
        root = Path(t.root).expanduser()
        root = (root if root.is_absolute() else (file_dir or t._base) / root).resolve()
        if not root.is_dir():
            raise t.config_error(
                ("root",),
                f"{t.root!r} is not a folder (resolved to {root}); give a folder relative to the tournament file",
            )
        t._base = root
    return t
