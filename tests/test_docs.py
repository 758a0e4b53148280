"""The documentation stands on its own: every citation resolves inside the repository, nothing points outside
it, the README stays a short front door and docs/README.md lists every page (docs/architecture.md §11, "Citations")."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
README_MAX_LINES = 100
TEXT_SUFFIXES = {".py", ".smk", ".yaml", ".yml", ".md", ".rst", ".txt", ".toml", ".sh", ".cfg", ".json", ""}

# Labels of docs/decisions/<slug>.md (each paper's letter, which its file declares as "letter **A**": A = lu2024,
# B = daneshmand2021, C = meterez2024, D = joudaki2023; X = cross-cutting) and of docs/decisions/metrics.md; a
# heading starts with its label ("### D7. …", "### C.0 — …"), or an anchor <a id="…"></a> declares one. An item's
# section is headed by its full id instead ("### joudaki2023-fig4 — …"; two ids where one section covers both),
# and a citation of an item is its id; the old letter form (a capital, a dash, the figure's name) fails as one.
LETTERS = "".join(sorted(set(re.findall(r"letter \*\*([A-Z])\*\*", "".join(
    p.read_text(encoding="utf-8") for p in (DOCS / "decisions").glob("*.md"))))))
SECTION = rf"[{LETTERS}]-(?:App)?(?:Fig|Table)[A-Za-z0-9]+|[{LETTERS}]-AppH|[{LETTERS}]\.(?:0|Z)|A\.1\.[1-4]"
DECISION = rf"[{LETTERS}X]\d{{1,2}}"
HEADING = re.compile(rf"^#+\s+({SECTION}|{DECISION}|M\d[a-z]?)(?:\s+[—-]|\.|\s*$)", re.M)
ITEM_ID = r"(?:daneshmand2021|joudaki2023|lu2024|meterez2024)-[a-z0-9]+(?:-[a-z0-9]+)*"
ITEM_HEADING = re.compile(rf"^#+\s+((?:{ITEM_ID})(?:,\s*{ITEM_ID})*)(?:\s+\([a-z]\))?\s+—", re.M)
ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
ARCHITECTURE_HEADING = re.compile(r"^## (\d+)\. ", re.M)

# What a citation looks like in code, config, notebooks and docs.
CITED_SECTION = re.compile(rf"(?<![\w.-])({SECTION})(?![\w-])")
CITED_DECISION = re.compile(
    rf"(?:\bdecisions?\s+|\[|\((?=[{LETTERS}X]\d{{1,2}}[,;)\]]))((?:{DECISION})(?:(?:\s*[,;/]\s*|\s*[–-]\s*|\s+and\s+)(?:{DECISION}))*)"
)
CITED_ITEM = re.compile(rf"(?<![\w/.-])({ITEM_ID})(?![\w-])")
CITED_METRIC = re.compile(r"\bmetrics(?:\.md)?\s+(M\d[a-z]?)")
CITED_ARCHITECTURE = re.compile(r"\barchitecture(?:\.md)? §(\d+)")
# Forms that pointed at material outside the repository; none may remain.
OUTSIDE = re.compile(r"\.\./shared|shared/(?:spec|papers|notes|hooks|DESIGN)|\bDESIGN(?:\.md)? ?\d|\bDESIGN\.md")
UNRESOLVABLE = re.compile(r"\bdecisions?\s+\d|\bspec (?:[A-D][-.]\w|\(?5[a-d]|\d{3}/|decision|lu2024|daneshmand2021|"
                          r"meterez2024|joudaki2023|metrics)")


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True,
                            text=True, check=True).stdout.split()
    files = []
    for name in listed:
        path = REPO / name
        if path.is_file() and path.suffix in TEXT_SUFFIXES and "tests/data/" not in name:
            files.append(path)
    return files


def defined_labels() -> set[str]:
    labels: set[str] = set()
    for doc in (DOCS / "decisions").glob("*.md"):
        text = doc.read_text(encoding="utf-8")
        labels.update(HEADING.findall(text))
        labels.update(item for ids in ITEM_HEADING.findall(text) for item in re.split(r",\s*", ids))
        labels.update(ANCHOR.findall(text))
    return labels


def expand_decisions(group: str) -> list[str]:
    """``C3, C4`` → [C3, C4]; ``C1–C17`` → [C1, …, C17]."""
    out: list[str] = []
    for part in re.split(r"\s*[,;/]\s*|\s+and\s+", group):
        bounds = re.split(r"\s*[–-]\s*", part)
        if len(bounds) == 2:
            letter = bounds[0][0]
            out += [f"{letter}{n}" for n in range(int(bounds[0][1:]), int(bounds[1][1:]) + 1)]
        else:
            out.append(part)
    return out


def citations(text: str, items: bool = True) -> set[str]:
    """The labels ``text`` cites; with ``items``, every item id it names too (tests make up ids of their own)."""
    cited = set(CITED_SECTION.findall(text)) | set(CITED_METRIC.findall(text))
    if items:
        cited |= set(CITED_ITEM.findall(text))
    for group in CITED_DECISION.findall(text):
        cited.update(expand_decisions(group))
    return cited


def test_the_decisions_define_every_paper_letter():
    """Each paper's decisions are numbered from 1 without a gap (no count to keep in step anywhere), and its item
    sections are headed by the items' full ids."""
    labels = defined_labels()
    for letter in LETTERS.replace("M", ""):
        numbers = sorted(int(label[1:]) for label in labels if re.fullmatch(rf"{letter}\d+", label))
        if letter != "X" or numbers:
            assert numbers and numbers == list(range(1, numbers[-1] + 1)), (letter, numbers)
    assert {"A.1.1", "B.0", "C.0", "D.0", "M1", "M5", "lu2024-table5", "daneshmand2021-appfig7b"} <= labels


def test_every_citation_resolves_to_a_section_under_docs():
    labels = defined_labels()
    sections = set(ARCHITECTURE_HEADING.findall((DOCS / "architecture.md").read_text(encoding="utf-8")))
    unresolved = []
    for path in tracked_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for label in sorted(citations(text, items=not path.is_relative_to(REPO / "tests")) - labels):
            unresolved.append(f"{path.relative_to(REPO)}: {label}")
        for number in sorted(set(CITED_ARCHITECTURE.findall(text)) - sections):
            unresolved.append(f"{path.relative_to(REPO)}: architecture §{number}")
    assert not unresolved, "citations without a section under docs/:\n" + "\n".join(unresolved)


def test_nothing_points_outside_the_repository():
    offending = []
    for path in tracked_text_files():
        # .ci/run alone may hand the CI machine's real data sets to the tests (ISONORM_REAL_DATA, docs/data.md)
        if path in (Path(__file__), REPO / ".ci" / "run"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if OUTSIDE.search(line) or UNRESOLVABLE.search(line):
                offending.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert not offending, "references to material outside the repository:\n" + "\n".join(offending)


def test_readme_is_a_short_front_door_whose_links_exist():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if not target.startswith(("http://", "https://")):
            assert (REPO / target).exists(), target


LINK = re.compile(r"\]\(([^)#\s]*)(#[^)\s]*)?\)")


def linked_pages(page: Path) -> set[Path]:
    """The files under the repository that ``page`` links to (web addresses and in-page anchors aside)."""
    text = page.read_text(encoding="utf-8")
    return {(page.parent / target).resolve() for target, _ in LINK.findall(text)
            if target and not target.startswith(("http://", "https://"))}


def test_the_docs_index_lists_every_page():
    """docs/README.md links every page under docs/ and benchmarks/README.md: a page added without an entry there
    fails here. A page in a folder of docs/ may instead be listed by that folder's own README (decisions/README.md
    lists the papers' files), when docs/README.md links that README."""
    index = DOCS / "README.md"
    listed = linked_pages(index)
    for folder_index in [page for page in listed if page.name == "README.md" and page.parent != DOCS.resolve()
                         and page.is_relative_to(DOCS.resolve())]:
        listed |= {page for page in linked_pages(folder_index) if page.is_relative_to(folder_index.parent)}
    missing = [str(page.relative_to(REPO)) for page in sorted(DOCS.rglob("*.md"))
               if page != index and page.resolve() not in listed]
    assert not missing, "pages docs/README.md does not list: " + ", ".join(missing)
    assert (REPO / "benchmarks" / "README.md").resolve() in listed, "docs/README.md does not list benchmarks/README.md"


def anchors(page: Path) -> set[str]:
    """The anchors a Markdown page defines: its headings' GitHub slugs (lower case, punctuation dropped, spaces to
    hyphens, a repeated slug numbered -1, -2, …) and its ``<a id="…"></a>``."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    found, seen = set(ANCHOR.findall(text)), {}
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, re.M):
        heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found


@pytest.mark.parametrize("page", ["README.md", "docs/README.md", "benchmarks/README.md"])
def test_the_front_pages_anchors_exist(page):
    """A link to a section (`benchmarks/README.md#suite-and-run-times`) lands on one: the front page, the docs' index
    and the benchmarks' page point into sections, which a renamed heading would leave dangling."""
    path = REPO / page
    dangling = []
    for target, anchor in LINK.findall(path.read_text(encoding="utf-8")):
        if not anchor or target.startswith(("http://", "https://")):
            continue
        linked = (path.parent / target) if target else path
        if linked.suffix == ".md" and anchor[1:] not in anchors(linked):
            dangling.append(f"{target}{anchor}")
    assert not dangling, f"{page} links to sections that do not exist: {', '.join(dangling)}"


@pytest.mark.parametrize("doc", sorted(p.name for p in DOCS.glob("*.md")))
def test_links_between_docs_exist(doc):
    text = (DOCS / doc).read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if not target.startswith(("http://", "https://")):
            assert (DOCS / target).exists(), f"{doc} links to missing {target}"
