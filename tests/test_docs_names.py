"""What the architecture pages say about names and paths is true: every module, function, class, constant and file
they name in code exists (docs/architecture.md §11). A rename that leaves a page behind fails here."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from conftest import REPO

PAGES = ["docs/architecture.md", "docs/papers.md", "docs/adding.md"]
SRC = REPO / "src" / "isonorm"
CODE = re.compile(r"`([^`\n]+)`")
DOTTED = re.compile(r'^"?(isonorm(?:\.\w+)+)(?::(\w+))?"?(?:\(.*\))?$')
FILE = re.compile(r"^[\w./-]+\.(?:py|smk|yaml|md|rst|csv|parquet|sh|txt)$|^[\w./-]+/$")
CALL_OR_ATTRIBUTE = re.compile(r"^(?:(\w+)\.)?(\w+)(?:\(.*\))?$")
OUTPUT_ROOTS = ("results/", "report/", "logs/", "resources/", "data/raw/")
OUTPUT_NAMES = ("claims.parquet", "scoreboard.csv")  # written by every run, under its results root
SNAKEMAKE = {"report", "expand", "directory", "temp"}  # Snakemake's own functions
LABEL = re.compile(r"^[A-Z]\d{1,2}$|^[A-Z]-|^[A-Z]\.\d")  # a decision's label (docs/decisions, tests/test_docs.py)


def definitions() -> dict[str, set[str]]:
    """{module file stem: names it defines}, over src/isonorm and rules/*.smk (def, class, NAME =)."""
    defined: dict[str, set[str]] = {}
    for path in [*SRC.rglob("*.py"), *(REPO / "rules").glob("*.smk")]:
        text = path.read_text(encoding="utf-8")
        names = set(re.findall(r"^\s*(?:def|class) (\w+)", text, re.MULTILINE))
        names |= {name for names in re.findall(r"^([A-Z_][A-Z0-9_]*(?:, [A-Z_][A-Z0-9_]*)*)\s*[:=]", text, re.MULTILINE)
                  for name in names.split(", ")}
        names |= set(re.findall(r"^\s+def (\w+)", text, re.MULTILINE))
        defined.setdefault(path.stem, set()).update(names)
    return defined


DEFINED = definitions()
EVERYWHERE = set().union(*DEFINED.values())


def resolves(dotted: str, attribute: str | None) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):  # the longest importable module, the rest attributes
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in [*parts[cut:], *([attribute] if attribute else [])]:
            if not hasattr(obj, name):
                try:
                    obj = importlib.import_module(f"{obj.__name__}.{name}")
                    continue
                except (ImportError, AttributeError):
                    return False
            obj = getattr(obj, name)
        return True
    return False


def problems(text: str) -> list[str]:
    found = []
    for token in CODE.findall(text):
        token = token.strip()
        if "<" in token or "*" in token or " " in token.split("(")[0]:
            continue  # a pattern (`rules/<slug>.smk`), a command or a phrase
        dotted = DOTTED.match(token)
        if dotted:
            if not resolves(dotted.group(1), dotted.group(2)):
                found.append(f"{token}: not importable")
        elif FILE.match(token):
            if token.startswith(OUTPUT_ROOTS) or token in OUTPUT_NAMES:
                continue  # an output, made by a run
            if "/" not in token.rstrip("/"):
                if not any(REPO.rglob(token)):
                    found.append(f"{token}: no file of that name")
            elif not any((root / token).exists() for root in (REPO, SRC)):
                found.append(f"{token}: no such file or folder")
        elif LABEL.match(token):
            continue
        elif CALL_OR_ATTRIBUTE.match(token) and ("(" in token or "." in token or token.isupper() or "_" in token):
            module, name = CALL_OR_ATTRIBUTE.match(token).groups()
            if module and module in DEFINED and name not in DEFINED[module] and name not in EVERYWHERE:
                found.append(f"{token}: {module} defines no {name}")
            elif not module and (token.isupper() or "(" in token) and name not in EVERYWHERE | SNAKEMAKE:
                found.append(f"{token}: defined nowhere in src/ or rules/")
    return found


def test_the_checker_catches_a_stale_name():
    assert problems("`isonorm.train.train_epochs`, `rules/common.smk`, `register_results()`") == []
    assert len(problems("`isonorm.train.no_such_thing`, `rules/gone.smk`, `gone_helper()`, `PAPER_GONE`")) == 4


@pytest.mark.parametrize("page", PAGES)
def test_every_name_and_path_the_page_gives_exists(page):
    assert not problems((REPO / page).read_text(encoding="utf-8")), problems((REPO / page).read_text(encoding="utf-8"))
