"""Uses 80-90% of every limit (from HOSTILE_LIMITS, JSON of arena Limits), one after another.

Must never be faulted. Answers a long line (80% of the line cap) on the first request.
"""
import json
import os
import resource
import sys
import threading
import time

L = json.loads(os.environ.get("HOSTILE_LIMITS", "{}"))
F = 0.8


def burn_cpu_until(total: float) -> None:
    """Spin until this process has used ``total`` CPU seconds in all, start-up and the work
    above included: on a slow machine that work alone can take a good part of the budget."""
    while True:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        if ru.ru_utime + ru.ru_stime >= total:
            return
        for _ in range(20000):
            pass


sys.stdin.readline()
report = {}
# memory: 80% of the budget, touched, then freed
block = bytearray(int(L.get("memory_mb", 1024) * F) << 20)
for i in range(0, len(block), 4096):
    block[i] = 1
report["memory_mb"] = len(block) >> 20
del block
# processes: 80% of the task budget as threads (small stacks) alive together
threading.stack_size(256 * 1024)
stop = threading.Event()
n = int(L.get("processes", 32) * F) - 1
ts = [threading.Thread(target=stop.wait, daemon=True) for _ in range(n)]
for t in ts:
    t.start()
report["threads"] = n
stop.set()
for t in ts:
    t.join()
# open files: 80% of NOFILE held at once
fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(int(L.get("open_files", 64) * F) - 3)]
report["open_files"] = len(fds) + 3
for fd in fds:
    os.close(fd)
# file size and scratch space: one file of 80% of FSIZE in cwd, 80% of scratch in TMPDIR
with open("big.bin", "wb") as f:
    f.write(b"\1" * (int(L.get("file_mb", 16) * F) << 20))
os.remove("big.bin")
tmp = os.environ.get("TMPDIR", "/tmp")
chunk = int(L.get("file_mb", 16) * F) << 20
left = int(L.get("scratch_mb", 64) * F) << 20
k = 0
while left > 0:
    with open(os.path.join(tmp, f"fill{k}.bin"), "wb") as f:
        f.write(b"\2" * min(chunk, left))
    left -= chunk
    k += 1
report["scratch_files"] = k
for i in range(k):
    os.remove(os.path.join(tmp, f"fill{i}.bin"))
# stderr: 80% of the log cap
os.write(2, b"w" * (int(L.get("stderr_log_kb", 256) * F) << 10))
# cpu: 85% of the budget, in all (the harness counts the whole process tree, in clock ticks)
burn_cpu_until(L.get("cpu_s", 600) * 0.85)
report["cpu_s"] = round(time.process_time(), 2)
line = json.dumps(report)
pad = (int(L.get("stdout_line_kb", 1024) * F) << 10) - len(line) - 20
print(json.dumps({**report, "pad": "p" * max(pad, 0)}), flush=True)
for line in sys.stdin:
    print("ok", flush=True)
