"""What people read: TrueSkill ratings and statistics from stored results, and the
leaderboards (terminal, Markdown, CSV, JSON, HTML) built from them.
May import ``arena.tournament`` (the store), ``arena.match``, ``games`` and ``arena.errors``.
"""
