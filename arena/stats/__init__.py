"""Statistics shared by the tournament layer and the reports: pure functions on numbers
(no store, no bots, no processes). Imports only the standard library and ``arena.errors``.
"""
