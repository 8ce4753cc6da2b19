"""How much CPU an honest bot keeps next to a bot whose children spin (a fork bomb's).

Run: python3 benchmarks/fork_bomb_share.py [children] [rounds] [--setsid] [--spinners=N]  (as root, where the strongest
sandbox level runs bots in cgroups). Two bots start at the strongest level: one forks
``children`` processes that spin for ever, the other answers each line after a fixed amount
of CPU work. Its wall time per answer is measured alone, then beside the spinner with each
bot in its own cgroup v1 ``cpu`` group (the arena's default where that controller is mounted),
then beside it without (``arena.match.sandbox.cgroup.V1_CONTROLLERS`` minus ``cpu``, as before
2026-12-07). Rounds interleave the three, so the machine's own load falls on each alike.
With ``--setsid`` each child starts a session of its own: where the kernel groups tasks by
session (``/proc/sys/kernel/sched_autogroup_enabled``), one session's many processes already
share one weight, and a child in a new session escapes that grouping, not a cgroup's.
A fourth measure stops the spinners between their turns, as ``time_control.ponder: false``
(the default since 2026-12-07) does after each answer; ``--spinners=N`` runs N spinner bots
(two on two cores: the spinners' groups then outweigh the honest bot's, however fair each is).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.match.detect import detect_sandbox  # noqa: E402
from arena.match.process import BotProcess, bot_command  # noqa: E402
from arena.match.sandbox import (
    Limits,  # noqa: E402
    cgroup,  # noqa: E402
)

SPINNER = """\
import os, sys
for _ in range({children}):
    if os.fork() == 0:
        if {own_sessions}:
            os.setsid()  # a session of its own: its own autogroup, where the kernel has them
        while True:
            pass
for line in sys.stdin:
    print(line.strip(), flush=True)
"""

WORKER = """\
import sys
for line in sys.stdin:
    n = 0
    for i in range(3_000_000):  # about 0.1 to 0.2 s of CPU
        n += i
    print("done", flush=True)
"""


def answer_times(
    info, folder: Path, spinner: bool, answers: int = 5, spinners: int = 1, pause: bool = False
) -> list[float]:
    """Wall seconds per answer of the worker bot, beside ``spinners`` spinners or alone
    (``pause``: each spinner stopped after its answer, as with ``ponder: false``)."""
    bots = []

    def start(name: str) -> BotProcess:
        bot = BotProcess.start(
            bot_command(folder / f"{name}.py"), bot_file=folder / f"{name}.py", name=name, sandbox=info, limits=Limits()
        )
        bots.append(bot)
        return bot

    try:
        for _ in range(spinners if spinner else 0):
            spin = start("spinner")
            spin.pause_after_answer = pause
            spin.send_line(b"ready", time.monotonic() + 60)
            spin.read_line(time.monotonic() + 60)
        if spinner:
            time.sleep(0.5)  # their children are spinning (or stopped)
        work = start("worker")
        out = []
        for _ in range(answers):
            t0 = time.monotonic()
            work.send_line(b"go", time.monotonic() + 600)
            work.read_line(time.monotonic() + 600)
            out.append(time.monotonic() - t0)
        return out
    finally:
        for b in bots:
            b.kill()


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    children = int(args[0]) if args else 16
    rounds = int(args[1]) if len(args) > 1 else 3
    info = detect_sandbox("auto")
    folder = Path(tempfile.mkdtemp(prefix="fork-bomb-share-"))
    folder.chmod(0o755)
    own_sessions = "--setsid" in sys.argv
    n = next((int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--spinners=")), 1)
    (folder / "spinner.py").write_text(SPINNER.format(children=children, own_sessions=own_sessions))
    (folder / "worker.py").write_text(WORKER)
    with_cpu = cgroup.V1_CONTROLLERS
    without = tuple(c for c in with_cpu if c != "cpu")
    times: dict[str, list[float]] = {"alone": [], "stopped between": [], "cpu groups": [], "no cpu groups": []}
    for _ in range(rounds):
        cgroup.V1_CONTROLLERS = with_cpu
        times["alone"] += answer_times(info, folder, spinner=False)
        times["stopped between"] += answer_times(info, folder, spinner=True, spinners=n, pause=True)
        times["cpu groups"] += answer_times(info, folder, spinner=True, spinners=n)
        cgroup.V1_CONTROLLERS = without
        times["no cpu groups"] += answer_times(info, folder, spinner=True, spinners=n)
    base = statistics.median(times["alone"])
    sessions = ", each in a session of its own" if own_sessions else ""
    print(f"level {info.level}, {n} spinner(s) with {children} children each{sessions}, {rounds} rounds of 5 answers")
    for what, ts in times.items():
        med = statistics.median(ts)
        print(f"{what:>15}: median {med * 1000:7.0f} ms an answer, {med / base:5.1f}x alone")


if __name__ == "__main__":
    main()
