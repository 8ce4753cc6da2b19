"""A helper process that computes luck baselines for ``arena.tournament.luck.fill``.

Run as ``python -m arena.tournament.luck_helper``: reads one JSON line per chunk of jobs
(``games.reference.luck_job``s: a deal's baselines, or a match's AIVAT corrections) and
answers one JSON line with the result of each. A fresh interpreter rather than a fork: the process that
runs a tournament may hold threads (Ray's, the log forwarders) whose locks a fork would
copy held. Ctrl-C is the parent's to handle; the helper ends at the end of its input.
"""

from __future__ import annotations

import json
import signal
import sys

from games.reference import luck_job


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for line in sys.stdin:
        jobs = json.loads(line)
        out = [luck_job(job) for job in jobs]
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
