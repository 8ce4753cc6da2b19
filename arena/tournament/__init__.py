"""A whole tournament: the tournament file (config, load), the roster of bots, the
duplicate schedule, the results store, and the runners: the supervisor of matches
(``supervisor``, on ``arena.supervisor``) over its backends, local worker processes and Ray actors.
May import ``arena.match``, ``games`` and ``arena.errors``; never reports or the CLI.
"""
