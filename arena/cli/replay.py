"""Moved to ``arena.report.replay`` (library code); kept so existing imports keep working."""

from arena.report.replay import (ReplayMismatch, RecordedAgent, load_record, mark_shown, takeover,  # noqa: F401
                                 verify_record)
