"""Without the openspiel extra, ``import arena.openspiel`` says in one line what to install
(runs whether or not the extra is installed: the missing package is blocked)."""

from __future__ import annotations

import pytest

from tests.support.missing_extra import assert_one_line_naming_the_install


@pytest.mark.parametrize("missing", ["pyspiel", "numpy"])
def test_a_missing_extra_is_one_line_naming_the_install(missing):
    assert_one_line_naming_the_install("arena.openspiel", missing, "openspiel")
