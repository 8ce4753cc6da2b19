"""A hostile bot that remembers every deal it plays, to catch a process shown a deal twice.

It keeps, in memory for its whole life, the cards it held in each deal (named by the match
id's "<game>/p<players>/d<deal>" part, which every bot is told). When a later match is of
a deal it remembers, it counts the opponents' played cards that were in its remembered
hand: cards it could have known were in that opponent's hidden hand. At the end of every
match it reports on stderr, one line: ``remembers: <deal> again=<0|1> hits=<n>``.
It plays a random legal action (seeded by the match).
"""
import json
import random
import sys

held: dict[str, set[int]] = {}   # deal -> cards this process held in it


def played_cards(obs, me):
    """(seat, card) of every card the observation shows a seat playing."""
    out = []

    def walk(x):
        if isinstance(x, dict):
            seat = x.get("seat")
            if isinstance(seat, int) and x.get("type", "play") in ("play",):
                if isinstance(x.get("card"), int):
                    out.append((seat, x["card"]))
                for c in x.get("cards") or ():
                    if isinstance(c, int):
                        out.append((seat, c))
            played = x.get("played")
            if isinstance(played, list):  # divers-weights: one card (or null) per seat
                out.extend((s, c) for s, c in enumerate(played) if isinstance(c, int))
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(obs)
    return [(s, c) for s, c in out if s != me]


deal = None
seat = 0
again = False
rng = random.Random(0)
mine: set[int] = set()
hits: set[int] = set()
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "hello":
        print(json.dumps({"type": "hello", "name": "remembers-deals"}), flush=True)
    elif kind == "start":
        deal = "/".join(msg["match_id"].split("/")[:3])
        seat = msg["seat"]
        rng = random.Random(msg["seed"])
        again = deal in held
        mine, hits = set(), set()
    elif kind == "act":
        obs = msg["observation"]
        mine.update(c for c in obs.get("hand") or () if isinstance(c, int))
        if again:
            hits.update(c for _, c in played_cards(obs, seat) if c in held[deal])
        print(rng.randrange(len(obs["legal_actions"])), flush=True)
    elif kind == "result":
        print(f"remembers: {deal} again={int(again)} hits={len(hits)}", file=sys.stderr, flush=True)
        held.setdefault(deal, set()).update(mine)
    elif kind == "bye":
        break
