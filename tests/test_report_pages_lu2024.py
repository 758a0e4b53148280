"""isonorm.report.pages.lu2024: the captions of notebooks/lu2024.py take every setting from the run's config
(docs/architecture.md §11), and the shared item helpers render under the id they are given."""

from __future__ import annotations

import copy
from pathlib import Path

import pandas as pd
import pytest
import yaml

from isonorm.report.notebook import NOT_RUN
from isonorm.report.pages import lu2024 as l24

CONFIG = yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text(encoding="utf-8"))


@pytest.fixture
def cfg():
    return copy.deepcopy(CONFIG["lu2024"])


class Recorder:
    """Stands in for the notebook's ItemRenderer: records what each item was rendered as."""

    def __init__(self):
        self.calls: dict[str, tuple] = {}

    def table(self, frame, item, caption, deviations=None, method=None, **_):
        """The caption and the method, folded under it, read as one text here."""
        self.calls[item] = ("table", frame, f"{caption} {method or ''}", list(deviations or []))

    def not_run(self, item, reason):
        self.calls[item] = ("not_run", reason)


def test_optimizers_text_names_every_setting_in_the_configs_order():
    optimizers = {"sgd": {"lr": 0.1, "momentum": 0.9, "weight_decay": 1.0e-4}, "adam": {"lr": 1.0e-3}}
    both = "SGD lr 0.1 momentum 0.9 weight decay 0.0001, Adam lr 0.001"
    assert l24.optimizers_text(optimizers, ["adam", "sgd"]) == both
    assert l24.optimizers_text(optimizers, ["adam"]) == "Adam lr 0.001"


def test_variant_text_fills_in_the_activation():
    assert l24.variant_text("norm_res", "gelu") == "Norm_Res BN(GELU(Wx) + x)"
    assert l24.variant_text("res") == "Residual act(Wx) + x"
    assert l24.constant_init_text(None) == "no constant init"
    assert l24.constant_init_text({"layer": "conv1", "value": 0.1}) == "conv1 constant 0.1"


def test_fnn_text_follows_the_config(cfg):
    cfg["fnn"] |= {"width": 7, "blocks": 3, "batch_size": 11, "epochs": 2, "shared_norm": False,
                   "test_train_mode": False}
    assert l24.fnn_setup(cfg) == ("MNIST (ToTensor only), FNN 784→7, 3 hidden 7×7 blocks linearH.0..2, batch 11, "
                                  "2 epochs, PyTorch default init")
    assert "one BatchNorm1d per block" in l24.fnn_decisions(cfg) and "eval mode" in l24.fnn_decisions(cfg)


def test_init_trained_joins_init_and_trained_per_label():
    table = pd.DataFrame({"Optimizer": ["adam"], "PII L1 init": [1.0], "PII L1 trained": [0.12345], "ACC %": [97.123]})
    out = l24.init_trained(table, ["L1"])
    assert list(out.columns) == ["Optimizer", "PII L1 (init/trained)", "ACC %"]
    assert out.iloc[0].tolist() == ["adam", "1.000/0.123", 97.12]


def test_cnn_table_renders_under_its_id_with_the_configs_settings(cfg):
    render = Recorder()
    cfg["simple_cnn"] |= {"epochs": 3, "batch_size": 17}
    cfg["simple_cnn"]["optimizers"]["sgd"]["momentum"] = 0.5
    table = pd.DataFrame({"Optimizer": ["sgd"], **{f"PII {label} {stage}": [0.5] for label in ("Layer_1", "Layer_2",
                                                  "Layer_3") for stage in ("init", "trained")}})
    l24.cnn_table(render, cfg, "lu2024-apptable2", table, deviations=["extra"])
    l24.cnn_table(render, cfg, "lu2024-table2", None)
    kind, frame, caption, deviations = render.calls["lu2024-apptable2"]
    assert kind == "table" and "CIFAR-100" in caption and "batch 17, 3 epochs" in caption
    assert "SGD lr 0.001 momentum 0.5, Adam lr 0.001" in caption and "accuracy" not in caption
    assert deviations[-1] == "extra"
    assert render.calls["lu2024-table2"] == ("not_run", NOT_RUN)


def test_resnet_table_states_the_compared_accuracy_and_the_configs_optimizers(cfg):
    render = Recorder()
    table = pd.DataFrame({"Function/Optimizer": ["gelu/adam"], "PII original": [0.3], "PII norm_res": [0.1]})
    l24.resnet_table(render, cfg, "lu2024-table4", table, compared="train_accuracy")
    caption = render.calls["lu2024-table4"][2]
    assert "compared with the train accuracy" in caption
    assert "Adam lr 0.001, SGD lr 0.1 momentum 0.9 weight decay 0.0001" in caption
    assert f"batch {cfg['table4']['batch_size']}, {cfg['table4']['epochs']} epochs" in caption


def test_table5_joins_the_parts_that_ran_and_names_the_others():
    part = l24.Table5Part(pd.DataFrame({"model": ["a"], "Query": [0.1]}), "A.", "How A.", ["dev a"])
    other = l24.Table5Part(pd.DataFrame({"model": ["b"], "Query": [0.2]}), "B.", "How B.", ["dev b"])
    joined = l24.table5({"(a)": part, "(b)": None, "(c)": other})
    assert joined.rows["model"].tolist() == ["a", "b"]
    assert joined.caption.endswith(" A. B. Not run in this configuration: (b).")
    assert joined.method == "How A. How B."
    assert joined.deviations == ["dev a", "dev b"]
    assert l24.table5({"(a)": None}) is None
