"""Divers Weights heuristic (simple policies in the other games).

Each card in hand is tried against a few guesses of the others' cards (each
other player holds a random hand of the cards not yet seen and plays, half the
time, its card nearest an even share of the threshold, else any card) to
estimate how likely it wins the trick against the visible threshold and what
the best prize would then add to the bot's prizes (suit symbols, with a pull
towards covering all six suits). The
bot plays the card whose expected prize now most exceeds what the same card is
worth in a later trick (same estimate, with a guessed threshold too), so it
keeps cards that are strong anywhere for when they are needed. With bidding,
the bot bids the count that maximises its expected score under those
estimates, then plays to win or, after a nil bid, to lose.

Tightwad and Palace get botkit's short fixed rules (``tightwad_simple`` and
``palace_simple``): better than random, far from a real heuristic.
"""

import random

from botkit import run, simple_choice

SAMPLES = 40
SENSIBLE = 0.5  # share of the others' plays guessed as sensible rather than random
ALL_SUITS = 6


def worth(match, cards):
    """R-D6 points of a prize set, plus a small pull towards six suits."""
    suits = set()
    symbols = 0
    for c in cards:
        s = match.suits(c)
        symbols += len(s)
        suits.update(s)
    return symbols + (5 if len(suits) == ALL_SUITS else 0.4 * len(suits))


def gain(match, mine, card):
    return worth(match, mine + [card]) - worth(match, mine)


def unseen(obs, match):
    seen = set(obs["hand"]) | set(obs["threshold"]) | set(obs["discarded"])
    for pr in obs["prizes"]:
        seen.update(pr)
    return [c for c in match.cards if c not in seen]


def guess_plays(obs, match, pool, threshold_total):
    """One guess of the others' cards: each holds a random hand of unseen cards and plays,
    half the time, its card nearest an even share of the threshold, else any of them."""
    others, size = obs["players"] - 1, len(obs["hand"])
    if len(pool) < others * size:
        return random.sample(pool, others)
    deal = random.sample(pool, others * size)
    aim = threshold_total / obs["players"]
    hands = [deal[k * size:(k + 1) * size] for k in range(others)]
    return [min(h, key=lambda c: abs(match.value(c) - aim)) if random.random() < SENSIBLE else h[0]
            for h in hands]


def outlook(obs, match, threshold_total, pool, samples=SAMPLES, later=False):
    """card -> (P(win), expected prize gain when winning), by sampling the others' cards.

    ``later``: for a later trick instead, whose threshold cards are drawn from the pool too.
    """
    others = obs["players"] - 1
    mine = obs["prizes"][obs["seat"]]
    out = {}
    gains = {}  # card -> prize gain, computed once per decision

    def g(card):
        if card not in gains:
            gains[card] = gain(match, mine, card)
        return gains[card]

    draws = []  # (threshold cards, the others' cards)
    if later and len(pool) >= 2 * others:
        draws = [(d[:others], d[others:]) for d in (random.sample(pool, 2 * others) for _ in range(samples))]
    elif not later and len(pool) >= others:
        draws = [(obs["threshold"], guess_plays(obs, match, pool, threshold_total)) for _ in range(samples)]
    for c in obs["hand"]:
        v = match.value(c)
        wins = 0
        total_gain = 0.0
        for thr, opp in draws:
            limit = sum(match.value(x) for x in thr) if later else threshold_total
            ranks = [match.value(o) for o in opp]
            total = v + sum(ranks)
            if total == limit:
                continue
            best = max(ranks + [v]) if total < limit else min(ranks + [v])
            if v != best:
                continue
            wins += 1
            if ranks.count(v):  # tied winners keep their own card
                total_gain += g(c)
            else:
                total_gain += max(g(p) for p in thr + opp + [c])
        out[c] = (wins / max(1, len(draws)), total_gain / max(1, wins))
    return out


def bid(obs, match, pool):
    """The bid with the best expected R-D8 score, trick wins taken as independent."""
    # Threshold unknown before the first trick: guess it from the unseen cards.
    guess = sum(match.value(c) for c in pool) / len(pool) * (obs["players"] - 1)
    probs = [p for p, _ in outlook(obs, match, round(guess), pool).values()]
    dist = [1.0]  # dist[k] = P(exactly k tricks)
    for p in probs:
        dist = [a * (1 - p) + b * p for a, b in zip(dist + [0.0], [0.0] + dist)]

    def expected(b):
        if b == 0:
            return 20 * dist[0]
        return sum(d * (4 * b + k - b) for k, d in enumerate(dist) if k >= b)

    return max(range(6), key=expected)


def divers(obs, match):
    legal = obs["legal_actions"]
    if len(legal) == 1:
        return legal[0]["id"]
    pool = unseen(obs, match)
    if obs["phase"] == "bid":
        want = bid(obs, match, pool)
        return next(a["id"] for a in legal if a["bid"] == want)
    if obs["phase"] == "prize":
        mine = obs["prizes"][obs["seat"]]
        return max(legal, key=lambda a: (gain(match, mine, a["card"]), -a["id"]))["id"]
    view = outlook(obs, match, obs["threshold_total"], pool)
    if obs["bidding"]:
        me = obs["seat"]
        lose = obs["bids"][me] == 0 and obs["tricks_won"][me] == 0
        pick = (min if lose else max)(view, key=lambda c: view[c][0])
    else:
        # Expected prize now, minus what the card would be worth in a later trick.
        later = outlook(obs, match, 0, pool, later=True) if len(obs["hand"]) > 1 else {}
        worth_later = {c: p * g for c, (p, g) in later.items()}
        pick = max(view, key=lambda c: view[c][0] * view[c][1] - worth_later.get(c, 0.0))
    return next(a["id"] for a in legal if a["card"] == pick)


def choose(observation, match):
    if match.game == "divers-weights":
        return divers(observation, match)
    return simple_choice(observation, match)  # botkit's simple play for the other games

run(choose, name="divers-heuristic")
