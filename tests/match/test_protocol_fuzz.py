"""No line a bot writes can raise out of the referee: every line is a valid answer or a fault.

Property-based: hypothesis feeds arbitrary bytes, deep nesting, huge numbers, NUL
bytes, invalid UTF-8, UTF-16 and byte order marks through the parsers and through a
real referee match (the line is what the seat answers), and checks that the result is
either a legal answer or a one-line ``protocol``/``illegal`` fault in the record.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.match import protocol
from arena.match.agents import RandomAgent
from arena.match.faults import BotFault, FaultKind
from arena.match.referee import play_match
from arena.tournament.schedule import MatchSpec
from games import REGISTRY

LEGAL = 5


def nested(depth: int, inner: bytes = b"0") -> bytes:
    return b"[" * depth + inner + b"]" * depth


def objects(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


def _bytes_lines() -> st.SearchStrategy[bytes]:
    valid = st.sampled_from([b"0", b"4", b'{"type":"action","action":2}', b'{"action":1}', b"3\r"])
    deep = st.builds(nested, st.integers(0, 5000)) | st.builds(objects, st.integers(0, 3000))
    deep_in_answer = st.builds(lambda d: b'{"type":"action","action":1,"x":' + nested(d) + b"}", st.integers(0, 2000))
    numbers = st.one_of(
        st.integers(-(10**60), 10**60).map(lambda n: str(n).encode()),
        st.integers(1, 6000).map(lambda n: b"9" * n),
        st.sampled_from(
            [
                b"NaN",
                b"Infinity",
                b"-Infinity",
                b"1e999",
                b"-1e400",
                b"1.0",
                b"true",
                b'{"action":NaN}',
                b'{"action":1e999}',
                b'{"action":' + b"7" * 5000 + b"}",
            ]
        ),
    )
    encodings = st.sampled_from(["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"]).flatmap(
        lambda enc: valid.map(lambda v: v.decode().encode(enc))
    )
    nul = st.builds(lambda a, b: a + b"\x00" + b, valid, st.binary(max_size=4))
    invalid_utf8 = st.builds(
        lambda v, bad: v + bad,
        valid,
        st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80", b'"\xfe"']),
    )
    junk = st.binary(max_size=300).map(lambda b: b.replace(b"\n", b" "))
    return st.one_of(valid, deep, deep_in_answer, numbers, encodings, nul, invalid_utf8, junk)


LINES = _bytes_lines()


def _one_line_protocol_or_illegal(fault: BotFault) -> None:
    assert fault.kind in (FaultKind.PROTOCOL, FaultKind.ILLEGAL), fault
    assert "\n" not in fault.detail and len(fault.detail) < 400, fault.detail
    json.dumps(fault.to_json())


@settings(max_examples=400)
@given(LINES)
def test_parse_action_answers_or_faults(line):
    try:
        action = protocol.parse_action(line, LEGAL)
    except BotFault as fault:
        _one_line_protocol_or_illegal(fault)
        return
    assert type(action) is int and 0 <= action < LEGAL
    text = line.decode("utf-8")  # accepted lines are strict UTF-8 JSON
    assert "\x00" not in text and not text.startswith("\ufeff")


@settings(max_examples=300)
@given(st.one_of(LINES, LINES.map(lambda b: b'{"type":"hello","name":"x","protocol":' + b + b"}")))
def test_parse_hello_answers_or_faults(line):
    try:
        name = protocol.parse_hello(line)
    except BotFault as fault:
        assert fault.kind is FaultKind.PROTOCOL
        assert "\n" not in fault.detail and len(fault.detail) < 400
        return
    assert isinstance(name, str) and len(name) <= 100 and name.isprintable() or name == ""
    msg = json.loads(line)
    assert type(msg.get("protocol", 1)) is int and msg.get("protocol", 1) == 1


def test_known_attacks_are_protocol_faults():
    for line in (
        nested(1000),
        objects(1000),
        b"0\x00",
        "0".encode("utf-16"),
        "1".encode("utf-16-le"),
        b"\xef\xbb\xbf1",
        b"NaN",
        b"1e999",
        b"9" * 5000,
        b"\xff",
    ):
        try:
            protocol.parse_action(line, LEGAL)
        except BotFault as fault:
            assert fault.kind is FaultKind.PROTOCOL, (line[:20], fault)
        else:
            raise AssertionError(f"{line[:20]!r} was accepted")
    for proto in (b"true", b"1.0", b"2", b'"1"', b"null"):
        try:
            protocol.parse_hello(b'{"type":"hello","protocol":' + proto + b"}")
        except BotFault as fault:
            assert "must be the integer 1" in fault.detail
        else:
            raise AssertionError(f"protocol {proto!r} was accepted")
    assert protocol.parse_hello(b'{"type":"hello","protocol":1,"name":"ok\\u001b[2J"}') == "ok[2J"


class LineAgent(RandomAgent):
    """Answers its first decision with a given raw line, then plays randomly."""

    def __init__(self, line: bytes) -> None:
        super().__init__(name="fuzzed")
        self.line, self.sent = line, False

    def answer(self, deadline):
        line, t = super().answer(deadline)
        if not self.sent:
            self.sent = True
            return self.line, t
        return line, t


@settings(max_examples=150)
@given(LINES)
def test_referee_turns_any_line_into_an_answer_or_a_fault(line):
    players = 3
    m = MatchSpec(
        match_id="fuzz",
        index=0,
        game="tightwad",
        players=players,
        options=REGISTRY["tightwad"].resolve_options(players, {}),
        deal_seed=3,
        match_seed=4,
        bots=("fuzzed", "r1", "r2"),
    )
    record = play_match(m, [LineAgent(line), RandomAgent(seed=1), RandomAgent(seed=2)])
    fault = record["faults"][0]
    first = next(d for d in record["decisions"] if d["seat"] == 0)
    if fault is None:
        assert first["status"] == "ok"
    else:
        assert fault["kind"] in ("protocol", "illegal") and "\n" not in fault["detail"]
        assert record["result"]["places"][0] == players - 1
    assert record["faults"][1] is None and record["faults"][2] is None
    json.dumps(record)
