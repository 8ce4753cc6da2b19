"""Moved to ``arena.report.live`` (library code); kept so existing imports keep working."""

from arena.report.live import LiveDisplay, _ConsoleStream, run_console  # noqa: F401
