"""isonorm.report.pages.meterez2024: the captions of notebooks/meterez2024.py take every setting from the run's config
or its results (docs/architecture.md §11), and the shared item helpers render under the id they are given."""

from __future__ import annotations

import copy
from pathlib import Path

import pandas as pd
import yaml

from isonorm.metrics.gradients import EXPLOSION_RATE_GAP
from isonorm.report.markup import escape
from isonorm.report.notebook import ItemRenderer
from isonorm.report.pages import meterez2024 as pm

CONFIG = yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text(encoding="utf-8"))
DEFAULTS = CONFIG["meterez2024"]


def renderer(tmp_path) -> ItemRenderer:
    """A real renderer without references: what it rendered is in ``.rendered`` (item id → HTML)."""
    return ItemRenderer("meterez2024", tmp_path, None, None, "quick")


def test_the_paper_epochs_are_config_yamls_default():
    # the default config is the paper preset, which trains every run for the paper's 10³ epochs (decision C5)
    assert pm.PAPER_EPOCHS == DEFAULTS["training"]["epochs"]
    assert pm.epoch_deviations(pm.PAPER_EPOCHS) == []
    assert pm.epoch_deviations(pm.PAPER_EPOCHS - 1)


def test_model_text_describes_each_configured_normalisation():
    cfg = copy.deepcopy(DEFAULTS)
    assert pm.model_text(cfg["fig1"]["model"]) == (
        "linear BN-MLP with orthogonal weights, the paper's Bn (eq. 4: no mean reduction, f = 1) and no bias")
    assert pm.model_text(cfg["fig3"]["model"], skip=["init"]) == (
        "linear BN-MLP with custom BN (no mean reduction, f = √n) and no bias")
    assert pm.model_text(cfg["fig5"]["model"], skip=["activation"]) == (
        "BN-MLP with orthogonal weights, torch BatchNorm1d and biases")
    with_mean = {**cfg["figg6"]["model"], **cfg["figg6"]["variants"][0]}
    assert pm.norm_text(with_mean) == "custom BN (mean reduction, f = √n)"
    # a results row stores an unset force factor as NaN
    assert pm.norm_text(pd.Series({"norm": "bn", "mean_reduction": False, "force_factor": float("nan")})) == (
        "custom BN (no mean reduction, f = √n)")
    cfg["fig1"]["model"]["force_factor"] = 2.0
    assert "custom BN (no mean reduction, f = 2)" in pm.model_text(cfg["fig1"]["model"])


def test_training_setup_names_every_setting_of_the_config():
    training = dict(DEFAULTS["training"])
    training.update(width=37, batch_size=23, lr=0.05, gain_exponent=0.7, measure_on_copy=True)
    text = pm.training_setup(training)
    for part in ("width 37", "batch 23", "SGD lr 0.05", "gain exponent 0.7", "C15 faithful: False",
                 "orthogonal weights, torch BatchNorm1d and biases"):
        assert part in text, part


def test_at_init_captions_read_the_results_columns():
    rows = pd.DataFrame({"metric": ["log_grad", "log_grad", "rate"], "layer": [0, 0, 10], "run": [0, 2, 1],
                         "width": [16, 16, 16], "batch_size": [20, 20, 20], "dataset": ["mnist"] * 3,
                         "value": [1.0, float("inf"), 0.5]})
    assert pm.grad_text(rows) == "log‖∇W_0 L‖_F (fc_0)"
    assert pm.sample_text(rows) == f"width 16, batch 20; mean and {pm.CI_LEVEL:g} % CI of 3 runs"
    note = pm.at_init_note(rows, "dataset_constants", 1)
    assert note.startswith("One seeded MNIST train batch (ToTensor + Normalize with the MNIST statistics)")
    assert note.endswith("1 non-finite value(s) (float32 overflow or singular Gram) left out (C11).")
    assert pm.at_init_note(rows, "to_tensor").endswith("float32 networks (C11).")
    assert pm.rate_text(EXPLOSION_RATE_GAP) == (
        f"R(ℓ) = (log‖∇W_(ℓ−{EXPLOSION_RATE_GAP})‖ − log‖∇W_ℓ‖)/{EXPLOSION_RATE_GAP}")
    assert pm.rate_text(4, 10) == "R(10) = (log‖∇W_6‖ − log‖∇W_10‖)/4"
    assert pm.listing(["identity", "sin", "tanh"]) == "identity, sin and tanh"
    assert pm.signed(-1.0) == "−1.0"


def accuracy_curves() -> pd.DataFrame:
    return pd.DataFrame([dict(dataset="mnist", depth=depth, activation=act, epoch=epoch, train_acc=0.5, test_acc=0.4)
                         for depth in (4, 8) for act in ("sin", "tanh", "identity") for epoch in (1, 2)])


def test_accuracy_item_renders_under_its_id_or_is_not_run(tmp_path):
    render, curves = renderer(tmp_path), accuracy_curves()
    caption = pm.train_test_caption("mnist", pm.training_setup(DEFAULTS["training"]), pm.stopped_note(0))
    activations = DEFAULTS["training"]["activations"]
    pm.accuracy_item(render, "meterez2024-figg1", curves, ["train_acc", "test_acc"], activations, caption)
    pm.accuracy_item(render, "meterez2024-figg2", curves.iloc[0:0], ["train_acc", "test_acc"], activations, caption)
    assert caption.startswith("MNIST: running train accuracy")
    assert escape(caption) in render.rendered["meterez2024-figg1"]
    assert (tmp_path / "meterez2024" / "meterez2024-figg1.png").exists()
    assert 'class="item not-run"' in render.rendered["meterez2024-figg2"]
    assert pm.last_epoch(curves) == 2 and pm.last_epoch(curves.iloc[0:0]) == 0


def test_profile_item_renders_under_its_id_or_is_not_run(tmp_path):
    render = renderer(tmp_path)
    profile = pd.DataFrame([dict(dataset="cifar10", depth=depth, activation=act, epoch=epoch, layer=layer, value=0.1)
                            for depth in (4, 8) for act in ("sin", "tanh") for epoch in (1, 2)
                            for layer in range(depth + 1)])
    pm.profile_item(render, "meterez2024-figf1", profile, ["sin", "tanh"], "φ", "Weight isometry gap.", 3)
    pm.profile_item(render, "meterez2024-figf2", profile.iloc[0:0], ["sin", "tanh"], "g", "Gradient norm.", 0)
    assert "; 3 non-finite point(s) dropped (C11)." in render.rendered["meterez2024-figf1"]
    assert 'class="item not-run"' in render.rendered["meterez2024-figf2"]
