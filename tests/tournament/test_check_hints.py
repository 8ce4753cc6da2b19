"""`arena check`'s hints for lines that are not valid messages: each names what is wrong with the
line (arena/tournament/check_hints.py), where the stray print's hint or the generic act reply
misdescribed it (a Latin-1 hello was told to "reply to act with one line", a single-quoted dict
was called a stray print)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from arena.match.detect import open_sandbox
from arena.match.sandbox import Limits
from arena.match.timecontrol import TimeControl
from arena.tournament.check import run_check
from arena.tournament.check_hints import fault_hint
from arena.tournament.roster import bot_entry

BOT = Path("bot.py")


@pytest.mark.parametrize(
    "detail,start",
    [
        ('not UTF-8 (byte 30 is 0xe9): \'{"type": "hello", "name": "caf\\ufffd"}\'', "the line is not UTF-8"),
        ("starts with a byte order mark; send plain UTF-8", "the line starts with a byte order mark"),
        ("contains a NUL byte: '0\\x00'", "the line holds a NUL byte"),
        ('line over 1024 KiB: \'{"type": "action", "action": 0, "dbg": "xxx\'', "a line may be at most 1024 KiB"),
        ("not JSON (Expecting value): ''", "the bot wrote an empty line"),
        (
            "not JSON (Expecting property name enclosed in double quotes): \"{'type': 'action', 'action': 0}\"",
            "the line was meant as a message but is not valid JSON",
        ),
        ('not JSON (Expecting \',\' delimiter): \'{"type": "action", "action": 0\'', "the line was meant as"),
        ('not JSON (NaN is not JSON): \'{"type": "action", "action": NaN}\'', "the line was meant as"),
        ("not JSON (Expecting value): 'thinking about 7'", "a stray print: the bot wrote 'thinking about 7'"),
        ("not JSON (Expecting value): '[debug] 7 legal'", "a stray print: the bot wrote '[debug] 7 legal'"),
        ("not JSON (Expecting ',' delimiter): '[1 2]'", "the line was meant as"),
        (
            'expected {"type": "action", "action": <id>}, got \'{"type": "action", "id": 0}\'',
            'name the id under "action"',
        ),
        ('expected {"type": "action", "action": <id>}, got \'{"id": 0}\'', 'name the id under "action"'),
        ('expected {"type": "action", "action": <id>}, got \'{"type": "ok"}\'', "the bot sent a line where"),
        ("action must be an integer id, got 1.0 (a number with a fraction)", "send the id as a JSON integer"),
        ("action must be an integer id, got true (true or false)", "send the id as a JSON integer"),
        ('action must be an integer id, got "3" (a string)', "send the id as a number, not a string"),
        ('action must be an integer id, got {"id": 0} (an object)', "reply with the action's id"),
    ],
)
def test_a_malformed_answer_is_told_what_is_wrong_with_it(detail, start):
    assert fault_hint("protocol", detail, "", BOT).startswith(start)


def test_a_bad_hello_is_told_about_hello_not_act():
    detail = 'expected {"type": "hello", "name": ...}, got \'{"name":"x"}\''
    assert fault_hint("protocol", detail, "", BOT, handshake=True).startswith(
        'answer the arena\'s hello with {"type": "hello", "name": "my-bot"}'
    )
    deep = "nested deeper than 32 levels: '[[[['"
    assert "hello" in fault_hint("protocol", deep, "", BOT, handshake=True)
    assert "act" in fault_hint("protocol", deep, "", BOT)  # in a match: the act reply's hint


def test_a_crash_in_a_later_match_says_arena_play_may_not_show_it():
    later = fault_hint("crash", "closed its output (exit code 1)", "", BOT, first_match=False, exit_code=1)
    assert "later match of its one process" in later and "reset it at start" in later
    first = fault_hint("crash", "closed its output (exit code 1)", "", BOT, first_match=True, exit_code=1)
    assert first.startswith("the bot exited: read the end of its stderr in this report")


def test_a_bot_that_waits_for_the_end_of_input_is_told_to_read_lines():
    hint = fault_hint("timeout", "no hello within the start-up limit of 10 s", "", BOT)
    assert "read stdin a line at a time" in hint and "mawk" in hint


def test_check_names_a_latin1_hello_as_not_utf8(tmp_path):
    bot = tmp_path / "latin1.py"
    bot.write_text(
        "import sys\n"
        "for line in sys.stdin.buffer:\n"
        '    sys.stdout.buffer.write(b\'{"type": "hello", "name": "caf\\xe9"}\\n\')\n'
        "    sys.stdout.buffer.flush()\n"
    )
    report = run_check(bot_entry(str(bot)), sandbox=open_sandbox("none"), limits=Limits())
    [check] = report.checks
    assert (check.name, check.ok) == ("handshake", False)
    assert check.detail.startswith("not UTF-8 (byte 30 is 0xe9)"), check  # the byte, not the U+FFFD shown
    assert check.fix.startswith("the line is not UTF-8"), check


def test_the_hello_hint_reaches_check_through_a_real_handshake(tmp_path):
    bot = tmp_path / "no_type.py"
    bot.write_text('import sys\nfor line in sys.stdin:\n    print(\'{"name": "x"}\', flush=True)\n')
    report = run_check(bot_entry(str(bot)), sandbox=open_sandbox("none"), limits=Limits())
    [check] = report.checks
    assert (check.name, check.ok) == ("handshake", False)
    assert check.fix.startswith("answer the arena's hello with"), check


def test_a_timeout_on_the_first_act_points_at_start_up():
    first = fault_hint("timeout", "no answer within 1 s", "", BOT, first_answer=True)
    assert (
        first.startswith("answer every act message within the move limit") and "before the bot answers hello" in first
    )
    later = fault_hint("timeout", "no answer within 1 s", "", BOT)
    assert "before the bot answers hello" not in later


def test_check_tells_a_bot_slow_at_its_first_act_to_set_up_before_hello(tmp_path):
    bot = tmp_path / "lazy.py"
    bot.write_text(
        "import time\nfrom botkit import run\nready = []\n\n"
        "def choose(observation, match):\n"
        "    if not ready:\n        time.sleep(2)  # set-up done lazily\n        ready.append(1)\n"
        "    return observation['legal_actions'][0]['id']\n\nrun(choose)\n"
    )
    report = run_check(
        bot_entry(str(bot)), sandbox=open_sandbox("none"), limits=Limits(), time_control=TimeControl(move_s=0.5)
    )
    failed = [c for c in report.checks if not c.ok]
    assert failed and "timeout at decision 0" in failed[0].detail, report.checks
    assert "before the bot answers hello" in failed[0].fix


def test_check_says_an_illegal_id_may_be_an_answer_one_act_late(tmp_path):
    bot = tmp_path / "double.py"  # answers every act twice: the second line answers the next act
    bot.write_text(
        "import json, sys\nfor line in sys.stdin:\n    m = json.loads(line)\n"
        "    if m['type'] == 'hello':\n        print(json.dumps({'type': 'hello'}), flush=True)\n"
        "    elif m['type'] == 'act':\n        print(len(m['observation']['legal_actions']) - 1, flush=True)\n"
        "        print(0, flush=True)\n"
    )
    report = run_check(bot_entry(str(bot)), sandbox=open_sandbox("none"), limits=Limits())
    failed = [c for c in report.checks if not c.ok]
    assert failed and failed[0].detail.startswith("illegal"), report.checks
    assert "one act late" in failed[0].fix


DATA_BY_RELATIVE_PATH = """
from botkit import run

WEIGHTS = [float(x) for x in open("weights.txt").read().split()]  # relative: the scratch, not the folder

run(lambda observation, match: observation["legal_actions"][0]["id"], name="relative-data")
"""


@pytest.mark.parametrize("folder", [True, False])
def test_a_data_file_opened_by_a_relative_path_is_told_to_open_it_next_to_the_bot(tmp_path: Path, folder: bool) -> None:
    """The bot's working directory is its scratch at every level, so `open("weights.txt")` fails
    though the file is right there, and `--sandbox none` fails the same way: the generic crash
    hint sent the author there."""
    from tests.support.cli import invoke

    here = tmp_path / "relbot"
    here.mkdir()
    (here / "main.py").write_text(DATA_BY_RELATIVE_PATH)
    (here / "weights.txt").write_text("1 2 3\n")
    res = invoke("check", here if folder else here / "main.py", "--sandbox", "none")
    assert res.exit_code == 1, res.output
    assert "fix: the bot opened 'weights.txt' in its working directory, which is its scratch folder" in res.output
    assert "Path(__file__).parent / 'weights.txt'" in res.output


def test_a_missing_file_that_is_not_next_to_the_bot_keeps_the_generic_hint(tmp_path: Path) -> None:
    tail = "FileNotFoundError: [Errno 2] No such file or directory: 'elsewhere.txt'"
    assert fault_hint("crash", "exit code 1", tail, tmp_path).startswith("the bot exited: read the end of its stderr")


def test_a_pinned_package_missing_from_its_environment_is_a_damaged_cache_not_a_missing_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder pins numpy, but a file of its cached environment was deleted: the hint told
    the author to pin numpy in requirements.txt, which it already does."""
    from arena.match import botfolder

    monkeypatch.setenv("ARENA_BOT_ENVS", str(tmp_path / "cache"))
    folder = tmp_path / "mybot"
    folder.mkdir()
    (folder / "main.py").write_text("import numpy\n")
    (folder / "requirements.txt").write_text("numpy==2.4.6\n")
    env = tmp_path / "cache" / "envs" / botfolder.env_key(botfolder.requirements(folder))
    tail = "Traceback (most recent call last):\nModuleNotFoundError: No module named 'numpy'"
    hint = fault_hint("crash", "exit code 1", tail, folder, handshake=True)
    assert "pin the package" not in hint
    assert hint == (
        f"the bot imports 'numpy', which its requirements.txt pins, but its environment in the bot cache "
        f"({env}) lacks it: the cache entry is damaged; remove it (rm -rf {env}) and run "
        f"`arena check {folder}` to install it again"
    )
    (folder / "requirements.txt").write_text("scipy==1.17.1\n")  # not pinned: the pin hint stays
    assert "pin the package" in fault_hint("crash", "exit code 1", tail, folder, handshake=True)


def _script(folder: Path, name: str, shebang: str) -> Path:
    bot = folder / name
    bot.write_text(f"#!{shebang}\nprint 1\n")
    bot.chmod(0o755)
    return bot


def test_a_shebang_naming_a_missing_interpreter_says_so(tmp_path):
    """`/arena-start: exec: bot.js: not found` named the bot file, which exists: the interpreter does not."""
    bot = _script(tmp_path, "bot.js", str(tmp_path / "nowhere" / "node"))
    stderr = f"/arena-start: 3: exec: {bot}: not found\n"
    hint = fault_hint("crash", "closed its output (exit code 127)", stderr, bot)
    assert hint.startswith(f"the #! line of bot.js names {tmp_path}/nowhere/node, which does not exist"), hint
    assert "#!/usr/bin/env node" in hint


def test_an_interpreter_in_a_top_folder_the_sandbox_shows_is_not_said_to_be_hidden(tmp_path, monkeypatch):
    """Where /bin is a real folder, not a link into /usr, the sandbox shows it too: a #!/bin/sh
    script that exits 127 of its own must not be told its interpreter is outside what it sees."""
    from arena.match.sandbox import launch

    top = tmp_path / "bin"  # stands for a real /bin
    top.mkdir()
    interp = top / "sh"
    interp.write_text("#!/bin/sh\n")
    interp.chmod(0o755)
    monkeypatch.setattr(launch, "TOP_LINKS", (str(top),))
    bot = _script(tmp_path, "bot.sh", str(interp))
    hint = fault_hint("crash", "closed its output (exit code 127)", "", bot, exit_code=127)
    assert "outside /usr" not in hint, hint


def test_a_shebang_naming_an_interpreter_outside_usr_says_the_sandbox_does_not_show_it(tmp_path):
    """An interpreter in a home folder (nvm, pyenv, sdkman) runs on the host, not in the sandbox."""
    interp = tmp_path / "mynode"
    interp.write_text("#!/bin/sh\n")
    interp.chmod(0o755)
    bot = _script(tmp_path, "bot.js", str(interp))
    hint = fault_hint("crash", "closed its output", "No such file or directory", bot, exit_code=127)
    assert hint.startswith(f"the #! line of bot.js names {interp}, outside /usr"), hint
    env_bot = _script(tmp_path, "env.js", "/usr/bin/env no-such-interpreter-here")
    hint = fault_hint("crash", "closed its output (exit code 127)", "", env_bot)
    assert "runs `env no-such-interpreter-here`, and the sandbox's PATH" in hint, hint
    fine = _script(tmp_path, "sh.sh", "/bin/sh")  # a crash of its own: the generic hint stays
    assert fault_hint("crash", "closed its output (exit code 127)", "", fine).startswith("the bot exited")
    assert fault_hint("crash", "closed its output (exit code 1)", "", bot).startswith("the bot exited")


def test_check_names_a_shared_library_the_sandbox_does_not_show(tmp_path):
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler here")
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "f.c").write_text("int f(void) { return 0; }\n")
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib / "libf.so"), str(lib / "f.c")], check=True)
    (tmp_path / "bot.c").write_text("int f(void);\nint main(void) { return f(); }\n")
    bot = tmp_path / "bot"
    rpath = f"-Wl,-rpath,{lib}"
    subprocess.run([cc, "-o", str(bot), str(tmp_path / "bot.c"), f"-L{lib}", "-lf", rpath], check=True)
    for p in (tmp_path, lib, lib / "libf.so"):
        p.chmod(0o755)
    report = run_check(bot_entry(str(bot)), sandbox=open_sandbox("auto"), limits=Limits())
    [check] = report.checks
    if check.ok or "libf.so" not in report.stderr_tail:
        pytest.skip(f"the strongest sandbox level here shows {lib}: nothing to hint")
    assert check.fix.startswith("bot needs the shared library libf.so, which the sandbox does not show"), check


@pytest.mark.parametrize(
    "detail",
    [
        "not JSON (Expecting value): 'Error occurred during initialization of VM'",
        "not JSON (Expecting ',' delimiter): '[0.023s][warning][os,thread] Failed to start thread \"G1 Refine#0\" - "
        "pthread_create failed (EAGAIN) for attributes: stack... (157 chars)'",
    ],
)
def test_a_jvm_that_cannot_start_in_the_limits_is_told_how_to_cap_it(detail):
    """The JVM prints these on stdout: they were called a stray print or malformed JSON."""
    hint = fault_hint("protocol", detail, "", Path("bot"), handshake=True)
    assert hint.startswith("the Java VM could not reserve its memory or start its threads"), hint
    assert "-Xmx128m" in hint and "memory_mb" in hint and "docs/protocol.md#java" in hint


def test_a_lone_hash_line_is_a_jvm_error_only_from_a_java_bot(tmp_path):
    """'#' opens the JVM's fatal error report; from another bot it stays a stray print."""
    java = _script(tmp_path, "javabot", "/usr/bin/java --source 17")
    other = _script(tmp_path, "perlbot", "/usr/bin/env perl")
    detail = "not JSON (Expecting value): '#'"
    assert fault_hint("protocol", detail, "", java, handshake=True).startswith("the Java VM could not")
    assert fault_hint("protocol", detail, "", other, handshake=True).startswith("a stray print")
    folder = tmp_path / "java_folder"
    folder.mkdir()
    (folder / "Bot.class").write_bytes(b"\xca\xfe\xba\xbe")
    assert fault_hint("protocol", detail, "", folder, handshake=True).startswith("the Java VM could not")


def test_check_warns_of_a_start_near_the_start_up_limit(tmp_path):
    """A JVM compiling its source file said hello in 3 to 5 s of the 10 s limit: PASS, then a
    timeout in a tournament starting bots side by side. Over half the limit now warns."""
    bot = tmp_path / "slow_start.py"
    bot.write_text("import time\ntime.sleep(0.8)\nfrom botkit import run\n\nrun(lambda o, m: 0)\n")
    report = run_check(
        bot_entry(str(bot)),
        sandbox=open_sandbox("none"),
        limits=Limits(),
        time_control=TimeControl(startup_s=1.2),
        matches=[("tightwad", 3, {})],
    )
    hello = report.checks[0]
    assert (hello.name, hello.ok, hello.warn) == ("handshake", True, True), hello
    assert "of the 1.2 s start-up limit" in hello.detail and "startup_s" in hello.detail
    assert report.render().splitlines()[1].startswith("  WARN  handshake: said hello as")
    fast = run_check(
        bot_entry(str(bot)),
        sandbox=open_sandbox("none"),
        limits=Limits(),
        time_control=TimeControl(startup_s=10),
        matches=[("tightwad", 3, {})],
    )
    assert not fast.checks[0].warn and fast.render().splitlines()[1].startswith("  PASS  handshake")


def test_a_stray_print_of_a_bot_in_another_language_names_its_stderr():
    """A C bot was told to use botkit's log(...) or print(..., file=sys.stderr)."""
    detail = "not JSON (Expecting value): 'debug: 7 legal'"
    assert "print(..., file=sys.stderr)" in fault_hint("protocol", detail, "", BOT)
    other = fault_hint("protocol", detail, "", Path("bot"))
    assert other.startswith("a stray print") and "fprintf(stderr" in other and "sys.stderr" not in other
    assert "console.error" in fault_hint("protocol", detail, "", Path("bot.js"))


def test_an_answer_under_another_type_is_told_its_type():
    detail = 'expected {"type": "action", "action": <id>}, got \'{"type":"move","action":0}\''
    assert fault_hint("protocol", detail, "", BOT).startswith('an answer\'s "type" is "action", not "move"')


ENGINE = """#!/bin/sh
while IFS= read -r line; do
  case "$line" in
    *'"type":"hello"'*) echo '{"type":"hello"}' ;;
    *'"type":"act"'*) echo 0 ;;
    *'"type":"bye"'*) exit 0 ;;
  esac
done
"""


@pytest.mark.parametrize("absolute", [True, False])
def test_check_fails_a_folder_that_names_itself_by_its_absolute_path(tmp_path, absolute):
    """It passed arena check and arena play, which run the folder where it lies, and crashed in
    every match of arena run, which runs a copy under results/<name>/bots/<sha256>/."""
    folder = tmp_path / "engine_bot"
    folder.mkdir()
    (folder / "engine").write_text(ENGINE)
    where = str(folder) if absolute else '"$(dirname "$0")"'
    (folder / "run.sh").write_text(f"#!/bin/sh\nexec {where}/engine\n")
    for f in ("engine", "run.sh"):
        (folder / f).chmod(0o755)
    (folder / "bot.toml").write_text('entry = "run.sh"\n')
    report = run_check(
        bot_entry(str(folder)), sandbox=open_sandbox("none"), limits=Limits(), matches=[("tightwad", 3, {})]
    )
    copied = [c for c in report.checks if c.name == "runs from a copy"]
    assert [c.name for c in report.checks if not c.ok] == (["runs from a copy"] if absolute else [])
    if absolute:
        assert copied[0].detail.startswith(f"run.sh names the bot folder by its absolute path {folder}:")
        assert '$(dirname "$0")' in copied[0].fix


def test_a_data_file_naming_the_folder_is_a_warning_and_code_naming_it_a_failure(tmp_path):
    """A README or a notes file that mentions where the folder lies need not break anything:
    WARN. Code does (main.py opening a file by the folder's absolute path): FAIL, before any
    data file is named."""
    from arena.tournament.check_hints import own_path

    folder = tmp_path / "py_bot"
    folder.mkdir()
    (folder / "main.py").write_text("import pathlib\nW = pathlib.Path(__file__).parent / 'w.json'\n")
    (folder / "README.md").write_text(f"Built in {folder} on my laptop.\n")
    found = own_path(folder)
    assert found is not None and found[0].startswith("README.md names") and found[2] is False
    assert "a problem if the bot reads this file" in found[0]
    (folder / "helpers.py").write_text(f"W = '{folder}/w.json'\n")  # code, not executable
    found = own_path(folder)
    assert found is not None and found[0].startswith("helpers.py names") and found[2] is True


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_binary_built_in_its_folder_with_debug_information_is_no_absolute_path(tmp_path):
    """gcc -g writes the build folder into the binary's debug information, which nothing reads at
    run time: a C bot compiled in its folder failed arena check ("runs from a copy") and played
    every tournament match fine. A run path (-Wl,-rpath) to the folder is still found."""
    from arena.tournament.check_hints import own_path

    (tmp_path / "bot.c").write_text("int main(void) { return 0; }\n")
    folder = tmp_path / "c_bot"
    folder.mkdir()
    subprocess.run(["gcc", "-g", "-o", "bot", "../bot.c"], cwd=folder, check=True)
    assert str(folder).encode() in (folder / "bot").read_bytes()  # the debug information names it
    assert own_path(folder) is None
    subprocess.run(["gcc", "-o", "bot", "../bot.c", f"-Wl,-rpath,{folder}/lib"], cwd=folder, check=True)
    found = own_path(folder)
    assert found is not None and found[0].startswith(f"bot names the bot folder by its absolute path {folder}:")
    assert found[2]  # an executable: surely followed


def test_a_stray_print_of_a_python_folder_or_script_names_pythons_stderr(tmp_path):
    """A bot folder's path has no suffix: a folder whose entry is main.py, the usual Python bot
    with packages, was told fprintf and console.error; so was a #!/usr/bin/env python3 script."""
    detail = "not JSON (Expecting value): 'debug: 7 legal'"
    folder = tmp_path / "py_bot"
    folder.mkdir()
    (folder / "main.py").write_text("print('hi')\n")
    script = tmp_path / "py_script"
    script.write_text("#!/usr/bin/env python3\nprint('hi')\n")
    for bot in (folder, script):
        hint = fault_hint("protocol", detail, "", bot)
        assert "print(..., file=sys.stderr)" in hint and "fprintf" not in hint, hint
    shell = tmp_path / "sh_bot"
    shell.write_text("#!/bin/sh\necho hi\n")
    assert "echo ... >&2" in fault_hint("protocol", detail, "", shell)


@pytest.mark.parametrize(
    "name,first_line,way",
    [
        ("bot.pl", "", "Perl: print STDERR"),
        ("bot", "#!/usr/bin/env perl", "Perl: print STDERR"),
        ("bot", "#!/bin/sh", "shell: echo ... >&2"),
        ("bot.sh", "", "shell: echo ... >&2"),
        ("bot", "#!/usr/bin/mawk -f", 'awk: print ... > "/dev/stderr"'),
        ("bot", "#!/usr/bin/env -S node --stack-size=4000", "JavaScript: console.error"),
        ("bot.rb", "", "Ruby: $stderr.puts"),
    ],
)
def test_a_stray_print_of_a_script_names_its_own_languages_stderr(tmp_path, name, first_line, way):
    """A Perl, shell or awk bot's stray print was told six languages' ways to stderr (C's
    fprintf, Rust's eprintln!, ...); the script's #! line or suffix names the one it needs."""
    bot = tmp_path / name
    bot.write_text(first_line + "\nprint 1\n")
    hint = fault_hint("protocol", "not JSON (Expecting value): 'debug: 7 legal'", "", bot)
    assert hint.startswith("a stray print") and way in hint and "fprintf" not in hint, hint


def test_an_action_s_text_sent_as_its_id_is_told_to_send_the_id_not_to_unquote_it():
    """'play The Forest' sent as the action was told: send the id as a number, not "0"."""
    detail = 'action must be an integer id, got "play The Forest" (a string)'
    hint = fault_hint("protocol", detail, "", Path("bot.pl"))
    assert hint.startswith('the bot sent the action\'s text "play The Forest" where its id goes'), hint
    long = 'action must be an integer id, got "swap The Author#2 (hand) <-> The Sailor#1 (face-u...'
    assert fault_hint("protocol", long, "", BOT).startswith("the bot sent the action's text")
    quoted_number = fault_hint("protocol", 'action must be an integer id, got "3" (a string)', "", BOT)
    assert quoted_number.startswith("send the id as a number, not a string")


def test_a_folder_under_a_path_that_is_not_utf8_is_checked(tmp_path):
    """own_path encoded the folder's path as UTF-8: under a parent folder whose name is not
    UTF-8 arena check stopped at once ('an argument or input is not valid UTF-8'), where it had
    checked the bot before."""
    import os

    from arena.tournament.check_hints import own_path

    folder = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9")) / "engine_bot"
    folder.mkdir(parents=True)
    (folder / "run.sh").write_text('#!/bin/sh\nexec "$(dirname "$0")/engine"\n')
    assert own_path(folder) is None
    (folder / "run.sh").write_bytes(b"#!/bin/sh\nexec " + os.fsencode(folder) + b"/engine\n")
    found = own_path(folder)
    assert found is not None and found[0].startswith("run.sh names the bot folder by its absolute path ")
    assert "caf\ufffd/engine_bot:" in found[0]
    found[0].encode()  # printable text


def test_a_crafted_elf_file_costs_the_check_little(tmp_path):
    """An upload's ELF header is the uploader's: truncated, it is no path; listing a dynamic
    section many times over, its string table is read once, not once per listing."""
    import struct

    from arena.tournament.check_hints import _elf_load_paths, own_path

    folder = tmp_path / "crafted"
    folder.mkdir()
    (folder / "short").write_bytes(b"\x7fELF\x02\x01")
    assert _elf_load_paths(folder / "short") == b"" and own_path(folder) is None
    body = 1 << 20  # one string table of 1 MiB, then 64 section headers that all name it
    header = (
        b"\x7fELF\x02\x01\x01"
        + bytes(9)
        + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0, 0, 64 + body, 0, 64, 56, 0, 64, 64, 0)
    )
    sections = b"".join(struct.pack("<IIQQQQIIQQ", 0, 6, 0, 0, 64, body, 0, 0, 1, 0) for _ in range(64))
    (folder / "many").write_bytes(header + b"x" * body + sections)
    assert len(_elf_load_paths(folder / "many")) <= body


def test_a_jvm_gone_before_its_stdout_was_read_still_gets_the_jvm_hint():
    """The JVM says why it cannot start on stdout; when it exits before the arena reads that,
    the fault is 'stdin closed' and stderr has only the generic line (seen in CI under load)."""
    stderr = (
        "Error: Could not create the Java Virtual Machine.\nError: A fatal exception has occurred. Program will exit.\n"
    )
    detail = "stdin closed (bot exited or closed its input) (exit code 1)"
    hint = fault_hint("crash", detail, stderr, Path("javabot"))
    assert hint.startswith("the Java VM could not reserve its memory or start its threads"), hint
    bad_flag = "Unrecognized VM option 'UseFoo'\n" + stderr  # its own reason, shown with the stderr
    assert "Java VM could not reserve" not in fault_hint("crash", detail, bad_flag, Path("javabot"))


def test_a_bot_in_another_language_printing_a_jvms_words_gets_no_jvm_hint(tmp_path):
    """A Python bot whose stray print or crash text looked like a JVM's error was told to cap
    the Java VM; a script that runs java (or an unknown file) still gets the hint."""
    detail = "not JSON (Expecting value): 'Error occurred during initialization of VM'"
    stderr = "Error: Could not create the Java Virtual Machine.\n"
    python_bot = tmp_path / "bot.py"
    python_bot.write_text("print('Error occurred during initialization of VM')\n")
    node_bot = _script(tmp_path, "nodebot", "/usr/bin/env node")
    for bot in (python_bot, node_bot):
        assert not fault_hint("protocol", detail, "", bot, handshake=True).startswith("the Java VM"), bot
        assert not fault_hint("crash", "exit code 1", stderr, bot).startswith("the Java VM"), bot
    shell = tmp_path / "run.sh"
    shell.write_text("#!/bin/sh\nexec java -Xmx128m -jar bot.jar\n")
    kotlin = _script(tmp_path, "ktbot", "/usr/bin/env kotlin")
    for bot in (shell, kotlin, tmp_path / "missing"):
        assert fault_hint("protocol", detail, "", bot, handshake=True).startswith("the Java VM"), bot
        assert fault_hint("crash", "exit code 1", stderr, bot).startswith("the Java VM"), bot


def test_an_action_s_text_written_as_the_answer_is_not_called_a_stray_print():
    """A shell bot answering `play The Forest` (its choice's text) was told it printed debugging
    text on stdout; the legal actions it was answering tell the two apart."""
    detail = "not JSON (Expecting value): 'play The Forest'"
    texts = ["play The Forest", "play Ace of Moons"]
    hint = fault_hint("protocol", detail, "", Path("bot.sh"), legal_texts=texts)
    assert hint.startswith("the bot wrote the action's text 'play The Forest' where its id goes"), hint
    assert fault_hint("protocol", detail, "", Path("bot.sh")).startswith("a stray print")  # not known: as before
    other = "not JSON (Expecting value): 'thinking about play The Forest'"
    assert fault_hint("protocol", other, "", Path("bot.sh"), legal_texts=texts).startswith("a stray print")
