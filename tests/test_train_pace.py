"""The job's pace (isonorm.train.pace, docs/cost.md): the shapes preset's step cap reaches the engine and the
sampled loops only inside :func:`capped`, nothing of one job reaches the next, and no module but the shakedown
and the training engine knows of it."""

from __future__ import annotations

import contextvars
import re
from pathlib import Path

import pandas as pd
import torch

from isonorm.models.mlp import mlp
from isonorm.runtime import generator
from isonorm.shakedown import CappedTraining, JobCost
from isonorm.train import CAP_SETTING, OptimizerConfig, TrainConfig, capped, sampled, train_stacked, training_probe
from isonorm.workflow import costed_experiment

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "isonorm"
CAP = {"warmup": 1, "steps": 2, "items": 2}  # as the configuration gives it (presets/shapes.yaml)


def train(tmp_path: Path, name: str) -> pd.DataFrame:
    """A 4-epoch training of two small MLPs, with a measurement pass that loops over 10 like batches."""
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(100, 5, generator=gen), torch.randint(3, (100,), generator=gen)
    models = [mlp([5, 8, 3], generator=generator("pace", run)) for run in range(2)]
    config = TrainConfig("pace", name, epochs=4, batch_size=10, optimizer=OptimizerConfig("sgd", lr=0.1),
                         device="cpu", checkpoint_path=tmp_path / f"{name}.ckpt", checkpoint_every=2)

    def batches_seen(stack, epoch):
        return {"seen": torch.full((stack.n_runs,), float(len(list(sampled(range(10))))))}

    return train_stacked(models, x, y, config, measure=batches_seen).history


def test_the_cap_reaches_the_engine_and_the_sampled_loops_only_inside_the_context(tmp_path):
    assert list(sampled(range(5))) == [0, 1, 2, 3, 4]
    assert not isinstance(training_probe(10, 4, 2, torch.device("cpu")), CappedTraining)
    with capped(CAP) as record:
        assert isinstance(record, JobCost) and record.cap.items == 2
        assert list(sampled(range(5))) == [0, 1]
        history = train(tmp_path, "capped")
    assert sorted(history.epoch.unique()) == [0, 1] and set(history.seen) == {2.0}
    assert len(record.trainings) == 1
    # after it, in the same process, the next job runs in full and adds nothing to the closed record
    assert list(sampled(range(5))) == [0, 1, 2, 3, 4]
    history = train(tmp_path, "full")
    assert sorted(history.epoch.unique()) == [0, 1, 2, 3, 4] and set(history.seen) == {10.0}
    assert len(record.trainings) == 1


def test_two_capped_jobs_in_a_row_keep_their_own_records(tmp_path):
    with capped(CAP) as first:
        train(tmp_path, "first")
    with capped({**CAP, "items": 3}) as second:
        train(tmp_path, "second")
        train(tmp_path, "third")
    assert second is not first and second.cap.items == 3
    assert (len(first.trainings), len(second.trainings)) == (1, 2)


def test_no_settings_means_no_cap_and_the_record_ends_with_a_failing_job(tmp_path):
    for settings in (None, {}):
        with capped(settings) as record:
            assert record is None and list(sampled(range(5))) == [0, 1, 2, 3, 4]
    try:
        with capped(CAP):
            raise KeyError("a job that fails")
    except KeyError:
        pass
    assert list(sampled(range(5))) == [0, 1, 2, 3, 4]


def test_the_cap_belongs_to_the_context_that_entered_it():
    with capped(CAP):
        # a context copied before the cap (another thread's, say) never sees it
        elsewhere = contextvars.Context().run(lambda: list(sampled(range(5))))
        assert list(sampled(range(5))) == [0, 1] and elsewhere == [0, 1, 2, 3, 4]


class Job:
    """The parts of Snakemake's ``snakemake`` object that name a job in the cost table."""

    rule, wildcards, output = "paper_rule", {"variant": "a"}, ["results/paper/a.parquet"]


def test_the_workflow_hands_the_jobs_settings_to_the_engine(monkeypatch):
    def experiment(cfg, device=None):
        return pd.DataFrame({"items": [len(list(sampled(range(5))))]})

    monkeypatch.setattr("isonorm.workflow.resolve", lambda spec: experiment)
    run = {"function": "paper:experiment", "config": {}, "kwargs": {}}
    frame, cost = costed_experiment(run, Job())
    assert frame["items"].tolist() == [5] and cost == {}
    frame, cost = costed_experiment({**run, CAP_SETTING: CAP}, Job(), torch.device("cpu"))
    assert frame["items"].tolist() == [2]
    assert cost["cost"]["rule"] == "paper_rule" and cost["cost"]["wildcards"] == "variant=a"
    assert cost["cost"]["trainings"] == 0 and cost["cost"]["projected_hours"] > 0


def test_only_the_shakedown_and_the_training_engine_know_of_the_shakedown():
    """Model, experiment, report and workflow code reach the step cap through isonorm.train alone."""
    allowed = {PACKAGE / "shakedown.py", PACKAGE / "train"}
    naming = sorted(
        str(file.relative_to(PACKAGE)) for file in PACKAGE.rglob("*")
        if file.is_file() and "__pycache__" not in file.parts and not allowed & {file, *file.parents}
        and re.search("shakedown", file.read_text(encoding="utf-8", errors="ignore"), re.IGNORECASE)
    )
    assert not naming, naming
