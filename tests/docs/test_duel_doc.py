"""docs/duel.md says what `arena duel` does: its options exist, its exit codes and its Elo
example are the code's, and its error-rate table is the benchmark's output format."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from arena.cli import cli
from arena.tournament import duel

DOC = (Path(__file__).resolve().parents[2] / "docs" / "duel.md").read_text(encoding="utf-8")


def test_every_option_the_doc_names_exists():
    help_text = CliRunner().invoke(cli, ["duel", "--help"]).output
    named = set(re.findall(r"`(--[a-z][a-z0-9-]*)", DOC)) | set(re.findall(r" (--[a-z][a-z0-9-]*)", DOC))
    assert {"--margin", "--elo0", "--alpha", "--beta", "--max-matches", "--field", "--results"} <= named
    bench = {"--duels", "--calibration-deals", "--statistic", "--pairing", "--unpaired"}  # benchmarks/duel_errors.py
    for option in named - bench:
        assert option in help_text, f"docs/duel.md names {option}, which arena duel does not take"


def test_exit_codes_and_the_elo_example_are_the_codes():
    assert f"| {duel.EXIT_CAPPED} | `--max-matches` was reached" in DOC
    assert f"| {duel.EXIT_INCOMPLETE} | some matches could not be played" in DOC
    shown = re.search(r"--elo0 0 --elo1 30` test D = 0 against D = ([0-9]+\.[0-9]+)", DOC)
    assert shown and float(shown.group(1)) == round(duel.elo_to_difference(30, 4), 3)
    assert f"default {duel.DEFAULT_MARGIN:g}" in DOC


def test_the_example_lines_have_the_fields_the_duel_prints(tmp_path):
    """The doc's closing status line shows what status_line prints, field by field."""

    shown = next(line for line in DOC.splitlines() if line.startswith("duel: "))
    for name in ("tightwad_heuristic.py", "random_bot.py"):  # the example's names; nothing runs
        (tmp_path / name).write_text("")
    d = duel.make_duel("tightwad", str(tmp_path / "tightwad_heuristic.py"), str(tmp_path / "random_bot.py"), players=4)
    test = d.test()
    for x in (1.0, -0.5, 0.0, 0.75):
        status = test.add(x)
    printed = duel.status_line(d, status, 32)

    def shape(text: str) -> str:
        return re.sub(r"[+-]?\d+(\.\d+)?", "#", text)

    assert shape(shown) == shape(printed), (shown, printed)
    assert "deals W-L-D 2-1-1" in printed and "LOS " in printed


def test_a_seeded_self_duels_deals_to_h0_are_the_docs():
    """Against a field a bot whose moves follow its seed gives every deal the sample 0: the deals
    the test then needs for H0 are fixed by the bets alone, and the doc states them."""
    shown = re.search(r"H0 after a few dozen\s+deals: (\d+) with three players, (\d+) with four\)", DOC)
    assert shown, "docs/duel.md no longer states the deals of a seeded self-duel"
    for players, stated in ((3, shown.group(1)), (4, shown.group(2))):
        test = duel.duel_test(players, duel.hypotheses(players), 0.05, 0.05)
        status = test.extend(0.0 for _ in range(1000))
        assert (status.decision, status.n) == ("H0", int(stated))
