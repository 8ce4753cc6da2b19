"""Without the rl extra, importing the environment or the policy says in one line what to
install (runs whether or not the extra is installed: the missing package is blocked)."""

from __future__ import annotations

import pytest

from tests.support.missing_extra import assert_one_line_naming_the_install


@pytest.mark.parametrize(
    "module,missing",
    [
        ("arena.rl.env", "pettingzoo"),
        ("arena.rl.env", "gymnasium"),
        ("arena.rl.env", "numpy"),
        ("arena.rl.policy", "numpy"),
    ],
)
def test_a_missing_extra_is_one_line_naming_the_install(module, missing):
    assert_one_line_naming_the_install(module, missing, "rl")
