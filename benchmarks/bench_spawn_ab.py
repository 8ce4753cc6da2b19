"""Bot start-up cost of two source trees side by side (A/B), rounds interleaved.

Run: python3 benchmarks/bench_spawn_ab.py BEFORE_TREE AFTER_TREE [rounds]  (LEVELS=full,landlock)
e.g. BEFORE_TREE from ``git archive main | tar -x -C /tmp/before``. Prints, per level, the
median ms to the ready line and to the first answer of an echo bot, and the CPU time of
the whole launch chain and bot per start (steadier than wall time on a busy machine).
"""

import json
import os
import statistics
import subprocess
import sys

TREES = {"before": os.path.abspath(sys.argv[1]), "after": os.path.abspath(sys.argv[2])}
PY = sys.executable
CODE = """
import sys, json
sys.path.insert(0, {tree!r})
import arena; assert arena.__file__.startswith({tree!r}), arena.__file__
from benchmarks.bench_process import startup
import resource
from arena.match.detect import detect_sandbox
out = []
for l in {levels!r}:
    detect_sandbox(l)
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = startup(l, n={n})
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out.append([*r, (c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime) * 1000 / {n}])
print(json.dumps(out))
"""
levels = os.environ.get("LEVELS", "full,landlock").split(",")
res = {t: {lv: ([], [], []) for lv in levels} for t in TREES}
for r in range(int(sys.argv[3]) if len(sys.argv) > 3 else 6):
    for t, tree in TREES.items() if r % 2 == 0 else reversed(list(TREES.items())):
        out = subprocess.run(
            [PY, "-c", CODE.format(tree=tree, n=10, levels=levels)],
            cwd=tree,
            capture_output=True,
            text=True,
            timeout=600,
        )
        vals = json.loads(out.stdout.strip().splitlines()[-1])
        for level, measures in zip(levels, vals):
            for series, value in zip(res[t][level], measures):
                series.append(value)
med = statistics.median
for level in levels:
    b, a = res["before"][level], res["after"][level]
    print(
        f"{level:9s} ready {med(b[0]):6.1f} -> {med(a[0]):6.1f} ms | first answer {med(b[1]):6.1f} -> "
        f"{med(a[1]):6.1f} ms ({med(a[1]) / med(b[1]):.2f}x) | CPU per start {med(b[2]):5.1f} -> {med(a[2]):5.1f} ms "
        f"({med(a[2]) / med(b[2]):.2f}x); {len(b[1])} rounds of 10 starts"
    )
