"""Rule entry point: execute a paper's notebook with papermill and render it to <report root>/<slug>.html."""

from pathlib import Path

from isonorm.report.render import render_paper_notebook
from isonorm.workflow import logged_job

with logged_job(snakemake):
    render_paper_notebook(
        notebook=snakemake.input.notebook,
        executed=snakemake.output.executed,
        page=snakemake.output.page,
        parameters={"run": {  # the notebook's one parameter (isonorm.report.notebook.open_paper)
            "results_dir": str(Path(snakemake.input.claims).parent),  # <results root>/<slug>
            "report_dir": str(Path(snakemake.output.page).parent),
            "preset": snakemake.params.preset,
            "config": dict(snakemake.config[snakemake.wildcards.slug]),
        }},
        log_path=snakemake.log[0],
    )
