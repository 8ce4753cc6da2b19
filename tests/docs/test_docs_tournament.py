"""Every ```yaml block of docs/tournament.md loads; blocks marked invalid fail as documented."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import games
from arena.tournament.config import (
    BotSpec,
    BuiltinSpec,
    ConfigError,
    GameEntry,
    Limits,
    Ratings,
    TimeControl,
    Tournament,
)
from arena.tournament.load import load_tournament
from tests.tournament.tournament_fixtures import make_project

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "tournament.md"
FENCE = re.compile(r"(<!-- invalid -->\s*\n)?```yaml\n(.*?)```(?:\s*\n```text\n(.*?)```)?", re.S)


def _blocks() -> list[tuple[bool, str, str | None]]:
    return [(bool(m.group(1)), m.group(2), m.group(3)) for m in FENCE.finditer(DOC.read_text())]


BLOCKS = _blocks()


def test_doc_has_valid_and_invalid_blocks() -> None:
    assert sum(1 for invalid, _, _ in BLOCKS if not invalid) >= 5
    assert sum(1 for invalid, _, _ in BLOCKS if invalid) >= 5
    for invalid, _, message in BLOCKS:
        assert (message is not None) == invalid, "an invalid block needs its ```text message, a valid one none"


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_doc_block(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    invalid, text, message = BLOCKS[index]
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tournaments" / "mine.yaml").write_text(text)
    if not invalid:
        t = load_tournament("tournaments/mine.yaml")
        assert isinstance(t, Tournament)
        return
    with pytest.raises(ConfigError) as err:
        load_tournament("tournaments/mine.yaml")
    got = str(err.value).replace(str(tmp_path.resolve()), "<the working directory>")
    assert got == message.strip()


def test_spring_yaml_is_the_doc_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spring = (ROOT / "tournaments" / "spring.yaml").read_text()
    assert spring == BLOCKS[0][1]
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    t = load_tournament(ROOT / "tournaments" / "spring.yaml")
    assert t.name == "spring" and t.seed == 2026
    assert [g.id for g in t.games] == ["tightwad", "divers-weights", "palace"]


def test_doc_mentions_every_field_and_option() -> None:
    doc = DOC.read_text()
    for model in (Tournament, GameEntry, BotSpec, BuiltinSpec, TimeControl, Limits, Ratings):
        names = (
            [f.name for f in dataclasses.fields(model)] if dataclasses.is_dataclass(model) else list(model.model_fields)
        )
        for name in names:
            assert f"`{name}`" in doc, f"docs/tournament.md does not document {model.__name__}.{name}"
    for spec in games.REGISTRY.values():
        assert f"`{spec.id}` | {spec.min_players} to {spec.max_players}" in doc
        for option in spec.options:
            assert f"`{option.name}`" in doc, f"{spec.id} option {option.name} undocumented"
    for f in dataclasses.fields(Limits):
        assert f"| `{f.name}` | {f.default} |" in doc
