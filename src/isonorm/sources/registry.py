"""A kind's registry: its entries by name, and the one error for a name it does not know."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Mapping, TypeVar

Spec = TypeVar("Spec")


@dataclass(frozen=True)
class Registry(Generic[Spec]):
    """``entries`` (name -> spec) of one kind of input; ``what`` names the kind in messages ("data set"),
    ``home`` says where a new entry is added (the dict's import path, plus what an entry needs)."""

    entries: Mapping[str, Spec]
    what: str
    home: str

    def lookup(self, name: str) -> Spec:
        """The entry for ``name``, or a ValueError listing the known names and where to add one."""
        try:
            return self.entries[name]
        except KeyError:
            raise ValueError(
                f"unknown {self.what} {name!r}; known: {', '.join(sorted(self.entries))}. "
                f"Add an entry to {self.home} to support another one."
            ) from None
