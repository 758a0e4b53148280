"""An item of a paper, a figure or table with the id ``<slug>-<item>`` (docs/architecture.md §2), as one record.

Each item is declared once, by its record beside the function that computes it: ``ITEMS``, a tuple of
:class:`Item` in that module of the paper's library (``isonorm.experiments.<slug>``; an item of several jobs beside
one of its functions, one drawn without results in the package's ``__init__`` or beside what draws it). A record
holds the id, the title its decision section is headed with, the kind of job that computes its results, the
library function of that job, the result keys it reads and the function that measures its checkable quantities.
:func:`paper_items` gathers the paper's table from its modules. The workflow generates the rule of a *plain* item
(:attr:`Item.plain`), takes the paper's claims functions from the table and checks the results keys its rules
register against it at parse time (rules/common.smk); tests/test_item_records.py checks the rest (rules, notebook,
reference, decision section) against it. Light on purpose: Snakemake imports this module when it parses the
workflow.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from .verdicts.ids import check_item_id

# The job that computes an item's results: the template rule of its kind (rules/experiment_jobs.smk), or none for
# an item the notebook draws without results (a notation table, a schematic). An item whose parts several jobs
# compute names a kind and a function for each (Item.jobs).
KINDS = ("simulation", "at_init", "training", "notebook")
READING = "--"  # "<result key>--<reading>": an alternative reading of the job of <result key>
# isonorm.run_status: a job that failed, one that could not run for another's failure, one the run stopped before
UNFINISHED_STATES = ("failed", "blocked", "not started")
# The one results file of a plain item's job (Item.plain): <RESULTS>/<slug>/<item>/synthetic.parquet. No rule
# written by hand may make a file of this name (tests/test_item_records.py), so that the generated rule's
# wildcards never claim another job's file.
PLAIN_RESULTS = "synthetic.parquet"


@dataclass(frozen=True)
class Item:
    """One figure or table of a paper (module docstring)."""

    id: str
    title: str
    kind: str | tuple[str, ...]
    computed_by: Callable[..., Any] | tuple[Callable[..., Any], ...] | None = None
    results: tuple[str, ...] = ()
    claims: Callable[..., Any] | None = None
    # A plain item is one simulation job that calls ``computed_by(<the item's config section>)`` (with ``device=``
    # when the function takes it) and writes PLAIN_RESULTS under its own id; its rule is generated from this record
    # (rules/experiment_jobs.smk ``plain_simulation``), its one result key is its suffix, registered as data-free.
    plain: bool = False

    def __post_init__(self) -> None:
        check_item_id(self.id)
        if self.plain:
            if self.kind != "simulation" or not callable(self.computed_by):
                raise ValueError(f"{self.id}: a plain item is one simulation job: kind 'simulation' and one "
                                 "`computed_by` function")
            if tuple(self.results) not in ((), (self.suffix,)):
                raise ValueError(f"{self.id}: a plain item's one result key is its suffix {self.suffix!r}; "
                                 f"got {tuple(self.results)}")
            object.__setattr__(self, "results", (self.suffix,))
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

    @property
    def suffix(self) -> str:
        """The id without its slug: the item's config section, and its folder of results."""
        return self.id.split("-", 1)[1]

    def plain_kwargs(self, device: str) -> dict[str, Any]:
        """The keyword arguments of a plain item's function besides its config section: ``device`` if it takes one."""
        return {"device": device} if "device" in inspect.signature(self.computed_by).parameters else {}


def paper_modules(slug: str) -> list[Any]:
    """The modules of the paper's library ``isonorm.experiments.<slug>``: a package (its ``__init__`` first, then its
    modules by name) or one module (as the example paper of docs/adding.md)."""
    try:
        paper = importlib.import_module(f"isonorm.experiments.{slug}")
    except ModuleNotFoundError as error:
        if error.name not in (f"isonorm.experiments.{slug}", "isonorm.experiments"):
            raise
        raise ValueError(f"{slug}: its library isonorm.experiments.{slug} does not exist; write "
                         f"src/isonorm/experiments/{slug}.py or the package src/isonorm/experiments/{slug}/ "
                         "(docs/adding.md)") from None
    names = sorted(found.name for found in pkgutil.iter_modules(getattr(paper, "__path__", [])))
    return [paper, *(importlib.import_module(f"{paper.__name__}.{name}") for name in names)]


def paper_items(slug: str) -> tuple[Item, ...]:
    """The paper's table: the records (``ITEMS``) of every module of its library (:func:`paper_modules`), each item
    once, of this paper."""
    modules = paper_modules(slug)
    items, where = [], {}
    for module in modules:
        for record in getattr(module, "ITEMS", ()):
            if not isinstance(record, Item):
                raise TypeError(f"{module.__name__}.ITEMS holds {record!r}: a paper module's ITEMS are its item "
                                "records (isonorm.items.Item); give other lists another name")
            if record.slug != slug:
                raise ValueError(f"{module.__name__} declares {record.id}, an item of another paper than {slug}")
            if record.id in where:
                raise ValueError(f"{record.id} is declared twice, in {where[record.id]} and {module.__name__}; "
                                 "declare each item once, beside the function that computes it")
            where[record.id] = module.__name__
            items.append(record)
    return tuple(items)


def plain_items(slugs: Iterable[str]) -> dict[tuple[str, str], Item]:
    """{(slug, item suffix): record} of the plain items of these papers, whose rule the workflow generates."""
    return {(item.slug, item.suffix): item for slug in slugs for item in paper_items(slug) if item.plain}


def results_of(items: Iterable[Item], function: Callable[..., Any]) -> tuple[str, ...]:
    """The result keys of the items that ``function`` computes, each once in the records' order: for a function that
    serves several items, the values of its ``item`` argument, one job each (docs/architecture.md §11)."""
    return tuple(dict.fromkeys(key for item in items for _, computes in item.jobs if computes is function
                               for key in item.results))


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
    wrong += [f"rules/{slug}.smk registers results {key!r}, which no item of isonorm.experiments.{slug} reads"
              for key in sorted(keys - read) if READING not in key]
    if wrong:
        raise ValueError("; ".join(wrong) + " (docs/adding.md)")


def unfinished_items(items: Iterable[Item], results: Mapping[str, Iterable[str]],
                     causes: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """{item id: {state, cause}} of the items this run did not finish: a results file they read (``results``: result
    key -> files, readings included) is missing, with its cause (``causes``: isonorm.run_status.missing_causes). The
    state is the worst of the item's files, in the order of :data:`UNFINISHED_STATES`: ``failed`` when a job of its
    own failed (its measurement failed: its rows say ``failed``), ``blocked`` when an input could not be made (a
    download failed: its rows are ``not-run``, with that root cause), ``not started`` when the run stopped before."""
    unfinished: dict[str, dict[str, str]] = {}
    for item in items:
        for key, files in results.items():
            if key.split(READING, 1)[0] not in item.results:
                continue
            for why in (causes[f] for f in files if causes.get(f, {}).get("state") in UNFINISHED_STATES):
                known = unfinished.get(item.id)
                if known is None or UNFINISHED_STATES.index(why["state"]) < UNFINISHED_STATES.index(known["state"]):
                    unfinished[item.id] = {"state": why["state"], "cause": why["cause"]}
    return unfinished
