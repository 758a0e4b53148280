"""The jobs of the meterez2024 training grid: one per data-set stack × depth (docs/decisions/meterez2024.md meterez2024-fig4).

A stack is a group of data sets of equal shape trained as one natively stacked computation, named by its
members joined with ``+`` (``cifar10+cifar100``). Light on purpose (no torch import): the workflow's rules read
the job names from here when the DAG is built, and the grid's training reads the members back from the name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

STACK_SEPARATOR = "+"


def training_stacks(training: Mapping[str, Any]) -> list[str]:
    """Job names of the grid (config ``meterez2024: training:``): each group of ``stacks`` (its members that
    ``datasets`` lists, joined by "+"), then every other listed data set alone."""
    datasets: Sequence[str] = list(training["datasets"])
    names: list[str] = []
    seen: set[str] = set()
    for group in training["stacks"]:
        members = [name for name in group if name in datasets]
        if seen & set(members):
            raise ValueError(
                f"meterez2024: training: stacks: {sorted(seen & set(members))} appear in two stacks; "
                "list each data set in one stack at most"
            )
        seen.update(members)
        names += [STACK_SEPARATOR.join(members)] if members else []
    return names + [name for name in datasets if name not in seen]


def stack_members(stack: str) -> list[str]:
    """The data sets of a job name: ``"cifar10+cifar100"`` → [cifar10, cifar100]; one name → [name]."""
    members = stack.split(STACK_SEPARATOR)
    if len(set(members)) != len(members) or not all(members):
        raise ValueError(f"training stack {stack!r} must name distinct data sets joined by {STACK_SEPARATOR!r}")
    return members
