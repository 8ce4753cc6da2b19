"""Bot folders and archives (arena.match.botfolder): entry, data, pinned requirements installed
before play into a cached environment, read-only in the sandbox, identity over files and packages.

Offline: pip gets ``PIP_NO_INDEX`` and a ``PIP_FIND_LINKS`` folder of wheels the tests build
(a tiny pure-Python package written by hand; numpy repacked from this test venv)."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.match import botfolder
from arena.match.agents import ProcessAgent, RandomAgent
from arena.match.faults import BotFault, FaultKind
from arena.match.referee import play_match
from arena.match.sandbox import Limits
from arena.tournament.roster import RosterError, bot_entry, snapshot_bots
from arena.tournament.schedule import MatchSpec
from games import REGISTRY
from tests.hostile.test_match_hostile import ROOT, TC
from tests.hostile.test_safe_levels import safe_level
from tests.support.bot_folders import tiny_folder, wheel


def play(entry, sandbox, game: str = "tightwad", players: int = 3):
    """One match of ``entry`` (seat 0) against in-process random players."""
    agents = [ProcessAgent(entry, sandbox=sandbox, limits=Limits(), time_control=TC)]
    agents += [RandomAgent(name=f"r{i}", seed=i) for i in range(1, players)]
    spec = REGISTRY[game]
    m = MatchSpec(
        match_id="folder/1",
        index=0,
        game=game,
        players=players,
        options=spec.resolve_options(players, {}),
        deal_seed=3,
        match_seed=4,
        bots=("tinybot", "r1", "r2")[:players],
    )
    try:
        return play_match(m, agents, time_control=TC, sandbox=sandbox)
    finally:
        for a in agents:
            a.close()


def _faults(record) -> list:
    return record["faults"]


@pytest.mark.slow  # pip installs (a few seconds each on a busy machine)
@pytest.mark.parametrize("level", ["full", "landlock"])
def test_a_bot_folder_plays_with_its_packages_and_data_read_only_at_each_safe_level(offline: Path, level: str) -> None:
    sandbox = safe_level(level)
    folder = tiny_folder(offline)
    entry = bot_entry(str(folder))
    assert entry.kind == "folder" and entry.name == "tinybot"
    env = botfolder.installed_env(folder)
    assert env is not None and env.resolved == ("tinypkg==1.0",)
    assert env.path.parent.parent == Path(os.environ["ARENA_BOT_ENVS"])
    record = play(entry, sandbox)
    assert _faults(record) == [None, None, None], _faults(record)
    assert not (folder / "written.txt").exists() and not list(env.path.rglob("written.txt"))


@pytest.mark.slow  # pip installs (a few seconds each on a busy machine)
def test_the_identity_covers_the_files_and_the_resolved_packages(offline: Path) -> None:
    a = bot_entry(str(tiny_folder(offline / "a")))
    same = bot_entry(str(tiny_folder(offline / "b")))
    other_data = bot_entry(str(tiny_folder(offline / "c", data="8")))
    other_pkg = bot_entry(str(tiny_folder(offline / "d", pin="tinypkg==2.0")))
    assert a.sha256 == same.sha256
    assert len({a.sha256, other_data.sha256, other_pkg.sha256}) == 3
    assert botfolder.installed_env(Path(other_pkg.path)).resolved == ("tinypkg==2.0",)
    # one environment per distinct requirements, shared by folders that pin the same
    envs = {botfolder.installed_env(Path(e.path)).path for e in (a, same, other_data, other_pkg)}
    assert len(envs) == 2


def test_requirements_must_be_pinned_one_line_with_the_fix(offline: Path) -> None:
    folder = tiny_folder(offline, pin="tinypkg>=1.0")
    with pytest.raises(RosterError) as err:
        bot_entry(str(folder))
    msg = str(err.value)
    assert "\n" not in msg and "requirements.txt:2" in msg and "name==version" in msg


def test_package_names_are_normalised_as_pip_does_so_spellings_share_one_environment(tmp_path: Path) -> None:
    spellings = ["Zope.Interface==7.2", "zope_interface==7.2", "zope--interface==7.2"]
    for i, pin in enumerate(spellings):
        (tmp_path / str(i)).mkdir()
        (tmp_path / str(i) / "requirements.txt").write_text(pin + "\n")
    assert {tuple(botfolder.requirements(tmp_path / str(i))) for i in range(3)} == {("zope-interface==7.2",)}


@pytest.mark.slow  # pip installs (a few seconds each on a busy machine)
def test_a_package_pip_cannot_find_is_one_line_naming_the_file(offline: Path) -> None:
    folder = tiny_folder(offline, pin="tinypkg==9.9")
    with pytest.raises(RosterError) as err:
        bot_entry(str(folder))
    msg = str(err.value)
    assert "\n" not in msg and "requirements.txt: pip could not install tinypkg==9.9" in msg
    key = botfolder.env_key(["tinypkg==9.9"])
    assert not (Path(os.environ["ARENA_BOT_ENVS"]) / "envs" / key).exists()  # nothing half-installed kept


@pytest.mark.slow  # pip installs (a few seconds each on a busy machine)
def test_nothing_installs_during_a_match(offline: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder whose environment is missing fails to start (sandbox fault); pip never runs."""
    folder = tiny_folder(offline)
    entry = bot_entry(str(folder))
    monkeypatch.setenv("ARENA_BOT_ENVS", str(offline / "envs"))  # an empty cache
    agent = ProcessAgent(entry, sandbox=safe_or_none(), limits=Limits(), time_control=TC)
    try:
        with pytest.raises(BotFault) as fault:
            agent.prepare()
        assert fault.value.kind is FaultKind.SANDBOX and "arena check" in fault.value.detail
    finally:
        agent.close()
    assert not (offline / "envs").exists()


def any_safe_level():
    """full, else landlock (the tiny bot fails where it can write its own folder)."""
    try:
        return safe_level("full")
    except pytest.skip.Exception:
        return safe_level("landlock")


def safe_or_none():
    from arena.match.detect import detect_sandbox

    return detect_sandbox("none")


def _pack(folder: Path, out: Path, kind: str) -> Path:
    if kind == "zip":
        with zipfile.ZipFile(out, "w") as z:
            for p in sorted(folder.rglob("*")):
                z.write(p, f"{folder.name}/{p.relative_to(folder)}")
    else:
        with tarfile.open(out, "w:gz") as t:
            t.add(folder, arcname=folder.name)
    return out


@pytest.mark.slow  # pip installs (a few seconds each on a busy machine)
@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_an_archive_of_a_folder_is_that_bot(offline: Path, kind: str) -> None:
    folder = tiny_folder(offline / "src")
    archive = _pack(folder, offline / f"tinybot.{kind}", kind)
    a, f = bot_entry(str(archive)), bot_entry(str(folder))
    assert a.name == "tinybot" and a.kind == "folder" and a.sha256 == f.sha256
    assert (Path(a.path) / "data.txt").read_text() == "7"
    record = play(a, any_safe_level())
    assert _faults(record) == [None, None, None]


def test_an_archive_may_not_leave_its_folder_nor_hold_links_nor_be_huge(
    offline: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = offline / "escape.zip"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("bot/main.py", "print()")
        z.writestr("../../outside.py", "print('pwned')")
    with pytest.raises(RosterError, match="leaves the archive's folder"):
        bot_entry(str(bad))
    assert not (offline / "outside.py").exists()
    link = offline / "link.tar.gz"
    with tarfile.open(link, "w:gz") as t:
        info = tarfile.TarInfo("bot/main.py")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        t.addfile(info)
    with pytest.raises(RosterError, match="is a link or a device"):
        bot_entry(str(link))
    many = offline / "many.zip"
    with zipfile.ZipFile(many, "w") as z:
        z.writestr("bot/main.py", "print()")
        for i in range(5):
            z.writestr(f"bot/w{i}.bin", b"0")
    monkeypatch.setattr(botfolder, "MAX_FILES", 3)
    with pytest.raises(RosterError, match="more than 3 files"):
        bot_entry(str(many))


def test_a_folder_without_an_entry_says_how_to_name_one(offline: Path) -> None:
    folder = offline / "noentry"
    folder.mkdir()
    (folder / "weights.bin").write_bytes(b"\0")
    with pytest.raises(RosterError, match=r"no entry file; add main.py, or name the entry in bot.toml"):
        bot_entry(str(folder))
    (folder / "bot.py").write_text("print()\n")  # one Python file, not named main.py: surely the bot
    with pytest.raises(
        RosterError, match=r'no entry file; rename bot.py to main.py, or name it in bot.toml: entry = "bot.py"'
    ):
        bot_entry(str(folder))
    (folder / "bot.py").unlink()
    (folder / "bot.toml").write_text('entry = "run.sh"\n')
    with pytest.raises(RosterError, match="entry 'run.sh' is not a file"):
        bot_entry(str(folder))
    (folder / "run.sh").write_text(f"#!/bin/sh\nexec {sys.executable} -s -S {ROOT / 'bots/random_bot.py'}\n")
    with pytest.raises(RosterError, match="neither a .py file nor executable"):
        bot_entry(str(folder))
    (folder / "run.sh").chmod(0o755)
    assert bot_entry(str(folder)).kind == "folder"


def test_a_misspelt_manifest_field_and_two_executables_are_named(offline: Path) -> None:
    folder = offline / "twoexe"
    folder.mkdir()
    for name in ("a.sh", "b.sh"):
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(0o755)
    with pytest.raises(RosterError, match=r"2 executable files \(a.sh, b.sh\) and no main.py; name the one"):
        bot_entry(str(folder))
    for name in ("c.sh", "d.sh", "e.sh", "f.sh"):  # more than are named: the list says it goes on
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(0o755)
    with pytest.raises(RosterError, match=r"6 executable files \(a.sh, b.sh, c.sh, d.sh, e.sh, ...\)"):
        bot_entry(str(folder))
    for name in ("c.sh", "d.sh", "e.sh", "f.sh"):
        (folder / name).unlink()
    (folder / "bot.toml").write_text('entri = "a.sh"\n')
    with pytest.raises(RosterError, match=r"unknown field 'entri'; did you mean 'entry'\?"):
        bot_entry(str(folder))


def test_a_link_out_of_the_folder_is_refused(offline: Path) -> None:
    folder = tiny_folder(offline)
    (folder / "secret").symlink_to("/etc/hostname")
    with pytest.raises(RosterError, match="a link out of the bot folder"):
        bot_entry(str(folder))


@pytest.mark.slow  # pip installs (a few seconds each on a busy machine)
def test_a_run_plays_a_snapshot_of_the_folder(offline: Path) -> None:
    entry = bot_entry(str(tiny_folder(offline)))
    [snap] = snapshot_bots([entry], offline / "results")
    assert snap.sha256 == entry.sha256 and Path(snap.path).parent.name == entry.sha256
    (Path(entry.path) / "data.txt").write_text("9")  # editing the original changes nothing
    assert botfolder.folder_sha256(Path(snap.path), botfolder.installed_env(Path(snap.path))) == entry.sha256


@pytest.mark.slow
def test_arena_check_installs_the_requirements_of_a_folder(offline: Path) -> None:
    from arena.cli import cli

    folder = tiny_folder(offline)
    main = folder / "main.py"  # at level none a folder is writable: this check drops its write test
    main.write_text(main.read_text().replace("for target in (", "for target in () and ("))
    result = CliRunner().invoke(cli, ["check", str(folder), "--sandbox", "none"])
    assert result.exit_code == 0, result.output
    assert "RESULT: PASS" in result.output
    assert botfolder.installed_env(folder).resolved == ("tinypkg==1.0",)


# ---- the numpy example, at full and landlock --------------------------------------------


@pytest.fixture(scope="module")
def numpy_wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This venv's numpy repacked as a wheel (nothing downloaded)."""
    try:
        dist = importlib.metadata.distribution("numpy")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("numpy is not installed in the test venv (pip install -e '.[rl]')")
    wheel_meta = dist.read_text("WHEEL") or ""
    tag = next((ln.split(":", 1)[1].strip() for ln in wheel_meta.splitlines() if ln.startswith("Tag:")), None)
    if tag is None:
        pytest.skip("the installed numpy has no wheel tag")
    out = tmp_path_factory.mktemp("numpy-wheels")
    base = Path(dist.locate_file(""))
    path = out / f"numpy-{dist.version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for f in dist.files or []:
            src = base / f
            if "__pycache__" in f.parts or not src.is_file() or f.parts[0].startswith(".."):
                continue
            z.write(src, str(f))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("level", ["full", "landlock"])
def test_the_numpy_example_folder_plays_at_each_safe_level(
    numpy_wheels: Path, tmp_path: Path, level: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = safe_level(level)
    monkeypatch.setenv("ARENA_BOT_ENVS", str(numpy_wheels.parent / "envs"))  # installed once for both
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(numpy_wheels))
    folder = tmp_path / "numpy_bot"
    shutil.copytree(ROOT / "examples" / "numpy_bot", folder)
    version = importlib.metadata.version("numpy")
    (folder / "requirements.txt").write_text(f"numpy=={version}\n")
    entry = bot_entry(str(folder))
    assert f"numpy=={version}" in botfolder.installed_env(folder).resolved
    record = play(entry, sandbox)
    assert _faults(record) == [None, None, None], _faults(record)


def test_the_example_folder_pins_numpy() -> None:
    folder = ROOT / "examples" / "numpy_bot"
    assert botfolder.entry_file(folder) == folder / "main.py"
    assert [r.split("==")[0] for r in botfolder.requirements(folder)] == ["numpy"]
    assert (folder / "weights.npy").stat().st_size < 1024


def _sdist(folder: Path, name: str, version: str) -> Path:
    """A source release only (what PyPI holds for trueskill 0.4.5): no wheel of it anywhere."""
    import io
    import tarfile

    out = folder / f"{name}-{version}.tar.gz"
    files = {
        f"{name}-{version}/setup.py": f"from setuptools import setup\nsetup(name={name!r}, version={version!r})\n",
        f"{name}-{version}/PKG-INFO": f"Metadata-Version: 1.0\nName: {name}\nVersion: {version}\n",
    }
    with tarfile.open(out, "w:gz") as t:
        for path, text in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(text.encode())
            t.addfile(info, io.BytesIO(text.encode()))
    return out


@pytest.mark.slow  # pip runs (a few seconds on a busy machine)
def test_a_package_with_only_a_source_release_says_only_wheels_are_installed(
    offline: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    links = offline / "links"
    links.mkdir()
    _sdist(links, "srconly", "0.4.5")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    folder = tiny_folder(offline, pin="srconly==0.4.5")
    with pytest.raises(RosterError) as err:
        bot_entry(str(folder))
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(
        f"{folder / 'requirements.txt'}: pip found no binary wheel of srconly==0.4.5"
    )
    assert "installs wheels only" in msg and "PIP_FIND_LINKS" in msg and "from versions: none" not in msg


def test_an_archive_without_an_entry_is_named_as_given_not_by_its_unpacked_copy(offline: Path) -> None:
    """`arena check mybot.zip` with no entry file said '~/.cache/.../unpacked/<hash>/bot: no entry
    file', a folder the entrant never made (on a ladder: 'bot: no entry file'); it names the
    archive it was given."""
    folder = offline / "src"
    folder.mkdir()
    for name in ("bot.py", "other.py"):
        (folder / name).write_text("print()\n")
    archive = offline / "twopy.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for name in ("bot.py", "other.py"):
            z.write(folder / name, name)
    with pytest.raises(RosterError) as err:
        bot_entry(str(archive))
    assert str(err.value).startswith(f"{archive}: no entry file; add main.py")
    assert "unpacked" not in str(err.value) and str(offline / "shared") not in str(err.value)


def _pip_compile_hashed(folder: Path, wheel: Path, digest: str | None = None) -> None:
    """requirements.txt as `pip-compile --generate-hashes` writes it (continuation lines, a comment)."""
    import hashlib

    digest = digest or hashlib.sha256(wheel.read_bytes()).hexdigest()
    (folder / "requirements.txt").write_text(
        f"# pip-compile --generate-hashes\ntinypkg==1.0 \\\n    --hash=sha256:{digest}\n    # via -r requirements.in\n"
    )


@pytest.mark.slow  # pip installs (a few seconds each on a busy machine)
def test_hash_checked_requirements_install_and_a_wrong_hash_is_one_line(offline: Path) -> None:
    """A pinned line with `--hash` (pip-compile --generate-hashes) is pinned: pip checks the hash."""
    wheel = next((Path(os.environ["PIP_FIND_LINKS"])).glob("tinypkg-1.0-*.whl"))
    folder = tiny_folder(offline / "good")
    _pip_compile_hashed(folder, wheel)
    entry = bot_entry(str(folder))
    env = botfolder.installed_env(Path(entry.path))
    assert env is not None and env.resolved == ("tinypkg==1.0",)
    assert botfolder.env_key(botfolder.requirements(folder)) != botfolder.env_key(["tinypkg==1.0"])
    bad = tiny_folder(offline / "bad")
    _pip_compile_hashed(bad, wheel, digest="0" * 64)
    with pytest.raises(RosterError) as err:
        bot_entry(str(bad))
    msg = str(err.value)
    assert "\n" not in msg and f"{bad / 'requirements.txt'}: pip could not install tinypkg==1.0" in msg
    assert "DO NOT MATCH THE HASHES" in msg and "not pinned" not in msg


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("--index-url https://example.invalid/simple", "PIP_INDEX_URL"),
        ("--extra-index-url https://example.invalid/simple", "PIP_EXTRA_INDEX_URL"),
        ("-f /some/wheels", "PIP_FIND_LINKS"),
        ('tinypkg==1.0 ; python_version >= "3.8"', "marker"),
    ],
)
def test_an_index_option_or_a_marker_is_told_what_to_do_instead(offline: Path, line: str, says: str) -> None:
    """Not 'is not pinned': an index option goes to pip's own settings, a marker is dropped."""
    folder = tiny_folder(offline, pin=f"{line}\ntinypkg==1.0")
    with pytest.raises(RosterError) as err:
        bot_entry(str(folder))
    msg = str(err.value)
    assert "\n" not in msg and "requirements.txt:2" in msg and says in msg and "not pinned" not in msg, msg


def test_a_git_checkout_is_the_same_bot_whatever_git_does_to_its_own_folder(offline: Path) -> None:
    """A bot folder that is a git checkout: `git status` rewrites .git/index when a file's
    timestamp changed, and that made the folder another bot (every match played again);
    .git's objects also counted toward the folder's 2,000 files and were snapshot and shipped."""
    plain = tiny_folder(offline / "plain")
    checkout = tiny_folder(offline / "checkout")
    git = checkout / ".git"
    (git / "objects" / "ab").mkdir(parents=True)
    (git / "objects" / "ab" / "cdef").write_bytes(b"blob")
    (git / "index").write_bytes(b"DIRC 1")
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    entry = bot_entry(str(checkout))
    assert entry.sha256 == bot_entry(str(plain)).sha256
    (git / "index").write_bytes(b"DIRC 2")  # what `git status` does after a touch
    assert bot_entry(str(checkout)).sha256 == entry.sha256
    assert not any(rel.startswith(".git/") for rel, _ in botfolder.folder_files(checkout))
    (checkout / "data.txt").write_text("8")  # the bot's own files still make it another bot
    assert bot_entry(str(checkout)).sha256 != entry.sha256


def test_naming_a_folders_main_py_warns_that_it_plays_without_the_folder(
    offline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`arena duel tightwad mybot/main.py old` ran main.py alone: 'No module named numpy' in
    every match, and the duel concluded that NEW is not better, with nothing said up front."""
    folder = tiny_folder(offline)
    entry = bot_entry(str(folder / "main.py"))
    assert entry.kind == "python"
    err = capsys.readouterr().err
    assert (
        f"arena: {folder / 'main.py'} is a file of the bot folder {folder} (it has requirements.txt): it plays "
        f"alone, without the folder's packages and files; name the folder ({folder}) to play the bot"
    ) in err.splitlines(), err
    lone = offline / "lone"
    lone.mkdir()
    (lone / "bot.py").write_text((folder / "main.py").read_text())
    bot_entry(str(lone / "bot.py"))
    assert "is a file of the bot folder" not in capsys.readouterr().err


def test_a_zip_made_by_finder_is_the_folder_it_compressed(offline: Path) -> None:
    """macOS Finder's "Compress mybot" writes mybot/... and __MACOSX/mybot/._main.py (and maybe a
    .DS_Store): the bot was refused with 'no entry file; add main.py', though main.py was there."""
    folder = offline / "src" / "mybot"
    folder.mkdir(parents=True)
    (folder / "main.py").write_text("from botkit import run, simple_choice\nrun(simple_choice)\n")
    (folder / "weights.bin").write_bytes(b"\x00" * 64)
    archive = offline / "mybot.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for name in ("main.py", "weights.bin"):
            z.write(folder / name, f"mybot/{name}")
        z.writestr("__MACOSX/mybot/._main.py", b"\x00\x05\x16\x07 attributes")
        z.writestr(".DS_Store", b"finder")
    a, f = bot_entry(str(archive)), bot_entry(str(folder))
    assert a.name == "mybot" and a.kind == "folder" and a.sha256 == f.sha256
    assert Path(a.path).name == "mybot"


def test_a_long_pip_freeze_that_fails_still_says_pips_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A requirements.txt from `pip freeze` pins dozens: the error listed every pin first, and the
    line was cut before pip's reason (which package, which versions there are) was reached."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for i in range(30):
        wheel(wheels, f"pkg{i:02d}", "1.0", {f"pkg{i:02d}/__init__.py": b""})
    for v in range(1, 11):
        wheel(wheels, "tinypkg", f"{v}.0", {"tinypkg/__init__.py": b""})
    monkeypatch.setenv("ARENA_BOT_ENVS", str(tmp_path / "envs"))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    folder = tiny_folder(tmp_path / "bot", pin="tinypkg==99.0")
    pins = [f"pkg{i:02d}==1.0" for i in range(30)] + ["tinypkg==99.0"]
    (folder / "requirements.txt").write_text("\n".join(pins) + "\n")
    with pytest.raises(RosterError) as err:
        bot_entry(str(folder))
    msg = str(err.value)
    assert "\n" not in msg and not msg.endswith("..."), msg
    assert "pip could not install pkg00==1.0, pkg01==1.0, pkg02==1.0, pkg03==1.0, pkg04==1.0, and 26 more (" in msg
    assert "tinypkg==99.0 (from versions: 1.0, ..., 7.0, 8.0, 9.0, 10.0: 10 in all)" in msg, msg
    assert len(msg) < 500, msg


def test_pips_remark_on_other_pythons_versions_is_not_taken_for_its_reason() -> None:
    """With a real index pip writes 'ERROR: Ignored the following versions that require a different
    python version: ...' before its reason: the error quoted that remark, and the advice for a
    package with no wheel (trueskill, from a pip freeze) never showed."""
    lines = [
        "WARNING: Location 'file:///x/simple/trueskill/' is ignored",
        "ERROR: Ignored the following versions that require a different python version: 1.21.0 Requires-Python <3.11",
        "ERROR: Could not find a version that satisfies the requirement trueskill==0.4.5 (from versions: none)",
        "ERROR: No matching distribution found for trueskill==0.4.5",
    ]
    assert botfolder._pip_reason(lines) == lines[2]
    assert botfolder._pip_reason(["ERROR: Ignored the following versions"]) == "ERROR: Ignored the following versions"
    assert botfolder._pip_reason([]) == "no output"


ENSURE_ENV = (
    "import sys; from pathlib import Path; from arena.match import botfolder; botfolder.ensure_env(Path(sys.argv[1]))"
)


def _ensure_env_behind_a_held_lock(envs: Path, folders: list[Path]) -> tuple[list[int], list[str]]:
    """``ensure_env`` of each folder (one requirements set) in a process of its own, all started
    while the test holds the set's install lock, as if another process were installing: each must
    wait. Their exit codes and standard errors once the lock is let go."""
    import fcntl
    import subprocess

    from arena.match.bot_cache import LOCKS

    key = botfolder.env_key(botfolder.requirements(folders[0]))
    (envs / LOCKS).mkdir(parents=True)
    with open(envs / LOCKS / key, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        procs = [
            subprocess.Popen([sys.executable, "-c", ENSURE_ENV, str(f)], stderr=subprocess.PIPE, text=True)
            for f in folders
        ]
        waiting = [p.stderr.readline() for p in procs]  # type: ignore[union-attr]
    errs = [w + p.communicate(timeout=300)[1] for w, p in zip(waiting, procs, strict=True)]
    pins = botfolder.requirements(folders[0])[0]
    assert all(f"waiting for another process installing {pins}" in w for w in waiting), errs
    return [p.returncode for p in procs], errs


@pytest.mark.slow  # one pip install
def test_two_processes_needing_one_requirements_set_install_it_once(
    offline: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ladder's checks, or a Ray node's workers, that need the same packages at once: one runs
    pip, the others wait for it and use what it installed."""
    monkeypatch.setenv("ARENA_BOT_ENVS", str(offline / "envs"))  # nothing installed yet
    folders = [tiny_folder(offline / f"entrant{i}") for i in range(2)]
    codes, errs = _ensure_env_behind_a_held_lock(offline / "envs", folders)
    assert codes == [0, 0], errs
    assert sum(e.count("arena: installing") for e in errs) == 1, errs
    assert botfolder.installed_env(folders[1]).resolved == ("tinypkg==1.0",)


@pytest.mark.slow  # one pip run
def test_processes_waiting_on_an_install_that_fails_get_its_reason_without_running_pip_again(
    offline: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each waiter ran pip once more after the one it waited for had failed: minutes each, on a
    ladder's checks or a Ray node's workers, for the same answer."""
    import subprocess

    monkeypatch.setenv("ARENA_BOT_ENVS", str(offline / "envs"))
    folders = [tiny_folder(offline / f"entrant{i}", pin="tinypkg==99.0") for i in range(3)]
    codes, errs = _ensure_env_behind_a_held_lock(offline / "envs", folders)
    assert all(code != 0 for code in codes), errs
    assert sum(e.count("arena: installing") for e in errs) == 1, errs  # pip ran once
    for folder, err in zip(folders, errs, strict=True):  # each names its own file and pip's reason
        assert f"{folder / 'requirements.txt'}: pip could not install tinypkg==99.0 (" in err, err
    # a later process (the pins or the index mended meanwhile) runs pip again
    late = subprocess.run(
        [sys.executable, "-c", ENSURE_ENV, str(folders[0])], capture_output=True, text=True, timeout=300
    )
    assert late.returncode != 0 and "arena: installing" in late.stderr
