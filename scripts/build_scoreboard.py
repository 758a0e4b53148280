"""Rule entry point: results/scoreboard.csv from every paper's references and claims (architecture §7)."""

from isonorm.report import build_scoreboard, summarize_scoreboard, write_scoreboard
from isonorm.report.scoreboard import apart_counts, headline
from isonorm.workflow import logged_job

with logged_job(snakemake) as log:
    board = build_scoreboard(snakemake.input.references, snakemake.input.claims, snakemake.params.preset)
    write_scoreboard(board, snakemake.output[0])
    # The headline counts default readings of a reproduction only (docs/decisions/README.md, "Verdicts").
    log.info("scoreboard: %s\n%s\ncounted apart:\n%s", headline(board), summarize_scoreboard(board).to_string(),
             apart_counts(board).to_string())
