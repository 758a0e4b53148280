"""The report: reference values, the scoreboard, notebook item rendering, the index page, the browser check.

- ``references``     load ``notebooks/reference/<slug>.yaml`` (what each paper reported)
- ``claims``         ``results/<slug>/claims.parquet`` (what the run produced)
- ``comparison``     compare rules and verdicts, shared by every table that shows one
- ``scoreboard``     each paper's claims scored once (``results/<slug>/scored.csv``), ``results/scoreboard.csv``
  made of them, and its summary (architecture §7)
- ``notebook``       ``ItemRenderer``: figures and tables of a paper page, each under its item id; ``item_files``
  saves them, ``item_notes`` keeps what the notebook's loads say about its items
- ``paper_points``   the paper's read-off values drawn on a figure as "paper" markers (``plot`` references)
- ``site``           ``report/index.html`` and ``report/scoreboard.html`` (``build_index``), made of
  ``verdict_figure`` (stacked bars per paper, inline SVG), ``item_grid`` (every item as a tile coloured by its
  worst verdict) and ``scoreboard_page`` (the whole scoreboard, sortable and filterable)
- ``archive``        ``report/_archive/``: the whole site again, as hard links, for ``snakemake --report report.zip``,
  and how each of its files is filed there (paper, item id, format)
- ``stages``         the report rules' steps, run again by ``end_of_run`` from what exists after a failed job
- ``benchmarks``     runtime per rule from Snakemake ``benchmark:`` files
- ``browser_check``  headless-Chromium check of the built report (page-specific parts in ``browser_pages``)

``ItemRenderer`` is imported on first use (``from isonorm.report import ItemRenderer``) because it pulls in
IPython and seaborn, which the scoreboard and index rules do not need (the index imports matplotlib only
when it draws its verdict figure); ``browser_check`` (Selenium) is imported from its module by the test that
runs it.
"""

from .claims import read_claims, write_claims
from .comparison import COMPARE_RULES, VERDICTS, verdict, within
from .ids import check_item_id
from .references import ReferenceFormatError, load_all_references, load_references, paper_title
from .scoreboard import SCOREBOARD_COLUMNS, build_scoreboard, read_scoreboard, summarize_scoreboard, write_scoreboard
from .site import SitePages, build_index

__all__ = [
    "COMPARE_RULES", "ItemRenderer", "SCOREBOARD_COLUMNS", "VERDICTS", "ReferenceFormatError",
    "SitePages", "build_index", "build_scoreboard", "check_item_id", "load_all_references", "load_references",
    "paper_title", "read_claims", "read_scoreboard", "summarize_scoreboard", "verdict", "within", "write_claims",
    "write_scoreboard",
]


def __getattr__(name: str):
    # PEP 562: resolve the notebook helper lazily (see the module docstring).
    if name == "ItemRenderer":
        from .notebook import ItemRenderer

        return ItemRenderer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
