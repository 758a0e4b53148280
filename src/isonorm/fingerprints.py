"""What a results file was computed by, as two fingerprints a bundle carries (docs/bundles.md, "Current or stale").

- **code**: the SHA-256 of the source of every module of this package that the job's function runs with: its own
  module, every ``isonorm`` module that one imports, transitively (read from the source, not imported), the
  packages above each of them (their ``__init__`` runs first), and the job's glue (``isonorm.workflow``,
  ``isonorm.results`` and the rule script ``scripts/run_experiment.py``, which write the file). A change to
  joudaki2023's code leaves lu2024's fingerprints as they were; a change to the training engine changes every
  trained file's. Left out: the bookkeeping that computes no number (:data:`BOOKKEEPING`): what scores results
  (the ``verdicts`` package and the papers' ``*_summaries`` claims modules, which an experiment module imports for
  its items' records; every checkout's claims job scores the same results again with its own), the items' records
  (``items``: which files exist, not what is in them), how a failure is recorded (``run_status``), what the
  metadata says of the machine (``provenance``) and how errors are worded (``user_errors``).
- **settings**: the SHA-256 of the job's parameters as the rule passes them (the function, its config section, its
  keyword arguments), less the ones that say where or on what a job runs and not what it computes
  (:data:`LOCATION_KEYS`: a data root, a checkpoint or data folder, the device), so that a file computed on a GPU cluster
  with its data under /scratch is current in a checkout whose data are elsewhere.

Both are written into every results file's metadata when it is written (isonorm.results), by the code that
computed it; a bundle reads them from there, and a checkout computes its own from its code and its rules' params.
"""

from __future__ import annotations

import ast
import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

PACKAGE = "isonorm"
PACKAGE_ROOT = Path(__file__).resolve().parent
# The modules that run every experiment job and write its file (scripts/run_experiment.py imports them).
JOB_GLUE = ("isonorm.workflow", "isonorm.results")
# A job's parameters that say where its inputs and outputs are and on what it runs, not what it computes.
BOOKKEEPING = ("isonorm.verdicts", "isonorm.items", "isonorm.run_status", "isonorm.provenance", "isonorm.user_errors")
CLAIMS_SUFFIX = "_summaries"
LOCATION_KEYS = frozenset({"data_root", "checkpoint", "checkpoint_root", "checkpoint_dir", "texts", "instructions",
                           "weights_path", "device"})


def _module_file(name: str) -> Path | None:
    parts = name.split(".")[1:]
    base = PACKAGE_ROOT.joinpath(*parts)
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _imports(name: str, path: Path) -> set[str]:
    """The ``isonorm`` modules the source of module ``name`` imports (``from x import y`` counts y when y is a
    module); an import inside a function counts too, since the job may call it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {m for m in found if (m == PACKAGE or m.startswith(PACKAGE + ".")) and _module_file(m) is not None}


def _bookkeeping(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in BOOKKEEPING) or name.endswith(CLAIMS_SUFFIX)


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


@lru_cache(maxsize=None)
def module_closure(*roots: str) -> tuple[str, ...]:
    """Every ``isonorm`` module that importing ``roots`` runs, sorted."""
    seen: set[str] = set()
    todo = [m for root in roots for m in (*_parents(root), root)]
    while todo:
        name = todo.pop()
        path = _module_file(name)
        if name in seen or path is None or _bookkeeping(name):
            continue
        seen.add(name)
        todo.extend(m for new in _imports(name, path) for m in (*_parents(new), new))
    return tuple(sorted(seen))


def _script() -> Path | None:
    script = PACKAGE_ROOT.parents[1] / "scripts" / "run_experiment.py"
    return script if script.is_file() else None  # an installed package without the checkout: the library alone


@lru_cache(maxsize=None)
def code_fingerprint(function: str) -> str:
    """The code fingerprint of a job that runs ``package.module:function`` (module docstring)."""
    digest = hashlib.sha256()
    for name in module_closure(function.partition(":")[0], *JOB_GLUE):
        path = _module_file(name)
        assert path is not None
        digest.update(f"{name}\n".encode())
        digest.update(path.read_bytes())
    script = _script()
    if script is not None:
        digest.update(b"scripts/run_experiment.py\n" + script.read_bytes())
    return digest.hexdigest()


def computed_settings(run: Mapping[str, Any]) -> dict[str, Any]:
    """A job's parameters (rules/common.smk ``experiment``) without the :data:`LOCATION_KEYS`."""
    kwargs = {k: v for k, v in dict(run.get("kwargs") or {}).items() if k not in LOCATION_KEYS}
    return {**{k: v for k, v in run.items() if k != "kwargs"}, "kwargs": kwargs}


def settings_fingerprint(run: Mapping[str, Any]) -> str:
    """The settings fingerprint of a job's parameters (module docstring): canonical JSON, keys sorted."""
    text = json.dumps(computed_settings(run), sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def computed_by(run: Mapping[str, Any]) -> dict[str, str]:
    """What a results file's metadata records of the job that computes it, beside its provenance: its two
    fingerprints, which a bundle carries (isonorm.bundles). No time: the same code and settings write the same bytes
    (when a file was written, Snakemake's record of its job and the file itself say)."""
    return {"code_fingerprint": code_fingerprint(str(run["function"])), "settings_fingerprint": settings_fingerprint(run)}
