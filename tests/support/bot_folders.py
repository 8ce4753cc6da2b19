"""A bot folder with a pinned package pip finds offline: a tiny pure-Python wheel written by hand;
and archives that lie or are damaged, as an audit made them.

The bot-folder tests (tests/match) and the shipping of folders to workers and nodes (tests/tournament)
play it; the root conftest.py's ``offline`` fixture points pip at these wheels only."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import struct
import tarfile
import zipfile
import zlib
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


def liar_zip(path: Path, main: bytes, real_bytes: int, claimed: int = 10, crc_matches: bool = True) -> Path:
    """A zip of ``bot/main.py`` and ``bot/zeros.bin``: ``real_bytes`` zeros whose local and central
    headers claim ``claimed`` bytes (their CRC that of ``claimed`` zeros, or left as it was)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bot/main.py", main)
        with z.open("bot/zeros.bin", "w") as f:
            block = b"\0" * (1 << 20)
            for start in range(0, real_bytes, len(block)):
                f.write(block[: real_bytes - start])
    data = bytearray(path.read_bytes())
    for sig, crc_at, size_at in ((b"PK\x03\x04", 14, 22), (b"PK\x01\x02", 16, 24)):
        at = data.rfind(sig)  # zeros.bin's headers: the last of each kind
        if crc_matches:
            struct.pack_into("<I", data, at + crc_at, zlib.crc32(b"\0" * claimed))
        struct.pack_into("<I", data, at + size_at, claimed)
    path.write_bytes(bytes(data))
    return path


def liar_tar(path: Path, members: dict[str, bytes], member: str, claimed: int) -> Path:
    """A .tar.gz of ``members`` whose ``member`` header claims ``claimed`` bytes, its checksum
    fixed up to match (its data left whole)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    raw = bytearray(buf.getvalue())
    at = raw.find(member.encode() + b"\0")
    raw[at + 124 : at + 136] = b"%011o\0" % claimed
    raw[at + 148 : at + 156] = b" " * 8
    raw[at + 148 : at + 156] = b"%06o\0 " % sum(raw[at : at + 512])
    path.write_bytes(gzip.compress(bytes(raw)))
    return path


def patch_zip_member(path: Path, member: str, claimed: int, data: bytes) -> None:
    """Make ``member``'s local and central headers of the zip at ``path`` claim ``claimed``
    bytes whose CRC is that of ``data`` (its compressed size and its bytes left as they are)."""
    raw = bytearray(path.read_bytes())
    name = member.encode()
    for sig, crc_at, size_at, name_at in ((b"PK\x03\x04", 14, 22, 30), (b"PK\x01\x02", 16, 24, 46)):
        at = raw.find(sig)
        while raw[at + name_at : at + name_at + len(name)] != name:
            at = raw.find(sig, at + 1)
            assert at >= 0, f"no header of {member} in {path}"
        struct.pack_into("<I", raw, at + crc_at, zlib.crc32(data))
        struct.pack_into("<I", raw, at + size_at, claimed)
    path.write_bytes(bytes(raw))


def damaged_archive(folder: Path, how: str, main: bytes = b"print()\n") -> Path:
    """An archive of ``bot/main.py`` broken in one way: ``crc`` (a zip member's CRC wrong),
    ``method9`` (deflate64, which zipfile cannot read), ``deflate`` (a corrupt deflate stream),
    ``encrypted`` (a member flagged encrypted), ``truncated`` (a .tar.gz cut in half)."""
    if how == "truncated":
        out = folder / f"{how}.tar.gz"
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as t:
            data = main + b"#" + bytes(range(256)) * 400
            info = tarfile.TarInfo("bot/main.py")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        out.write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
        return out
    out = folder / f"{how}.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bot/main.py", main + b"#" * 20000)
    data = bytearray(out.read_bytes())
    local, central = data.find(b"PK\x03\x04"), data.find(b"PK\x01\x02")
    if how == "crc":
        for at in (local + 14, central + 16):
            data[at] ^= 0xFF
    elif how == "method9":
        for at in (local + 8, central + 10):
            struct.pack_into("<H", data, at, 9)
    elif how == "deflate":
        start = local + 30 + len("bot/main.py")
        data[start : start + 8] = b"\xff" * 8
    elif how == "encrypted":
        for at in (local + 6, central + 8):
            data[at] |= 1
    else:
        raise ValueError(how)
    out.write_bytes(bytes(data))
    return out
