"""Palace heuristic (simple policies in the other games).

Setup: swap strong cards (Twos, Sevens, high ranks) to the face-up tableau,
where they wait for the end game. Play: the lowest legal ordinary printed rank,
as many cards of it as allowed; complete a four of a kind when possible (the
pile blows up and the bot plays again); keep Twos, Sevens, Aces and the Excuse
for when nothing else is legal. Low trump cards are not held back: played early
they make the next player find a trump card or eat (this measured better than
keeping them). Aces name as trump the suit most of the bot's cards bear.
Face-down: a known card that is legal now, else an unknown one. A game still
running after LOOP_BREAK decisions a player is most likely going round in a
cycle (fixed rules can pass the pile back and forth for ever): the bot then
plays at random, which ends it.

Tightwad and Divers Weights get botkit's short fixed rules (``tightwad_simple`` and
``divers_simple``): better than random, far from a real heuristic.
"""

import random

from botkit import run, simple_choice

# R-P2 order (Ace high); the Excuse (value 0) has none.
ORDER = {1: 13, 10: 12, 11: 10, 12: 11, 0: 0, **{r: r for r in range(2, 10)}}
LOOP_BREAK = 500  # decisions a player; a normal game takes 50 to 250 a player
# Last resorts, least valuable first: the Excuse, Sevens, Twos, Aces.
SPECIAL = {0: 1, 7: 2, 2: 3, 13: 4}


def strength(match, card):
    """How good a card is to hold late: Twos and Sevens count as high."""
    o = ORDER[match.value(card)]
    return {2: 14, 7: 12.5, 0: 15}.get(o, o)


def setup(obs, match):
    up = obs["tableaux"][obs["seat"]]["face_up"]
    base = sum(strength(match, c) for c in up)

    def face_up_strength(a):
        return base + sum(strength(match, h) - strength(match, u) for h, u in a["swaps"])

    return max(obs["legal_actions"], key=lambda a: (face_up_strength(a), -a["id"]))["id"]


def reveal(obs, match, legal):
    """A known face-down card that is legal now, else an unknown one."""
    unknown = [a for a in legal if a["card"] is None]
    for a in legal:
        if a["card"] is not None and fits(obs, match, a["card"]):
            return a["id"]
    return (unknown or legal)[0]["id"]


def key(obs, match, card):
    trump = obs["trump_suit"]
    return ORDER[match.value(card)] + (16 if trump in match.suits(card) else 0)


def fits(obs, match, card):
    """R-P7 legality of a card on the pile now."""
    mode = obs["pile_mode"]
    o = ORDER[match.value(card)]
    if mode in ("empty", "any") or o <= 2:
        return True
    k, ref = key(obs, match, card), key(obs, match, obs["reference"])
    return k >= ref if mode == "higher" else k <= ref


def completes_four(obs, match, cards):
    pile = obs["pile"]
    r = match.value(cards[0])
    top = 0
    for c in reversed(pile):
        if match.value(c) != r:
            break
        top += 1
    return top + len(cards) >= 4


def trump_score(obs, match, ace):
    suit = match.suits(ace)[0]
    mine = obs["hand"] + obs["tableaux"][obs["seat"]]["face_up"]
    return sum(suit in match.suits(c) for c in mine)


def play_score(obs, match, a):
    """Lower is better: (ordinary first, four of a kind first, low printed rank, more cards)."""
    if a["kind"] == "excuse":
        return (SPECIAL[0], 0, 0, 0, 0)
    cards = a["cards"]
    o = ORDER[match.value(cards[0])]
    special = 0 if o == 7 and match.options.get("wyrm_variant") else SPECIAL.get(o, 0)
    four = 0 if completes_four(obs, match, cards) else 1
    trump = -trump_score(obs, match, a["trump"]) if "trump" in a else 0
    return (special, four, o, -len(cards), trump)


def palace(obs, match):
    legal = obs["legal_actions"]
    if obs["decision"] > LOOP_BREAK * obs["players"]:
        return random.choice(legal)["id"]
    if obs["phase"] == "swap":
        return setup(obs, match)
    if legal[0]["kind"] == "reveal":
        return reveal(obs, match, legal)
    return min(legal, key=lambda a: (play_score(obs, match, a), a["id"]))["id"]


def choose(observation, match):
    if match.game == "palace":
        return palace(observation, match)
    return simple_choice(observation, match)  # botkit's simple play for the other games

run(choose, name="palace-heuristic")
