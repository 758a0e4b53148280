"""Rule entry point: <RESULTS>/cost.csv and <REPORT>/cost.html from the cost records of a shapes run (docs/cost.md)."""

from isonorm.cost import cost_table, memory_warnings, write_cost_table
from isonorm.report.cost_page import write_cost_page
from isonorm.workflow import logged_job

with logged_job(snakemake) as log:
    table = cost_table(snakemake.input, snakemake.params.results)
    write_cost_table(table, snakemake.output.table)
    write_cost_page(table, snakemake.output.page, snakemake.params.preset)
    log.info("projected hours per paper:\n%s", table.groupby("paper").projected_hours.sum().to_string())
    for warning in memory_warnings(table):
        log.warning("memory guard: %s", warning)
