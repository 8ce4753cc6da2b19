"""What `arena check` tells a bot's author to fix: the fault, its stderr and the bot file
read together, so a known mistake gets its own hint rather than the fault kind's generic one.

Recognised (each has a fixture bot in tests/support/bots/ or a test that builds one): a stray print on stdout, an
import of a package the sandbox does not offer (a bot folder pins it; a folder's entry file is
not the bot), a bot the sandbox's user may not read, the action object sent instead of its id,
a script without a ``#!`` line, a file with Windows line endings; and a slow bot, by how
much of the move limit its slowest answer took.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

FLUSH = "flush stdout after each line (Python: print(..., flush=True); C: fflush(stdout); Perl: $| = 1; awk: fflush())"
GENERIC = {
    "timeout": f"answer every act message within the move limit (--move-s); if it answered in time, {FLUSH}",
    "crash": "the bot exited; run it with `arena play ... --sandbox none --no-timeouts` and read its stderr",
    "protocol": 'reply to act with one line: {"type": "action", "action": <id>} (or just the id)',
    "illegal": "answer with an `id` taken from observation['legal_actions']",
    "resource": "the bot hit a sandbox limit (CPU, memory, output or processes); use less",
    "sandbox": "the harness could not start the bot: is the file executable, with a valid shebang?",
}

WARN_SHARE = 0.5  # of the move limit: half on a quiet machine is a timeout on a busy one
DANGER_SHARE = 0.8

_MISSING = re.compile(r"ModuleNotFoundError: No module named '([^']+)'")


def _head(path: Path, n: int = 65536) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError:
        return b""


def file_hint(path: Path) -> str:
    """A fix the bot file itself shows, whatever the fault ('' if none)."""
    head = _head(path)
    if b"\r\n" in head:
        return (
            f"{path.name} has Windows line endings (CRLF): a '#!' line then names e.g. 'perl\\r', "
            f"which does not exist; convert the file with `dos2unix {path.name}` "
            f"(or `sed -i 's/\\r$//' {path.name}`)"
        )
    if path.suffix != ".py" and head and not head.startswith((b"#!", b"\x7fELF")):
        return (
            f"{path.name} has no '#!' line, so the system does not know what runs it: start it with "
            "one such as `#!/usr/bin/env perl` (or name a Python bot *.py)"
        )
    return ""


def fault_hint(
    kind: str, detail: str, stderr_tail: str, path: Path, *, first_match: bool = True, exit_code: Any = None
) -> str:
    """The most specific fix for a fault of ``kind``."""
    missing = _MISSING.search(stderr_tail or "")
    if missing:
        return _missing_hint(missing.group(1), path)
    if "Permission denied" in (stderr_tail or ""):
        private = _private(path)
        if private is not None:
            fix = f"chmod -R a+rX {path}" if path.is_dir() else f"chmod a+r {path}"
            return (
                f"the sandbox runs the bot as a user of its own, who cannot read {private}: "
                f"make the bot readable to all: {fix}"
            )
    if "not 'dict'" in (stderr_tail or "") and "botkit" in (stderr_tail or ""):
        return (
            "choose() returned a whole action; return its id instead: "
            "action['id'] (an element of observation['legal_actions'])"
        )
    if kind == "timeout" and "no hello within the start-up limit" in detail:
        return (
            "answer the arena's hello with a hello line as soon as the bot starts, within the start-up "
            f"limit (--startup-s); if it did, {FLUSH}"
        )
    if kind == "protocol" and 'action must be an integer id, got "' in detail:
        return 'send the id as a number, not a string: {"type": "action", "action": 0}, not "0"'
    if kind == "protocol" and detail.startswith('expected {"type": "action"'):
        return (
            "the bot sent a line where its action was due: it answers act messages only, with its "
            "action, and sends nothing in reply to start, result or any other message (docs/protocol.md)"
        )
    if kind == "protocol" and "action must be an integer id, got {" in detail:
        return (
            'reply with the action\'s id, not the action object: {"type": "action", "action": '
            "action['id']} (or just the id)"
        )
    if kind == "protocol" and detail.startswith("not JSON"):
        line = detail.split(": ", 1)[-1]
        return (
            f"a stray print: the bot wrote {line} on stdout, which carries protocol lines only; "
            "write debugging text to stderr (botkit's log(...), or print(..., file=sys.stderr))"
        )
    from_file = file_hint(path)
    if from_file and kind in ("crash", "sandbox", "timeout", "protocol"):
        return from_file
    if not first_match and kind == "crash" and exit_code == 0:
        return "keep reading stdin after a result message; exit only on bye"
    return GENERIC.get(kind, "")


def _missing_hint(module: str, path: Path) -> str:
    """The fix for an import the sandbox lacks: a folder pins it, a folder's file is not the bot,
    a single file copies it in (or becomes a folder)."""
    if path.is_dir():
        return (
            f"the bot imports {module!r}, which its folder does not provide: pin the package in the "
            "folder's requirements.txt, one line name==version (e.g. numpy==2.4.6, docs/first-bot.md)"
        )
    if (path.parent / "requirements.txt").is_file() or (path.parent / "bot.toml").is_file():
        return (
            f"the bot imports {module!r}, which {path.name} run alone does not have: name the bot folder, "
            f"not its {path.name}, and its requirements.txt is installed: arena check {path.parent}"
        )
    return (
        f"the bot imports {module!r}, which is not there in the sandbox: a Python bot runs with the "
        "standard library, botkit and games only (python -s -S, no site-packages, not even your "
        f"virtual environment's); copy what it needs from {module} into the bot's file, make the bot "
        "a folder that pins the package in its requirements.txt (docs/first-bot.md), or write the bot "
        "as an executable in another language"
    )


def _private(path: Path) -> Path | None:
    """The bot's first file or folder that another user may not read (None: all readable)."""
    todo = [path]
    for _ in range(4096):  # a bot folder holds at most 2,000 files: enough to find one
        if not todo:
            return None
        p = todo.pop()
        try:
            st = os.stat(p)
            is_dir = stat.S_ISDIR(st.st_mode)
            if st.st_mode & (0o005 if is_dir else 0o004) != (0o005 if is_dir else 0o004):
                return p
            if is_dir:
                todo.extend(sorted(p.iterdir(), reverse=True))
        except OSError:
            continue
    return None


def timing_verdict(slowest_ms: float | None, move_s: float | None) -> tuple[str, str]:
    """('', line) for a comfortable bot, ('WARN', line) near the move limit: its slowest answer
    and the share of the limit it took."""
    if slowest_ms is None:
        return "", "no decision answered"
    if not move_s:
        return "", f"slowest answer {slowest_ms:.1f} ms (no move limit)"
    share = slowest_ms / (move_s * 1000)
    line = f"slowest answer {slowest_ms:.1f} ms, {share:.0%} of the {move_s:g} s move limit"
    if share > DANGER_SHARE:
        return "WARN", (
            line + f": over {DANGER_SHARE:.0%}, a busy machine will make it time out; "
            "think for a fixed CPU budget well under the limit (time.process_time())"
        )
    if share > WARN_SHARE:
        return "WARN", (
            line + f": over {WARN_SHARE:.0%}, little margin on a busy machine; keep each decision well under the limit"
        )
    return "", line
