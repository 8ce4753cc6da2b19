"""The helper processes among which ``arena.luck.baselines.fill`` shares its jobs.

Each helper is a fresh interpreter running ``python -m arena.luck.helper`` (not a fork: the
process that runs a tournament may hold threads, Ray's or the log forwarders', whose locks a fork
would copy held). Jobs go in chunks, one JSON line each way; a helper that stops raises
``RuntimeError`` with the last line of its stderr.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from arena.luck.helper import luck_job

HELPER_MODULE = "arena.luck.helper"


class _Helper:
    """One ``luck_helper`` process: computes a chunk of jobs at a time, in order."""

    def __init__(self) -> None:
        root = str(Path(__file__).resolve().parents[2])  # where arena/ and games/ live
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", HELPER_MODULE],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            text=True,
            encoding="utf-8",
        )

    def compute(self, jobs: list[list[Any]]) -> list[Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(jobs) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except OSError:
            line = ""
        if not line:
            self.err.seek(0)
            tail = self.err.read().decode("utf-8", "replace").strip().splitlines()
            raise RuntimeError(
                f"a luck baseline helper stopped (exit {self.proc.poll()}): {tail[-1] if tail else 'no message'}"
            )
        return json.loads(line)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.err):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass


def computed(jobs: list[list[Any]], workers: int) -> Iterator[Any]:
    """``luck_job`` of every job, in order: on ``workers`` helper processes when there is
    enough work to share (the jobs are independent), else in this process."""
    if workers < 2 or len(jobs) < 4 * workers:
        yield from map(luck_job, jobs)
        return
    size = max(1, min(32, len(jobs) // (8 * workers)))
    chunks = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    helpers: list[_Helper] = []
    idle: queue.Queue[_Helper] = queue.Queue()

    def on_helper(chunk: list[Any]) -> list[Any]:
        helper = idle.get()
        try:
            return helper.compute(chunk)
        finally:
            idle.put(helper)

    pool = ThreadPoolExecutor(workers, thread_name_prefix="luck")
    try:
        for _ in range(workers):
            helpers.append(_Helper())
            idle.put(helpers[-1])
        for results in pool.map(on_helper, chunks):
            yield from results
    finally:
        for helper in helpers:  # first, so that chunks still being computed end at once
            helper.stop()
        pool.shutdown(wait=True, cancel_futures=True)
