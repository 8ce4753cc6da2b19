"""Tries to write far more than its scratch holds: many files, one big file, many inodes.

On its first line it answers one JSON line: how many bytes it wrote as many 1 MiB files,
as one big file, and how many empty files it made, each with the errno that stopped it
(every attempt is removed before the next); what writing into /, /dev and /dev/shm gave;
and whether /dev/null and a fresh 1 MiB file still work afterwards. HOSTILE_FILL_MB and
HOSTILE_FILL_FILES bound the attempt (it never goes on for ever on a host folder).
"""
import json
import os
import signal
import sys

signal.alarm(60)
sys.stdin.readline()
MiB = 1 << 20
limit_mb = int(os.environ.get("HOSTILE_FILL_MB", "320"))
limit_files = int(os.environ.get("HOSTILE_FILL_FILES", "200000"))
block = b"\1" * MiB
out = {}


def clean(names):
    for n in names:
        try:
            os.remove(n)
        except OSError:
            pass


names, written, err = [], 0, None          # many files
try:
    while written < limit_mb * MiB:
        name = f"many{len(names)}.bin"
        names.append(name)
        with open(name, "wb") as f:
            f.write(block)
        written += MiB
except OSError as e:
    err = e.errno
out["many_files"] = [written, err]
clean(names)

written, err = 0, None                      # one big file
try:
    with open("big.bin", "wb", buffering=0) as f:
        while written < limit_mb * MiB:
            written += f.write(block)
except OSError as e:
    err = e.errno
out["big_file"] = [written, err]
clean(["big.bin"])

names, err = [], None                       # inodes: empty files take no space
try:
    while len(names) < limit_files:
        name = f"i{len(names)}"
        os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o600))
        names.append(name)
except OSError as e:
    err = e.errno
out["inodes"] = [len(names), err]
clean(names)

for where in ("/", "/dev", "/dev/shm"):     # other writable room would be as good as scratch
    try:
        with open(os.path.join(where, "fill-scratch-elsewhere"), "wb") as f:
            f.write(block)
        out[where] = "written"
        os.remove(os.path.join(where, "fill-scratch-elsewhere"))
    except OSError as e:
        out[where] = e.errno
with open("/dev/null", "wb") as f:
    out["dev_null"] = f.write(b"x")
with open("after.bin", "wb") as f:           # the room comes back once the files are gone
    out["after"] = f.write(block)
os.remove("after.bin")
print(json.dumps(out), flush=True)
for line in sys.stdin:
    print("ok", flush=True)
