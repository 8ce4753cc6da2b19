"""Kills the arena worker that plays it (as the OOM killer would), every time, once a match starts.

It answers the hello, then, at the first `start` (a process started ahead of its match waits
until then), walks up from its parent to the nearest `python -m arena run` process whose own
parent runs the arena too, the worker (a fork of the arena, same command line), or to the
nearest Ray worker process (`ray::BotWorker...`, with `--executor ray`). It never kills the
run itself: a process of a dead worker that the run adopted finds no worker above it and
exits. Only for tests with sandbox none that run `arena run` as a subprocess, or on a Ray
instance of their own."""

import json
import os
import signal
import sys


def _info(pid):
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None, 0
    return cmd, int(stat.rsplit(")", 1)[1].split()[1])


def _is_arena_run(cmd):
    return cmd is not None and b"-m\x00arena\x00run\x00" in cmd


def kill_worker():
    pid = os.getppid()
    while pid > 1:
        cmd, parent = _info(pid)
        if cmd is None:
            return
        if cmd.startswith(b"ray::BotWorker") or (_is_arena_run(cmd) and _is_arena_run(_info(parent)[0])):
            os.kill(pid, signal.SIGKILL)
            return
        pid = parent


for line in sys.stdin:
    message = json.loads(line)
    if message.get("type") == "hello":
        print(json.dumps({"type": "hello", "name": "killer"}), flush=True)
    elif message.get("type") == "start":
        kill_worker()
        sys.exit(0)
    elif message.get("type") == "bye":
        sys.exit(0)
