"""Validation of the merged configuration (architecture §4) against its schema, with errors that fit a screen.

Snakemake's own ``validate`` raises on the first error and prints the whole schema and config with it (some
2,500 lines for a misspelt key). :func:`check_config` validates with the same JSON Schema draft (2020-12)
and, on failure, raises a :class:`ConfigError` that names, for the first few errors, the key's path, what
was expected and what was given, the nearest valid key for a misspelt one, and the file to edit; the full
jsonschema detail goes to a log file (and to stderr with ``--verbose``). The schema sets no ``default:``, so
unlike ``snakemake.utils.validate`` nothing is filled in. ``jsonschema`` comes with Snakemake, the only
caller (the Snakefile).
"""

from __future__ import annotations

import difflib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import jsonschema
import yaml

from .atomic import write_text_atomically
from .callables import resolve
from .outputs import is_paper_slug
from .sources.marker import marker_path
from .user_errors import MAX_LINES, UserError

LOG_PATH = Path("logs/config_check.log")  # fixed: the preset, which picks logs/<preset>/, may itself be wrong
SHOWN_ERRORS = MAX_LINES - 2  # a header line above the problems and the fix below them (isonorm.user_errors)
CLI = "--config"  # where a value set on the command line comes from
JSON_TYPES = {"integer": "an integer", "number": "a number", "string": "a string", "boolean": "true or false",
              "array": "a list", "object": "a mapping (key: value)", "null": "null"}
EXPECTED = {"const": "exactly {}", "minimum": "≥ {}", "maximum": "≤ {}", "exclusiveMinimum": "> {}",
            "exclusiveMaximum": "< {}", "pattern": "text matching {}", "minItems": "a list of at least {} item(s)",
            "maxItems": "a list of at most {} item(s)", "minLength": "at least {} character(s)",
            "minProperties": "at least {} key(s)"}


class ConfigError(UserError, ValueError):
    """The configuration does not match the schema; the message lists what to change and where."""


@dataclass(frozen=True)
class ConfigSources:
    """Where the merged config came from: ``files`` in the order Snakemake merges them (later ones win) and
    the ``--config`` values, which win over every file."""

    files: Sequence[Path] = ()
    cli: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, workflow: Any) -> "ConfigSources":
        """The sources of a Snakemake 9 workflow. ``workflow.configfiles`` lists the ``--configfile`` files
        first and the Snakefile's ``configfile:`` after them, but the command-line files are merged on top
        (``Workflow.configfile`` applies ``config_settings.overwrite_config`` after each Snakefile file)."""
        settings = workflow.config_settings
        given = [Path(f).resolve() for f in settings.configfiles]
        declared = [Path(f).resolve() for f in workflow.configfiles if Path(f).resolve() not in given]
        return cls(files=[*declared, *given], cli=dict(settings.config))


def check_config(config: Mapping[str, Any], schema_path: str | Path, sources: ConfigSources = ConfigSources(),
                 log_path: str | Path = LOG_PATH, verbose: bool = False,
                 defaults: str | Path | None = None) -> None:
    """Validate ``config``; on failure write the full detail to ``log_path`` and raise :class:`ConfigError`.

    ``defaults`` is the default configuration (config.yaml): a paper's section that the schema does not describe,
    and an item's section that its paper's schema entry does not list, is checked against the keys and types of its
    defaults there (:func:`shape_of`), so a new paper or item needs no schema entry to have its typos caught."""
    # libyaml's loader where PyYAML has it: every Snakemake process parses the workflow, a cluster job included,
    # and the pure-Python loader spends about half a second on this schema
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    schema = yaml.load(Path(schema_path).read_text(encoding="utf-8"), Loader=loader)
    if defaults is not None:
        default_config = yaml.load(Path(defaults).read_text(encoding="utf-8"), Loader=loader) or {}
        described = schema.setdefault("properties", {})
        for key, section in default_config.items():
            if not is_paper_slug(key):
                continue
            if key not in described:
                described[key] = shape_of(section)
            elif isinstance(section, Mapping):  # an item's section the paper's schema entry does not list yet
                properties = described[key].setdefault("properties", {})
                for name, value in section.items():
                    properties.setdefault(name, shape_of(value))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return
    detail = "\n\n".join(str(e) for e in errors)
    write_text_atomically(log_path, detail + "\n")
    if verbose:
        print(detail, file=sys.stderr)
    raise ConfigError(config_error_message(errors, sources, schema_path, log_path)) from None


def shape_of(default: Any) -> dict[str, Any]:
    """A JSON Schema that accepts what has the keys and types of ``default``: a mapping only its keys (each
    shaped as its default), a list items shaped as one of its items, a number any number where the default is a
    float, null anything. What the values may be beyond their type is for a schema entry to say."""
    if isinstance(default, Mapping):
        return {"type": "object", "additionalProperties": False,
                "properties": {str(k): shape_of(v) for k, v in default.items()}}
    if isinstance(default, list):
        shapes = [json.loads(s) for s in dict.fromkeys(json.dumps(shape_of(v), sort_keys=True) for v in default)]
        return {"type": "array", **({"items": shapes[0] if len(shapes) == 1 else {"anyOf": shapes}} if shapes else {})}
    if default is None:
        return {}
    if isinstance(default, bool):
        return {"type": "boolean"}
    if isinstance(default, int):
        return {"type": "integer"}
    if isinstance(default, float):
        return {"type": "number"}
    return {"type": "string"}


def check_papers(config: Mapping[str, Any], workflow_dir: str | Path = ".",
                 sources: ConfigSources = ConfigSources()) -> list[str]:
    """The papers a run makes (``papers:``). A name that is no paper of this workflow is told as such, with the
    nearest one; a paper that has some of its parts but not all is told what it lacks and the recipe
    (docs/adding.md, "A new paper"); either a ConfigError of at most MAX_LINES lines."""
    papers = list(config["papers"])
    root = Path(workflow_dir)
    parts = {slug: paper_parts(slug, config, root) for slug in papers}
    unknown = [slug for slug in papers if not is_paper_slug(slug) or not any(parts[slug].values())]
    if unknown:
        raise ConfigError(unknown_papers(unknown, workflow_papers(root), source_of(["papers"], sources)))
    incomplete = [f"{slug}: " + "; ".join(missing for missing, present in parts[slug].items() if not present)
                  for slug in papers if not all(parts[slug].values())]
    if incomplete:
        raise ConfigError(listing("a paper listed under `papers:` is incomplete:", incomplete,
                                  'Add what is missing (docs/adding.md, "A new paper") or take the paper off '
                                  "`papers:`."))
    return papers


def unknown_papers(unknown: Sequence[str], known: Sequence[str], source: str) -> str:
    """``unknown paper 'lu2042' under `papers:` … — did you mean 'lu2024'?`` (one line a paper when several), then
    the papers there are and how to add one."""
    where = f"under `papers:` (set in {source})"
    footer = f"(papers of this workflow: {', '.join(known)}; adding one: docs/adding.md)"
    if len(unknown) == 1:
        return f"unknown paper {unknown[0]!r} {where}{did_you_mean(unknown[0], known)}\n{footer}"
    return listing(f"unknown papers {where}:", [f"{slug!r}{did_you_mean(slug, known)}" for slug in unknown], footer)


def paper_parts(slug: str, config: Mapping[str, Any], root: Path) -> dict[str, bool]:
    """{what a missing part is called: whether the paper has it} for the parts every paper has (docs/adding.md;
    rules/<slug>.smk is optional: a paper of plain items only has none, isonorm.items.Item.plain)."""
    return {f"no `{slug}:` section in the config": slug in config,
            **{f"{name} does not exist": (root / name).is_file()
               for name in (f"notebooks/{slug}.py", f"notebooks/reference/{slug}.yaml")}}


def workflow_papers(root: Path) -> list[str]:
    """The papers of this workflow: each has its reference, notebooks/reference/<slug>.yaml (docs/adding.md)."""
    return sorted(p.stem for p in (root / "notebooks" / "reference").glob("*.yaml") if is_paper_slug(p.stem))


# The config sections whose entries the fetch rules stage into `<root>/<name>/` (rules/data.smk), and the function
# that knows the layout of a section's pre-staged copies, where there is one (docs/data.md, "Data already on disk").
FETCHED = ("data", "checkpoints")
LAYOUTS = {("data", "datasets"): "isonorm.data.local:layout_problem"}
LOCAL_FIX = ('Set `path:` to the pre-staged copy, or choose another `source:` (docs/data.md, "Pre-staging for '
             'offline machines").')


def check_local_sources(config: Mapping[str, Any], sources: ConfigSources = ConfigSources(),
                        layouts: Mapping[tuple[str, str], str] = LAYOUTS) -> None:
    """Every ``source: local`` entry not fetched yet names a ``path`` that exists and, where ``layouts`` knows its
    section, holds its layout; else a ConfigError naming each entry's key, its path and the fix. Its fetch job would
    find the same later, among Snakemake's lines about the failed job; a fetched entry reads its path no more
    (isonorm.sources.fetch stops at a complete marker), so a copy removed since stops nothing."""
    problems = []
    for key, entry, folder in local_entries(config):
        if marker_path(folder).is_file():
            continue
        problem = staged_problem(key, entry.get("path"), layouts)
        if problem:
            cause = [*key, "path" if entry.get("path") is not None else "source"]
            problems.append(f"{key_path(key)}: path: {problem} (set in {source_of(cause, sources)})")
    if problems:
        raise ConfigError(listing("a `source: local` entry cannot be staged:", problems, LOCAL_FIX))


def local_entries(config: Mapping[str, Any]) -> Iterator[tuple[list[str], Mapping[str, Any], Path]]:
    """(key path, entry, the folder its fetch writes) of each ``source: local`` entry of the :data:`FETCHED`
    sections: `data: datasets: mnist:`, `checkpoints: models: gpt2:`, …, each fetched into its root."""
    for group in FETCHED:
        settings = config.get(group) or {}
        for section, entries in settings.items():
            for name, entry in (entries.items() if isinstance(entries, Mapping) else ()):
                if isinstance(entry, Mapping) and entry.get("source") == "local":
                    yield [group, section, name], entry, Path(settings["root"], name)


def staged_problem(key: Sequence[str], path: str | None, layouts: Mapping[tuple[str, str], str]) -> str | None:
    """What is wrong with the pre-staged ``path`` of the entry at ``key``, in a few words (None: nothing we can
    tell before its fetch). Read as the fetch job reads it (isonorm.sources.staging.staged_folder): ``~`` expanded,
    a relative path from the working directory, which Snakemake gives its jobs and this process alike."""
    if path is None:
        return "not set, and source `local` stages the copy it names"
    staged = Path(path).expanduser()
    if not staged.exists():
        return f"{path} does not exist" + ("" if staged.is_absolute() else f" in {Path.cwd()}")
    check = layouts.get((key[0], key[1]))
    return resolve(check)(key[2], staged) if check else None


# The sizes of a data set's synthetic stand-in, which a real source refuses (isonorm.data.fetch.dataset_request).
SYNTHETIC_SIZES = ("n_train", "n_test")


def check_dataset_sizes(config: Mapping[str, Any], sources: ConfigSources = ConfigSources()) -> None:
    """No data set of a real source is given a size; else a ConfigError naming the keys, the files that set them,
    the source and the fix. Snakemake merges config files key by key, so the quick preset's sizes stay under a
    `source: local` given after it; without this check its fetch job would stop, in the library's words."""
    problems = []
    for name, entry in (config["data"].get("datasets") or {}).items():
        sized = {key: entry[key] for key in SYNTHETIC_SIZES if entry.get(key) is not None}
        if sized and entry.get("source") != "synthetic":
            where = ["data", "datasets", name]
            given = ", ".join(f"{key}: {value}" for key, value in sized.items())
            files = ", ".join(dict.fromkeys(source_of([*where, key], sources) for key in sized))
            problems.append(f"{key_path(where)}: {given} (set in {files}) size the synthetic stand-in, but the source "
                            f"is {entry.get('source')!r} (set in {source_of([*where, 'source'], sources)}), which "
                            "reads the whole data set")
    if problems:
        raise ConfigError(listing("a data set of a real source is given a size:", problems,
                                  "Set them to null beside that `source:`, in a config file given last (--config "
                                  "reads a nested null as text): `n_train: null, n_test: null`; or use `source: "
                                  "synthetic`."))


def config_error_message(errors: Sequence[jsonschema.ValidationError], sources: ConfigSources,
                         schema_path: str | Path, log_path: str | Path) -> str:
    """The first :data:`SHOWN_ERRORS` problems, one line each, then how many more and where the detail is."""
    problems = [line for error in errors for line in describe(error, sources)]
    return listing(f"the configuration does not match {schema_path}:", problems,
                   f"Edit the file named in brackets; full detail in {log_path} (also printed with --verbose).")


def listing(header: str, problems: Sequence[str], fix: str) -> str:
    """``header``, the first :data:`SHOWN_ERRORS` problems one line each, and ``fix``, opened by how many more
    there are: at most MAX_LINES lines however many problems (isonorm.user_errors)."""
    more = len(problems) - SHOWN_ERRORS
    return "\n".join([header, *(f"  - {p}" for p in problems[:SHOWN_ERRORS]),
                      (f"…and {more} more. " if more > 0 else "") + fix])


def describe(error: jsonschema.ValidationError, sources: ConfigSources) -> list[str]:
    """One line per problem of ``error``: path, what is wrong, and which file (or ``--config``) to edit."""
    path = list(error.absolute_path)
    if error.context:  # oneOf / anyOf: a problem inside the value is told as such, else every alternative
        best = jsonschema.exceptions.best_match(error.context)
        if len(best.absolute_path) == len(path) and best.validator not in ("required", "additionalProperties"):
            branches: dict[int, str] = {}  # the first error of each alternative, in the schema's order
            for sub in error.context:
                branches.setdefault(sub.relative_schema_path[0], expected(sub).removeprefix("expected "))
            wanted = " or ".join(dict.fromkeys(branches[b] for b in sorted(branches)))
            return [f"{key_path(path) or 'the configuration'}: expected {wanted}; got {short(error.instance)} "
                    f"(set in {source_of(path, sources)})"]
        error, path = best, list(best.absolute_path)
    if error.validator == "additionalProperties" and error.validator_value is False:
        known = list(error.schema.get("properties", {}))
        extra = [k for k in error.instance if k not in known]
        return [unknown_key(k, path, known, sources) for k in extra]
    if "propertyNames" in error.schema_path and error.validator == "enum":  # a name outside a closed list
        return [unknown_key(error.instance, path, error.validator_value, sources)]
    if error.validator == "required":  # jsonschema words it "'lr' is a required property"
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        where = f"under {key_path(path)}:" if path else "at the top level"
        return [f"missing key {missing!r} {where} (add it in {source_of(path, ConfigSources(sources.files))})"]
    return [f"{key_path(path) or 'the configuration'}: {expected(error)}; got {short(error.instance)} "
            f"(set in {source_of(path, sources)})"]


def unknown_key(key: str, parent: list, known: Iterable[str], sources: ConfigSources) -> str:
    known = [str(k) for k in known]
    where = f"under {key_path(parent)}:" if parent else "at the top level"
    hint = (did_you_mean(str(key), known) or
            f" — valid keys: {', '.join(known[:8])}{', …' if len(known) > 8 else ''}")
    return f"unknown key {key!r} {where}{hint} (in {source_of([*parent, key], sources)})"


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """`` — did you mean 'x'?`` for the nearest of ``known``, or nothing when none is near."""
    close = nearest(name, known)
    return f" — did you mean {' or '.join(map(repr, close))}?" if close else ""


def nearest(key: str, known: Sequence[str], margin: float = 0.1) -> list[str]:
    """The closest valid keys (difflib's ratio ≥ 0.6), only those about as close as the best: 'epocs' gets
    'epochs', not also 'epoch_caps'."""
    close = difflib.get_close_matches(key, known, n=3)
    best = difflib.SequenceMatcher(None, key, close[0]).ratio() if close else 0.0
    return [k for k in close if difflib.SequenceMatcher(None, key, k).ratio() >= best - margin]


def expected(error: jsonschema.ValidationError) -> str:
    """What the schema asked for, in words."""
    rule, value = error.validator, error.validator_value
    if rule == "type":
        return "expected " + " or ".join(JSON_TYPES.get(k, k) for k in (value if isinstance(value, list) else [value]))
    if rule == "enum":
        return "expected one of " + ", ".join(map(str, value))
    if rule in EXPECTED:
        return "expected " + EXPECTED[rule].format(value)
    return error.message.splitlines()[0][:160]  # jsonschema's own words, first line only


def key_path(path: Iterable[Any]) -> str:
    """``meterez2024: training: epochs`` (list items as ``models[0]``), as the keys are written in YAML."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f": {part}" if text else str(part))
    return text


def short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def contains(tree: Any, path: Sequence[Any]) -> bool:
    for part in path:
        if isinstance(tree, Mapping) and part in tree:
            tree = tree[part]
        elif isinstance(tree, list) and isinstance(part, int) and part < len(tree):
            tree = tree[part]
        else:
            return False
    return True


def source_of(path: Sequence[Any], sources: ConfigSources) -> str:
    """The source whose value Snakemake kept for ``path``: ``--config``, else the last file that sets it
    (``--config`` too when none does: the key came from nowhere else)."""
    if contains(sources.cli, path):
        return CLI
    for file in reversed(list(sources.files)):
        try:
            if contains(yaml.safe_load(Path(file).read_text(encoding="utf-8")), path):
                return display(file)
        except (OSError, yaml.YAMLError):
            continue
    return CLI


def display(file: str | Path) -> str:
    """A file as the user named it: relative to the working directory when inside it."""
    file = Path(file)
    try:
        return str(file.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return os.fspath(file)
