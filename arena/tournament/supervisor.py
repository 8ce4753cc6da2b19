"""The supervisor of matches: ``arena.supervisor.Supervisor`` with a match's rules, for every backend.

The backends are the local worker processes (``arena.tournament.runner.LocalBackend``) and Ray
actors (``arena.tournament.ray_executor.RayBackend``); ``runner._Pool`` runs a tournament, a duel
or a ladder (``arena serve``) on either. What makes a job a match:

* it is named by ``match_id``, and a worker answers it with one typed reply
  (``arena.records.replies``);
* ``Raised`` (the harness raised) plays it again, counting a try, as its worker's death does:
  ``retries.Retries`` gives it up after ``MAX_TRIES`` and names it in the run's summary (a match
  given up after ``Raised`` yields that last reply);
* a match going back to the queue that is in the store already (it finished as its worker died)
  counts as ``Played``.
"""

from __future__ import annotations

from collections.abc import Callable

from arena.records.replies import Played, Raised, Reply
from arena.records.spec import MatchSpec
from arena.supervisor import Backend, Event, Lost, Ready, Replied, Supervisor
from arena.tournament.retries import MAX_TRIES, Retries

__all__ = ["Backend", "Event", "Lost", "MatchSupervisor", "Ready", "Replied"]


class MatchSupervisor(Supervisor[MatchSpec, Reply]):
    IDLE_DEATHS_PER_WORKER = MAX_TRIES

    def __init__(
        self,
        backend: Backend[MatchSpec, Reply],
        *,
        workers: int,
        retries: Retries,
        stored: Callable[[MatchSpec], bool],
    ) -> None:
        super().__init__(backend, workers=workers)
        self.retries = retries
        self.stored = stored  # whether a match is in the store already (it finished as its worker died)

    def key(self, job: MatchSpec) -> str:
        return job.match_id

    def answers(self, reply: Reply) -> str:
        return reply.match_id

    def failed(self, reply: Reply) -> str | None:
        return f"the harness raised {reply.why}" if isinstance(reply, Raised) else None

    def again(self, job: MatchSpec, why: str) -> bool:
        return self.retries.again(job, why)

    def done(self, job: MatchSpec) -> Reply | None:
        return Played(job.match_id) if self.stored(job) else None
