"""Kills the arena worker that started it (as the OOM killer would), every time.

Walks up from its parent to the nearest `python -m arena run` process: the worker
(a fork of the arena, same command line), or to the nearest Ray worker process
(`ray::BotWorker...`, with `--executor ray`). Only for tests with sandbox none that run
`arena run` as a subprocess, or on a Ray instance of their own."""

import os
import signal

pid = os.getppid()
while pid > 1:
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        break
    if b"-m\x00arena\x00run\x00" in cmd or cmd.startswith(b"ray::BotWorker"):
        os.kill(pid, signal.SIGKILL)
        break
    pid = int(stat.rsplit(")", 1)[1].split()[1])
