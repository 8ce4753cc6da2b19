"""A luck baseline helper that fails as a broken install would (test_luck_leaderboard.py)."""

raise RuntimeError("engine exploded in a helper")
