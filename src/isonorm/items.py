"""An item of a paper, a figure or table with the id ``<slug>-<item>`` (docs/architecture.md §2), as one record.

Each paper declares its items once, in ``isonorm.experiments.<slug>.items.ITEMS``: the id, the title its decision
section is headed with, the kind of job that computes its results, the library function of that job, the result
keys it reads (``register_results`` in rules/<slug>.smk) and the function that measures its checkable quantities.
The rules file takes its claims functions from the table and checks its results keys against it at parse time;
tests/test_item_records.py checks the rest (rules, notebook, reference, decision section) against it.
Light on purpose: Snakemake imports this module when it parses the workflow.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from .report.ids import check_item_id

# The job that computes an item's results: the template rule of its kind (rules/experiment_jobs.smk), or none for
# an item the notebook draws without results (a notation table, a schematic). An item whose parts several jobs
# compute names a kind and a function for each (Item.jobs).
KINDS = ("simulation", "at_init", "training", "notebook")
READING = "--"  # "<result key>--<reading>": an alternative reading of the job of <result key>
FAILED_STATES = ("failed", "blocked")  # isonorm.run_status: a job that failed, or could not run for one that did


@dataclass(frozen=True)
class Item:
    """One figure or table of a paper (module docstring)."""

    id: str
    title: str
    kind: str | tuple[str, ...]
    computed_by: Callable[..., Any] | tuple[Callable[..., Any], ...] | None = None
    results: tuple[str, ...] = ()
    claims: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        check_item_id(self.id)
        kinds = self.kind if isinstance(self.kind, tuple) else (self.kind,)
        if not set(kinds) <= set(KINDS):
            raise ValueError(f"{self.id}: kind {self.kind!r} is not one of {KINDS}")
        functions = self.computed_by if isinstance(self.computed_by, tuple) else (
            () if self.computed_by is None else (self.computed_by,))
        if kinds == ("notebook",) and functions:
            raise ValueError(f"{self.id}: an item of kind 'notebook' is drawn without results: no `computed_by`")
        if kinds != ("notebook",) and len(functions) != len(kinds):
            raise ValueError(f"{self.id}: `computed_by` names the library function of each of its jobs, one per kind "
                             f"{kinds}")
        object.__setattr__(self, "results", tuple(self.results))

    @property
    def jobs(self) -> tuple[tuple[str, Callable[..., Any]], ...]:
        """(kind, library function) of each job that computes the item's results: one for most items; several for
        an item whose parts different jobs compute (lu2024-table5: a training, checkpoints read at init, a LoRA
        fine-tuning); none for an item the notebook draws without results."""
        if self.computed_by is None:
            return ()
        if isinstance(self.computed_by, tuple):
            return tuple(zip(self.kind, self.computed_by))
        return ((self.kind, self.computed_by),)

    @property
    def slug(self) -> str:
        return self.id.split("-", 1)[0]


def paper_items(slug: str) -> tuple[Item, ...]:
    """The paper's table: ``ITEMS`` of ``isonorm.experiments.<slug>.items`` for a paper whose library is a package,
    of ``isonorm.experiments.<slug>`` itself for a paper of one module (as the example paper of docs/adding.md)."""
    paper = importlib.import_module(f"isonorm.experiments.{slug}")
    if not hasattr(paper, "__path__"):
        return tuple(paper.ITEMS)
    return tuple(importlib.import_module(f"isonorm.experiments.{slug}.items").ITEMS)


def claims_functions(items: Iterable[Item]) -> list[Callable[..., Any]]:
    """The paper's claims functions, each once, in the table's order."""
    return list(dict.fromkeys(item.claims for item in items if item.claims is not None))


def check_results_keys(slug: str, items: Sequence[Item], registered: Mapping[str, Iterable[str]]) -> None:
    """Every result key an item reads is registered, and every registered key is read by an item: the rules file
    and the table agree (``registered``: need -> result keys, as rules/common.smk ``register_results`` holds them)."""
    keys = {key for by_key in registered.values() for key in by_key}
    # an alternative reading of a job's results, "<key>--<reading>" (one job each, as the config's `readings:` ask;
    # decision D19), is read by the items that read "<key>"
    keys |= {key.split(READING, 1)[0] for key in keys}
    read = {key for item in items for key in item.results}
    wrong = [f"{item.id} reads results {key!r}, which rules/{slug}.smk does not register"
             for item in items for key in item.results if key not in keys]
    wrong += [f"rules/{slug}.smk registers results {key!r}, which no item of isonorm.experiments.{slug}.items reads"
              for key in sorted(keys - read) if READING not in key]
    if wrong:
        raise ValueError("; ".join(wrong) + " (docs/adding.md)")


def failed_items(items: Iterable[Item], results: Mapping[str, Iterable[str]],
                 causes: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """{item id: cause} of the items whose measurement failed in this run: a results file they read (``results``:
    result key -> files, readings included) is missing because its job failed or was blocked by a failed job
    (``causes``: isonorm.run_status.missing_causes). Their scoreboard rows say ``failed``, not ``not-run``; a job
    that was only interrupted fails nothing."""
    failed = {}
    for item in items:
        for key, files in results.items():
            if key.split(READING, 1)[0] not in item.results:
                continue
            why = next((causes[f] for f in files if causes.get(f, {}).get("state") in FAILED_STATES), None)
            if why is not None:
                failed.setdefault(item.id, why["cause"])
    return failed
