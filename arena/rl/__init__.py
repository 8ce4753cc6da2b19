"""Reinforcement learning: PettingZoo environments, policies, and export to bot files.

What lives here: ``encoding`` (fixed-size observation vectors and a fixed action
space per game, computed from the JSON observation; standard library only and no
import of ours, because exported bots carry a verbatim copy), ``env`` (the
PettingZoo AEC environments), ``policy`` (a numpy linear policy) and ``bridge``
(turns a policy into a self-contained bot file for the arena).

It may import only ``games`` (and pettingzoo, gymnasium and numpy, from the
optional ``rl`` extra: ``pip install -e '.[rl]'``); ``encoding`` and ``bridge``
need neither, so the ``arena`` command can export a bot without the extra.
"""
