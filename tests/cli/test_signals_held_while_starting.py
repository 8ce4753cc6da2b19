"""A child process started while Ctrl-C, SIGTERM or SIGHUP arrives (arena.interrupts.held_while_starting).

Delivered inside ``Process.start``, the parent's KeyboardInterrupt was raised in logging's fork
hook ("Exception ignored in ... _releaseLock", the interrupt lost), or a spawned child was left
without its data (an EOFError traceback on the ladder's console). Held, the signal arrives in the
parent once the start returned, and the child takes its own when its handlers are set."""

from __future__ import annotations

import ast
import signal
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import multiprocessing as mp, os, signal, sys, threading, time
    from arena.interrupts import STOP_SIGNALS, held_while_starting, take_held

    def child(report):
        held = set(signal.pthread_sigmask(signal.SIG_BLOCK, []))
        take_held()
        hup = signal.getsignal(signal.SIGHUP)
        report.send((getattr(hup, "__name__", str(hup)),) + (sorted(int(s) for s in held & STOP_SIGNALS), int(signal.SIGTERM) in {int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])}))

    def on_hup(*_):
        pass

    if __name__ == "__main__":
        got = []
        signal.signal(signal.SIGTERM, lambda *_: got.append("term"))
        signal.signal(signal.SIGINT, lambda *_: got.append("int"))
        signal.signal(signal.SIGHUP, on_hup)
        ctx = mp.get_context(sys.argv[1])
        mine, theirs = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=child, args=(theirs,))
        other = threading.Thread(target=time.sleep, args=(5,), daemon=True)  # signals not held there
        other.start()
        with held_while_starting(sys.argv[1]):
            os.kill(os.getpid(), signal.SIGTERM)  # arrives while the child starts
            signal.pthread_kill(other.ident, signal.SIGINT)  # taken by another thread: Python runs
            time.sleep(0.2)  # its handler in this one all the same, at the next bytecode
            during = list(got)
            proc.start()
            after_start = list(got)
        print("parent", during, after_start, got)
        print("child", mine.recv())
        proc.join(60)
        print("exit", proc.exitcode)
        print("mask", sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, []) if s in STOP_SIGNALS))
    """
)


def _run(tmp_path, code: str, method: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """``code`` run as a script with the start method ``method``; it must exit 0."""
    script = tmp_path / "script.py"
    script.write_text(code)
    out = subprocess.run(
        [sys.executable, str(script), method], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    return out, out.stdout.splitlines()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_signal_sent_while_a_child_starts_arrives_after_the_start_and_the_child_takes_its_own(
    tmp_path, method: str
) -> None:
    out, lines = _run(tmp_path, SCRIPT, method)
    stops = sorted(int(s) for s in (2, 15, 1))  # SIGINT, SIGTERM, SIGHUP
    assert lines[0].startswith("parent [] [] [")  # not inside the start: once it returned
    assert sorted(ast.literal_eval(lines[0].split(" ", 3)[3])) == ["int", "term"]
    # begun with all three held, then taken; a forked child has the parent's handler where it set none
    hup = "on_hup" if method == "fork" else str(int(signal.SIG_DFL))
    assert lines[1] == f"child ('{hup}', {stops}, False)"
    assert lines[2] == "exit 0" and lines[3] == "mask []"  # the parent's mask as it was
    assert "Exception ignored" not in out.stderr and "Traceback" not in out.stderr


POOL_SCRIPT = textwrap.dedent(
    """
    import multiprocessing as mp, os, signal, sys
    from arena.interrupts import STOP_SIGNALS, held_pool

    def mask(_):
        held = sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, []) if s in STOP_SIGNALS)
        return held, signal.getsignal(signal.SIGINT) == signal.SIG_IGN

    if __name__ == "__main__":
        got = []  # the workers alive when the handler ran
        signal.signal(signal.SIGTERM, lambda *_: got.append(len(mp.active_children())))
        if sys.argv[1] == "fork":  # a spawn runs no fork hook: only its workers' masks are checked
            os.register_at_fork(before=lambda: os.kill(os.getpid(), signal.SIGTERM))  # inside each start
        pool = held_pool(mp.get_context(sys.argv[1]), 2)
        masks = pool.map(mask, range(4))
        pool.close()
        pool.join()
        print("handled", got)
        print("workers", masks)
    """
)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_arena_bench_pools_handle_a_stop_sent_while_their_workers_start_after_the_start(tmp_path, method: str) -> None:
    _, lines = _run(tmp_path, POOL_SCRIPT, method)
    # once, with both workers started, not inside a fork hook (unheld: [0, 1], the first there)
    assert lines[0] == ("handled [2]" if method == "fork" else "handled []")
    # the workers took their signals, and leave Ctrl-C to the command (no traceback from each)
    assert lines[1] == "workers " + str([([], True)] * 4)
