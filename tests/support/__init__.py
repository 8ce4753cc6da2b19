"""What tests in several folders share: record_factory (stored records without playing) and bots/
(small fixture bots, each with one behaviour a test needs)."""

from __future__ import annotations

from pathlib import Path

SUPPORT = Path(__file__).parent
BOTS = SUPPORT / "bots"
