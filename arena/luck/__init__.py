"""Luck: how much of a result the draw decided, and the corrections that remove it (docs/luck.md).

What lives here: ``reference`` (fixed rule policies, the luck baselines they give, the fixed
coefficients ``LUCK_BETA``), ``aivat`` (AIVAT corrections of the builtin random players' draws
and of chance events), ``palace_value`` (the learned value of Palace states AIVAT uses there;
its weights are package data, ``data/palace_weights.json``), ``helper`` (the helper process and
its jobs), ``pool`` (the helper processes a run shares the work among, a backend of
``arena.supervisor``) and ``baselines`` (what
is computed after a tournament's matches and stored in the results store's ``luck_baselines``
and ``luck_aivat`` tables, whose schema is the store's: ``arena.tournament.store``).

It may import ``arena.match`` (the builtin players' identity), ``games``, ``arena.supervisor`` and
``arena.errors``;
never the tournament, reports or the CLI: the runner and the leaderboards call it and hand it
the store.
"""
