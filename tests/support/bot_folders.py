"""A bot folder with a pinned package pip finds offline: a tiny pure-Python wheel written by hand.

The bot-folder tests (tests/match) and the shipping of folders to workers and nodes (tests/tournament)
play it; the root conftest.py's ``offline`` fixture points pip at these wheels only."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

TINY_BOT = """
import os, random, sys
from pathlib import Path
import tinypkg
from botkit import run

HERE = Path(__file__).parent
DATA = int((HERE / "data.txt").read_text())
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    if os.environ.get(var) != "1":
        sys.exit(f"{var} is not capped")
for target in (HERE / "written.txt", Path(tinypkg.__file__).with_name("written.txt")):
    try:
        target.write_text("x")
    except OSError:
        continue
    sys.exit(f"could write {target}")   # the folder and the environment must be read-only


def choose(observation, match):
    legal = observation["legal_actions"]
    return legal[(tinypkg.pick(len(legal), DATA) + random.randrange(len(legal))) % len(legal)]["id"]


run(choose, name="tiny-folder-bot")
"""


def wheel(folder: Path, name: str, version: str, files: dict[str, bytes], tag: str = "py3-none-any") -> Path:
    """A wheel written by hand (what `pip wheel` makes), RECORD and all."""
    dist = f"{name}-{version}.dist-info"
    files = dict(files)
    files[f"{dist}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    files[f"{dist}/WHEEL"] = f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: {tag}\n".encode()
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    out = folder / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(out, "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
    return out


def tiny_wheel(folder: Path, version: str) -> Path:
    code = f"VERSION = {version!r}\n\ndef pick(n, salt):\n    return salt % n\n".encode()
    return wheel(folder, "tinypkg", version, {"tinypkg/__init__.py": code})


def tiny_folder(base: Path, pin: str = "tinypkg==1.0", data: str = "7") -> Path:
    folder = base / "tinybot"
    folder.mkdir(parents=True)
    (folder / "main.py").write_text(TINY_BOT)
    (folder / "data.txt").write_text(data)
    (folder / "requirements.txt").write_text(f"# pinned\n{pin}\n")
    return folder
