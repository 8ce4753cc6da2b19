"""What pip's refusal to install a bot folder's requirements means, in the arena's words.

The arena installs binary wheels only (``--only-binary :all:``, so no package's own setup
code runs), and pip then says the same thing for a package released only as source, a wheel
for another Python or platform, and a name the index does not have: "Could not find a
version that satisfies the requirement X (from versions: none)". That reads as a typo in the
pin; ``explain`` names the wheel rule and the fixes instead. (arena.match.botfolder builds the
message this rewrites: it is kept apart from it only while that file changes elsewhere.)
"""

from __future__ import annotations

import re
import sys
import sysconfig

from arena.match.botfolder import BotFolderError

_NONE = re.compile(
    r"^(?P<file>.+?): pip could not install .*\(ERROR: Could not find a version that satisfies the "
    r"requirement (?P<req>\S+) \(from versions: none\)\)"
)


def explain(exc: BotFolderError) -> BotFolderError:
    """``exc`` itself, or for pip's "(from versions: none)" one line saying that only binary
    wheels are installed and what to do about a package without one."""
    m = _NONE.match(str(exc))
    if m is None:
        return exc
    req = m.group("req")
    here = f"Python {sys.version_info[0]}.{sys.version_info[1]} on {sysconfig.get_platform()}"
    return BotFolderError(
        f"{m.group('file')}: pip found no binary wheel of {req} for {here} (the arena installs wheels only, "
        "never a package's setup code, so a package released only as source cannot be installed); pin a "
        f"version that has a wheel for this Python, put a wheel you built (pip wheel {req}) in a folder "
        "named by PIP_FIND_LINKS, or copy the package's code into the bot folder; if it should have one, "
        "check the name and the index pip reaches (PIP_INDEX_URL)"
    )
