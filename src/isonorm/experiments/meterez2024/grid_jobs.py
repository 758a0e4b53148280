"""The jobs of the meterez2024 training grid: one per data-set group × depth (docs/decisions/meterez2024.md
meterez2024-fig4).

A group is a set of data sets trained in one job, their runs stacked in one model (one natively stacked
computation), named by its members joined with ``+`` (``cifar10+cifar100``). The config key that lists the groups
is ``stacks`` (and the rule's wildcard ``stack``), names older than the word; they are kept: config files set the
key, and cost tables name the grid's jobs by the wildcard. Light on purpose (no torch import): the workflow's
rules read the job names from here when the DAG is built, and the grid's training reads the members back from the
name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

GROUP_SEPARATOR = "+"


def training_groups(training: Mapping[str, Any]) -> list[str]:
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
        names += [GROUP_SEPARATOR.join(members)] if members else []
    return names + [name for name in datasets if name not in seen]


def group_members(group: str) -> list[str]:
    """The data sets of a job name: ``"cifar10+cifar100"`` → [cifar10, cifar100]; one name → [name]."""
    members = group.split(GROUP_SEPARATOR)
    if len(set(members)) != len(members) or not all(members):
        raise ValueError(f"training group {group!r} must name distinct data sets joined by {GROUP_SEPARATOR!r}")
    return members
