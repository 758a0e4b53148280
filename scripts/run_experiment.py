"""Rule entry point: run one experiment function and write its tidy results (architecture §5)."""

from isonorm.results import write_results
from isonorm.workflow import discard_checkpoint, logged_job, run_experiment

with logged_job(snakemake):
    run = snakemake.params.run
    frame = run_experiment(run)
    write_results(frame, snakemake.output[0], config=run, device=run["kwargs"].get("device"))
    discard_checkpoint(run)
