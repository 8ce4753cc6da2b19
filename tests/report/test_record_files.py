"""`arena replay FILE`: a record file is hostile input. Whatever the path names (a named pipe
nothing writes to, /dev/zero, JSON nested a hundred thousand deep), the answer is one line
naming the file, at once; before, a pipe hung, /dev/zero filled the memory and deep JSON
ended as a bug (exit 70, RecursionError)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.report import export, replay
from arena.report.replay import load_record
from tests.support.named_pipe import error_within


@pytest.mark.parametrize("name", ["match.json", "all.jsonl"])
def test_a_named_pipe_is_refused_at_once(tmp_path: Path, name: str) -> None:
    pipe = tmp_path / name
    os.mkfifo(pipe)
    said = error_within(10, pipe, ArenaError, lambda: load_record(pipe, "tightwad/p3/d00/r0/0"))
    assert said.startswith(f"{pipe}: ") and "is a pipe (FIFO) that nothing wrote to" in said, said


@pytest.mark.parametrize("name", ["match.json", "all.jsonl"])
def test_json_nested_too_deeply_is_one_line_not_a_bug(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ArenaError) as err:
        load_record(path, "tightwad/p3/d00/r0/0")
    assert str(err.value).startswith(f"{path}: ") and "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["match.json", "all.jsonl"])
def test_an_endless_file_is_read_only_up_to_the_bound(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replay, "MAX_RECORD_BYTES", 1 << 20)
    monkeypatch.setattr(export, "MAX_RECORD_BYTES", 1 << 20)
    path = tmp_path / name
    path.symlink_to("/dev/zero")
    with pytest.raises(ArenaError, match=r"is larger than 1 MiB") as err:
        load_record(path, "tightwad/p3/d00/r0/0")
    assert str(err.value).startswith(f"{path}: ")


def test_an_export_line_longer_than_the_bound_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export, "MAX_RECORD_BYTES", 1 << 20)
    path = tmp_path / "all.jsonl"
    path.write_text('{"match_id": "' + "x" * (2 << 20) + '"}\n')
    with pytest.raises(ArenaError, match=r"a line is longer than 1 MiB"):
        load_record(path, "tightwad/p3/d00/r0/0")
