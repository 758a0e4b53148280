"""The helpers of notebooks/joudaki2023.py (isonorm.report.pages.joudaki2023): every setting a caption names comes
from the run's config or its results, written as the paper writes it."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest
import yaml

from isonorm.report.pages import joudaki2023 as page

REPO = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))["joudaki2023"]


def _grid(**columns) -> pd.DataFrame:
    """A simulator result: two runs, layers 0 and 1, both stages at layer 1."""
    base = {"run": [0, 1, 0, 1, 0, 1], "layer": [0, 0, 1, 1, 1, 1],
            "stage": ["input", "input", "pre_norm", "pre_norm", "post_norm", "post_norm"],
            "iso_gap": [6.0, 8.0, 4.0, 5.0, 2.0, 3.0], "activation": "relu", "centering": "layer",
            "normalization": "layer", "batch": 10, "width": 1000, "depth": 30, "degeneracy": 100.0, "gain": 1.0,
            "bias": 0.0}
    return pd.DataFrame({**base, **columns})


@pytest.mark.parametrize("count, text", [(2_000_000, "2·10⁶"), (1_000_000, "10⁶"), (20_000, "2·10⁴"),
                                         (2_500_000, "2,500,000"), (7, "7")])
def test_a_sample_count_is_written_as_the_paper_writes_it(count, text):
    assert page.power_of_ten(count) == text


def test_the_band_is_named_by_the_level_the_renderer_draws():
    assert page.CI_TEXT == "95% CI"


def job_settings(shared: str, item: str) -> dict:
    """An item's settings as its job got them (rules/common.smk item_settings; the page reads them from the
    results' provenance, PaperPage.settings)."""
    return {**CONFIG[shared], **CONFIG[item]}


def test_the_simulator_note_names_the_configs_numerics():
    note = page.sim_note(job_settings("simulator", "fig4"))
    sim = CONFIG["simulator"]
    assert f"Simulation in {sim['dtype']} with Gram eigenvalues in {sim['metric_dtype']}" in note
    assert f"by {sim['constants']} (decision D8" in note
    assert page.power_of_ten(sim["monte_carlo_samples"]) in note


def test_the_grid_note_reads_every_setting_from_the_results():
    frame = _grid()
    assert page.grid_note(frame) == "n = 10, d = 1000, L = 30, degeneracy 100, 2 runs"
    assert page.grid_note(frame, width=False, gain=True, bias=True) == (
        "n = 10, L = 30, degeneracy 100, gain 1, bias 0, 2 runs")
    assert page.layer_chain(frame) == "layer centering + LayerNorm"
    assert page.in_words(_grid(normalization=["none", "mf"] * 3), "normalization") == (
        "no normalization or mean-field normalization")


def test_the_line_graph_draws_one_curve_per_hue_level_in_order():
    rows = pd.concat([_grid(centering="mf"), _grid(centering="layer")], ignore_index=True)
    g = page.line_graph(rows, "centering", ["mf", "layer"], page.LABELS["centering"])
    assert [t.get_text() for t in g.figure.legends[0].get_texts()] == ["MF: x ← LN(a − c0)", "layer: x ← LN(a − ā)"]
    assert g.axes.flat[0].get_yscale() == "log"
    plt.close(g.figure)


def test_the_spread_of_a_reading_is_named_in_the_legend():
    rows = _grid()
    g = page.line_graph(rows, "centering", ["layer"], ncol=2)
    band = pd.DataFrame({"min": [1.0, 2.0], "max": [3.0, 4.0], "mean": [2.0, 3.0]}, index=[0, 1])
    page.draw_spread(g, {"relu": band}, "tab:orange", "relu, MF normalization", runs=100, block=10)
    names = [t.get_text() for t in g.figure.legends[0].get_texts()]
    assert names == ["layer", "relu, MF normalization: range of 10 means of 10 runs",
                     "relu, MF normalization: mean of 100 runs"]
    plt.close(g.figure)


def test_the_image_mlp_notes_read_the_config_and_the_results():
    assert page.gap_eps(job_settings("image_mlp", "fig3")) == f"ε = {CONFIG['image_mlp']['eps']:g} (M1b)"
    assert page.beta_note({"beta_method": "quadrature"}) == "D8: β_σ by exact quadrature"
    assert page.beta_note({"beta_method": "monte_carlo"}) == "D8: β_σ by Monte Carlo, as the originals"
    rows = pd.DataFrame({"run": [0, 0, 1], "batch": [0, 1, 0], "batch_size": 100, "act_on_logits": True,
                         "stage": "train"})
    assert page.runs_note(rows) == "2 runs × 2 batches of 100"
    assert page.logits_note(rows, ", which bounds the loss") == (
        "D9: the activation is applied to the logits, which bounds the loss")
    assert page.logits_note(rows.assign(act_on_logits=False)) == "D9 ablation: no activation on the logits"
    assert page.skipped_test_pass(rows) == ["the unused full test-set accuracy pass is skipped"]
    assert page.skipped_test_pass(rows.assign(stage="test")) == []


def test_the_hot_palette_follows_the_legend_order():
    rows = pd.DataFrame({"activation": ["ReLU", "Tanh"]})
    labelled, palette = page.hot_hue(rows, {"Tanh": "Tanh, β_σ = 1.070", "ReLU": "ReLU, β_σ = 1.267"})
    assert list(palette) == ["Tanh, β_σ = 1.070", "ReLU, β_σ = 1.267"]
    assert labelled.act.tolist() == ["ReLU, β_σ = 1.267", "Tanh, β_σ = 1.070"]


def test_the_caption_of_figs_5_and_6_says_what_is_drawn_and_the_method_folds_the_rest():
    frame, sim = _grid(centering="mf"), job_settings("simulator", "fig5_6")
    caption = page.fig5_6_caption(frame, "no normalization vs LayerNorm", " Dashed: a reading.")
    assert caption == ("−log I(G^ℓ) after mean-field centering x ← a − c0, then no normalization vs LayerNorm: "
                       "n = 10, d = 1000, L = 30, degeneracy 100, gain 1, 2 runs. Dashed: a reading.")
    method = page.fig5_6_method(sim, " The reading.")
    assert page.D4_NOTE in method and page.sim_note(sim) in method and method.endswith(" The reading.")
    assert f"singular in {sim['metric_dtype']}" in method
    assert page.sim_method(sim) == f"{page.D4_NOTE} {page.sim_note(sim)}"
