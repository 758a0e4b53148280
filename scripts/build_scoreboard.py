"""Rule entry point: results/scoreboard.csv from every paper's references and claims (architecture §7)."""

from isonorm.report import build_scoreboard, summarize_scoreboard, write_scoreboard
from isonorm.workflow import logged_job

with logged_job(snakemake) as log:
    board = build_scoreboard(snakemake.input.references, snakemake.input.claims, snakemake.params.preset)
    write_scoreboard(board, snakemake.output[0])
    log.info("scoreboard:\n%s", summarize_scoreboard(board).to_string())
