"""Adding a paper takes the places docs/adding.md lists, and nothing else: the example paper of
tests/data/example_paper (one data-free item) is dropped into a copy of the workflow, config.yaml gains its section
and its slug under `papers:`, and the run finds it in the report with its verdict."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import PAPER, REPO, copy_workflow, snakemake

EXAMPLE = REPO / "tests" / "data" / "example_paper"
SLUG = "example2099"
ITEM = f"{SLUG}-fig1"
# A places table of docs/adding.md: a row per place, its path in code with <slug> for the paper's slug.
PLACE = re.compile(r"^\| \d+ \| `([^`]+)` \|", re.MULTILINE)


def recipe_places(section: str) -> list[str]:
    """The places of the table under the heading ``## <section>`` of docs/adding.md."""
    text = (REPO / "docs" / "adding.md").read_text(encoding="utf-8")
    return PLACE.findall(text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0])


def test_the_recipe_lists_every_place_of_a_new_paper_and_the_example_takes_each_once():
    places = recipe_places("A new paper")
    assert 1 <= len(places) <= 6, places
    files = sorted(str(p.relative_to(EXAMPLE)) for p in EXAMPLE.rglob("*") if p.is_file())
    assert files == sorted(place.replace("<slug>", SLUG) for place in places)


def add_example_paper(workdir: Path) -> None:
    """The recipe, applied: the paper's new files in place, its section appended to config.yaml and its slug
    added to `papers:` (config.yaml is one of the places)."""
    for source in EXAMPLE.rglob("*"):
        if source.is_file() and source.name != "config.yaml":
            target = workdir / source.relative_to(EXAMPLE)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    config = workdir / "config.yaml"
    text = re.sub(r"^(papers: \[[^\]]*)\]", rf"\1, {SLUG}]", config.read_text(encoding="utf-8"), count=1,
                  flags=re.MULTILINE)
    config.write_text(text + "\n" + (EXAMPLE / "config.yaml").read_text(encoding="utf-8"), encoding="utf-8")


@pytest.fixture(scope="module")
def example_workflow(tmp_path_factory) -> Path:
    workdir = copy_workflow(tmp_path_factory.mktemp("example-paper"))
    add_example_paper(workdir)
    return workdir


def run(workdir: Path, *args: str):
    # the copy's src/ first: its new module is what `import isonorm.experiments.example2099` must find
    return snakemake(workdir, *args, env={"PYTHONPATH": os.pathsep.join([str(workdir / "src"),
                                                                          os.environ.get("PYTHONPATH", "")])})


@pytest.mark.integration
def test_the_example_paper_joins_the_whole_dag(example_workflow):
    done = run(example_workflow, "-n", "--cores", "1", "--config", "compute=data-free")
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"^example2099_fig1\s+1$", done.stdout, re.MULTILINE), done.stdout[-3000:]
    assert re.search(r"^paper_notebook\s+5$", done.stdout, re.MULTILINE)  # the four papers and the example


@pytest.mark.integration
def test_the_example_paper_is_in_the_report_with_its_verdict(example_workflow):
    done = run(example_workflow, "--cores", "2", "--config", f"papers=[{SLUG}]", "compute=data-free")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    board = pd.read_csv(example_workflow / PAPER["results"] / "scoreboard.csv").set_index(["item", "quantity"])
    assert board.loc[(ITEM, "pii_d256"), "verdict"] in ("match", "mismatch", "inconclusive")  # measured and judged, not not-run
    page = (example_workflow / PAPER["report"] / f"{SLUG}.html").read_text(encoding="utf-8")
    assert f'id="{ITEM}"' in page and "isonorm.experiments.example2099:fig1" in page  # computed by
    assert (example_workflow / PAPER["report"] / SLUG / f"{ITEM}.png").is_file()
    index = (example_workflow / PAPER["report"] / "index.html").read_text(encoding="utf-8")
    assert f'data-item="{ITEM}"' in index and "Example et al. (2099)" in index
