"""Adding an item to an existing paper takes the places docs/adding.md lists for it, and nothing else: the edits of
tests/data/new_item (a data-free item of meterez2024, `meterez2024-figx1`) are applied to a copy of the workflow,
and the run finds the item in the report with its verdict."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import PAPER, REPO, copy_workflow, snakemake
from test_example_paper import recipe_places

NEW_ITEM = REPO / "tests" / "data" / "new_item"
ITEM = "meterez2024-figx1"


def edits() -> list[dict]:
    return yaml.safe_load((NEW_ITEM / "edits.yaml").read_text(encoding="utf-8"))


def apply(edit: dict, workdir: Path) -> None:
    target = workdir / edit["file"]
    if "new" in edit:
        shutil.copy2(NEW_ITEM / edit["new"], target)
        return
    text = "".join(" " * edit.get("indent", 0) + line if line.strip() else line
                   for line in edit["text"].splitlines(keepends=True))
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    anchor = edit.get("after") or edit.get("before") or edit.get("replace")
    if anchor is None:
        lines.append(text)
    else:
        (at,) = [i for i, line in enumerate(lines) if line.rstrip("\n") == anchor]  # exactly one such line
        lines[at:at + 1] = {"after": [lines[at], text], "before": [text, lines[at]], "replace": [text]}[
            next(key for key in ("after", "before", "replace") if key in edit)]
    target.write_text("".join(lines), encoding="utf-8")


def test_the_recipe_lists_every_place_of_an_item_and_the_example_item_takes_each():
    places = recipe_places("An item in an existing paper")
    files = {edit["file"] for edit in edits()}
    patterns = [re.escape(place.replace("<slug>", "meterez2024")).replace(re.escape("<module>"), r"\w+")
                for place in places]
    assert all(any(re.fullmatch(p, f) for p in patterns) for f in files), (sorted(files), places)
    assert all(any(re.fullmatch(p, f) for f in files) for p in patterns), (sorted(files), places)
    assert len(files) == len(places) <= 7


@pytest.mark.integration
def test_the_new_item_is_in_the_report_with_its_verdict(tmp_path):
    workdir = copy_workflow(tmp_path)
    for edit in edits():
        apply(edit, workdir)
    # the copy's src/ first: its new module is what `import isonorm.experiments.meterez2024.example_item` must find
    env = {"PYTHONPATH": os.pathsep.join([str(workdir / "src"), os.environ.get("PYTHONPATH", "")])}
    done = snakemake(workdir, "--cores", "2", "--config", "papers=[meterez2024]", "compute=data-free", env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    board = pd.read_csv(workdir / PAPER["results"] / "scoreboard.csv").set_index(["item", "quantity"])
    assert board.loc[(ITEM, "phi_d16"), "verdict"] in ("match", "mismatch", "inconclusive")
    page = (workdir / PAPER["report"] / "meterez2024.html").read_text(encoding="utf-8")
    assert f'id="{ITEM}"' in page and "isonorm.experiments.meterez2024.example_item:figx1" in page
    assert (workdir / PAPER["report"] / "meterez2024" / f"{ITEM}.png").is_file()
