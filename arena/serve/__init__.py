"""The ladder server (`arena serve`): a second face beside arena.cli, at the same level.

Entrants upload bots over HTTP; a matchmaker feeds the tournament's local worker pool
with duplicate, seat-rotated deal sets without end; everyone reads live leaderboards and
replays. It may import every layer below (report, tournament, match) like the CLI does,
and the conformance checker of ``arena check``; click stays in arena/cli, whose thin
``serve`` and ``serve-admin`` commands call ``arena.serve.server`` and ``arena.serve.accounts``.

Modules: ``ladder.py`` (the ladder file), ``db.py`` (accounts, bots, versions, tokens:
SQLite in WAL mode), ``accounts.py`` (argon2 passwords, tokens, sessions),
``matchmaker.py`` (the next deal set, and the process that plays them), ``side.py`` (what
the handlers share: leaderboard, matches, bots, uploads), ``app.py``
(Starlette pages and JSON API), ``server.py`` (one command: lock, start, serve).
"""


def missing_extra() -> list[str]:
    """The packages of the ``serve`` extra this Python lacks (the ladder needs them all)."""
    import importlib.util

    return [m for m in ("starlette", "uvicorn", "jinja2", "argon2", "multipart") if importlib.util.find_spec(m) is None]
