"""Reference search bot for all three games: information-set Monte Carlo tree search.

Every simulation samples the hidden cards from the observation alone
(``games.determinize``, public information only), then walks a tree of this bot's own
decisions with UCB1 (counting a move only in the simulations where it was available,
as information-set MCTS does), plays the other seats and the rest of the game with a
fast randomised rule policy, and scores the end of the hand (Divers Weights: place and
score margin), the round (Tightwad: penalty points against the others') or the game
(Palace: its place, or its standing after ROLLOUT_CAP decisions). The move played is the
root's most visited. The Palace setup swap follows a fixed rule (strong cards face up).

Budget: CPU seconds per decision (a busy machine does not shorten the thinking),
default 0.5. A tournament gives it through the bot's name: an entry named like
``search-0.1s`` or ``search_2s`` (ending in ``-<seconds>s`` or ``_<seconds>s``) thinks
that long; ``search-400sims`` runs exactly 400 simulations a decision instead
(machine-independent, for reproducible tests). The bot also stops at half the match's
``move_s`` of wall-clock time, to stay inside the time control on a loaded machine. Outside a tournament, ``SEARCH_BUDGET_S``
in the environment sets the default (the sandbox passes no environment).
"""

import math
import os
from random import Random
import re
import time

from botkit import run

from games import decktet
from games.core import places_from_keys
from games.determinize import Determinizer
from games.divers_weights import SYMBOLS, PLAY as DW_PLAY, PRIZE as DW_PRIZE, BID as DW_BID
from games.palace import SWAP, PLAY as P_PLAY, EXCUSE as P_EXCUSE
from games.reference import palace_play_choice, palace_swap_choice

DEFAULT_BUDGET_S = float(os.environ.get("SEARCH_BUDGET_S", "0.5"))
WALL_SHARE = 0.5             # of move_s, a hard stop on wall-clock time
EXPLORE = 0.4             # UCB1 exploration constant (rewards are in [0, 1])
ROLLOUT_CAP = 60          # Palace: decisions played out before the game is scored by its standing
RANK = decktet.RANK
_NAME_BUDGET = re.compile(r"[-_](\d+(?:\.\d+)?)s$")
_NAME_SIMS = re.compile(r"[-_](\d+)sims$")


def _own_name(match):
    return match.bots[match.seat] if match.seat < len(match.bots) else ""


def budget_of(match):
    """CPU seconds per decision: from the bot's tournament name, else the default."""
    m = _NAME_BUDGET.search(_own_name(match))
    return float(m.group(1)) if m else DEFAULT_BUDGET_S


def sims_of(match):
    """A fixed number of simulations per decision (a name ending in ``-<N>sims``), or None.
    Machine-independent, for reproducible tests; the time budget still applies."""
    m = _NAME_SIMS.search(_own_name(match))
    return int(m.group(1)) if m else None


# ---- fast rule policies on the engine's state (for the other seats and the rollouts) ----------


def tightwad_policy(state, seat, rnd):
    moves = state.moves(seat)
    if len(moves) == 1 or rnd.random() < 0.1:
        return rnd.randrange(len(moves))
    return len(moves) - 1  # the highest legal card: shed danger while it is still cheap


def divers_policy(state, seat, rnd):
    moves = state.moves(seat)
    if len(moves) == 1:
        return 0
    phase = state._phase
    if phase == DW_PLAY:
        if rnd.random() < 0.3:
            return rnd.randrange(len(moves))
        aim = sum(RANK[p] for p in state._threshold) / state.players
        return min(range(len(moves)), key=lambda i: abs(RANK[moves[i]] - aim))
    if phase == DW_PRIZE:
        mine = 0
        for p in state._prizes[seat]:
            mine |= decktet.SUITS[p]
        return max(range(len(moves)), key=lambda i: (SYMBOLS[moves[i]] + bin(decktet.SUITS[moves[i]] & ~mine).count("1"),
                                                     rnd.random()))
    return rnd.choice((0, 1, 1, 2)) if len(moves) > 2 else 0  # a bid


def palace_policy(state, seat, rnd):
    moves = state.moves(seat)
    if len(moves) == 1:
        return 0
    first = moves[0][0]
    if first == SWAP:
        return palace_swap_choice(moves)
    if first != P_PLAY:
        return 0 if moves[-1][0] != P_EXCUSE else len(moves) - 1
    if rnd.random() < 0.15:
        return rnd.randrange(len(moves))
    return palace_play_choice(state, moves)  # the lowest ordinary rank, specials kept back


# Games where the other seats' choices at the bot's tree nodes are searched too (each by
# its own UCB1 on its own reward, decoupled at simultaneous decisions) rather than
# played by the rule policy: Divers Weights, whose simultaneous tricks reward guessing
# what the others will play.
OPPONENT_TREE = {"divers-weights"}

POLICY = {"tightwad": tightwad_policy, "divers-weights": divers_policy, "palace": palace_policy}


# ---- evaluation ---------------------------------------------------------------------


def standing_points(game, state):
    """The running points the reward compares against (taken when a simulation starts)."""
    if game == "tightwad":
        return list(state._points)
    if game == "divers-weights":
        return state.standing()
    return None


def reward(game, state, seat, base):
    """In [0, 1]: the bot's place (1 first, 0 last) and, for the points games, what this
    hand or round gained against the others (relative to ``base``, the points at the start:
    a long lead or deficit must not flatten every outcome to the same value)."""
    n = state.players
    if game == "divers-weights":
        scores = state.result().scores if state.is_over() else state.standing()
        place = places_from_keys([-x for x in scores])[seat]
        gain = [scores[s] - base[s] for s in range(n)]
        margin = gain[seat] - max(gain[s] for s in range(n) if s != seat)
        share = 0.7 if state.is_over() else 0.3  # the place decides only at the end
        return share * (1.0 - place / (n - 1)) + (1 - share) * max(0.0, min(1.0, 0.5 + margin / 20.0))
    if game == "tightwad" and not state.is_over():
        pts = state._points
        mine = pts[seat] - base[seat]
        others = sum(pts[s] - base[s] for s in range(n) if s != seat) / (n - 1)
        return max(0.0, min(1.0, 0.5 + (others - mine) / 10.0))  # one round's penalty: up to 10
    if state.is_over():
        places = state.result().places
    else:
        places = places_from_keys(state.standing_keys())
    return 1.0 - places[seat] / (n - 1)


def _stop(game, state, mark):
    """End of the simulated horizon: the hand (Divers Weights), the round (Tightwad)."""
    if game == "tightwad":
        return state._round != mark
    if game == "divers-weights":
        return state.hand_no != mark
    return False


def _mark(game, state):
    return state._round if game == "tightwad" else state.hand_no if game == "divers-weights" else 0


# ---- the search ---------------------------------------------------------------------


class Node:
    __slots__ = ("stats",)

    def __init__(self):
        self.stats = {}  # move key -> [visits, total reward, times available, child Node]


def _key(state, move):
    return (getattr(state, "_phase", 0), move)


def _select(stats, state, seat, rnd, tag):
    """UCB1 over the moves available now (their availability counted); an unseen move first.
    Returns (action id, its stats, whether it was just expanded)."""
    keys = [tag + _key(state, m) for m in state.moves(seat)]
    fresh = []
    for k in keys:
        st = stats.get(k)
        if st is None:
            fresh.append(k)
        else:
            st[2] += 1
    if fresh:
        k = rnd.choice(fresh)
        st = stats[k] = [0, 0.0, 1, None]
        return keys.index(k), st, True
    best, best_v = 0, -1.0
    for i, k in enumerate(keys):
        st = stats[k]
        v = st[1] / st[0] + EXPLORE * math.sqrt(math.log(st[2]) / st[0])
        if v > best_v:
            best, best_v = i, v
    return best, stats[keys[best]], False


def search(observation, match, budget_s, rnd, wall_s=None, max_sims=None):
    """The action id this seat should play: ISMCTS over sampled deals."""
    legal = observation["legal_actions"]
    if len(legal) == 1:
        return legal[0]["id"]
    game, me = match.game, match.seat
    if game == "palace" and observation["phase"] == "swap":
        state = Determinizer(observation, match.options).sample(rnd)
        return palace_swap_choice(state.moves(me))
    policy = POLICY[game]
    det = Determinizer(observation, match.options)
    root = Node()
    cpu_end = time.process_time() + budget_s
    wall_end = time.monotonic() + wall_s if wall_s else None
    root_moves = None
    sims = 0
    cap = ROLLOUT_CAP if game == "palace" else 10**6
    while True:
        if sims and (time.process_time() >= cpu_end or (wall_end and time.monotonic() >= wall_end)
                     or sims == max_sims):
            break
        sims += 1
        state = det.sample(rnd)
        if root_moves is None:
            root_moves = [_key(state, m) for m in state.moves(me)]
        mark = _mark(game, state)
        if sims == 1:
            base = standing_points(game, state)  # public: the same in every sample
        node, path, steps = root, [], 0
        while not state.is_over() and not _stop(game, state, mark) and steps < cap:
            movers = tuple(state.to_move())
            here = node  # a simultaneous decision: everyone chooses at the same node (no peeking)
            for seat in movers:
                if state.is_over() or seat not in state.to_move():
                    break
                steps += 1
                if seat != me:
                    if here is None or game not in OPPONENT_TREE:
                        state.apply(seat, policy(state, seat, rnd))
                    else:
                        i, st, _ = _select(here.stats, state, seat, rnd, ("o", seat))
                        path.append((st, seat))
                        state.apply(seat, i)
                    continue
                if node is None:
                    state.apply(seat, policy(state, seat, rnd))
                    continue
                i, st, fresh = _select(node.stats, state, me, rnd, ())
                path.append((st, me))
                if fresh:
                    node = None  # expanded: the rest is a rollout
                else:
                    if st[3] is None:
                        st[3] = Node()
                    node = st[3]
                state.apply(me, i)
        rewards = {}
        for st, seat in path:
            r = rewards.get(seat)
            if r is None:
                r = rewards[seat] = reward(game, state, seat, base)
            st[0] += 1
            st[1] += r
    stats = root.stats
    best = max(range(len(root_moves)), key=lambda i: (stats.get(root_moves[i], [0])[0], -i))
    match.memory["last_sims"] = sims
    return legal[best]["id"]


def choose(observation, match):
    if "rnd" not in match.memory:
        match.memory["rnd"] = Random(match.seed)
    move_s = (match.time_control or {}).get("move_s")
    wall = WALL_SHARE * move_s if move_s else None
    sims = sims_of(match)
    budget = 60.0 if sims and not _NAME_BUDGET.search(_own_name(match)) else budget_of(match)
    return search(observation, match, budget, match.memory["rnd"], wall, sims)


run(choose, name="search-bot")
