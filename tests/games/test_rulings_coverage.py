"""Every ruling of RULINGS.md (the settled rules) is named by at least one other test.

The ids are listed here because RULINGS.md lives beside the repository, not in it; when
it is there (../shared/RULINGS.md, as in the project's workspace) the list must match it.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
RULINGS = TESTS.parents[1] / "shared" / "RULINGS.md"
RULING_IDS = "R-D1 R-D2 R-D3 R-D4 R-D5 R-D6 R-D7 R-D8 R-D9 R-D10 R-P1 R-P2 R-P3 R-P4 R-P5 R-P6 R-P7 R-P8 R-P9 R-P10 R-P11 R-P12 R-P13 R-P14 R-P15 R-P16 R-P17 R-T1 R-T2 R-T3 R-T4 R-T5 R-T6 R-T7 R-T8 ".split()


@functools.cache
def _test_sources() -> str:
    return "\n".join(
        p.read_text(encoding="utf-8") for p in sorted(TESTS.rglob("*.py")) if p.resolve() != Path(__file__).resolve()
    )


@pytest.mark.parametrize("ruling", RULING_IDS)
def test_every_ruling_is_named_by_a_test(ruling: str) -> None:
    assert re.search(rf"\b{re.escape(ruling)}\b", _test_sources()), f"no test names {ruling}"


def test_the_list_matches_rulings_md_when_present() -> None:
    if not RULINGS.is_file():
        pytest.skip(f"{RULINGS} is not beside this checkout")
    found = set(re.findall(r"\bR-[A-Z]+\d+\b", RULINGS.read_text(encoding="utf-8")))
    assert found == set(RULING_IDS)
