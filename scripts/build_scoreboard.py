"""Rule entry point: results/scoreboard.csv from every paper's scored rows (architecture §7)."""

from isonorm.verdicts.stages import scoreboard
from isonorm.workflow import logged_job

with logged_job(snakemake):
    scoreboard(snakemake.input.scored, snakemake.output[0])
