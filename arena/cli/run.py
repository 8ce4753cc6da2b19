"""Moved to ``arena.report.run`` (library code); kept so existing imports keep working."""

from arena.report.run import incomplete_lines, render_plan, run_and_publish  # noqa: F401
