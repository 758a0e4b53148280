"""The report: it renders pages from the scored rows (isonorm.verdicts) and the results, and decides nothing.

- ``notebook``       ``ItemRenderer``: figures and tables of a paper page, each under its item id; ``item_files``
  saves them, ``item_notes`` keeps what the notebook's loads say about its items
- ``paper_points``   the paper's read-off values drawn on a figure as "paper" markers (``plot`` references)
- ``site``           ``report/index.html`` and ``report/scoreboard.html`` (``build_index``), made of
  ``verdict_figure`` (stacked bars per paper, inline SVG), ``item_grid`` (every item as a tile coloured by its
  worst verdict) and ``scoreboard_page`` (the whole scoreboard, sortable and filterable)
- ``archive``        ``report/_archive/``: the whole site again, as hard links, for ``snakemake --report report.zip``,
  and how each of its files is filed there (paper, item id, format)
- ``stages``         the page and index rules' steps; ``end_of_run`` runs them, and the verdicts' own steps
  (isonorm.verdicts.stages), from what exists after a run that could not finish
- ``benchmarks``     runtime per rule from Snakemake ``benchmark:`` files
- ``cost_page``      the page of the shapes preset's cost table (the table is isonorm.cost's)

``ItemRenderer`` is imported on first use (``from isonorm.report import ItemRenderer``) because it pulls in
IPython and seaborn, which the index rule does not need (the index imports matplotlib only when it draws its
verdict figure). The headless-browser check of a built report is a test tool (tests/tools/browser_check.py).
"""

from .site import SitePages, build_index

__all__ = ["ItemRenderer", "SitePages", "build_index"]


def __getattr__(name: str):
    # PEP 562: resolve the notebook helper lazily (see the module docstring).
    if name == "ItemRenderer":
        from .notebook import ItemRenderer

        return ItemRenderer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
