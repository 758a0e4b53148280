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
from typing import Any, Iterable, Mapping, Sequence

import jsonschema
import yaml

from .atomic import write_text_atomically
from .outputs import is_paper_slug
from .user_errors import UserError

LOG_PATH = Path("logs/config_check.log")  # fixed: the preset, which picks logs/<preset>/, may itself be wrong
SHOWN_ERRORS = 3
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


def check_papers(config: Mapping[str, Any], workflow_dir: str | Path = ".") -> list[str]:
    """The papers a run makes (``papers:``), each checked for its section and its files; a ConfigError names
    what is missing and the recipe (docs/adding.md)."""
    papers = list(config["papers"])
    root = Path(workflow_dir)
    missing = [f"{slug}: no `{slug}:` section in the config" for slug in papers if slug not in config]
    for slug in papers:
        # rules/<slug>.smk is optional: a paper of plain items only has none (isonorm.items.Item.plain)
        for name in (f"notebooks/{slug}.py", f"notebooks/reference/{slug}.yaml"):
            if not (root / name).is_file():
                missing.append(f"{slug}: {name} does not exist")
    if missing:
        raise ConfigError("a paper listed under `papers:` is incomplete:\n" + "\n".join(f"  - {m}" for m in missing)
                          + "\nAdd what is missing (docs/adding.md, \"Adding a paper\") or take the paper off "
                            "`papers:`.")
    return papers


def config_error_message(errors: Sequence[jsonschema.ValidationError], sources: ConfigSources,
                         schema_path: str | Path, log_path: str | Path) -> str:
    """The first :data:`SHOWN_ERRORS` problems, one line each, then ``(N more)`` and where the detail is."""
    problems = [line for error in errors for line in describe(error, sources)]
    lines = [f"the configuration does not match {schema_path}:"]
    lines += [f"  - {p}" for p in problems[:SHOWN_ERRORS]]
    if len(problems) > SHOWN_ERRORS:
        lines.append(f"  ({len(problems) - SHOWN_ERRORS} more)")
    lines.append(f"Edit the file named in brackets; full detail in {log_path} (also printed with --verbose).")
    return "\n".join(lines)


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
    close = nearest(str(key), known)
    hint = (f"did you mean {' or '.join(repr(k) for k in close)}?" if close
            else f"valid keys: {', '.join(known[:8])}{', …' if len(known) > 8 else ''}")
    return f"unknown key {key!r} {where} — {hint} (in {source_of([*parent, key], sources)})"


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
