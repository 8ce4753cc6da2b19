"""Reference search bot for all three games: information-set Monte Carlo tree search.

Every simulation samples the hidden cards from the observation alone
(``games.determinize``, public information only), then walks a tree of this bot's own
decisions with UCB1 (counting a move only in the simulations where it was available,
as information-set MCTS does), plays the other seats and the rest of the game with a
fast randomised rule policy, and scores the end of the hand (Divers Weights: place and
score margin), the round (Tightwad: penalty points against the others') or the game
(Palace: its place, or its standing after ROLLOUT_CAP decisions). The move played is the
root's most visited. The Palace setup swap follows a fixed rule (strong cards face up).
In two-player Divers Weights the other seat's card in the trick being decided comes from a
model instead (``OtherSeat``: the Divers Weights heuristic's one-ply evaluation with noise, a
quarter of its plays random, more as its plays so far in the game fit that model less than
random play), and the hand it is dealt in each simulation is drawn with weights for how
likely that model makes the cards it has already played this hand; there, too, a card played
at a tree node is keyed with the trick's threshold total, so the tree's later tricks are
chosen for the threshold turned, not one card per trick whatever it is.

Budget: CPU seconds per decision (a busy machine does not shorten the thinking),
default 0.5. A tournament gives it through the bot's name: an entry named like
``search-0.1s`` or ``search_2s`` (ending in ``-<seconds>s`` or ``_<seconds>s``) thinks
that long; ``search-400sims`` runs exactly 400 simulations a decision instead
(machine-independent, for reproducible tests). The bot also stops at half the match's
``move_s`` of wall-clock time, to stay inside the time control on a loaded machine. Outside a tournament, ``SEARCH_BUDGET_S``
in the environment sets the default (the sandbox passes no environment).
"""

import bisect
import math
import os
from random import Random
import re
import time

from botkit import run

from games import decktet
from games.core import places_from_keys
from games.determinize import Determinizer
from games.palace_history import PalaceHistory
from games.divers_weights import HAND_SIZE, SYMBOLS, PLAY as DW_PLAY, PRIZE as DW_PRIZE, BID as DW_BID
from games.palace import SWAP, PLAY as P_PLAY, EXCUSE as P_EXCUSE
from games.palace_rule import palace_play_choice, palace_swap_choice

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


# ---- Divers Weights, two players: a model of the other seat ------------------------------
# Searched by its own UCB, the other seat learns one preference per card, whatever else it
# holds; and the deals sampled ignore what its plays have shown. A sensible player weighs the
# cards it holds against the threshold, so it is modelled as the one-ply evaluator of
# bots/divers_heuristic.py (expected prize now minus the card's worth in a later trick) with
# noise, a quarter of its plays random (cheap insurance against players it does not fit),
# and its possible hands are weighted by how likely that model makes the cards it played this
# hand. What it holds decides the trick: in an experiment, a search that saw its hand led the
# heuristic by 0.4 places, one that searched its choice instead was level with it. A seat
# that plays unlike the model (a random bot) loses the model its weight: a fixed model cost
# 0.2 places against random_bot.

MODEL_SAMPLES = 100   # guesses behind each card value
MODEL_NOISE = 0.2     # sd of the noise on the values when the model chooses
MODEL_TAU = 0.15      # the same noise as a softmax temperature, for the hands' weights
MODEL_RANDOM = 0.25   # share of the other seat's plays taken as uniformly random
HAND_SAMPLES = 500    # weighted hands the other seat may hold
MODEL_PRIOR = 0.5     # belief that the other seat plays like the model, before it has shown a card


def _worth(mask, symbols):
    """R-D6 points of a prize set, with the heuristic's pull towards six suits."""
    k = bin(mask).count("1")
    return symbols + (5 if k == 6 else 0.4 * k)


def _gains(prizes):
    """What each card would add to these prizes' worth."""
    mask = symbols = 0
    for p in prizes:
        mask |= decktet.SUITS[p]
        symbols += SYMBOLS[p]
    w0 = _worth(mask, symbols)
    return [_worth(mask | decktet.SUITS[p], symbols + SYMBOLS[p]) - w0 for p in range(decktet.BASIC_SIZE)]


def _outcomes(pool, threshold, k, gains, rnd, samples):
    """Per rank v, over sampled tricks: the best prize value beside v's card for each trick v
    wins alone, and how many tricks v wins tied. ``threshold`` None: a later trick, its
    threshold drawn from the pool; else the current one, the other card guessed as the
    heuristic does (half the time the nearest to half the threshold in a random hand)."""
    wins = [[] for _ in range(11)]
    ties = [0] * 11
    for _ in range(samples):
        if threshold is None:
            thr, other = rnd.sample(pool, 2)
        else:
            thr = threshold[0]
            if rnd.random() < 0.5 and len(pool) >= k:
                aim = RANK[thr] / 2
                other = min(rnd.sample(pool, k), key=lambda c: abs(RANK[c] - aim))
            else:
                other = rnd.choice(pool)
        limit, r = RANK[thr], RANK[other]
        best = max(gains[thr], gains[other])
        for v in range(1, 11):
            total = v + r
            if total == limit or (v < r if total < limit else v > r):
                continue
            if v == r:
                ties[v] += 1
            else:
                wins[v].append(best)
    return wins, ties


def card_values(pool, threshold, k, prizes, rnd, samples=MODEL_SAMPLES):
    """card -> expected prize now minus worth in a later trick, for every card of ``pool``
    (what the seat has not seen, its own hand included: the values need not know it)."""
    gains = _gains(prizes)
    now = _outcomes(pool, threshold, k, gains, rnd, samples)
    later = _outcomes(pool, None, k, gains, rnd, samples) if k > 1 else ([[]] * 11, [0] * 11)
    out = {}
    for c in pool:
        v, g = RANK[c], gains[c]
        s = (now[1][v] - later[1][v]) * g
        for b in now[0][v]:
            s += b if b > g else g
        for b in later[0][v]:
            s -= b if b > g else g
        out[c] = s / samples
    return out


def _fit(steps, hand, plays):
    """P(the plays shown | the hand now, the model): at each earlier trick it held its hand
    now plus the cards it played from then on."""
    p = 1.0
    for j, (vals, b) in enumerate(steps):
        held = hand + plays[j:]
        top = max(vals[c] for c in held)
        z = sum(math.exp((vals[c] - top) / MODEL_TAU) for c in held)
        p *= MODEL_RANDOM / len(held) + (1 - MODEL_RANDOM) * math.exp((vals[b] - top) / MODEL_TAU) / z
    return p


def _hand_steps(tricks, seat, hand_no, past, rnd):
    """(card values when it chose, card it played) for each trick of a hand, values cached."""
    public, prizes, steps = [], [], []
    for j, t in enumerate(tricks):
        key = (hand_no, j)
        if key not in past:
            gone = set(public + t["threshold"])
            pool = [c for c in range(decktet.BASIC_SIZE) if c not in gone]
            past[key] = card_values(pool, t["threshold"], HAND_SIZE - j, prizes, rnd)
        steps.append((past[key], t["played"][seat]))
        public += t["threshold"] + t["played"]
        prizes += [p["card"] for p in t["prizes"] if p["seat"] == seat]
    return steps


def _belief(observation, past, rnd):
    """P(the other seat plays like the model), from the finished hands of this game."""
    prev = observation.get("previous_hand")
    other = 1 - observation["seat"]
    done = past.setdefault("hands_fitted", {})
    if prev and prev["hand_number"] not in done and len(prev["tricks"]) == HAND_SIZE:
        steps = _hand_steps(prev["tricks"], other, prev["hand_number"], past, rnd)[:-1]  # the last: no choice
        plays = [b for _, b in steps] + [prev["tricks"][-1]["played"][other]]
        log_ratio = math.log(_fit(steps, [], plays))
        for j in range(len(steps)):
            log_ratio += math.log(HAND_SIZE - j)
        done[prev["hand_number"]] = log_ratio
    odds = MODEL_PRIOR / (1.0 - MODEL_PRIOR) * math.exp(max(-50.0, min(50.0, sum(done.values()))))
    return odds / (1.0 + odds)


class OtherSeat:
    """The other seat of a two-player hand, at the trick being decided."""

    def __init__(self, observation, det, memory, rnd):
        me = observation["seat"]
        self.seat = other = 1 - me
        hand = observation["hand"]
        self.k = k = len(hand)
        unseen = list(det.pool)
        self.values = card_values(unseen + hand, observation["threshold"], k, observation["prizes"][other], rnd)
        # its hand's weights, from its plays in this hand's earlier tricks
        past = memory.setdefault("dw_past_values", {})
        steps = _hand_steps(observation["tricks"], other, observation["hand_number"], past, rnd)
        # Two kinds of player: the model's, or one playing at random. The belief in the first
        # comes from the hands already finished (their every trick is known) and from this
        # hand's plays, which weigh each possible hand too.
        belief = _belief(observation, past, rnd)
        self.hands = self.cum = None
        at_random = 1.0 - belief
        if steps:
            plays = [b for _, b in steps]
            uniform = 1.0
            for j in range(len(steps)):
                uniform /= k + len(steps) - j
            self.hands, self.cum, total = [], [], 0.0
            for _ in range(HAND_SAMPLES):
                h = rnd.sample(unseen, k)
                total += belief * _fit(steps, h, plays) + (1.0 - belief) * uniform
                self.hands.append(h)
                self.cum.append(total)
            at_random = (1.0 - belief) * uniform * HAND_SAMPLES / total
        self.random_share = MODEL_RANDOM + (1.0 - MODEL_RANDOM) * at_random

    def _pick(self, cards, rnd):
        if rnd.random() < self.random_share:
            return rnd.randrange(len(cards))
        vals = self.values
        return max(range(len(cards)), key=lambda i: vals[cards[i]] + rnd.gauss(0.0, MODEL_NOISE))

    def deal(self, state, rnd):
        """Give the sampled state a hand drawn by weight, and a choice the model would make if
        the seat has already chosen unseen."""
        s = self.seat
        hidden = state._played[s] is not None
        if self.hands:
            held = self.hands[min(bisect.bisect_left(self.cum, rnd.random() * self.cum[-1]), len(self.hands) - 1)]
            rest = state._deck + state._hands[s] + ([state._played[s]] if hidden else [])
            rest = [c for c in rest if c not in held]
            rnd.shuffle(rest)
            state._deck = rest
        else:
            held = state._hands[s] + ([state._played[s]] if hidden else [])
        held = list(held)
        if hidden:
            state._played[s] = held.pop(self._pick(held, rnd))
        state._hands[s] = sorted(held)
        state._move_cache.clear()

    def choose(self, state, rnd):
        """Its card for this trick, or the prize the heuristic would take."""
        moves = state.moves(self.seat)
        if state._phase == DW_PLAY:
            return self._pick(moves, rnd)
        gains = _gains(state._prizes[self.seat])
        return max(range(len(moves)), key=lambda i: (gains[moves[i]], -i))


def other_seat(observation, det, memory, rnd):
    """The model for two-player Divers Weights without bidding, at a card to play; else None."""
    if (observation["game"] != "divers-weights" or observation["players"] != 2 or observation["bidding"]
            or observation["phase"] != "play"):
        return None
    return OtherSeat(observation, det, memory, rnd)


# ---- the search ---------------------------------------------------------------------


class Node:
    __slots__ = ("stats",)

    def __init__(self):
        self.stats = {}  # move key -> [visits, total reward, times available, child Node]


def _key(state, move, by_threshold=False):
    """A move's key at a node. ``by_threshold``: a card played in Divers Weights is keyed with
    the trick's threshold too, so that the tree's later tricks choose for the threshold they
    see; keyed by the card alone, a node learned one card per trick whatever was turned."""
    if by_threshold and state._phase == DW_PLAY:
        return (DW_PLAY, move, sum(RANK[p] for p in state._threshold))
    return (getattr(state, "_phase", 0), move)


def _select(stats, state, seat, rnd, tag, by_threshold=False):
    """UCB1 over the moves available now (their availability counted); an unseen move first.
    Returns (action id, its stats, whether it was just expanded)."""
    keys = [tag + _key(state, m, by_threshold) for m in state.moves(seat)]
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
    history = match.memory.get("history")
    if game == "palace" and observation["phase"] == "swap":
        state = Determinizer(observation, match.options, history=history).sample(rnd)
        return palace_swap_choice(state.moves(me))
    policy = POLICY[game]
    det = Determinizer(observation, match.options, history=history)
    root = Node()
    cpu_end = time.process_time() + budget_s
    other = other_seat(observation, det, match.memory, rnd)
    by_threshold = game == "divers-weights" and match.players == 2 and not observation["bidding"]
    this_trick = (observation.get("hand_number"), observation.get("trick_number"))
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
        if other is not None:
            other.deal(state, rnd)
        if root_moves is None:
            root_moves = [_key(state, m, by_threshold) for m in state.moves(me)]
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
                    if other is not None and (state.hand_no, state.trick_no) == this_trick:
                        state.apply(seat, other.choose(state, rnd))
                        continue
                    if here is None or game not in OPPONENT_TREE:
                        state.apply(seat, policy(state, seat, rnd))
                    else:
                        i, st, _ = _select(here.stats, state, seat, rnd, ("o", seat), by_threshold)
                        path.append((st, seat))
                        state.apply(seat, i)
                    continue
                if node is None:
                    state.apply(seat, policy(state, seat, rnd))
                    continue
                i, st, fresh = _select(node.stats, state, me, rnd, (), by_threshold)
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


def follow_history(observation, match):
    """Palace: the public history (swapped and eaten cards, forced eats) from every
    observation, so that samples fit it; a history that stops fitting is dropped and the
    samples fit the observation alone."""
    memory = match.memory
    if "history" not in memory:
        memory["history"] = PalaceHistory(match.options)
    if memory["history"] is not None:
        try:
            memory["history"].update(observation)
        except ValueError:
            memory["history"] = None


def choose(observation, match):
    if "rnd" not in match.memory:
        match.memory["rnd"] = Random(match.seed)
    if match.game == "palace":
        follow_history(observation, match)
    move_s = (match.time_control or {}).get("move_s")
    wall = WALL_SHARE * move_s if move_s else None
    sims = sims_of(match)
    budget = 60.0 if sims and not _NAME_BUDGET.search(_own_name(match)) else budget_of(match)
    return search(observation, match, budget, match.memory["rnd"], wall, sims)


run(choose, name="search-bot")
