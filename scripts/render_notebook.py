"""Rule entry point: execute a paper's notebook with papermill and render it to report/<slug>.html."""

from isonorm.report.render import render_paper_notebook
from isonorm.workflow import logged_job

with logged_job(snakemake):
    slug = snakemake.wildcards.slug
    render_paper_notebook(
        notebook=snakemake.input.notebook,
        executed=snakemake.output.executed,
        page=snakemake.output.page,
        parameters={
            "results_dir": f"results/{slug}",
            "report_dir": "report",
            "preset": snakemake.params.preset,
            "config_json": snakemake.config[slug],
        },
        log_path=snakemake.log[0],
    )
