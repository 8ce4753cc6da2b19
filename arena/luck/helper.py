"""A helper process that computes luck baselines for ``arena.luck.baselines.fill``.

Run as ``python -m arena.luck.helper``: reads one JSON line per chunk of jobs
(``arena.luck.helper.luck_job``s: a deal's baselines, or a match's AIVAT corrections) and
answers one JSON line with the result of each. A fresh interpreter rather than a fork: the process that
runs a tournament may hold threads (Ray's, the log forwarders) whose locks a fork would
copy held. Ctrl-C is the parent's to handle; the helper ends at the end of its input.
"""

from __future__ import annotations

import json
import signal
import sys
from typing import Any

from arena.luck.aivat import aivat_corrections
from arena.luck.reference import seat_baselines


def luck_job(job: list[Any]) -> Any:
    """One unit of the luck computation, as the arena ships it to its helper processes:
    ``["baseline", game, players, options, deal_seed, rollouts]`` (``seat_baselines``) or
    ``["aivat", game, players, options, deal_seed, decisions, known, rollouts, seed]``
    (``aivat_corrections``, or None for decisions that do not replay)."""
    if job[0] == "baseline":
        return seat_baselines(*job[1:])
    if job[0] == "aivat":
        game, players, options, deal_seed, decisions, known, rollouts, seed = job[1:]
        try:
            return aivat_corrections(
                game,
                players,
                options,
                deal_seed,
                [(int(s), int(a)) for s, a in decisions],
                frozenset(known),
                rollouts,
                seed,
            )
        except ValueError:
            return None  # the record does not replay on this engine: no correction for it
    raise ValueError(f"unknown luck job {job[0]!r}")


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for line in sys.stdin:
        jobs = json.loads(line)
        out = [luck_job(job) for job in jobs]
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
