"""Fixed-size numeric views of the JSON observations, and a fixed action space per game.

Standard library only and no import of ours: ``arena.rl.bridge`` copies this file,
verbatim, into exported bots, which run in the sandbox with nothing but the
standard library and botkit. It reads only the JSON observation a bot receives
(the engines' ``observation(seat)``), so the PettingZoo environment and an
exported bot compute the very same numbers.

Every feature lies in [0, 1]. Nothing depends on who else has already chosen in a
simultaneous decision: the arena asks every seat at once, the environment one by one. Seats are relative: index 0 is the observing seat,
1 the seat on its left, and so on. docs/rl.md lists the features and the action
encoding; in short (``f`` = a card's face, ``pid % 45``):

* tightwad (36 slots): slot = face of the card to play (with two decks the
  engine offers each face once).
* divers-weights (78 slots): 0-35 play card ``pid``, 36-41 bid 0-5, 42-77 take
  card ``pid`` as the prize.
* palace (282 slots): 0 keep the tableau; 1-16 one swap (hand position i,
  face-up position j) = 1 + 4i + j; 17-52 two swaps (hand positions i1 < i2,
  face-up positions j1 < j2) = 17 + 6 * pair(i1, i2) + pair(j1, j2); 53-228 play
  ``c`` cards (1-8, 8 = eight or more) of rank ``r`` (2-9, Crown 10, Pawn 11,
  Court 12), ``t`` = 1 if one of them bears the trump suit (so the play's
  reference is a trump) = 53 + 16 * (r - 2) + 8t + c - 1; 229-276 play ``c`` Aces
  whose last (the new trump) has face ``a`` (0-5) = 229 + 8a + c - 1; 277 the
  Excuse; 278-281 reveal face-down position 0-3. Several engine actions can share
  a Palace slot (which faces of one rank, beyond their trump status; which
  face-up cards join a hand play); the slot then means the first of them in the
  engine's order.
"""

GAMES = ("tightwad", "divers-weights", "palace")
DECK = 45  # faces per Decktet; a physical card's face is pid % DECK
BASIC = 36
# (rank value, suit bits) per face, as games/decktet.py (a test checks they agree).
# Suits: Moons 1, Suns 2, Waves 4, Leaves 8, Wyrms 16, Knots 32. Ace 1, Crown 10,
# Pawn 11, Court 12, Excuse 0.
FACES = (
    (1, 1),
    (1, 2),
    (1, 4),
    (1, 8),
    (1, 16),
    (1, 32),
    (2, 33),
    (2, 18),
    (2, 12),
    (3, 5),
    (3, 34),
    (3, 24),
    (4, 3),
    (4, 12),
    (4, 48),
    (5, 9),
    (5, 6),
    (5, 48),
    (6, 5),
    (6, 18),
    (6, 40),
    (7, 9),
    (7, 34),
    (7, 20),
    (8, 3),
    (8, 12),
    (8, 48),
    (9, 3),
    (9, 20),
    (9, 40),
    (10, 1),
    (10, 2),
    (10, 4),
    (10, 8),
    (10, 16),
    (10, 32),
    (11, 49),
    (11, 38),
    (11, 11),
    (11, 28),
    (12, 37),
    (12, 25),
    (12, 42),
    (12, 22),
    (0, 0),
)
SUIT_BITS = (1, 2, 4, 8, 16, 32)
SUIT_NAMES = ("Moons", "Suns", "Waves", "Leaves", "Wyrms", "Knots")

ACTION_SIZE = {"tightwad": 36, "divers-weights": 78, "palace": 282}
PALACE_SWAP, PALACE_PLAY, PALACE_ACE, PALACE_EXCUSE, PALACE_REVEAL = 0, 53, 229, 277, 278
PALACE_COUNTS = 8
_PAIRS = {(0, 1): 0, (0, 2): 1, (0, 3): 2, (1, 2): 3, (1, 3): 4, (2, 3): 5}


def _frac(x: float, full: float) -> float:
    """x / full, kept inside [0, 1]."""
    if full <= 0 or x <= 0:
        return 0.0
    return 1.0 if x >= full else x / full


def _counts(cards, size: int, full: float) -> list:
    """Per-face counts of ``cards`` (pids), each as a fraction of ``full`` copies."""
    c = [0] * size
    for p in cards:
        f = p % DECK
        if f < size:
            c[f] += 1
    return [_frac(x, full) for x in c]


def _one_hot(i, size: int) -> list:
    v = [0.0] * size
    if i is not None and 0 <= i < size:
        v[i] = 1.0
    return v


def _rel(values: list, seat: int) -> list:
    """Seat-indexed values rotated so that index 0 is ``seat``."""
    n = len(values)
    return [values[(seat + k) % n] for k in range(n)]


def _suits(bits: int) -> list:
    return [1.0 if bits & b else 0.0 for b in SUIT_BITS]


# ---- observation vectors -----------------------------------------------------------


def obs_size(game: str, players: int) -> int:
    """Length of the vector ``encode`` gives for this game and player count."""
    if game == "tightwad":
        return 4 * BASIC + 6 + 4 + 4 * players
    if game == "divers-weights":
        return 4 + 5 * BASIC + 3 + 1 + 6 + 1 + 4 + 6 * players
    if game == "palace":
        return 3 + 4 * DECK + 2 + 4 + 1 + 1 + 6 + 1 + 4 * players
    raise ValueError(f"no encoding for game {game!r}; known: {', '.join(GAMES)}")


def _tightwad(o: dict) -> list:
    n, me = o["players"], o["seat"]
    trick = o["trick"]
    plays = trick["plays"]
    ctl = trick["control"]
    ctl_card = plays[ctl]["card"] if ctl is not None and plays else None
    earlier = [pl["card"] for t in o["tricks"] for pl in t["plays"]]
    v = _counts(o["hand"], BASIC, 2) + _counts([pl["card"] for pl in plays], BASIC, 2)
    v += _one_hot(None if ctl_card is None else ctl_card % DECK, BASIC)
    v += _counts(earlier, BASIC, 2)
    v += _suits(FACES[ctl_card % DECK][1]) if ctl_card is not None else [0.0] * 6
    rank = FACES[ctl_card % DECK][0] if ctl_card is not None else 0
    v += [
        _frac(rank, 10),
        _frac(len(plays), n - 1),
        _frac(o["trick_number"], o["tricks_in_round"] or 1),
        _frac(o["set_aside"], 72),
    ]
    v += [_frac(x, 10) for x in _rel(o["penalty_points"], me)]
    v += [_frac(x, 7) for x in _rel(o["hand_sizes"], me)]
    played = [0.0] * n
    for pl in plays:
        played[pl["seat"]] = 1.0
    v += _rel(played, me)
    ctl_seat = [0.0] * n
    if trick["controller"] is not None:
        ctl_seat[trick["controller"]] = 1.0
    v += _rel(ctl_seat, me)
    return v


_DW_PHASES = ("bid", "play", "prize", "over")
_DW_RULES = ("highest", "lowest", "none")


def _divers(o: dict) -> list:
    me = o["seat"]
    v = _one_hot(_DW_PHASES.index(o["phase"]) if o["phase"] in _DW_PHASES else None, 4)
    v += _counts(o["hand"], BASIC, 1) + _counts(o["threshold"], BASIC, 1)
    v += _counts([p for p in o["played"] if p is not None], BASIC, 1)
    gone = list(o["discarded"]) + [p for pr in o["prizes"] for p in pr]
    v += _counts(gone, BASIC, 1)
    v += _counts(o["prizes"][me], BASIC, 1)
    reveal = o["reveal"]
    v += _one_hot(_DW_RULES.index(reveal["rule"]) if reveal and reveal["rule"] in _DW_RULES else None, 3)
    v += [1.0 if reveal and me in reveal["winners"] else 0.0]
    mine = 0
    for p in o["prizes"][me]:
        mine |= FACES[p % DECK][1]
    v += _suits(mine)
    v += [_frac(o["threshold_total"], 30)]
    hands = o["hands"] or 0
    v += [
        _frac(o["trick_number"], 5),
        _frac(o["hand_number"], hands) if hands else 0.0,
        1.0 if o["bidding"] else 0.0,
        _frac(o["deck_count"], BASIC),
    ]
    v += [_frac(x, 100) for x in _rel(o["scores"], me)]
    v += [_frac(x, 40) for x in _rel(o["hand_points"], me)]
    v += [_frac(x, 5) for x in _rel(o["tricks_won"], me)]
    bids = _rel(o["bids"], me)
    v += [0.0 if b is None else 1.0 for b in bids]
    v += [0.0 if b is None else _frac(b, 5) for b in bids]
    v += [_frac(len(pr), 5) for pr in _rel(o["prizes"], me)]
    return v


_PALACE_PHASES = ("swap", "play", "over")
_PALACE_MODES = ("empty", "any", "higher", "lower")


def _palace(o: dict) -> list:
    me = o["seat"]
    mine = o["tableaux"][me]
    v = _one_hot(_PALACE_PHASES.index(o["phase"]) if o["phase"] in _PALACE_PHASES else None, 3)
    v += _counts(o["hand"], DECK, 4) + _counts(mine["face_up"], DECK, 4)
    v += _counts([c for _, c in mine["known_face_down"]], DECK, 4)
    v += _counts(o["removed"], DECK, 4)
    v += [_frac(len(o["hand"]), 20), _frac(mine["face_down"], 4)]
    ref = o["reference"]
    v += _one_hot(_PALACE_MODES.index(o["pile_mode"]) if o["pile_mode"] in _PALACE_MODES else None, 4)
    v += [_frac(FACES[ref % DECK][0], 12) if ref is not None else 0.0]
    # Cards of the top rank in a row: a fourth blows the pile up (R-P10).
    pile = o["pile"]
    run = 0
    if pile:
        top = FACES[pile[-1] % DECK][0]
        for p in reversed(pile):
            if FACES[p % DECK][0] != top:
                break
            run += 1
    v += [_frac(run, 3)]
    trump = o["trump_suit"]
    v += _one_hot(SUIT_NAMES.index(trump) if trump in SUIT_NAMES else None, 6)
    v += [_frac(o["draw_pile"], 100)]
    tabs = _rel(o["tableaux"], me)
    v += [_frac(t["hand_size"], 20) for t in tabs]
    v += [_frac(len(t["face_up"]), 4) for t in tabs]
    v += [_frac(t["face_down"], 4) for t in tabs]
    v += [1.0 if t["out"] else 0.0 for t in tabs]
    return v


_ENCODERS = {"tightwad": _tightwad, "divers-weights": _divers, "palace": _palace}


def encode(observation: dict) -> list:
    """The observation as ``obs_size(game, players)`` floats in [0, 1]."""
    game = observation["game"]
    if game not in _ENCODERS:
        raise ValueError(f"no encoding for game {game!r}; known: {', '.join(GAMES)}")
    return _ENCODERS[game](observation)


# ---- actions -----------------------------------------------------------------------


def _palace_slot(a: dict, o: dict) -> int:
    kind = a["kind"]
    if kind == "swap":
        pairs = a["swaps"]
        if not pairs:
            return PALACE_SWAP
        hand, up = o["hand"], o["tableaux"][o["seat"]]["face_up"]
        pos = [(hand.index(h), up.index(u)) for h, u in pairs]
        if len(pos) == 1:
            return 1 + 4 * pos[0][0] + pos[0][1]
        (i1, j1), (i2, j2) = pos
        return 17 + 6 * _PAIRS[(min(i1, i2), max(i1, i2))] + _PAIRS[(min(j1, j2), max(j1, j2))]
    if kind == "play":
        cards = a["cards"]
        c = min(len(cards), PALACE_COUNTS) - 1
        rank = FACES[cards[-1] % DECK][0]
        if rank == 1:
            return PALACE_ACE + PALACE_COUNTS * (cards[-1] % DECK) + c
        trump = o["trump_suit"]
        bit = SUIT_BITS[SUIT_NAMES.index(trump)] if trump in SUIT_NAMES else 0
        t = 1 if any(FACES[p % DECK][1] & bit for p in cards) else 0
        return PALACE_PLAY + 2 * PALACE_COUNTS * (rank - 2) + PALACE_COUNTS * t + c
    if kind == "excuse":
        return PALACE_EXCUSE
    return PALACE_REVEAL + a["position"]


def action_slots(observation: dict) -> list:
    """The fixed slot of each legal action, in action-id order."""
    game = observation["game"]
    legal = observation["legal_actions"]
    if game == "tightwad":
        return [a["card"] % DECK for a in legal]
    if game == "divers-weights":
        phase = observation["phase"]
        if phase == "bid":
            return [BASIC + a["bid"] for a in legal]
        return [(BASIC + 6 if phase == "prize" else 0) + a["card"] for a in legal]
    if game == "palace":
        return [_palace_slot(a, observation) for a in legal]
    raise ValueError(f"no encoding for game {game!r}; known: {', '.join(GAMES)}")


def slot_actions(observation: dict) -> dict:
    """slot -> the action id it plays now (the first legal action with that slot)."""
    out: dict = {}
    for action_id, slot in enumerate(action_slots(observation)):
        out.setdefault(slot, action_id)
    return out
