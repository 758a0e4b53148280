# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Example et al. (2099): How independent are the columns of a random matrix?
#
# The paper's one figure, drawn from this run's results (`results/example2099/`), next to what it printed.

# %% tags=["parameters"]
results_dir = "results/example2099"
report_dir = "report"
preset = "paper"
config_json = "{}"

# %%
import matplotlib.pyplot as plt
import seaborn as sns

from isonorm.report.notebook import CI, NOT_RUN, open_paper

page = open_paper("example2099", results_dir=results_dir, report_dir=report_dir, preset=preset,
                  config_json=config_json, style=dict(style="whitegrid", context="paper"))
cfg, render, load = page.cfg, page.render, page.load

# %% [markdown]
# ## Figure 1 — PII of a random matrix vs width

# %%
df = load("fig1/*.parquet")
if df is None:
    render.not_run("example2099-fig1", NOT_RUN)
else:
    fig, ax = plt.subplots(figsize=(4, 3))
    sns.lineplot(data=df, x="width", y="pii", marker="o", ax=ax, **CI)
    ax.set(xscale="log", xlabel="width d", ylabel="PII of the columns")
    render.figure(fig, "example2099-fig1",
                  f"PII of d × d matrices with N(0, 1) entries, d in {cfg['fig1']['widths']}; mean and 95 % CI "
                  f"of {cfg['fig1']['runs']} runs.")
