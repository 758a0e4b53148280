"""A caption names the run's settings from its config, never as a literal (docs/architecture.md §11, "Settings
stated once"): no string of a notebook or of its page helpers writes a training or size setting with a value the
config holds ("lr 0.001", "batch 30", "width 100"), except where the text quotes the paper or the authors' code
("the code used width 1000"). Docstrings are left out: their examples show the form, not a setting."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from conftest import PAPERS, REPO

CONFIG = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
# How a caption writes the setting of each key.
WORDS = {"lr": r"lr", "momentum": r"momentum", "weight_decay": r"weight decay", "batch_size": r"batch(?: size)?",
         "epochs": r"epochs?", "width": r"width", "depth": r"depth", "runs": r"runs?", "seed": r"seed"}
# Words just before a value that say it is the paper's or its code's, not this run's.
QUOTED = re.compile(r"paper|code|caption says|original|authors", re.IGNORECASE)


def config_values(node, found: dict[str, set]) -> dict[str, set]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in WORDS and isinstance(value, (int, float)) and not isinstance(value, bool):
                found.setdefault(key, set()).add(value)
            config_values(value, found)
    elif isinstance(node, list):
        for value in node:
            config_values(value, found)
    return found


VALUES = config_values({slug: CONFIG[slug] for slug in PAPERS}, {})


def strings(source: str):
    """(line, text) of every string constant of a module but its docstrings."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


def literal_settings(source: str) -> list[str]:
    found = []
    for line, text in strings(source):
        for key, word in WORDS.items():
            for value in VALUES.get(key, ()):
                for written in {str(value), f"{value:g}", f"{value:.0e}".replace("e-0", "e-").replace("e+0", "e")}:
                    for match in re.finditer(rf"\b{word}\s*[=:]?\s*{re.escape(written)}(?![\d.])", text, re.I):
                        if not QUOTED.search(text[max(0, match.start() - 60):match.start()]):
                            found.append(f"line {line}: {match.group(0)!r} in {text[:80]!r}")
    return found


def test_the_check_finds_a_literal_setting_and_passes_a_quote_of_the_paper():
    lr = next(iter(VALUES["lr"]))
    assert literal_settings(f'caption = "SGD lr {lr:g}"')
    assert not literal_settings(f'caption = "the paper used lr {lr:g}"')
    assert not literal_settings(f'def f():\n    """lr {lr:g}"""')


@pytest.mark.parametrize("source", [*(f"notebooks/{slug}.py" for slug in PAPERS),
                                    *(f"src/isonorm/report/pages/{slug}.py" for slug in PAPERS)])
def test_no_caption_writes_a_setting_as_a_literal(source):
    path = REPO / source
    if path.exists():
        assert not literal_settings(path.read_text(encoding="utf-8")), literal_settings(path.read_text())
