"""A Java bot runs at the strongest sandbox level with the system's own JVM.

Debian's and Ubuntu's OpenJDK link their configuration (java.security, jvm.cfg) from
/usr/lib/jvm into /etc/java-N-openjdk; a sandbox that shows /usr without it stops the JVM
at start-up ("Error loading java.security file"). Skipped where no java is installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.match.detect import detect_sandbox
from arena.match.sandbox import SandboxUnavailable

ROOT = Path(__file__).resolve().parents[2]

# A single-file Java program (JEP 330) run by its #! line: the JVM compiles it at start-up.
BOT = """\
import java.io.*;

public class Bot {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains("\\"type\\":\\"hello\\"")) out.println("{\\"type\\":\\"hello\\",\\"name\\":\\"java\\"}");
            else if (line.contains("\\"type\\":\\"act\\"")) out.println("0");
            else if (line.contains("\\"type\\":\\"bye\\"")) break;
        }
    }
}
"""


def _java() -> str:
    java = shutil.which("java", path="/usr/local/bin:/usr/bin:/bin")
    if java is None:
        pytest.skip("no java under /usr on this machine")
    real = os.path.realpath(java)
    if not real.startswith("/usr/"):
        pytest.skip(f"java is {real}, outside /usr: the sandbox does not show it")
    return java


@pytest.mark.parametrize("level", ["full", "landlock"])
def test_a_java_bot_plays_a_match_at_a_safe_level(level: str, tmp_path: Path) -> None:
    java = _java()
    try:
        detect_sandbox(level)
    except SandboxUnavailable as exc:
        pytest.skip(f"level {level} unavailable here: {exc}")
    bot = tmp_path / "javabot"
    # caps on what the JVM reserves, so that it starts within memory_mb at every level
    flags = "-Xmx128m -XX:ReservedCodeCacheSize=64m -XX:CompressedClassSpaceSize=64m"
    bot.write_text(f"#!{java} --source 11 {flags}\n{BOT}")
    bot.chmod(0o755)
    tmp_path.chmod(0o755)
    res = subprocess.run(
        [sys.executable, "-m", "arena", "play", "tightwad", str(bot), "builtin:random", "builtin:random"]
        + ["--seed", "7", "--json", "--sandbox", level, "--startup-s", "60", "--move-s", "10"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    doc = json.loads(res.stdout)
    assert doc["faults"][0] is None, doc["faults"][0]
    assert res.returncode == 0, res.stderr


def test_check_tells_a_java_bot_without_caps_how_to_start_under_rlimit_as(tmp_path: Path) -> None:
    """At `rlimits`, memory_mb caps the address space: the JVM's defaults reserve more than 1 GiB
    and it says so on stdout; `arena check` names the JVM and its flags, not a stray print."""
    java = _java()
    bot = tmp_path / "javabot"
    bot.write_text(f"#!{java} --source 11\n{BOT}")
    bot.chmod(0o755)
    res = subprocess.run(
        [sys.executable, "-m", "arena", "check", str(bot), "--sandbox", "rlimits", "--startup-s", "60"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if res.returncode == 0:
        pytest.skip("this JVM's defaults start within the address-space limit here")
    assert "fix: the Java VM could not reserve its memory or start its threads" in res.stdout, res.stdout
