"""The two fingerprints a results file carries (isonorm.fingerprints, docs/bundles.md): the code one follows the
job's imports and nothing else, the settings one ignores where a job runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from isonorm import fingerprints

LU = "isonorm.experiments.lu2024.trained_nets:fnn"
JOUDAKI = "isonorm.experiments.joudaki2023.simulations:fig4"


@pytest.fixture
def library_copy(tmp_path, monkeypatch):
    """A copy of the package (and the rule script beside it, as in a checkout) that the fingerprints read."""
    root = Path(fingerprints.__file__).resolve().parent
    copy = tmp_path / "src" / "isonorm"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "scripts").mkdir()
    shutil.copy(root.parents[1] / "scripts" / "run_experiment.py", tmp_path / "scripts")
    monkeypatch.setattr(fingerprints, "PACKAGE_ROOT", copy)

    def fresh(function):
        fingerprints.module_closure.cache_clear()
        fingerprints.code_fingerprint.cache_clear()
        return fingerprints.code_fingerprint(function)

    yield copy, fresh
    fingerprints.module_closure.cache_clear()
    fingerprints.code_fingerprint.cache_clear()


def edit(path: Path) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")


def test_the_closure_follows_imports_and_leaves_out_scoring_and_other_papers():
    closure = fingerprints.module_closure("isonorm.experiments.lu2024.trained_nets", *fingerprints.JOB_GLUE)
    assert {"isonorm.train.loop", "isonorm.models.lu_fnn", "isonorm.metrics.pii", "isonorm.results",
            "isonorm.experiments", "isonorm.experiments.lu2024"} <= set(closure)
    assert not [m for m in closure if "joudaki2023" in m or "meterez2024" in m or "daneshmand2021" in m]
    assert not [m for m in closure if m.startswith(("isonorm.verdicts", "isonorm.items", "isonorm.run_status"))
                or m.endswith("_summaries")]


def test_a_change_reaches_the_fingerprints_of_the_code_that_runs_it(library_copy):
    copy, fresh = library_copy
    lu, joudaki = fresh(LU), fresh(JOUDAKI)
    edit(copy / "experiments" / "joudaki2023" / "simulations.py")
    assert fresh(LU) == lu and fresh(JOUDAKI) != joudaki
    joudaki = fresh(JOUDAKI)
    edit(copy / "train" / "loop.py")  # the training engine: every trained file, no simulation
    assert fresh(LU) != lu and fresh(JOUDAKI) == joudaki
    lu = fresh(LU)
    edit(copy / "experiments" / "lu2024" / "trained_summaries.py")  # scoring only
    edit(copy / "verdicts" / "scoreboard.py")
    edit(copy / "items.py")
    assert fresh(LU) == lu
    edit(copy.parents[1] / "scripts" / "run_experiment.py")  # the script that writes every file
    assert fresh(LU) != lu and fresh(JOUDAKI) != joudaki


def test_the_settings_fingerprint_ignores_where_a_job_runs_and_nothing_else():
    run = {"function": LU, "config": {"epochs": 20, "lr": 0.1},
           "kwargs": {"data_root": "resources/data", "dataset": "mnist", "device": "cpu", "checkpoint": "a.ckpt",
                      "optimizer": "sgd"}}
    moved = {**run, "kwargs": {**run["kwargs"], "data_root": "/scratch/data", "device": "cuda",
                               "checkpoint": "/tmp/b.ckpt"}}
    assert fingerprints.settings_fingerprint(run) == fingerprints.settings_fingerprint(moved)
    for changed in ({**run, "config": {"epochs": 21, "lr": 0.1}},
                    {**run, "kwargs": {**run["kwargs"], "optimizer": "adam"}},
                    {**run, "kwargs": {**run["kwargs"], "dataset": "fashionmnist"}},
                    {**run, "function": JOUDAKI}):
        assert fingerprints.settings_fingerprint(changed) != fingerprints.settings_fingerprint(run)


def test_a_results_file_records_what_computed_it():
    recorded = fingerprints.computed_by({"function": LU, "config": {}, "kwargs": {}})
    assert set(recorded) == {"code_fingerprint", "settings_fingerprint"}  # no time: the same job, the same bytes
    assert recorded["code_fingerprint"] == fingerprints.code_fingerprint(LU)
