"""Reference search bot for every game of the arena: information-set Monte Carlo tree search.

It knows no game: it plays through the search hooks of the engines (``games.core``: legal
moves, ``apply``, a rollout policy, action keys, the horizon, points, standing and returns,
the seats to move, rule decisions) and their sampler of hidden cards (``games.determinize``).

Every simulation samples the hidden cards from the observation alone (public information
only; where the game has a model of the other seat, its hand is drawn weighted by that model
and the model makes its choice at the decision being searched), then walks a tree of this
bot's own decisions with UCB1 (counting a move only in the simulations where it was
available, as information-set MCTS does), plays the other seats (or, in a game whose
``search_opponents`` is set, searches their choices too, each seat by its own statistics and
reward, decoupled at a simultaneous decision: everyone chooses at the same node) and the
rest of the horizon with the game's fast randomised ``rollout_action``, and scores the end
of the horizon with the game's ``returns``. The move played is the root's most visited. A
decision the game settles by rule (``rule_action``) is not searched.

Budget: CPU seconds per decision (a busy machine does not shorten the thinking),
default 0.5. A tournament gives it through the bot's name: an entry named like
``search-0.1s`` or ``search_2s`` (ending in ``-<seconds>s`` or ``_<seconds>s``) thinks
that long; ``search-400sims`` runs exactly 400 simulations a decision instead
(machine-independent, for reproducible tests). The bot also stops at half the match's
``move_s`` of wall-clock time, to stay inside the time control on a loaded machine. Outside a
tournament, ``SEARCH_BUDGET_S`` in the environment sets the default (the sandbox passes no
environment).
"""

from __future__ import annotations

import math
import os
import re
import time
from random import Random
from typing import Any, Hashable

from botkit import run

from games import get_game
from games.core import State
from games.determinize import Sampler, SeatBelief

DEFAULT_BUDGET_S = float(os.environ.get("SEARCH_BUDGET_S", "0.5"))
WALL_SHARE = 0.5          # of move_s, a hard stop on wall-clock time
EXPLORE = 0.4             # UCB1 exploration constant (rewards are in [0, 1])
NO_CAP = 10**6            # decisions a simulation may play when the game sets no cap
_NAME_BUDGET = re.compile(r"[-_](\d+(?:\.\d+)?)s$")
_NAME_SIMS = re.compile(r"[-_](\d+)sims$")


def _own_name(match: Any) -> str:
    return match.bots[match.seat] if match.seat < len(match.bots) else ""


def budget_of(match: Any) -> float:
    """CPU seconds per decision: from the bot's tournament name, else the default."""
    m = _NAME_BUDGET.search(_own_name(match))
    return float(m.group(1)) if m else DEFAULT_BUDGET_S


def sims_of(match: Any) -> int | None:
    """A fixed number of simulations per decision (a name ending in ``-<N>sims``), or None.
    Machine-independent, for reproducible tests; the time budget still applies."""
    m = _NAME_SIMS.search(_own_name(match))
    return int(m.group(1)) if m else None


# ---- the tree -------------------------------------------------------------------------


class Edge:
    """A move's statistics at a node: simulations through it, their total reward, the
    simulations in which it was available (UCB1's count for ISMCTS), and the node below."""

    __slots__ = ("visits", "total", "available", "child")

    def __init__(self) -> None:
        self.visits = 0
        self.total = 0.0
        self.available = 1
        self.child: Node | None = None


class Node:
    """One of this bot's decision points: its moves' edges by action key (another seat's
    moves searched here are keyed ``("o", seat, key)``)."""

    __slots__ = ("edges",)

    def __init__(self) -> None:
        self.edges: dict[Hashable, Edge] = {}

    def select(self, state: State, seat: int, rnd: Random, other: bool) -> tuple[int, Edge, bool]:
        """UCB1 over the moves available now (their availability counted); an unseen move
        first. Returns (action id, its edge, whether it was just expanded)."""
        keys = state.action_keys(seat)
        if other:
            keys = [("o", seat, k) for k in keys]
        edges = self.edges
        fresh = []
        for k in keys:
            e = edges.get(k)
            if e is None:
                fresh.append(k)
            else:
                e.available += 1
        if fresh:
            k = rnd.choice(fresh)
            e = edges[k] = Edge()
            return keys.index(k), e, True
        best, best_v = 0, -1.0
        for i, k in enumerate(keys):
            e = edges[k]
            v = e.total / e.visits + EXPLORE * math.sqrt(math.log(e.available) / e.visits)
            if v > best_v:
                best, best_v = i, v
        return best, edges[keys[best]], False

    def most_visited(self, keys: list[Hashable]) -> int:
        """The index of the key visited most (the first on a tie)."""
        def visits(i: int) -> tuple[int, int]:
            e = self.edges.get(keys[i])
            return (e.visits if e is not None else 0, -i)
        return max(range(len(keys)), key=visits)


# ---- the search -----------------------------------------------------------------------


class Search:
    """One decision's search: the sampler, the root, and what every simulation shares."""

    def __init__(self, sampler: Sampler, me: int, rnd: Random) -> None:
        self.sampler = sampler
        self.me = me
        self.rnd = rnd
        self.root = Node()
        self.root_keys: list[Hashable] | None = None
        self.start: tuple[float, ...] | None = None
        self.sims = 0

    def simulate(self) -> None:
        """One simulation: a sampled deal, down the tree, a rollout to the horizon, backup."""
        rnd, me = self.rnd, self.me
        state = self.sampler.sample(rnd)
        if self.root_keys is None:
            self.root_keys = state.action_keys(me)
            self.start = state.points()  # public: the same in every sample
        self.sims += 1
        horizon = state.horizon()
        cap = state.rollout_decisions or NO_CAP
        searched = state.search_opponents
        node: Node | None = self.root
        path: list[tuple[Edge, int]] = []
        steps = 0
        while not state.is_over() and state.horizon() == horizon and steps < cap:
            here = node  # a simultaneous decision: everyone chooses at the same node (no peeking)
            for seat in tuple(state.to_move()):
                if state.is_over() or seat not in state.to_move():
                    break
                steps += 1
                if seat != me:
                    state.apply(seat, self.other_move(state, seat, here if searched else None, path))
                    continue
                if node is None:
                    state.apply(me, state.rollout_action(me, rnd))
                    continue
                a, edge, fresh = node.select(state, me, rnd, False)
                path.append((edge, me))
                if fresh:
                    node = None  # expanded: the rest is a rollout
                else:
                    if edge.child is None:
                        edge.child = Node()
                    node = edge.child
                state.apply(me, a)
        self.backup(state, path)

    def other_move(self, state: State, seat: int, here: Node | None, path: list[tuple[Edge, int]]) -> int:
        """Another seat's move: the game's model of it where it has one, else searched at the
        node ``here`` (None: not searched), else the rollout policy."""
        a = self.sampler.model_action(state, seat, self.rnd)
        if a is not None:
            return a
        if here is None:
            return state.rollout_action(seat, self.rnd)
        a, edge, _ = here.select(state, seat, self.rnd, True)
        path.append((edge, seat))
        return a

    def backup(self, state: State, path: list[tuple[Edge, int]]) -> None:
        rewards: dict[int, float] = {}
        for edge, seat in path:
            r = rewards.get(seat)
            if r is None:
                r = rewards[seat] = state.returns(seat, self.start)
            edge.visits += 1
            edge.total += r


def search(observation: dict[str, Any], match: Any, budget_s: float, rnd: Random,
           wall_s: float | None = None, max_sims: int | None = None) -> int:
    """The action id this seat should play: ISMCTS over sampled deals."""
    legal = observation["legal_actions"]
    if len(legal) == 1:
        return int(legal[0]["id"])
    ruled = get_game(observation["game"]).state_class.rule_action(observation)
    if ruled is not None:
        return ruled
    cpu_end = time.process_time() + budget_s
    belief = match.memory["belief"]
    s = Search(belief.sampler(observation, rnd), match.seat, rnd)
    wall_end = time.monotonic() + wall_s if wall_s else None
    while True:
        s.simulate()
        if (time.process_time() >= cpu_end or (wall_end and time.monotonic() >= wall_end)
                or s.sims == max_sims):
            break
    assert s.root_keys is not None
    match.memory["last_sims"] = s.sims
    return int(legal[s.root.most_visited(s.root_keys)]["id"])


def choose(observation: dict[str, Any], match: Any) -> int:
    memory = match.memory
    if "rnd" not in memory:
        memory["rnd"] = Random(match.seed)
    if "belief" not in memory:
        memory["belief"] = SeatBelief(observation["game"], match.options)
    memory["belief"].update(observation)
    move_s = (match.time_control or {}).get("move_s")
    wall = WALL_SHARE * move_s if move_s else None
    sims = sims_of(match)
    budget = 60.0 if sims and not _NAME_BUDGET.search(_own_name(match)) else budget_of(match)
    return search(observation, match, budget, memory["rnd"], wall, sims)


run(choose, name="search-bot")
