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

from conftest import PAPER, PAPERS, REPO, copy_workflow, snakemake
from isonorm.items import paper_items

EXAMPLE = REPO / "tests" / "data" / "example_paper"
NEW_ITEM = REPO / "tests" / "data" / "new_item"
SLUG = "example2099"
EXAMPLE_ITEM, NEW = f"{SLUG}-fig1", "meterez2024-figx1"
# A places table of docs/adding.md: a row per place, its number, its path in code with <slug> for the paper's slug,
# and in its last column whether a plain item (or a paper of plain items) has it: "yes", or "no: ..."
PLACE = re.compile(r"^\| (\d+) \| `([^`]+)` \|.*\| (yes|no)\b[^|]*\|$", re.MULTILINE)
STEP = re.compile(r"^(\d+)\. \*\*", re.MULTILINE)  # a numbered step of the recipe
# a rule of rules/<slug>.smk: `use rule <kind>_job as <name> with:` and its indented block
RULE = re.compile(r"^use rule \w+ as \w+ with:\n((?:[ \t]+.*\n|\n)*)", re.MULTILINE)


def section(heading: str) -> str:
    """The text under the heading ``## <heading>`` of docs/adding.md."""
    text = (REPO / "docs" / "adding.md").read_text(encoding="utf-8")
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def recipe_places(heading: str, plain: bool | None = None) -> list[str]:
    """The places of the table under ``heading``: all, or those a plain item has (``plain``) or has not."""
    return [place for _, place, has in PLACE.findall(section(heading)) if plain is None or (has == "yes") == plain]


def edits() -> list[dict]:
    return yaml.safe_load((NEW_ITEM / "edits.yaml").read_text(encoding="utf-8"))


def place_patterns(places: list[str], slug: str) -> list[str]:
    return [re.escape(place.replace("<slug>", slug)).replace(re.escape("<module>"), r"\w+") for place in places]


def test_the_recipe_lists_every_place_of_a_new_paper_and_the_example_takes_each_once():
    places = recipe_places("A new paper", plain=True)
    assert 1 <= len(places) <= 5, places
    files = sorted(str(p.relative_to(EXAMPLE)) for p in EXAMPLE.rglob("*") if p.is_file())
    assert files == sorted(place.replace("<slug>", SLUG) for place in places)


def test_the_places_of_an_item_are_numbered_as_its_steps_and_each_step_names_its_own():
    """Row n is step n; a place that the steps write out is written first in its own step (the library module's
    path is no step's: step 2 says "the paper's package")."""
    text = section("An item in an existing paper")
    rows = [(int(n), place) for n, place, _ in PLACE.findall(text)]
    assert [n for n, _ in rows] == list(range(1, len(rows) + 1)) == [int(n) for n in STEP.findall(text)]
    steps = dict(zip(range(1, len(rows) + 1), re.split(r"^\d+\. \*\*", text, flags=re.MULTILINE)[1:]))
    for n, place in rows:
        named = [m for m, step in steps.items() if f"`{place}`" in step]
        assert not named or named[0] == n, (place, n, named)
    new_paper = [place.replace("<slug>.py", "<slug>/<module>.py") if "experiments" in place else place
                 for place in recipe_places("A new paper")]
    assert new_paper == [place for _, place in rows]  # a paper's places are its items', numbered alike


def test_the_example_item_takes_exactly_the_places_of_a_plain_item():
    places = recipe_places("An item in an existing paper", plain=True)
    files = {edit["file"] for edit in edits()}
    patterns = place_patterns(places, "meterez2024")
    assert all(any(re.fullmatch(p, f) for p in patterns) for f in files), (sorted(files), places)
    assert all(any(re.fullmatch(p, f) for f in files) for p in patterns), (sorted(files), places)
    assert len(files) == len(places) == 5


@pytest.mark.parametrize("slug", PAPERS)
def test_an_item_that_is_not_plain_has_its_rule_in_the_one_place_more_and_a_plain_one_has_none(slug):
    """What the table says an item that is not plain adds, shown on every item of the papers: a rule of that place
    names each item that has jobs and is not plain, and none names a plain one (its rule is generated)."""
    (extra,) = recipe_places("An item in an existing paper", plain=False)
    bodies = RULE.findall((REPO / extra.replace("<slug>", slug)).read_text(encoding="utf-8"))
    for item in paper_items(slug):
        named = any(re.search(rf"(?<![\w-]){re.escape(item.id)}(?![\w-])", body) for body in bodies)
        assert named == (bool(item.jobs) and not item.plain), item.id


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
    assert "no-reference" not in set(board.loc[item, "verdict"])  # a row for every quantity it claims
    page = (workdir / PAPER["report"] / f"{slug}.html").read_text(encoding="utf-8")
    assert f'id="{item}"' in page and function in page  # computed by
    assert (workdir / PAPER["report"] / slug / f"{item}.png").is_file()
    index = (workdir / PAPER["report"] / "index.html").read_text(encoding="utf-8")
    assert f'data-item="{item}"' in index
