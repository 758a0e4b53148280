"""Rule entry point: run one experiment function and write its tidy results (architecture §5), with the code and
settings fingerprints a bundle checks (isonorm.fingerprints); under the shapes preset with its step cap, storing the
job's cost record with the results (docs/cost.md)."""

from isonorm.fingerprints import computed_by
from isonorm.results import write_results
from isonorm.workflow import costed_experiment, discard_checkpoint, job_device, logged_job

with logged_job(snakemake):
    run = snakemake.params.run
    device = job_device(run)  # resolved once; a GPU that torch cannot use stops the job here
    frame, cost = costed_experiment(run, snakemake, device)
    write_results(frame, snakemake.output[0], config=run, device=device, extra={**cost, **computed_by(run)})
    discard_checkpoint(run)
