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
run = {}  # the run the notebook rule passes: results and report folders, preset, config section

# %%
import matplotlib.pyplot as plt
import seaborn as sns

from isonorm.report.notebook import CI, open_paper

cfg, render, load = open_paper("example2099", run)

# %% [markdown]
# ## Figure 1 — PII of a random matrix vs width

# %%
df = load("fig1/*.parquet", "example2099-fig1")  # None, and the item shown as not run, without results
if df is not None:
    fig, ax = plt.subplots(figsize=(4, 3))
    sns.lineplot(data=df, x="width", y="pii", marker="o", ax=ax, **CI)
    ax.set(xscale="log", xlabel="width d", ylabel="PII of the columns")
    render.figure(fig, "example2099-fig1",
                  f"PII of d × d matrices with N(0, 1) entries, d in {cfg['fig1']['widths']}; mean and 95 % CI "
                  f"of {cfg['fig1']['runs']} runs.")
