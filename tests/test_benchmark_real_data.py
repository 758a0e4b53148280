"""benchmarks/lu2024_authors.py and benchmarks/real_data_record.py without the authors' file or a real run: the
substitutions refuse a script they were not written for, the script's PII output is read layer by layer, and a
run's record counts each item's verdicts as its scoreboard gives them."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import REPO, script_module
from isonorm.verdicts.scoreboard import SCOREBOARD_COLUMNS


@pytest.fixture(scope="module")
def authors():
    return script_module(REPO / "benchmarks" / "lu2024_authors.py")


@pytest.fixture(scope="module")
def record():
    return script_module(REPO / "benchmarks" / "real_data_record.py")


def test_runs_name_the_papers_settings(authors):
    assert authors.parse_run("table1-sgd") == authors.Run("table1-sgd", optimizer="sgd")
    run = authors.parse_run("table3-relu-adam-original")
    assert (run.activation, run.optimizer, run.block, run.constant) == ("relu", "adam", "original", False)
    assert authors.parse_run("apptable4-res").block == "res"
    with pytest.raises(ValueError, match="use table1-<optimizer>"):
        authors.parse_run("table2-adam")


def test_a_substitution_must_match_exactly_once(authors):
    pairs = [("num_epochs = 20", "num_epochs = 1")]
    assert authors.patched_source("num_epochs = 20\n", pairs) == "num_epochs = 1\n"
    with pytest.raises(ValueError, match="exactly once, found it 0 times"):
        authors.patched_source("num_epochs = 30\n", pairs)
    with pytest.raises(ValueError, match="found it 2 times"):
        authors.patched_source("num_epochs = 20\nnum_epochs = 20\n", pairs)
    names = {old for old, _ in authors.substitutions(authors.parse_run("table3-gelu-sgd-original"), 43, 20, 0.1)}
    assert {"\nseed_torch()\n", "learning_rate = 0.001", "x = self.norm(x+x_in)",
            "nn.init.constant_(self.linearH[1].weight, 0.1)"} <= names


def test_the_scripts_pii_file_is_read_per_layer_and_stage(authors):
    text = ("Initial parameters\nParameter name: linear.weight\n0.03,0.035\nParameter name: linearH.1.weight\n"
            "1.0,1.0\nTrained parameters\nParameter name: linearH.1.weight\n0.93,0.934\n")
    pii = authors.parse_pii(text)
    assert pii["init"]["linear"] == {"rows": 0.03, "columns": 0.035}
    assert pii["trained"]["linearH.1"]["columns"] == 0.934 and "linear" not in pii["trained"]


def test_a_runs_record_counts_each_items_verdicts(record, tmp_path):
    rows = [("match", "precision", False, "default", "reproduction"), ("match", "seed-noise", True, "default",
             "reproduction"), ("mismatch", "", False, "default", "reproduction"), ("inconclusive", "", False,
             "default", "reproduction"), ("match", "precision", False, "default", "consistency"),
            ("fitted", "", False, "fitted", "reproduction")]
    board = pd.DataFrame([{**dict.fromkeys(SCOREBOARD_COLUMNS, ""), "preset": "paper", "item": "lu2024-table1",
                           "quantity": f"q{i}", "verdict": v, "within": w, "weak": k, "reading": r, "check": c}
                          for i, (v, w, k, r, c) in enumerate(rows)])
    counts = record.item_verdicts(board, None).iloc[0].to_dict()
    assert {k: counts[k] for k in ("scored", "match", "match_at_precision", "match_within_seed_noise", "weak",
                                   "mismatch", "inconclusive", "checks", "checks_hold", "fitted")} == {
        "scored": 3, "match": 2, "match_at_precision": 1, "match_within_seed_noise": 1, "weak": 1, "mismatch": 1,
        "inconclusive": 1, "checks": 1, "checks_hold": 1, "fitted": 1}
    with pytest.raises(ValueError, match="smoke run"):
        record.item_verdicts(board.assign(preset="quick"), None)
    (tmp_path / "benchmarks" / "lu2024_table1").mkdir(parents=True)
    (tmp_path / "benchmarks" / "lu2024_table1" / "adam.tsv").write_text(
        "s\th:m:s\tmax_rss\tcpu_time\n601.5\t0:10:01\t1200.0\t590.0\n")
    assert record.job_costs(tmp_path).to_dict("records") == [
        {"rule": "lu2024_table1", "job": "adam", "wall_s": 601.5, "cpu_s": 590.0, "max_rss_mb": 1200.0}]
