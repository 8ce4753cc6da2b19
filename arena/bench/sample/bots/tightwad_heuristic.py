"""Tightwad heuristic (simple policies in the other games).

Only the last trick of a round costs points. For each legal card the bot deals
the unseen cards at random to the others (SAMPLES times), plays the rest of the
round out with everyone playing their highest legal card, and plays the card
that cost it the fewest penalty points on average. Ties go to the highest card.

Divers Weights and Palace get botkit's short fixed rules (``divers_simple`` and
``palace_simple``): better than random, far from a real heuristic.
"""

import random

from botkit import run, simple_choice

SAMPLES = 30


def table(match):
    """card -> (rank, suit bitmask), built once per match."""
    if "cards" not in match.memory:
        names = sorted({s for c in match.cards for s in match.suits(c)})
        match.memory["cards"] = {c: (match.value(c), sum(1 << names.index(s) for s in match.suits(c)))
                                 for c in match.cards}
    return match.memory["cards"]


def takes(card, rank, suits):
    """R-T4: does a card of (rank, suits) take control from one of ``card`` = (rank, suits)?"""
    return bool(suits & card[1]) and (rank > card[0] or rank == 1)


def play_out(t, hands, played, ctl, seat, n):
    """Finish the round, everyone playing their highest legal card; (loser, penalty points).

    ``hands`` are sorted high to low; ``played`` cards are in the current trick, whose
    control is ``ctl`` = (seat, rank, suits); ``seat`` moves next.
    """
    while True:
        for _ in range(n - played):
            h = hands[seat]
            if ctl is None:
                c = h.pop(0)
                ctl = (seat, *t[c])
            else:
                # R-T3: the highest card if it is high enough, else one of the lowest.
                c = h.pop(0) if t[h[0]][0] >= ctl[1] else h.pop()
                if takes(ctl[1:], *t[c]):
                    ctl = (seat, *t[c])
            seat = (seat + 1) % n
        if not hands[ctl[0]]:
            return ctl[0], ctl[1]
        seat, played, ctl = ctl[0], 0, None


def tightwad(obs, match):
    legal = obs["legal_actions"]
    if len(legal) == 1:
        return legal[0]["id"]
    t = table(match)
    me, n, hand = obs["seat"], obs["players"], obs["hand"]
    seen = set(hand)
    for trick in obs["tricks"] + [obs["trick"]]:
        seen.update(p["card"] for p in trick["plays"])
    for cards in obs["penalty_cards"]:
        seen.update(cards)
    pool = [c for c in t if c not in seen]  # the others' hands and the cards set aside
    trick = obs["trick"]
    ctl0 = None
    if trick["plays"]:
        ctl0 = (trick["controller"], *t[trick["plays"][trick["control"]]["card"]])
    high_first = lambda c: -t[c][0]  # noqa: E731
    cost = dict.fromkeys((a["card"] for a in legal), 0)
    for _ in range(SAMPLES):
        random.shuffle(pool)
        dealt, k = [], 0
        for s in range(n):
            size = 0 if s == me else obs["hand_sizes"][s]
            dealt.append(sorted(pool[k:k + size], key=high_first))
            k += size
        for c in cost:
            hands = [h[:] for h in dealt]
            hands[me] = sorted((x for x in hand if x != c), key=high_first)
            ctl = (me, *t[c]) if ctl0 is None or takes(ctl0[1:], *t[c]) else ctl0
            loser, points = play_out(t, hands, len(trick["plays"]) + 1, ctl, (me + 1) % n, n)
            cost[c] += points if loser == me else 0
    return min(legal, key=lambda a: (cost[a["card"]], -t[a["card"]][0], a["id"]))["id"]


def choose(observation, match):
    if match.game == "tightwad":
        return tightwad(observation, match)
    return simple_choice(observation, match)  # botkit's simple play for the other games

run(choose, name="tightwad-heuristic")
