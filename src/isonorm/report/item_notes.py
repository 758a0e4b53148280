"""What a paper notebook's loads tell the items they feed (:class:`ItemNotes`): which library functions computed
their results (the item's "Computed by" line) and why results are absent (the reason a not-run item gives).

A load names the items it feeds, or none: then it feeds the items that its own notebook cell renders. A notebook
has no other handle on "its own cell" than IPython's execution count (:func:`current_cell`), so notes meant for
the cell are kept with the count they were made under and forgotten once another cell runs.
"""

from __future__ import annotations

from typing import Iterable


def current_cell() -> object:
    """The notebook cell running now (IPython's execution count), or None outside a notebook."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with papermill
        return None
    shell = get_ipython()
    return None if shell is None else shell.execution_count


class _ThisCell:
    """Texts noted in the cell running now, in order and each once; empty again in the next cell."""

    def __init__(self) -> None:
        self._cell: object = None
        self._texts: list[str] = []

    def add(self, texts: Iterable[str]) -> None:
        cell = current_cell()
        if self._cell != cell:
            self._texts, self._cell = [], cell
        self._texts = list(dict.fromkeys([*self._texts, *texts]))

    def texts(self) -> list[str]:
        return self._texts if self._cell == current_cell() else []


class ItemNotes:
    """The functions that computed each item's results and why an item's results are absent, noted by the loads
    (``PaperPage.load``) and read when the item is rendered."""

    def __init__(self) -> None:
        # item -> the library functions that computed its results; a static item has none.
        self.sources: dict[str, list[str]] = {}
        self._cell_sources = _ThisCell()
        # item -> why its results are absent (the run's causes, isonorm.run_status.absence_text).
        self.absences: dict[str, str] = {}
        self._cell_absences = _ThisCell()

    def loaded(self, functions: Iterable[str], items: Iterable[str] = ()) -> None:
        """Results of ``functions`` were loaded for ``items`` (none: for the items this cell renders)."""
        functions, items = [f for f in functions if f], list(items)
        for item in items:
            self.sources[item] = list(dict.fromkeys([*self.sources.get(item, []), *functions]))
        self._cell_sources.add([] if items else functions)

    def absent(self, text: str, items: Iterable[str] = ()) -> None:
        """Results that ``items`` (none: the items this cell renders) read are absent, for the reason ``text``.
        The cell keeps the reason either way: an item of the cell that no load named is missing them too."""
        for item in items:
            self.absences[item] = text
        self._cell_absences.add([text])

    def computed_by(self, item: str) -> list[str]:
        """The functions that computed the results ``item`` is drawn from: its own, then its cell's."""
        return list(dict.fromkeys([*self.sources.get(item, []), *self._cell_sources.texts()]))

    def absence(self, item: str) -> str:
        """Why ``item``'s results are absent: its own reason, else its cell's; "" when no load said."""
        return self.absences.get(item) or " ".join(self._cell_absences.texts())
