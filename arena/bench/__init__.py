"""`arena bench` as library code: the harness's measures against its targets (P1..P9, P11;
``suite``), the engine and protocol speeds (``measures``), and what they are built from:
the luck study (``luck``), a large synthetic store (``make_store``), the adaptive schedule's
simulation (``adaptive_ranking``) and in-process bot play (``bot_strength``). Package code,
so `arena bench` runs from an installed wheel; benchmarks/*.py are thin scripts over it.
What the measures play is package data too: ``SAMPLE`` holds the checkout's sample
bots (bots/*.py) and tournaments/spring.yaml, laid out as in the checkout: symlinks in the source
tree, which the wheel build turns into files (tests/bench/test_bench_package.py checks both), and bots/prompt_bot.py is P8's bot.

Below the face (``arena.cli``) and above ``arena.report``: may import every layer below.
"""

from pathlib import Path

SAMPLE = Path(__file__).resolve().parent / "sample"  # its bots/ and tournaments/, as in the checkout
