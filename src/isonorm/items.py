"""An item of a paper, a figure or table with the id ``<slug>-<item>`` (docs/architecture.md §2), as one record.

Each item is declared once, by its record beside the function that computes it: ``ITEMS``, a tuple of
:class:`Item` in that module of the paper's library (``isonorm.experiments.<slug>``; an item of several jobs beside
one of its functions, one drawn without results in the package's ``__init__`` or beside what draws it). A record
holds the id, the title its decision section is headed with, the kind of job that computes its results, the
library function of that job, the result keys it reads with their files (:class:`Results`: the one place a key's
path pattern, its wildcards' values and what computing it needs are written) and the function that measures its
checkable quantities. :func:`paper_items` gathers the paper's table from its modules. From the table the workflow
registers the paper's results files (:func:`result_files`), gives each rule of rules/<slug>.smk its output
(:func:`output_pattern`), generates the rule of a *plain* item (:attr:`Item.plain`) and takes the paper's claims
functions (rules/common.smk); tests/test_item_records.py checks the rest (rules, notebook, reference, decision
section) against it. Light on purpose: Snakemake imports this module when it parses the
workflow.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import pkgutil
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Callable, Iterable, Mapping, Sequence

from .verdicts.ids import check_item_id

# The job that computes an item's results: the template rule of its kind (rules/experiment_jobs.smk), or none for
# an item the notebook draws without results (a notation table, a schematic). An item whose parts several jobs
# compute names a kind and a function for each (Item.jobs).
KINDS = ("simulation", "at_init", "training", "notebook")
# What computing a result key needs (isonorm.plan.NEEDS), by the kind of the job that computes it: random networks,
# a data set or a checkpoint without training, a training. An item of several jobs states it per key (Results.needs).
NEEDS_OF_KIND = {"simulation": "data_free", "at_init": "needs_data", "training": "trains"}
READING = "--"  # "<result key>--<reading>": an alternative reading of the job of <result key>
# isonorm.run_status: a job that failed, one that could not run for another's failure, one the run stopped before
UNFINISHED_STATES = ("failed", "blocked", "not started")
# The one results file of a plain item's job (Item.plain): <RESULTS>/<slug>/<item>/synthetic.parquet. No rule
# written by hand may make a file of this name (tests/test_item_records.py), so that the generated rule's
# wildcards never claim another job's file.
PLAIN_RESULTS = "synthetic.parquet"


@dataclass(frozen=True, init=False, repr=False)
class Results:
    """The files of one result key, written once in the record of an item that reads it.

    ``path``: their pattern relative to the paper's results folder (``table1/{optimizer}.parquet``), each wildcard's
    values given by keyword: a config path in the paper's section, dotted (``optimizer="table1.runs"``: the list at
    ``config["lu2024"]["table1"]["runs"]``, a single value as a list of one), a tuple of the values themselves
    (``part=("plms",)``), or a function of the paper's section that returns them. The files are every combination,
    in the keywords' order (Snakemake's ``expand``). Wildcards that one config value fills together are named
    together as they stand in the path, ``{"activation-optimizer": "table3.runs"}`` (a value ``relu-adam``), given
    as the mapping ``wildcards``. The rule that writes them takes its output from here (rules/common.smk
    ``item_output``): its wildcards are the path's, each held to the values it has here. A config setting that
    names the one file of a job, which its rule writes without a wildcard for it, is given in ``settings`` instead
    (``settings={"corpus": "table5_transformer.corpus"}``): its one value is written into the rule's output.

    ``needs``: what computing them needs (isonorm.plan.NEEDS); by default the need of the item's kind
    (:data:`NEEDS_OF_KIND`), which an item of several jobs states here. ``readings``: the config path of the
    item's ``readings:`` (decision D19): each reading adds the result key ``<key>--<reading>``, the file
    ``<stem>--<reading><suffix>`` of each file here, one job each.
    """

    path: str
    wildcards: tuple[tuple[str, Any], ...]
    settings: tuple[str, ...]
    needs: str | None
    readings: str | None

    def __init__(self, path: str, wildcards: Mapping[str, Any] | None = None, *,
                 settings: Mapping[str, str] | None = None, needs: str | None = None, readings: str | None = None,
                 **by_name: Any) -> None:
        settings = settings or {}
        specs = {**(wildcards or {}), **by_name, **settings}
        named = [name for spec in specs for name in spec.split("-")]
        if sorted(named) != sorted(set(re.findall(r"\{(\w+)\}", path))):
            raise ValueError(f"Results({path!r}): give the values of each of its wildcards, and only those; got "
                             f"{sorted(specs)}")
        if needs not in (None, *NEEDS_OF_KIND.values()):
            raise ValueError(f"Results({path!r}): needs {needs!r} is not one of {tuple(NEEDS_OF_KIND.values())}")
        for name, value in (("path", path), ("wildcards", tuple(specs.items())), ("settings", tuple(settings)),
                            ("needs", needs), ("readings", readings)):
            object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return (f"Results({self.path!r}, {dict(self.wildcards)!r}, settings={self.settings!r}, needs={self.needs!r}, "
                f"readings={self.readings!r})")

    def _with(self, path: str | None = None, needs: str | None = None) -> Results:
        settings = {name: given for name, given in self.wildcards if name in self.settings}
        return Results(path or self.path, {name: given for name, given in self.wildcards if name not in settings},
                       settings=settings, needs=needs or self.needs, readings=self.readings)

    def _split(self, section: Mapping[str, Any]) -> list[tuple[list[str], list[list[str]]]]:
        """[(wildcard names, [their parts of each value])], one per keyword (joint wildcards split their value)."""
        return [(spec.split("-"), [str(value).split("-", spec.count("-")) for value in _values(given, section)])
                for spec, given in self.wildcards]

    def values(self, section: Mapping[str, Any]) -> dict[str, list[str]]:
        """{wildcard: its values} under the paper's config ``section``."""
        return {name: [parts[n] for parts in values] for names, values in self._split(section)
                for n, name in enumerate(names)}

    def files(self, section: Mapping[str, Any]) -> list[str]:
        """Every file of the key, relative to the paper's results folder, in the keywords' order."""
        split = self._split(section)
        return [self.path.format(**{name: part for (names, _), parts in zip(split, combo)
                                    for name, part in zip(names, parts)})
                for combo in itertools.product(*(values for _, values in split))]

    def reading_names(self, section: Mapping[str, Any]) -> list[str]:
        """The names of the alternative readings the config asks for (none where it has no ``readings:``)."""
        return [str(name) for name in _setting(self.readings, section, missing=None) or ()] if self.readings else []

    def reading_path(self, reading: str) -> str:
        """The path of an alternative reading (``readings``): ``<stem>--<reading><suffix>``."""
        path = PurePosixPath(self.path)
        return str(path.with_name(f"{path.stem}{READING}{reading}{path.suffix}"))


def _values(given: Any, section: Mapping[str, Any]) -> list[Any]:
    """A wildcard's values (Results): a dotted config path in ``section``, the values themselves or a function."""
    if callable(given):
        return list(given(section))
    if isinstance(given, (tuple, list)):
        return list(given)
    value = _setting(given, section)
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple, dict)) else [value]


_REQUIRED = object()


def _setting(dotted: str, section: Mapping[str, Any], missing: Any = _REQUIRED) -> Any:
    """The value at a dotted config path in ``section`` (``missing`` where it has none, if given)."""
    value: Any = section
    for part in dotted.split("."):
        if missing is not _REQUIRED and not (isinstance(value, Mapping) and part in value):
            return missing
        value = value[part]
    return value


@dataclass(frozen=True)
class Item:
    """One figure or table of a paper (module docstring)."""

    id: str
    title: str
    kind: str | tuple[str, ...]
    computed_by: Callable[..., Any] | tuple[Callable[..., Any], ...] | None = None
    # the result keys it reads: {key: its files (Results)}, or None for a key whose files another record of the
    # paper declares; a tuple of keys where other records declare all of them
    results: Mapping[str, Results | None] | tuple[str, ...] = ()
    claims: Callable[..., Any] | None = None
    # A plain item is one simulation job that calls ``computed_by(<the item's config section>)`` (with ``device=``
    # when the function takes it) and writes PLAIN_RESULTS under its own id; its rule is generated from this record
    # (rules/experiment_jobs.smk ``plain_simulation``), its one result key is its suffix, registered as data-free.
    plain: bool = False
    # {result key: Results} of the keys whose files this record declares (from ``results``; a plain item's own)
    declared: Mapping[str, Results] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        check_item_id(self.id)
        if self.plain:
            if self.kind != "simulation" or not callable(self.computed_by):
                raise ValueError(f"{self.id}: a plain item is one simulation job: kind 'simulation' and one "
                                 "`computed_by` function")
            if tuple(self.results) not in ((), (self.suffix,)):
                raise ValueError(f"{self.id}: a plain item's one result key is its suffix {self.suffix!r}; "
                                 f"got {tuple(self.results)}")
            object.__setattr__(self, "results", {self.suffix: Results(f"{self.suffix}/{PLAIN_RESULTS}")})
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
        given = self.results if isinstance(self.results, Mapping) else dict.fromkeys(self.results)
        declared = {}
        for key, files in given.items():
            if files is None:
                continue
            if not isinstance(files, Results):
                raise TypeError(f"{self.id}: the files of result key {key!r} are a Results, not {files!r}")
            if files.needs is None:
                if len(set(kinds)) != 1:
                    raise ValueError(f"{self.id}: an item of several kinds of job states what computing each of "
                                     f"its result keys needs: Results(..., needs=...) for {key!r}")
                files = files._with(needs=NEEDS_OF_KIND[kinds[0]])
            if not self.plain and files.path.endswith(PLAIN_RESULTS):
                raise ValueError(f"{self.id}: {files.path!r}: the file name {PLAIN_RESULTS} is the plain items' "
                                 "(rules/experiment_jobs.smk plain_simulation); name the file otherwise")
            declared[key] = files
        object.__setattr__(self, "results", tuple(given))
        object.__setattr__(self, "declared", declared)

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


def key_results(slug: str, items: Sequence[Item]) -> dict[str, Results]:
    """{result key: its files (Results)} of the paper, in the table's order: each key read by an item is declared by
    one record or more, alike (an item may name a key whose files another record declares)."""
    declared: dict[str, Results] = {}
    for item in items:
        for key, files in item.declared.items():
            if declared.setdefault(key, files) != files:
                raise ValueError(f"{item.id} declares the files of result key {key!r} as {files}, another record "
                                 f"of {slug} as {declared[key]}: declare them once (docs/adding.md)")
    wrong = [f"{item.id} reads result key {key!r}, whose files no record of isonorm.experiments.{slug} declares "
             f"(Results)" for item in items for key in item.results if key not in declared]
    if wrong:
        raise ValueError("; ".join(wrong) + " (docs/adding.md)")
    return declared


def result_files(slug: str, items: Sequence[Item], section: Mapping[str, Any]) -> dict[str, dict[str, list[str]]]:
    """{need: {result key: [files, relative to the paper's results folder]}} of the paper under its config
    ``section``, from its records (:func:`key_results`), alternative readings ``<key>--<reading>`` included; what
    rules/common.smk ``register_results`` registers."""
    found: dict[str, dict[str, list[str]]] = {need: {} for need in NEEDS_OF_KIND.values()}
    for key, files in key_results(slug, items).items():
        found[files.needs][key] = files.files(section)
        for name in files.reading_names(section):
            found[files.needs][f"{key}{READING}{name}"] = files._with(path=files.reading_path(name)).files(section)
    return found


def output_pattern(slug: str, items: Sequence[Item], section: Mapping[str, Any], keys: Sequence[str],
                   reading: bool = False) -> str:
    """The output pattern, relative to the paper's results folder, of the rule that writes the files of ``keys``
    (one rule may write several keys alike, one job per file): the keys' common path, each wildcard held to its
    values over them (Snakemake's ``{name,regex}``); with ``reading``, their alternative readings' path instead
    (``<stem>--{reading}<suffix>``)."""
    declared = key_results(slug, items)
    unknown = [key for key in keys if key not in declared]
    if unknown or not keys:
        raise ValueError(f"rules/{slug}.smk: no record of isonorm.experiments.{slug} declares the files of result "
                         f"keys {unknown or list(keys)} (docs/adding.md)")
    paths = {declared[key].path for key in keys}
    if len(paths) != 1:
        raise ValueError(f"rules/{slug}.smk: one rule writes the result keys {list(keys)}, whose records give "
                         f"different paths {sorted(paths)}; give each its own rule, or the keys one path")
    values: dict[str, list[str]] = {}
    for key in keys:
        for name, found in declared[key].values(section).items():
            values.setdefault(name, []).extend(found)
        if reading:
            values.setdefault("reading", []).extend(declared[key].reading_names(section))
    path = declared[keys[0]].reading_path("{reading}") if reading else paths.pop()
    settings = {name for key in keys for name in declared[key].settings}
    for name, found in values.items():
        if name in settings:  # written into the output: its rule has no wildcard for it
            if len(set(found)) != 1:
                raise ValueError(f"rules/{slug}.smk: the setting {name!r} of result keys {list(keys)} names the "
                                 f"one file of their job, but has the values {sorted(set(found))}")
            path = path.replace(f"{{{name}}}", found[0])
            continue
        regex = "|".join(re.escape(v) for v in dict.fromkeys(found)) or "(?!)"  # "(?!)": no value, no job
        path = path.replace(f"{{{name}}}", f"{{{name},{regex}}}")
    return path


def reads_key(item: Item, key: str) -> bool:
    """Whether the item reads result key ``key`` (an alternative reading ``<key>--<name>`` counts as its key)."""
    return key.split(READING, 1)[0] in item.results


def item_files(items: Iterable[Item], results: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """{item id: its files} from ``results`` (result key -> files, readings included)."""
    return {item.id: [f for key, files in results.items() if reads_key(item, key) for f in files] for item in items}


def unfinished_items(items: Iterable[Item], results: Mapping[str, Iterable[str]],
                     causes: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """{item id: {state, cause, log}} of the items this run did not finish: a results file they read (``results``:
    result key -> files, readings included) is missing, with its cause and the log of the job that did not make it
    (``causes``: isonorm.run_status.missing_causes; "" without one: a job that never ran). The
    state is the worst of the item's files, in the order of :data:`UNFINISHED_STATES`: ``failed`` when a job of its
    own failed (its measurement failed: its rows say ``failed``), ``blocked`` when an input could not be made (a
    download failed: its rows are ``not-run``, with that root cause), ``not started`` when the run stopped before."""
    unfinished: dict[str, dict[str, str]] = {}
    for item in items:
        for key, files in results.items():
            if not reads_key(item, key):
                continue
            for why in (causes[f] for f in files if causes.get(f, {}).get("state") in UNFINISHED_STATES):
                known = unfinished.get(item.id)
                if known is None or UNFINISHED_STATES.index(why["state"]) < UNFINISHED_STATES.index(known["state"]):
                    unfinished[item.id] = {"state": why["state"], "cause": why["cause"], "log": why.get("log") or ""}
    return unfinished
