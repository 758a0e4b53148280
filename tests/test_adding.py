"""The recipe of docs/adding.md holds: its places and nothing else make a new item of an existing paper and a new
paper. One copy of the workflow gets both, as the recipe says: the edits of tests/data/new_item (a data-free item
of meterez2024, `meterez2024-figx1`) and the one-item paper of tests/data/example_paper (its files in place, its
section appended to config.yaml and its slug added to `papers:`). One data-free run of the two papers then finds
each item in the report with its verdict."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import PAPER, REPO, copy_workflow, snakemake

EXAMPLE = REPO / "tests" / "data" / "example_paper"
NEW_ITEM = REPO / "tests" / "data" / "new_item"
SLUG = "example2099"
EXAMPLE_ITEM, NEW = f"{SLUG}-fig1", "meterez2024-figx1"
# A places table of docs/adding.md: a row per place, its path in code with <slug> for the paper's slug.
PLACE = re.compile(r"^\| \d+ \| `([^`]+)` \|", re.MULTILINE)


def recipe_places(section: str) -> list[str]:
    """The places of the table under the heading ``## <section>`` of docs/adding.md."""
    text = (REPO / "docs" / "adding.md").read_text(encoding="utf-8")
    return PLACE.findall(text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0])


def edits() -> list[dict]:
    return yaml.safe_load((NEW_ITEM / "edits.yaml").read_text(encoding="utf-8"))


def test_the_recipe_lists_every_place_of_a_new_paper_and_the_example_takes_each_once():
    places = recipe_places("A new paper")
    assert 1 <= len(places) <= 5, places
    files = sorted(str(p.relative_to(EXAMPLE)) for p in EXAMPLE.rglob("*") if p.is_file())
    assert files == sorted(place.replace("<slug>", SLUG) for place in places)


def test_the_recipe_lists_every_place_of_an_item_and_the_example_item_takes_each():
    places = recipe_places("An item in an existing paper")
    files = {edit["file"] for edit in edits()}
    patterns = [re.escape(place.replace("<slug>", "meterez2024")).replace(re.escape("<module>"), r"\w+")
                for place in places]
    assert all(any(re.fullmatch(p, f) for p in patterns) for f in files), (sorted(files), places)
    assert all(any(re.fullmatch(p, f) for f in files) for p in patterns), (sorted(files), places)
    assert len(files) == len(places) <= 5


def add_example_paper(workdir: Path) -> None:
    """A new paper: its files in place, its section appended to config.yaml and its slug added to `papers:`."""
    for source in EXAMPLE.rglob("*"):
        if source.is_file() and source.name != "config.yaml":
            target = workdir / source.relative_to(EXAMPLE)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    config = workdir / "config.yaml"
    text = re.sub(r"^(papers: \[[^\]]*)\]", rf"\1, {SLUG}]", config.read_text(encoding="utf-8"), count=1,
                  flags=re.MULTILINE)
    config.write_text(text + "\n" + (EXAMPLE / "config.yaml").read_text(encoding="utf-8"), encoding="utf-8")


def apply(edit: dict, workdir: Path) -> None:
    """One edit of tests/data/new_item/edits.yaml (its header says what each key does)."""
    target = workdir / edit["file"]
    if "new" in edit:
        shutil.copy2(NEW_ITEM / edit["new"], target)
        return
    text = "".join(" " * edit.get("indent", 0) + line if line.strip() else line
                   for line in edit["text"].splitlines(keepends=True))
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    where = next((key for key in ("after", "before", "replace") if key in edit), None)
    if where is None:
        lines.append(text)
    else:
        (at,) = [i for i, line in enumerate(lines) if line.rstrip("\n") == edit[where]]  # exactly one such line
        lines[at:at + 1] = {"after": [lines[at], text], "before": [text, lines[at]], "replace": [text]}[where]
    target.write_text("".join(lines), encoding="utf-8")


@pytest.fixture(scope="module")
def recipe_workflow(tmp_path_factory) -> Path:
    workdir = copy_workflow(tmp_path_factory.mktemp("recipe"))
    add_example_paper(workdir)
    for edit in edits():
        apply(edit, workdir)
    return workdir


def run(workdir: Path, *args: str):
    # the copy's src/ first: its new modules are what the rules' imports must find
    return snakemake(workdir, *args, env={"PYTHONPATH": os.pathsep.join([str(workdir / "src"),
                                                                          os.environ.get("PYTHONPATH", "")])})


@pytest.fixture(scope="module")
def recipe_run(recipe_workflow):
    done = run(recipe_workflow, "--cores", "2", "--config", f"papers=[meterez2024, {SLUG}]", "compute=data-free")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    board = pd.read_csv(recipe_workflow / PAPER["results"] / "scoreboard.csv").set_index(["item", "quantity"])
    return recipe_workflow, board


@pytest.mark.integration
def test_the_new_item_and_paper_join_the_whole_dag(recipe_workflow):
    done = run(recipe_workflow, "-n", "--cores", "1", "--config", "compute=data-free")
    assert done.returncode == 0, done.stderr[-3000:]
    for item in ("example2099/fig1", "meterez2024/figx1"):  # plain items: the generated rule makes each
        assert re.search(rf"^ *rule plain_simulation:\n *output: \S*/{item}/synthetic\.parquet$",
                         done.stdout, re.MULTILINE), done.stdout[-3000:]
    assert re.search(r"^paper_notebook\s+5$", done.stdout, re.MULTILINE)  # the four papers and the example


@pytest.mark.integration
@pytest.mark.parametrize("slug, item, quantity, function", [
    (SLUG, EXAMPLE_ITEM, "pii_d256", "isonorm.experiments.example2099:fig1"),
    ("meterez2024", NEW, "phi_d16", "isonorm.experiments.meterez2024.example_item:figx1"),
])
def test_each_is_in_the_report_with_its_verdict(recipe_run, slug, item, quantity, function):
    workdir, board = recipe_run
    assert board.loc[(item, quantity), "verdict"] in ("match", "mismatch", "inconclusive")  # judged, not not-run
    page = (workdir / PAPER["report"] / f"{slug}.html").read_text(encoding="utf-8")
    assert f'id="{item}"' in page and function in page  # computed by
    assert (workdir / PAPER["report"] / slug / f"{item}.png").is_file()
    index = (workdir / PAPER["report"] / "index.html").read_text(encoding="utf-8")
    assert f'data-item="{item}"' in index
