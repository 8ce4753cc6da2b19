"""A whole tournament: the tournament file (config, load), the roster of bots, the
duplicate schedule, the results store, and the runners (local worker pool, Ray).
May import ``arena.match``, ``games`` and ``arena.errors``; never reports or the CLI.
"""
