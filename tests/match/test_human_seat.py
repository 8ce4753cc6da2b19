"""The human seat, driven through stdin in all three games: each decision drawn once, forced
moves played without a prompt, cards shown with ranks and suits, and no card the seat may not
see ever printed (checked against the seat's own observation at every decision)."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest

from arena.match.human_view import SUIT_SYMBOLS, rank_label
from arena.tournament.play import play_one
from games import get_game

GAMES = [("tightwad", 3, 4), ("divers-weights", 3, 2), ("palace", 3, 3)]
HEADER = re.compile(r"decision (\d+) · your turn|decision (\d+): your only legal move|─ match over ─")


def _ints(value: Any) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, list):
        return [i for v in value for i in _ints(v)]
    return []


def visible_cards(obs: dict[str, Any]) -> set[int]:
    """Every card id an observation shows its seat (and nothing else: no counts, seats or slots)."""
    seen: set[int] = set()

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if k in (
                    "hand",
                    "card",
                    "cards",
                    "threshold",
                    "played",
                    "prizes",
                    "pile",
                    "removed",
                    "face_up",
                    "penalty_cards",
                    "discarded",
                    "trump_ace",
                    "reference",
                    "from_face_up",
                ):
                    seen.update(_ints(v))
                    if isinstance(v, (dict, list)):
                        walk(v)
                elif k == "known_face_down":
                    seen.update(c for _slot, c in v)
                elif k == "swaps" and v:
                    seen.update(c for item in v for c in (item[1:] if len(item) == 3 else item))
                else:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(obs)
    return seen


def drawn(card: dict[str, Any]) -> str:
    return rank_label(card["rank"]) + "".join(SUIT_SYMBOLS[s] for s in card["suits"]) + " " + card["name"]


def play_as_human(game: str, players: int, seed: int, **kw: Any) -> tuple[str, dict[str, Any]]:
    out = io.StringIO()
    answers = io.StringIO("".join(f"{i % 2}\n" for i in range(5000)))  # 0 or 1: legal wherever it is asked
    record = play_one(
        game,
        ["builtin:random"] * (players - 1),
        seed=seed,
        humans=[0],
        sandbox_level="none",
        out=out,
        stdin=answers,
        **kw,
    )
    return out.getvalue(), record


@pytest.mark.parametrize("game,players,seed", GAMES)
def test_the_seat_draws_each_decision_once_with_ranks_and_never_a_hidden_card(game, players, seed):
    text, record = play_as_human(game, players, seed)
    assert record["seats"][0]["fault"] is None, record["seats"][0]["fault"]
    state = get_game(game).new_game(players, record["deal_seed"], record["options"])
    cards = {c["id"]: c for c in state.card_table()}
    names = {cid: re.compile(re.escape(c["name"]) + r"(?![#\w])") for cid, c in cards.items()}
    mine: dict[int, dict[str, Any]] = {}  # the seat's observation at each of its decisions
    for d in record["decisions"]:
        if d["seat"] == 0:
            mine[d["n"]] = state.observation(0)
        state.apply(d["seat"], d["action"])
    final = state.observation(0)

    marks = list(HEADER.finditer(text))
    asked = [n for n, o in mine.items() if len(o["legal_actions"]) > 1]
    forced = [n for n, o in mine.items() if len(o["legal_actions"]) == 1]
    assert asked, "the test needs real choices"
    # each decision drawn exactly once, forced ones as a note with no prompt
    assert [int(m.group(1)) for m in marks if m.group(1)] == asked
    assert [int(m.group(2)) for m in marks if m.group(2)] == forced
    assert text.count("choose 0-") == len(asked)
    assert f"#{asked[0]} · seat 0" not in text  # the trace does not repeat it
    assert marks[-1].group(0).strip("─ ") == "match over" and "match over: you placed" in text

    # no card outside the seat's own observation, section by section; the start shows none
    bounds = [m.start() for m in marks] + [len(text)]
    assert not [cid for cid, rx in names.items() if rx.search(text[: bounds[0]])]
    for m, start, end in zip(marks, bounds, bounds[1:]):
        n = int(m.group(1) or m.group(2)) if (m.group(1) or m.group(2)) else None
        obs = final if n is None else mine[n]
        section = text[start:end]
        shown = {cid for cid, rx in names.items() if rx.search(section)}
        assert shown <= visible_cards(obs), (n, [cards[c]["name"] for c in shown - visible_cards(obs)])
        if n in asked:  # the hand, each card with its rank and suits
            hand_line = section[section.index("your hand:") : section.index("[0]")]
            for cid in obs["hand"]:
                assert drawn(cards[cid]) in " ".join(hand_line.split()), cards[cid]["name"]
    assert "A" in {rank_label(cards[c]["rank"]) for c in cards} and " 1" + SUIT_SYMBOLS["Moons"] not in text


def test_the_news_tells_how_each_trick_ended_and_the_penalty():
    text, record = play_as_human("tightwad", 3, 4)
    assert "since your last move:" in text and "→ won by" in text
    assert re.search(r"round \d+ over: .* took .* as a penalty \(\d+ points\)", text)
    assert "penalty points" in text


def test_reveal_shows_the_others_but_still_draws_the_persons_decisions_once():
    text, record = play_as_human("tightwad", 3, 4, reveal=True)
    others = [d for d in record["decisions"] if d["seat"] != 0]
    assert all(f"#{d['n']} · seat {d['seat']} (random)" in text for d in others)
    assert not [d for d in record["decisions"] if d["seat"] == 0 and f"#{d['n']} · seat 0" in text]


def test_digits_int_refuses_are_asked_again_not_an_arena_crash():
    """'²' and '①' pass str.isdigit() and a 5,000-digit answer passes it too, but int() refuses
    them all: the seat crashed the whole `arena play` with a ValueError."""
    out = io.StringIO()
    bad = ["²", "①", "9" * 5000]
    answers = io.StringIO("".join(f"{b}\n" for b in bad) + "0\n" * 400)
    record = play_one(
        "palace", ["builtin:random"] * 2, seed=3, humans=[0], sandbox_level="none", out=out, stdin=answers
    )
    assert record["seats"][0]["fault"] is None
    text = out.getvalue()
    for b in bad:
        assert f"'{b}' is not a choice" in text
