"""Execute a paper's jupytext notebook with papermill and render the executed copy to static HTML.

The notebook (``notebooks/<slug>.py``, percent format) is converted in memory, executed with the rule's
parameters injected after its ``parameters`` cell, saved as ``results/<slug>/notebook.ipynb`` (code and
outputs, for whoever wants to see how a figure was drawn) and rendered without code cells to
``report/<slug>.html``: the page shows figures, tables and text only.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Mapping

import jupytext
import nbformat
import papermill
from nbconvert import HTMLExporter

from ..atomic import atomic_write, write_text_atomically


def render_paper_notebook(
    notebook: str | Path,
    executed: str | Path,
    page: str | Path,
    parameters: Mapping[str, Any],
    log_path: str | Path | None = None,
    cwd: str | Path = ".",
) -> None:
    """Run ``notebook`` with ``parameters`` (papermill writes them as Python literals) and write the page."""
    params = dict(parameters)
    source = jupytext.read(notebook)
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / (Path(notebook).stem + ".ipynb")
        nbformat.write(source, template)
        with atomic_write(executed) as out:
            papermill.execute_notebook(
                str(template), str(out), parameters=params, kernel_name="python3", cwd=str(cwd),
                progress_bar=False, log_output=log_path is not None, report_mode=False,
            )
    write_page(executed, page)


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body {{ font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em;
line-height: 1.45 }} img {{ max-width: 100%; }} nav {{ margin-bottom: 1em }}</style></head>
<body><nav><a href="index.html">&larr; all papers and the scoreboard</a></nav>
{body}
</body></html>
"""


def write_page(executed: str | Path, page: str | Path) -> None:
    """Static, self-contained HTML of the executed notebook: outputs only, no scripts from the internet."""
    notebook = nbformat.read(executed, as_version=4)
    exporter = HTMLExporter(template_name="basic", exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True, exclude_anchor_links=True)
    body, _ = exporter.from_notebook_node(notebook)
    title = Path(page).stem
    write_text_atomically(page, PAGE.format(title=title, body=body))
