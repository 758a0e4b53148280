# Report stage: local rules, quick, reading only finished results (docs/architecture.md, "Data flow").
#   paper_claims     results/<slug>/claims.parquet     the paper's checkable quantities, measured from its results
#   paper_notebook   report/<slug>.html, report/<slug>/  a papermill notebook renders every item under its id
#   scoreboard       results/scoreboard.csv            claims against notebooks/reference/<slug>.yaml, one verdict each
#   report_index     report/index.html                 papers, scoreboard, provenance, runtime per rule

wildcard_constraints:
    slug="|".join(PAPERS),


rule paper_claims:
    input:
        paper_results,
    output:
        "results/{slug}/claims.parquet",
    params:
        results=lambda wc: PAPER_RESULTS[wc.slug],
    conda:
        "../envs/pipeline.yaml"
    log:
        "logs/{slug}/claims.log",
    localrule: True
    script:
        "../scripts/measure_claims.py"


rule paper_notebook:
    input:
        results=paper_results,
        claims="results/{slug}/claims.parquet",
        reference="notebooks/reference/{slug}.yaml",
        notebook="notebooks/{slug}.py",
    output:
        page=report("report/{slug}.html", category="{slug}", caption="../notebooks/captions/paper.rst"),
        figures=report(
            directory("report/{slug}"),
            patterns=["{name}.png"],
            category="{slug}",
            caption="../notebooks/captions/paper.rst",
        ),
        executed="results/{slug}/notebook.ipynb",
    params:
        preset=config["preset"],
    conda:
        "../envs/pipeline.yaml"
    log:
        "logs/{slug}/notebook.log",
    localrule: True
    script:
        "../scripts/render_notebook.py"


rule scoreboard:
    input:
        claims=expand("results/{slug}/claims.parquet", slug=PAPERS),
        references=expand("notebooks/reference/{slug}.yaml", slug=PAPERS),
    output:
        report("results/scoreboard.csv", category="scoreboard", caption="../notebooks/captions/scoreboard.rst"),
    params:
        preset=config["preset"],
    conda:
        "../envs/pipeline.yaml"
    log:
        "logs/scoreboard.log",
    localrule: True
    script:
        "../scripts/build_scoreboard.py"


rule report_index:
    input:
        scoreboard="results/scoreboard.csv",
        pages=expand("report/{slug}.html", slug=PAPERS),
    output:
        "report/index.html",
    params:
        papers=PAPERS,
        preset=config["preset"],
        config=config,
    conda:
        "../envs/pipeline.yaml"
    log:
        "logs/report_index.log",
    localrule: True
    script:
        "../scripts/build_index.py"
