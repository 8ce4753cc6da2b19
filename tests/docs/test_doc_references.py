"""References from the code and the examples into docs/ name sections that exist: a
``docs/page.md#anchor`` names a heading (or an explicit anchor) of that page, a
``docs/page.md, step N`` a "Step N"."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ANCHOR = re.compile(r"docs/([\w-]+\.md)#([\w-]+)")
STEP = re.compile(r"docs/([\w-]+\.md),? step (\d+)", re.IGNORECASE)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _headings(page: str) -> list[str]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return [m.group(1) for m in re.finditer(r"^#+\s+(.*)$", text, re.MULTILINE)]


def _anchors(page: str) -> set[str]:
    """The headings' anchors and the explicit ones (``<a id="adaptive"></a>``)."""
    return _anchors_of(ROOT / "docs" / page)


def _anchors_of(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    headings = re.findall(r"^#+\s+(.*)$", text, re.MULTILINE)
    return {_slug(h) for h in headings} | set(re.findall(r'<a id="([\w-]+)"></a>', text))


def _sources() -> list[Path]:
    return sorted(p for top in ("arena", "examples", "bots") for p in (ROOT / top).rglob("*.py"))


def test_every_reference_into_the_docs_names_a_section_that_exists() -> None:
    broken = []
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        for m in ANCHOR.finditer(text):
            page, anchor = m.groups()
            if not (ROOT / "docs" / page).is_file() or anchor not in _anchors(page):
                broken.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
        for m in STEP.finditer(text):
            page, n = m.groups()
            if not (ROOT / "docs" / page).is_file() or not any(
                h.lower().startswith(f"step {n}:") for h in _headings(page)
            ):
                broken.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
    assert not broken, "references to sections that do not exist: " + "; ".join(broken)


# The project's own folders: a path the docs give there names a file of the repository (a path
# under bots/ or tournaments/ may be one the reader is asked to create).
_OWN_PATH = re.compile(r"`((?:arena|games|benchmarks|examples|tests|docs|ladders|\.ci)/[\w./*-]*[\w*])/?`")


def test_every_file_the_docs_name_in_the_projects_folders_exists() -> None:
    pages = [ROOT / n for n in ("README.md", "ARCHITECTURE.md", "CONTRIBUTING.md")] + sorted(
        (ROOT / "docs").glob("*.md")
    )
    missing = [
        f"{page.name}: {m.group(1)}"
        for page in pages
        for m in _OWN_PATH.finditer(page.read_text(encoding="utf-8"))
        if not (list(ROOT.glob(m.group(1))) if "*" in m.group(1) else (ROOT / m.group(1)).exists())
    ]
    assert not missing, "the docs name files that do not exist: " + "; ".join(missing)


def test_every_link_between_the_docs_reaches_its_page_and_section() -> None:
    broken = []
    for page in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for m in re.finditer(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists() or (anchor and dest.suffix == ".md" and anchor not in _anchors_of(dest)):
                broken.append(f"{page.name}: {target}")
    assert not broken, "links that lead nowhere: " + "; ".join(broken)
