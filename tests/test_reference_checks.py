"""The headline counts what a model can get wrong (docs/decisions/README.md, "Checks" and "Counting"): every
paper's rows whose value no network, training or seed can move are consistency checks, and a reported value is
counted once. The reference files as written; no pipeline output is involved."""

import re
from pathlib import Path

import pandas as pd
import pytest

from isonorm.verdicts.references import load_all_references, load_references

REFERENCES = sorted((Path(__file__).resolve().parents[1] / "notebooks" / "reference").glob("*.yaml"))
# "Checks": the quantities whose value is an integral of a fixed function (the isometry strength β of an
# activation), the input alone (layer 0; meterez2024's `*_first` empirical level equals φ(X₀) of the input), or a
# closed form against itself.
MODEL_FREE = (re.compile(r"^beta_"), re.compile(r"_l0$"), re.compile(r"^log10_empirical_d\d+_first$"),
              re.compile(r"^closed_form_equals_quadrature$"))
# lu2024's init values: the PII of a freshly drawn layer, fixed by its init and shape (no training, data or optimiser
# moves it): lu2024-table1, -table2, -apptable2 `<optimizer>_<layer>_init` and lu2024-fig1 `pii_init`.
DRAWN_AT_INIT = re.compile(r"(^|_)(layer\d_)?init$")


def model_free(quantity: str, item: str = "") -> bool:
    return any(pattern.search(quantity) for pattern in MODEL_FREE) or (
        item.startswith("lu2024-") and bool(DRAWN_AT_INIT.search(quantity)))


@pytest.mark.parametrize("path", REFERENCES, ids=lambda p: p.stem)
def test_rows_no_model_can_move_are_checks(path):
    frame = load_references(path)
    free = pd.Series([model_free(q, i) for q, i in zip(frame["quantity"], frame["item"])], index=frame.index)
    wrong = frame[free & (frame["check"] != "consistency")]
    assert wrong.empty, list(zip(wrong["item"], wrong["quantity"]))


@pytest.mark.parametrize("path", REFERENCES, ids=lambda p: p.stem)
def test_every_check_says_why(path):
    frame = load_references(path)
    checks = frame[frame["check"] == "consistency"]
    assert checks["note"].str.strip().ne("").all()


def test_a_reported_value_is_counted_once():
    """The β of one activation at one gain is one value, however many tables and figures print it: no two counted
    rows of a paper give the same β, a repeat names the counted row in `same_as`. (Other quantities of the same
    name in two items are two printed cells, e.g. the init PII of two tables.)"""
    frame = load_all_references(REFERENCES)
    counted = frame[frame["same_as"].isna() & frame["quantity"].str.startswith("beta_")]
    repeated = counted[counted.duplicated(["paper", "quantity", "reported"], keep=False)]
    assert repeated.empty, sorted(set(zip(repeated["item"], repeated["quantity"])))
