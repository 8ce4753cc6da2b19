"""The HTML pages' templates and static files, shipped as package data and made self-contained.

The templates (``templates/*.html.j2``, Jinja2) hold the markup; the CSS and JS they use are
files in ``static/``, inlined into the page at render time (``inline``), so every page is one
file that opens offline, with no server and no request. Every value a template prints is
passed through ``arena.inert.visible`` (control and bidi characters shown as escapes, so a
name cannot reverse or hide the text after it) and then HTML-escaped; only ``Markup`` (an
inlined static file, an SVG built with an element tree) is printed as it is.
"""

from __future__ import annotations

from functools import cache, lru_cache
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from arena.inert import visible


def _inert(value: Any) -> Any:
    if isinstance(value, Markup) or value is None:
        return value
    return visible(value if isinstance(value, str) else str(value), keep="\n")


@cache
def static_text(name: str) -> str:
    """A file of ``arena/report/static`` (package data), as text."""
    return resources.files("arena.report").joinpath("static").joinpath(name).read_text(encoding="utf-8")


def inline(name: str) -> Markup:
    """A static file's text, to print inside a <style> or <script> element as it is. A file
    that could close its element early is refused: the pages' own files never do."""
    text = static_text(name)
    if "</" in text.lower().replace("<\\/", ""):
        raise ValueError(f"static file {name} contains '</', which would end its element early")
    return Markup(text)


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("arena.report", "templates"),
        autoescape=True,
        finalize=_inert,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals["inline"] = inline
    return env


def render(template: str, **context: Any) -> str:
    """``templates/<template>`` rendered with ``context``."""
    return environment().get_template(template).render(**context)
