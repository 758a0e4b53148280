"""The library's layer order is a contract that import-linter holds (``[tool.importlinter]`` in pyproject.toml,
architecture §2): every module of src/isonorm is in it, a module imports only the layers below its own, whether
at module level or inside a function, and the four papers never import each other. docs/architecture.md's table
of the library lists the layers in the contract's order."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the checkout at ``root`` (its pyproject.toml, its src/), without the linter's cache."""
    env = {**os.environ, "PYTHONPATH": str(root / "src")}  # the copy's isonorm, not the installed checkout's
    return subprocess.run([str(LINT_IMPORTS), "--config", str(root / "pyproject.toml"), "--no-cache"], cwd=root,
                          env=env, capture_output=True, text=True, timeout=300)


def contract_layers() -> list[list[str]]:
    """The layers of the library's contract, top first, each a list of its top-level modules."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (library,) = [c for c in config["contracts"] if c.get("containers") == ["isonorm"]]
    return [re.split(r"\s*[|:]\s*", layer.strip("() ")) for layer in library["layers"]]


def test_the_library_keeps_its_layer_contract():
    run = lint_imports(REPO)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout, run.stdout


def test_a_planted_upward_import_breaks_the_contract(tmp_path):
    """The contract can fail: the bottom layer's atomic writes importing the report is named as the broken import."""
    shutil.copytree(REPO / "src" / "isonorm", tmp_path / "src" / "isonorm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    atomic = tmp_path / "src" / "isonorm" / "atomic.py"
    atomic.write_text(atomic.read_text(encoding="utf-8") + "\nfrom .report import markup  # planted\n",
                      encoding="utf-8")
    run = lint_imports(tmp_path)
    assert run.returncode != 0, run.stdout
    assert "isonorm.atomic -> isonorm.report.markup" in run.stdout, run.stdout


def test_every_module_of_the_library_is_in_the_contract():
    listed = {module for layer in contract_layers() for module in layer}
    present = {p.stem if p.is_file() else p.name for p in (REPO / "src" / "isonorm").iterdir()
               if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    assert listed == present, {"not in the contract": sorted(present - listed), "gone": sorted(listed - present)}


def test_the_architecture_table_lists_the_layers_in_the_contract_order():
    """docs/architecture.md §2's table of the library: one row per layer, bottom to top, naming its modules."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("The library, bottom to top", 1)[1].split("\n\n", 2)[1]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    documented = [sorted(re.findall(r"`([a-z_]+)/?`", row.split("|")[1])) for row in rows]
    assert documented == [sorted(layer) for layer in reversed(contract_layers())], (
        "docs/architecture.md §2 lists the layers of [tool.importlinter] in pyproject.toml, bottom to top")


def test_the_papers_are_one_layer_of_independent_siblings():
    """Papers never import each other (architecture §2): isonorm.experiments is one layer of siblings joined by ``|``,
    which import-linter holds independent, and, exhaustive, names every paper."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (papers,) = [c for c in config["contracts"] if c.get("containers") == ["isonorm.experiments"]]
    assert papers["exhaustive"] and len(papers["layers"]) == 1 and ":" not in papers["layers"][0], papers
