"""Every option of every `arena` command is named on a page of the docs (README.md or docs/)
that also names the command: a newcomer reads the docs, not `--help` of every subcommand.
(`arena bench --rating-store`, `arena bench games --seconds` and `arena export-bot --name`
were named nowhere.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click

from arena.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def _commands(cmd: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    if path:
        yield "arena " + " ".join(path), cmd
    if isinstance(cmd, click.Group):
        for name, sub in sorted(cmd.commands.items()):
            yield from _commands(sub, (*path, name))


def test_every_option_is_named_on_a_page_that_names_its_command() -> None:
    pages = [p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]]
    missing = []
    for name, cmd in _commands(cli):
        for param in cmd.params:
            flags = [o for o in (*param.opts, *param.secondary_opts) if o.startswith("--") and o != "--help"]
            if not isinstance(param, click.Option) or not flags:
                continue
            named = [re.compile(re.escape(f) + r"(?![\w-])") for f in flags]
            if not any(name in page and any(n.search(page) for n in named) for page in pages):
                missing.append(f"{name} {flags[0]}")
    assert not missing, "options no doc names beside their command: " + ", ".join(missing)


def _code(text: str) -> Iterator[str]:
    """Inline code spans, and the lines of fenced blocks."""
    for i, block in enumerate(re.split(r"^```.*$", text, flags=re.MULTILINE)):
        if i % 2:
            yield from block.splitlines()
        else:
            yield from re.findall(r"`([^`\n]+)`", block)


def test_every_option_the_docs_give_a_command_exists() -> None:
    commands = dict(_commands(cli))
    wrong = []
    for page in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for code in _code(page.read_text(encoding="utf-8")):
            for m in re.finditer(r"\barena ([a-z][\w-]*(?: [a-z][\w-]*)?)([^|;&#>]*)", code):
                words, rest = m.group(1).split(), m.group(2)
                name = "arena " + " ".join(words)
                if name not in commands:  # a one-word command; its second word is an argument
                    name, rest = "arena " + words[0], " ".join(words[1:]) + rest
                if name not in commands:
                    continue
                known = {o for p in commands[name].params for o in (*p.opts, *getattr(p, "secondary_opts", []))}
                wrong += [
                    f"{page.name}: {name} {f}" for f in re.findall(r"(?<![\w-])--[a-z][\w-]*", rest) if f not in known
                ]
    assert not wrong, "options the docs give that the command does not have: " + ", ".join(wrong)
