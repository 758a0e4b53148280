"""Rule entry point: results/scoreboard.csv from every paper's references and claims (architecture §7)."""

from isonorm.report.stages import scoreboard
from isonorm.workflow import logged_job

with logged_job(snakemake):
    scoreboard(snakemake.input.references, snakemake.input.claims, snakemake.params.preset, snakemake.output[0])
