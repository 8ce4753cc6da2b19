"""The stderr budget of a bot is one, whichever of its processes and workers writes."""

from __future__ import annotations

import multiprocessing as mp
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.match.bot_log import BotLog, append_within, ledger_path

NOTE = "[arena: stderr log capped"


def _kept(paths: list[Path]) -> tuple[int, int, int]:
    """(bytes kept in the logs without the cap notes, of which the bot's own, number of notes)."""
    total = own = notes = 0
    for p in set(paths):
        if p.exists():
            for line in p.read_bytes().splitlines(keepends=True):
                if line.startswith(NOTE.encode()):
                    notes += 1
                    total -= 1  # the note's leading newline
                    own -= 1
                else:
                    total += len(line)
                    own += 0 if line.startswith(b"[arena: b: new process at ") else len(line)
    return total, own, notes


@settings(max_examples=60)
@given(
    cap=st.integers(1, 3000),
    writes=st.lists(st.tuples(st.integers(0, 3), st.integers(1, 700)), min_size=1, max_size=30),
)
def test_interleaved_processes_never_keep_more_than_the_cap(cap, writes):
    with tempfile.TemporaryDirectory() as tmp:
        logs = [Path(tmp) / f"worker-{w % 2}" / "b.stderr.log" for w in range(4)]
        ledger = ledger_path(logs[0].parent, "b")
        procs = [BotLog(p, name="b", cap_bytes=cap, ledger=ledger) for p in logs]
        for who, n in writes:
            procs[who].write(b"x" * (n - 1) + b"\n")
        for p in procs:
            p.close()
        kept, own, notes = _kept(logs)
        assert kept <= cap
        if any(p.dropped for p in procs):  # cut at the cap (or short of a header's room), and said once
            assert kept >= cap - 60 and notes == 1
        else:
            assert own == sum(n for _, n in writes) and notes == 0


def test_a_budget_spent_exactly_is_noted_by_the_first_refused_write(tmp_path: Path) -> None:
    """Hypothesis found it (cap 49, two 1-byte writes): the first write's header and byte filled
    the budget exactly, so nothing was cut, and the refused second write left no note."""
    log = tmp_path / "worker-0" / "b.stderr.log"
    ledger = ledger_path(log.parent, "b")
    first = BotLog(log, name="b", cap_bytes=1, ledger=ledger)
    cap = len(first._header()) + 1
    first.close()
    log.unlink()
    ledger.unlink()
    procs = [BotLog(log, name="b", cap_bytes=cap, ledger=ledger) for _ in range(3)]
    procs[0].write(b"\n")  # header + 1 byte: exactly the cap
    procs[0].write(b"\n")  # refused: noted once, by this process
    procs[1].write(b"x\n")  # refused too: no second note
    for p in procs:
        p.close()
    kept, _own, notes = _kept([log])
    assert kept == cap and notes == 1


def _writer(log: str, ledger: str, cap: int, n: int) -> None:
    w = BotLog(Path(log), name="b", cap_bytes=cap, ledger=Path(ledger))
    for _ in range(n):
        w.write(b"y" * 99 + b"\n")
    w.close()


def test_concurrent_workers_share_one_budget(tmp_path):
    """Four worker processes writing the same bot's stderr at once keep exactly the cap in all."""
    cap = 50_000
    logs = [tmp_path / "logs" / f"worker-{w}" / "b.stderr.log" for w in range(4)]
    ledger = ledger_path(logs[0].parent, "b")
    ctx = mp.get_context("fork")
    ps = [ctx.Process(target=_writer, args=(str(p), str(ledger), cap, 400)) for p in logs]  # 160 kB offered
    for p in ps:
        p.start()
    for p in ps:
        p.join(60)
        assert p.exitcode == 0
    kept, own, notes = _kept(logs)
    assert kept == cap and notes == 1


def test_logs_brought_back_from_other_nodes_share_the_budget(tmp_path):
    """Ray: each node capped its own log; the driver keeps the cap over all of them."""
    folder = tmp_path / "logs"
    kept = [
        append_within(
            folder / f"ray-{i}" / "b.stderr.log",
            b"z" * 700,
            cap_bytes=1000,
            name="b",
            ledger=ledger_path(folder / f"ray-{i}", "b"),
        )
        for i in range(3)
    ]
    assert kept == [700, 300, 0]
    assert _kept([folder / f"ray-{i}" / "b.stderr.log" for i in range(3)]) == (1000, 1000, 1)
