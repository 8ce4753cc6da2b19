"""`arena play --option key=value`: plain values only, one line naming the pair otherwise."""

from __future__ import annotations

import pytest

from arena.errors import ArenaError
from arena.tournament.play import OPTION_TEXT_LIMIT, faulted_bots, parse_options


def test_values_are_yaml_scalars_and_an_empty_value_is_none():
    assert parse_options(["bidding=true", " decks = 3", "name=x=y", "empty="]) == {
        "bidding": True,
        "decks": 3,
        "name": "x=y",
        "empty": None,
    }


@pytest.mark.parametrize(
    ("pair", "says"),
    [
        ("bidding", "expected key=value"),
        ("=3", "expected key=value"),
        ("decks=[1, 2]", "not a plain value"),
        ("decks={a: 1}", "not a plain value"),
        ("decks=: :", "not a plain value"),
        ("decks=" + "9" * (OPTION_TEXT_LIMIT + 1), "longer than"),
    ],
)
def test_a_bad_pair_is_one_line_naming_it(pair: str, says: str):
    with pytest.raises(ArenaError) as err:
        parse_options([pair])
    assert says in str(err.value) and "\n" not in str(err.value) and "--option" in str(err.value)


def test_faulted_bots_names_bot_seats_only():
    record = {
        "seats": [{"bot": "a"}, {"bot": "me"}, {"bot": "c"}],
        "faults": [{"kind": "timeout"}, {"kind": "crash"}, None],
    }
    assert faulted_bots(record, humans=[1]) == ["seat 0 (a): timeout"]
    assert faulted_bots(record, humans=[]) == ["seat 0 (a): timeout", "seat 1 (me): crash"]


def test_faulted_bots_say_the_decision_replay_from_takes():
    # a bot author reproduces a fault with `arena replay REC --from D --bot SEAT=fixed.py`: D is here
    record = {"seats": [{"bot": "a"}, {"bot": "b"}], "faults": [None, {"kind": "crash", "decision": 14}]}
    assert faulted_bots(record, humans=[]) == ["seat 1 (b): crash at decision 14"]
