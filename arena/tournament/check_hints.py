"""What `arena check` tells a bot's author to fix: the fault, its stderr and the bot file
read together, so a known mistake gets its own hint rather than the fault kind's generic one.

Recognised (each has a fixture bot in tests/support/bots/ or a test that builds one): a stray print on stdout, an
import of a package the sandbox does not offer (a bot folder pins it; a folder's entry file is
not the bot), a data file opened by a path relative to the working directory (the bot's scratch),
a bot the sandbox's user may not read, the action object (or its text) sent instead of its id,
a script without a ``#!`` line, a file with Windows line endings, a ``#!`` interpreter or a shared
library the sandbox does not show (missing, or outside /usr), a Java VM that cannot start within
the limits (its errors come on stdout); and a slow bot, by how
much of the move limit its slowest answer took. A line the bot meant as a message but that is
not one (malformed JSON, a Python dict's repr, an empty line, not UTF-8, too long, an action
without its "action" key, a bad hello) gets a hint naming what is wrong with it, not the
stray print's or the generic act reply's (tests/tournament/test_check_hints.py).
A stray print's hint names the script's own way to stderr (Python, Perl, shell, awk,
JavaScript, Ruby, by its #! line or suffix), every language's when it cannot tell.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import stat
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.match.sandbox.launch import BOT_PATH

FLUSH = "flush stdout after each line (Python: print(..., flush=True); C: fflush(stdout); Perl: $| = 1; awk: fflush())"
GENERIC = {
    "timeout": f"answer every act message within the move limit (--move-s); if it answered in time, {FLUSH}",
    "crash": (
        "the bot exited: read the end of its stderr in this report (if none is shown it wrote "
        "nothing there: write its progress to stderr to see how far it got)"
    ),
    "protocol": 'reply to act with one line: {"type": "action", "action": <id>} (or just the id)',
    "illegal": (
        "answer with an `id` taken from observation['legal_actions'] of the act just read; if it "
        "did, it writes more than one line for some message (two per act, or one for start or "
        "result), so every answer after that arrives one act late"
    ),
    "resource": "the bot hit a sandbox limit (CPU, memory, output or processes); use less",
    "sandbox": "the harness could not start the bot: is the file executable, with a valid shebang?",
}

_STDERR_PY = "botkit's log(...), or print(..., file=sys.stderr)"
_STDERR_OTHER = (
    "C: fprintf(stderr, ...); JavaScript: console.error(...); Rust: eprintln!(...); Java: System.err.println(...); "
    "Perl: print STDERR ...; shell: echo ... >&2"
)
# a script's language, by its suffix or its #! line: its own way to stderr, not every language's
_STDERR_SCRIPT = {
    "Perl": "print STDERR ... or warn ...",
    "shell": "echo ... >&2",
    "awk": 'print ... > "/dev/stderr"',
    "JavaScript": "console.error(...)",
    "Ruby": "$stderr.puts ... or warn ...",
}
_BY_SUFFIX = {".pl": "Perl", ".pm": "Perl", ".sh": "shell", ".bash": "shell", ".awk": "awk", ".js": "JavaScript"}
_BY_SUFFIX |= {".mjs": "JavaScript", ".cjs": "JavaScript", ".rb": "Ruby"}
_BY_SHEBANG = {"perl": "Perl", "bash": "shell", "sh": "shell", "dash": "shell", "zsh": "shell", "ksh": "shell"}
_BY_SHEBANG |= {
    "awk": "awk",
    "gawk": "awk",
    "mawk": "awk",
    "node": "JavaScript",
    "nodejs": "JavaScript",
    "ruby": "Ruby",
}
_SHEBANG = re.compile(rb"^#!\s*(?:\S*/)?(?:env\s+(?:-\S+\s+)*)?([\w.-]+)")

WARN_SHARE = 0.5  # of the move limit: half on a quiet machine is a timeout on a busy one
DANGER_SHARE = 0.8

_JSONISH = re.compile(r'\s*(\{|\[\s*[-\d"\[{\]])')  # an object, or a list of JSON: not "[debug] ..."
_MISSING = re.compile(r"ModuleNotFoundError: No module named '([^']+)'")
_JVM_FAILS = re.compile(
    r"Error occurred during initialization of VM|Java Runtime Environment to continue|Could not reserve enough space"
    r"|Could not allocate compressed class space|Failed to start thread .* pthread_create failed|Failed to reserve memory"
)
_NO_LIB = re.compile(r"error while loading shared libraries: ([^:\s]+): cannot open shared object file")
_NO_FILE = re.compile(r"(?:FileNotFoundError|OSError|IOError): \[Errno 2\] No such file or directory: '([^'/][^']*)'")


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
    kind: str,
    detail: str,
    stderr_tail: str,
    path: Path,
    *,
    first_match: bool = True,
    exit_code: Any = None,
    handshake: bool = False,
    first_answer: bool = False,
    legal_texts: Sequence[str] = (),
) -> str:
    """The most specific fix for a fault of ``kind`` (``handshake``: in reply to hello;
    ``first_answer``: at the process's first act; ``legal_texts``: the texts of the legal
    actions the bot was answering, if known)."""
    missing = _MISSING.search(stderr_tail or "")
    if missing:
        return _missing_hint(missing.group(1), path)
    relative = _relative_data_hint(stderr_tail or "", path)
    if relative:
        return relative
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
    if "choose() must return an action id" in (stderr_tail or ""):
        if "not 'NoneType'" in stderr_tail:
            return "choose() returned None: every path through it must end in `return <id>`"
        return (
            "choose() must return the id of one of observation['legal_actions'], an int "
            "(not a fraction, a bool or other text)"
        )
    if kind == "timeout" and "no hello within the start-up limit" in detail:
        return (
            "answer the arena's hello with a hello line as soon as the bot starts, within the start-up "
            f"limit (--startup-s); if it did, {FLUSH}; and read stdin a line at a time: "
            "sys.stdin.read() or readlines() wait for the end of input, which never comes "
            "(Debian's awk, mawk, needs -W interactive for the same reason)"
        )
    jvm = _jvm_hint(kind, detail, stderr_tail or "", path)
    if jvm:
        return jvm
    if kind == "protocol" and 'action must be an integer id, got "' in detail:
        sent = re.sub(r'"? \(a string\)$', "", detail.split('got "', 1)[1])
        if not sent.strip().lstrip("+-").isdigit():  # words, not a quoted number: the action's text
            return (
                f'the bot sent the action\'s text "{sent}" where its id goes: send the id, a number, of that '
                'entry of observation["legal_actions"]: {"type": "action", "action": <its "id">}'
            )
        return 'send the id as a number, not a string: {"type": "action", "action": 0}, not "0"'
    line_hint = _line_hint(detail, handshake) if kind == "protocol" else ""
    if line_hint:
        return line_hint
    if kind == "protocol" and detail.startswith('expected {"type": "action"'):
        return (
            "the bot sent a line where its action was due: it answers act messages only, with "
            '{"type": "action", "action": <id>}, and sends nothing in reply to start, result or any '
            "other message (docs/protocol.md)"
        )
    if kind == "protocol" and "action must be an integer id, got {" in detail:
        return (
            'reply with the action\'s id, not the action object: {"type": "action", "action": '
            "action['id']} (or just the id)"
        )
    if kind == "protocol" and detail.startswith("not JSON"):
        line = detail.split(": ", 1)[-1]
        if _unquoted(line) in legal_texts:  # `print $pick->{text}`: the answer, by its label
            return (
                f"the bot wrote the action's text {line} where its id goes: answer with the id of that "
                'entry of observation["legal_actions"]: {"type": "action", "action": <its "id">} (or just the id)'
            )
        return (
            f"a stray print: the bot wrote {line} on stdout, which carries protocol lines only; "
            f"write debugging text to stderr ({_stderr_way(path)})"
        )
    from_file = file_hint(path)
    if from_file and kind in ("crash", "sandbox", "timeout", "protocol"):
        return from_file
    if kind in ("crash", "sandbox"):
        unseen = _unseen_hint(path, detail, stderr_tail or "", exit_code)
        if unseen:
            return unseen
    if kind == "timeout" and first_answer and not from_file:
        return (
            f"{GENERIC['timeout']}; it timed out on its very first act: slow set-up (loading data, "
            "building tables, importing) belongs before the bot answers hello, which has the "
            "start-up limit (--startup-s, 10 s by default), not in the first decision"
        )
    if not first_match and kind == "crash" and exit_code == 0:
        return "keep reading stdin after a result message; exit only on bye"
    if handshake and kind == "protocol":
        return 'answer the arena\'s hello with one line: {"type": "hello", "name": "my-bot"}'
    if not first_match and kind == "crash":
        return (
            "the bot exited during a later match of its one process, and arena play runs one match in "
            "a fresh process, so it may not crash there: read the end of its stderr, and look at what "
            "the bot keeps from one match to the next (reset it at start)"
        )
    return GENERIC.get(kind, "")


def _line_hint(detail: str, handshake: bool) -> str:
    """The fix for a line that is not a valid message, read from the fault's detail ('' if
    the caller's hints say it better): how the line is broken, not the generic act reply."""
    if detail.startswith("not UTF-8"):
        return (
            "the line is not UTF-8 (text in another encoding, such as Latin-1 or a Windows code page): "
            "write UTF-8, or keep the line ASCII (Python's json.dumps escapes every other character)"
        )
    if detail.startswith("starts with a byte order mark"):
        return "the line starts with a byte order mark: write UTF-8 without a BOM (not utf-8-sig)"
    if detail.startswith("contains a NUL byte"):
        return "the line holds a NUL byte (a C string written with its terminator, or UTF-16): write UTF-8 text only"
    if detail.startswith("line over "):
        limit = detail.split(":", 1)[0].removeprefix("line over ")
        return (
            f"a line may be at most {limit} (limits: stdout_line_kb): answer with the id alone and "
            "write anything bigger (debugging data, dumps) to stderr"
        )
    if detail.startswith("not JSON"):
        line = detail.split("): ", 1)[-1].strip("'\"")
        if not line.strip():
            return (
                "the bot wrote an empty line (print() without arguments, or an extra newline): "
                "write exactly one line per hello and per act, and nothing else on stdout"
            )
        if _JSONISH.match(line) or "NaN" in detail or "Infinity" in detail:
            return (
                "the line was meant as a message but is not valid JSON: build it with a JSON library "
                "(Python: json.dumps(message); print(dict) or str(dict) writes single quotes and "
                "True, not JSON) and end it with one newline"
            )
        return ""  # plain text: the stray print's hint
    if handshake and detail.startswith('expected {"type": "hello"'):
        return 'answer the arena\'s hello with {"type": "hello", "name": "my-bot"}: "type": "hello" is required'
    if handshake and detail.startswith(("hello 'protocol'", "hello 'name'")):
        return 'the hello\'s "name" must be a string and its "protocol", if given, the integer 1 (or leave it out)'
    if detail.startswith('expected {"type": "action"'):
        got = detail.split("got ", 1)[-1]
        if '"type"' not in got or re.search(r'"type"\s*:\s*"action"', got):
            return 'name the id under "action": {"type": "action", "action": <id>} (or send just the id)'
        kind = re.search(r'"type"\s*:\s*("[^"]*")', got)
        if kind and re.search(r'"action"\s*:', got):  # an answer, under another type
            return f'an answer\'s "type" is "action", not {kind.group(1)}: {{"type": "action", "action": <id>}} (or just the id)'
        return ""
    if detail.startswith("action must be an integer id") and "got {" not in detail:
        return 'send the id as a JSON integer: {"type": "action", "action": 3} or 3, not 3.0, true or null'
    return ""


def _jvm_hint(kind: str, detail: str, stderr_tail: str, path: Path) -> str:
    """The fix for a Java VM that could not start within the sandbox's limits ('' if it is not
    one). The JVM writes these errors on stdout, where the arena reads them as the bot's answer."""
    if kind not in ("protocol", "crash", "resource"):
        return ""
    text = f"{detail}\n{stderr_tail}"
    hashed = kind == "protocol" and detail.endswith(": '#'") and _runs_java(path)  # its fatal error report
    # the JVM writes why on stdout, which the arena may not read before the process is gone:
    # then stderr holds only its generic line (an unrecognised option names itself there)
    generic = "Could not create the Java Virtual Machine" in text and "Unrecognized" not in text
    if not (hashed or ((_JVM_FAILS.search(text) or generic) and not _surely_not_java(path))):
        return ""  # a Python or JavaScript bot printing a JVM's words is not a JVM
    return (
        "the Java VM could not reserve its memory or start its threads: where memory_mb (1024 MB by default) "
        "caps the address space (RLIMIT_AS: levels namespaces and rlimits, landlock without a cgroup) it must "
        "hold all the JVM reserves, not just what it uses, and its threads count in `processes` (32); cap both "
        "in the java command (its #! line or the bot folder's script): java -Xmx128m "
        "-XX:ReservedCodeCacheSize=64m -XX:CompressedClassSpaceSize=64m -XX:CICompilerCount=2 "
        "-XX:ParallelGCThreads=1 -XX:ConcGCThreads=1 -Xlog:all=warning:stderr (docs/protocol.md#java), "
        "or raise limits: memory_mb and processes in the tournament file"
    )


def _runs_java(path: Path) -> bool:
    """True if the bot is started by ``java``: its #! line, or a bot folder holding classes, a jar
    or a script that calls java."""
    if not path.is_dir():
        return re.search(rb"\bjava\b", _head(path, 512).split(b"\n", 1)[0]) is not None
    for f in sorted(p for p in path.iterdir() if p.is_file())[:50]:
        if f.suffix in (".jar", ".class") or re.search(rb"\bjava\b", _head(f, 4096)):
            return True
    return False


def _surely_not_java(path: Path) -> bool:
    """True if the bot is Python, JavaScript, Perl, Ruby or Lua and not started through java
    (a Kotlin or Scala bot, or a script that runs java, may still be a JVM)."""
    if _runs_java(path):
        return False
    if _runs_python(path):
        return True
    first = _head(path, 512).split(b"\n", 1)[0] if path.is_file() else b""
    return path.suffix in _NOT_JVM_SUFFIXES or re.search(rb"^#!.*\b(node|perl|ruby|lua)\b", first) is not None


_NOT_JVM_SUFFIXES = {".py", ".js", ".mjs", ".cjs", ".pl", ".rb", ".lua"}


def _unquoted(line: str) -> str | None:
    """The text of a line as a fault's detail quotes it (its repr), or None."""
    try:
        text = ast.literal_eval(line)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return text if isinstance(text, str) else None


def _stderr_way(path: Path) -> str:
    """How the bot's language writes to stderr; every language's way when it cannot tell."""
    if _runs_python(path):
        return _STDERR_PY
    first = _head(path, 512).split(b"\n", 1)[0] if path.is_file() else b""
    bang = _SHEBANG.match(first)
    language = (_BY_SHEBANG.get(bang.group(1).decode()) if bang else None) or _BY_SUFFIX.get(path.suffix)
    return f"{language}: {_STDERR_SCRIPT[language]}" if language else _STDERR_OTHER


def _runs_python(path: Path) -> bool:
    """True if the bot is Python: a .py file, a script whose #! line runs python, or a folder
    whose entry is one (main.py by default)."""
    if path.is_dir():
        from arena.match import botfolder

        try:
            path = botfolder.entry_file(path)
        except botfolder.BotFolderError:
            return False
    return path.suffix == ".py" or re.search(rb"\bpython", _head(path, 512).split(b"\n", 1)[0]) is not None


# files a bot runs without an executable bit: its code (main.py and the modules it imports)
_SOURCE_SUFFIXES = {".py", ".sh", ".bash", ".js", ".mjs", ".cjs", ".pl", ".pm", ".rb", ".lua", ".r", ".jl", ".php"}


def own_path(folder: Path) -> tuple[str, str, bool] | None:
    """(detail, fix, runs) if a file of a bot folder names the folder by its absolute path: it
    works where the folder lies (arena check, arena play) and fails in every tournament match,
    which runs a copy of the folder (results/<name>/bots/<sha256>/). ``runs``: the file is
    executable or code (a .py module), so the path is surely followed; a data file (a README,
    a config) only may be.
    None if no file does; an executable file is reported before any data file."""
    found: tuple[str, str, bool] | None = None
    wheres = {str(folder.absolute()), os.path.realpath(folder)}
    # as the file system's bytes: a path that is not UTF-8 (a parent folder's name) is one too
    pattern = re.compile(b"|".join(re.escape(os.fsencode(w)) for w in sorted(wheres)) + rb"(?![\w.-])")
    seen = 0
    for dirpath, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in (".git", ".hg", ".svn", "__pycache__"))
        for name in sorted(files):
            seen += 1
            if seen > 2000:  # a folder's bound: enough to find one
                return found
            f = Path(dirpath) / name
            head = _head(f, 256 * 1024)
            # a binary names its build folder in its debug information, which nothing reads at run
            # time: only the paths its loader follows count (#! lines are text, searched whole)
            m = pattern.search(_elf_load_paths(f) if head.startswith(b"\x7fELF") else head)
            runs = os.access(f, os.X_OK) or f.suffix.lower() in _SOURCE_SUFFIXES
            if m and (found is None or runs and not found[2]):
                found = (
                    f"{_shown_path(f.relative_to(folder))} names the bot folder by its absolute path "
                    f"{m.group().decode('utf-8', 'replace')}: a "
                    "tournament runs a copy of the folder (results/<name>/bots/<sha256>/), where that path does not exist"
                    + ("" if runs else " (a problem if the bot reads this file and follows the path)"),
                    'name the folder\'s files relative to the entry: "$(dirname "$0")/file" in sh, '
                    "Path(__file__).parent / 'file' in Python; link a binary with -Wl,-rpath,'$ORIGIN', not a fixed path",
                    runs,
                )
                if runs:
                    return found
    return found


def _shown_path(path: Path) -> str:
    """A path as text that can be printed, its bytes that are not UTF-8 shown as U+FFFD."""
    return os.fsencode(path).decode("utf-8", "replace")


def _elf_load_paths(path: Path) -> bytes:
    """What the loader of an ELF binary reads as paths: its interpreter (PT_INTERP) and its
    dynamic string table (DT_NEEDED, DT_RPATH, DT_RUNPATH); b"" if it cannot be read."""
    try:
        with open(path, "rb") as f:
            ident = f.read(16)
            e = {1: "<", 2: ">"}[ident[5]]
            w = {1: "I", 2: "Q"}[ident[4]]
            header = e + f"HHI{w}{w}{w}IHHHHHH"
            fields = struct.unpack(header, f.read(struct.calcsize(header)))
            phoff, shoff, phentsize, phnum, shentsize, shnum = fields[4], fields[5], *fields[8:12]

            def table(offset: int, size: int, count: int, fmt: str) -> list[tuple[int, ...]]:
                out = []
                for i in range(min(count, 4096)):
                    f.seek(offset + i * size)
                    out.append(struct.unpack(fmt, f.read(struct.calcsize(fmt))))
                return out

            def read(offset: int, size: int) -> bytes:
                f.seek(offset)
                return f.read(min(size, 1 << 20))

            # a loader reads one PT_INTERP and one SHT_DYNAMIC (whose sh_link is its string table):
            # the first of each, at most 1 MiB apiece, whatever a crafted file lists
            out = []
            program = e + ("II" + w * 6 if w == "Q" else "I" * 8)  # where p_offset and p_filesz lie
            interp = next((ph for ph in table(phoff, phentsize, phnum, program) if ph[0] == 3), None)
            if interp is not None:
                out.append(read(interp[2], interp[5]) if w == "Q" else read(interp[1], interp[4]))
            sections = table(shoff, shentsize, shnum, e + ("II" + w * 4 + "II" + w * 2))
            dynamic = next((sh for sh in sections if sh[1] == 6), None)
            if dynamic is not None:
                strtab = sections[dynamic[6]]
                out.append(read(strtab[4], strtab[5]))
            return b"\0".join(out)
    except (OSError, KeyError, IndexError, struct.error, ValueError):
        return b""


def _unseen_hint(path: Path, detail: str, stderr_tail: str, exit_code: Any) -> str:
    """The fix for a program the bot needs that the sandbox does not show: its ``#!`` line's
    interpreter or a shared library outside /usr ('' if that is not why it failed)."""
    lib = _NO_LIB.search(stderr_tail)
    if lib:
        return (
            f"{path.name} needs the shared library {lib.group(1)}, which the sandbox does not show (it shows "
            "/usr and the bot's own file, not the folder it lies in): link the bot statically (gcc -static; "
            "Rust: --target x86_64-unknown-linux-musl), or install the library under /usr"
        )
    not_found = exit_code == 127 or "exit code 127" in detail or "No such file or directory" in stderr_tail
    if path.is_dir() or not not_found:
        return ""
    first = _head(path, 512).split(b"\n", 1)[0]
    words = first[2:].decode("utf-8", "replace").split() if first.startswith(b"#!") else []
    if not words:
        return ""
    prog = words[0]
    if os.path.basename(prog) == "env":
        name = next((w for w in words[1:] if not w.startswith("-")), "")
        if not name or shutil.which(name, path=BOT_PATH):
            return ""
        mine = shutil.which(name)
        return (
            f"the #! line of {path.name} runs `env {name}`, and the sandbox's PATH ({BOT_PATH}) has no {name}"
            + (f": yours finds {mine}, which the sandbox does not show" if mine else "")
            + f"; install {name} under /usr (e.g. from your system's packages) and check with "
            f"`PATH={BOT_PATH} command -v {name}`"
        )
    if not os.path.exists(prog):
        return (
            f"the #! line of {path.name} names {prog}, which does not exist: name the interpreter where it is "
            f"(`command -v {os.path.basename(prog)}`), or write `#!/usr/bin/env {os.path.basename(prog)}`"
        )
    real = os.path.realpath(prog)
    from arena.match.sandbox.launch import TOP_LINKS  # /bin, /lib...: shown too where they are real folders

    shown = ("/usr/", *(d + "/" for d in TOP_LINKS if os.path.isdir(d) and not os.path.islink(d)))
    if not real.startswith(shown):
        return (
            f"the #! line of {path.name} names {prog}" + (f" ({real})" if real != prog else "") + ", outside /usr: "
            "the sandbox shows /usr and the bot's own file only, so it is not found there; use an interpreter "
            "installed under /usr (e.g. from your system's packages), or build the bot into one executable"
        )
    return ""


def _relative_data_hint(stderr_tail: str, path: Path) -> str:
    """The fix for a data file the bot opened by a path relative to its working directory (its
    scratch, at every sandbox level) that lies next to the bot ('' if it does not)."""
    for m in _NO_FILE.finditer(stderr_tail):
        name = m.group(1)
        home = path if path.is_dir() else path.parent
        if (home / name).exists():
            return (
                f"the bot opened {name!r} in its working directory, which is its scratch folder at every "
                f"sandbox level (--sandbox none too), not the folder it lies in: open it next to the bot "
                f"file, Path(__file__).parent / {name!r}"
            )
    return ""


def _missing_hint(module: str, path: Path) -> str:
    """The fix for an import the sandbox lacks: a folder pins it, a folder's file is not the bot,
    a single file copies it in (or becomes a folder)."""
    if path.is_dir():
        damaged = _damaged_env(module, path)
        if damaged:
            return damaged
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


def _damaged_env(module: str, folder: Path) -> str:
    """The fix for a module the folder's requirements pin (under the same name) that its cached
    environment lacks: a damaged cache entry, not a missing pin ('' if it is not pinned)."""
    from arena.match import botfolder
    from arena.match.bot_cache import ENVS, cache_root

    try:
        reqs = botfolder.requirements(folder)
    except botfolder.BotFolderError:
        return ""
    pinned = {r.split("==", 1)[0].split("[", 1)[0] for r in reqs}
    if module.split(".", 1)[0].lower().replace("_", "-") not in pinned:
        return ""
    env = cache_root() / ENVS / botfolder.env_key(reqs)
    return (
        f"the bot imports {module!r}, which its requirements.txt pins, but its environment in the bot cache "
        f"({env}) lacks it: the cache entry is damaged; remove it (rm -rf {env}) and run "
        f"`arena check {folder}` to install it again"
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


def startup_verdict(name: str | None, took_s: float, startup_s: float) -> tuple[str, str, bool]:
    """(detail, fix, warn) of a handshake that passed: a start that took over half of the start-up
    limit warns, since several bots starting side by side on a busy machine take longer."""
    detail = f"said hello as {name!r} in {took_s * 1000:.0f} ms"
    share = took_s / startup_s if startup_s else 0.0
    if share <= WARN_SHARE:
        return detail, "", False
    return (
        f"{detail}, {share:.0%} of the {startup_s:g} s start-up limit: over {WARN_SHARE:.0%}, a busy machine "
        "(a tournament starts its bots side by side) will make it time out; start faster (a JVM: run compiled "
        "classes, not a source file: docs/protocol.md#java) or raise the limit (--startup-s, the tournament "
        "file's time_control: startup_s)",
        "",
        True,
    )


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
            "think for a fixed CPU budget well under the limit, read from the process's CPU clock (Python: time.process_time(); C: clock(); Node: process.cpuUsage())"
        )
    if share > WARN_SHARE:
        return "WARN", (
            line + f": over {WARN_SHARE:.0%}, little margin on a busy machine; keep each decision well under the limit"
        )
    return "", line
