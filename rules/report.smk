# Report stage: local rules, quick, reading only finished results (docs/architecture.md, "Data flow"). Paths
# are under this preset's roots RESULTS and REPORT (results/ and report/ for the paper configuration).
#   paper_claims     <RESULTS>/<slug>/claims.parquet   the paper's checkable quantities, measured from its results
#                    <RESULTS>/<slug>/scored.csv       and scored against notebooks/reference/<slug>.yaml, one
#                                                      verdict each: the one scoring, read by the page and scoreboard
#   paper_notebook   <REPORT>/<slug>.html, <slug>/      a papermill notebook renders every item under its id, with
#                                                      the paper's scored rows and reference file as its inputs
#   scoreboard       <RESULTS>/scoreboard.csv          every paper's scored rows, put together
#   report_index     <REPORT>/index.html, scoreboard.html  verdicts, item grid, provenance; the whole scoreboard
#                    <REPORT>/_archive/                 the whole site again (hard links), for `snakemake --report`
#   onsuccess/onerror  the run's summary; after a failure every page, the scoreboard and the index from what exists
#
# `snakemake --report report.zip` packs what report() marks. One marked folder holds the whole site (_archive,
# see isonorm.report.archive): the archive keeps a marked folder's files in its own layout, so the pages' relative
# links to their figures and to each other resolve in the unpacked archive. Each file is filed under its paper
# (category) and item id (subcategory); the index, the scoreboard page and scoreboard.csv under "all papers".

from isonorm.report.archive import (
    ALL_PAPERS,
    ARCHIVE_DIR,
    ARCHIVE_PATTERNS,
    OVERVIEW,
    archive_category,
    archive_labels,
    archive_subcategory,
)


wildcard_constraints:
    slug="|".join(PAPERS),


rule paper_claims:
    input:
        results=paper_results,
        reference="notebooks/reference/{slug}.yaml",
    output:
        claims=f"{RESULTS}/{{slug}}/claims.parquet",
        scored=f"{RESULTS}/{{slug}}/scored.csv",
    params:
        results=lambda wc: planned_results(wc.slug),
        claims=lambda wc: PAPER_CLAIMS[wc.slug],  # the claims functions of the paper's items (isonorm.items)
        # each row's origin: the ledger of bundles in the results root, or each file's own metadata
        results_root=lambda wc, output: str(Path(output.claims).parents[1]),
    threads: LOCAL.threads
    resources: **LOCAL.resources
    conda:
        "../envs/pipeline.yaml"
    log:
        f"{LOGS}/{{slug}}/claims.log",
    localrule: True
    script:
        "../scripts/measure_claims.py"


rule paper_notebook:
    input:
        results=paper_results,
        scored=f"{RESULTS}/{{slug}}/scored.csv",
        reference="notebooks/reference/{slug}.yaml",  # for the paper's values drawn on its figures
        notebook="notebooks/{slug}.py",
    output:
        # Marked for the Snakemake report in report_index's _archive, beside the other pages they link to.
        page=f"{REPORT}/{{slug}}.html",
        figures=directory(f"{REPORT}/{{slug}}"),
        executed=f"{RESULTS}/{{slug}}/notebook.ipynb",
    params:
        results_dir=lambda wc: f"{RESULTS}/{wc.slug}",
        not_run=lambda wc: left_out_results(wc.slug),  # what the run plan leaves out, and why (isonorm.plan)
    threads: LOCAL.threads
    resources: **LOCAL.resources
    conda:
        "../envs/pipeline.yaml"
    log:
        f"{LOGS}/{{slug}}/notebook.log",
    localrule: True
    script:
        "../scripts/render_notebook.py"


rule scoreboard:
    input:
        scored=expand(f"{RESULTS}/{{slug}}/scored.csv", slug=PAPERS),
    output:
        report(
            f"{RESULTS}/scoreboard.csv",
            category=ALL_PAPERS,
            subcategory=OVERVIEW,
            labels={"file": "scoreboard.csv"},
            caption="../notebooks/captions/scoreboard.rst",
        ),
    threads: LOCAL.threads
    resources: **LOCAL.resources
    conda:
        "../envs/pipeline.yaml"
    log:
        f"{LOGS}/scoreboard.log",
    localrule: True
    script:
        "../scripts/build_scoreboard.py"


rule report_index:
    input:
        scoreboard=f"{RESULTS}/scoreboard.csv",
        references=expand("notebooks/reference/{slug}.yaml", slug=PAPERS),  # the papers' titles, in paper order
        pages=expand(f"{REPORT}/{{slug}}.html", slug=PAPERS),
        figures=expand(f"{REPORT}/{{slug}}", slug=PAPERS),  # laid out again in the archive folder
    output:
        index=f"{REPORT}/index.html",
        scoreboard=f"{REPORT}/scoreboard.html",
        # Written by build_index after the two pages (isonorm.report.archive); every page and item file in it.
        archive=report(
            directory(f"{REPORT}/{ARCHIVE_DIR}"),
            patterns=ARCHIVE_PATTERNS,
            category=archive_category,
            subcategory=archive_subcategory,
            labels=archive_labels,
            caption="../notebooks/captions/site.rst",
        ),
    params:
        papers=PAPERS,
        preset=config["preset"],
        config=config,
        benchmarks=f"{RESULTS}/benchmarks",
        run_summary=lambda wc: plan_summary(),  # what the run plan leaves out (isonorm.run_status)
    threads: LOCAL.threads
    resources: **LOCAL.resources
    conda:
        "../envs/pipeline.yaml"
    log:
        f"{LOGS}/report_index.log",
    localrule: True
    script:
        "../scripts/build_index.py"


# --- the end of every run (rules/common.smk end_of_run): the report from what exists when a job failed, and on the
# terminal what ran, what did not and why, and the command that finishes it -------------------------------------


onsuccess:
    end_of_run(success=True)


onerror:
    end_of_run(success=False)
