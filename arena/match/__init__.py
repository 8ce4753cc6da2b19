"""One match with real bots: the protocol, bot processes and their sandbox, the seats
(agents), the referee with its fault policy and time control, and readable traces.
May import ``games`` and ``arena.errors`` only; nothing here knows about tournaments.
"""
