"""Library functions as the workflow names them: a rule holds the function itself (so that an editor follows it and
a rename reaches it), and a job, a cluster job included, receives its name ``package.module:function``, which
:func:`resolve` turns back into the function. Light on purpose: every Snakemake process imports this module."""

from __future__ import annotations

import importlib
from typing import Any, Callable


def name_of(function: Callable[..., Any]) -> str:
    """``package.module:function`` of a module-level function, the form a job and a results file's provenance carry;
    a lambda, a nested function or a bound method has no such name and is refused (a job could not import it)."""
    module, qualname = getattr(function, "__module__", None), getattr(function, "__qualname__", "")
    if not callable(function) or module is None or not qualname or "." in qualname or "<" in qualname:
        raise TypeError(f"{function!r} is not a module-level function: a rule names the library function itself "
                        "(e.g. `experiment(at_init.fig1, ...)` after `from isonorm.experiments.meterez2024 import "
                        "at_init`)")
    if resolve(f"{module}:{qualname}") is not function:
        raise TypeError(f"{module}:{qualname} does not resolve to {function!r}; name the function its module defines")
    return f"{module}:{qualname}"


def resolve(name: str) -> Callable[..., Any]:
    """``package.module:function`` -> the function."""
    module_name, _, attribute = name.partition(":")
    return getattr(importlib.import_module(module_name), attribute)
