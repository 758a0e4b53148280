"""The cost run (isonorm.cost, docs/cost.md): the shapes preset's step cap and cost record, on the engine itself. The
cap reaches the engine (through its one hook, costed_training) and the sampled loops only inside :func:`capped`,
nothing of one job reaches the next, and no module but isonorm.cost knows of the step cap's setting."""

from __future__ import annotations

import contextvars
import math
import re
from pathlib import Path

import pandas as pd
import pytest
import torch

from isonorm import cost
from isonorm.cost import CAP_SETTING, CappedTraining, JobCost, capped, costed_training, sampled, scale_depth
from isonorm.models.mlp import mlp
from isonorm.runtime import generator
from isonorm.train import OptimizerConfig, TrainConfig, train_stacked
from isonorm.workflow import costed_experiment

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "isonorm"
CAP = {"warmup": 1, "steps": 2, "items": 2}  # as the configuration gives it (presets/shapes.yaml)


def data(n: int = 100, dim: int = 5, classes: int = 3):
    gen = torch.Generator().manual_seed(0)
    return torch.randn(n, dim, generator=gen), torch.randint(classes, (n,), generator=gen)


def models(runs: int = 2):
    return [mlp([5, 8, 3], generator=generator("cost", r)) for r in range(runs)]


def config(tmp_path, **overrides) -> TrainConfig:
    settings = dict(epochs=4, batch_size=10, optimizer=OptimizerConfig("sgd", lr=0.1), device="cpu",
                    checkpoint_path=tmp_path / "run.ckpt", checkpoint_every=2)
    return TrainConfig("cost", "test", **{**settings, **overrides})


def measure(stack, epoch):
    return {"norm": torch.stack([p.norm() for p in stack.params.values()]).sum().repeat(stack.n_runs)}


def test_cap_stops_after_warmup_and_timed_steps_of_the_first_epoch(tmp_path):
    x, y = data()
    with capped(cost.StepCap(warmup=1, steps=2)) as record:
        result = train_stacked(models(), x, y, config(tmp_path), measure=measure)
    assert sorted(result.history.epoch.unique()) == [0, 1]  # the init pass and the capped epoch, nothing more
    (training,) = record.trainings
    assert (training.steps_per_epoch, training.epochs, training.checkpoints) == (10, 4, 2)
    assert len(training.warmup_seconds) == 1 and len(training.step_seconds) == 2
    assert training.init_pass_seconds > 0 and len(training.pass_seconds) == 1
    # one checkpoint written (and resumed from): the capped epoch's, with its state
    assert training.checkpoint_bytes == (tmp_path / "run.ckpt").stat().st_size > 0
    assert torch.load(tmp_path / "run.ckpt", weights_only=False)["epoch"] == 1


def test_the_projection_counts_every_step_pass_and_checkpoint_of_the_full_training(tmp_path):
    training = cost.TrainingCost(steps_per_epoch=10, epochs=4, checkpoints=2, warmup_seconds=[9.0],
                                 step_seconds=[1.0, 3.0, 2.0], init_pass_seconds=5.0, pass_seconds=[4.0],
                                 checkpoint_seconds=0.5, resume_seconds=0.25)
    assert training.seconds_per_step == 2.0  # the median of the timed steps; the warm-up is left out
    assert training.projected_seconds == 10 * 4 * 2.0 + 5.0 + 4 * 4.0 + 2 * 0.5
    assert training.measured_seconds == 9 + 6 + 5 + 4 + 0.5 + 0.25
    record = cost.JobCost(cost.StepCap(), [training])
    summary = record.summary(wall_seconds=training.measured_seconds + 7.0, device="cpu")
    # the untimed rest of the job (imports, data, writing results) is added once
    assert summary["projected_hours"] == pytest.approx((7.0 + training.projected_seconds) / 3600)
    assert (summary["paper_steps"], summary["paper_passes"], summary["steps_measured"]) == (40, 5, 3)
    assert summary["resume_seconds"] == 0.25  # shown beside the projection, not in it
    assert summary["peak_rss_gb"] > 0 and math.isnan(summary["peak_cuda_gb"])


def test_a_job_without_training_projects_its_own_wall_time():
    summary = cost.JobCost(cost.StepCap()).summary(wall_seconds=36.0, device="cpu")
    assert summary["projected_hours"] == pytest.approx(0.01)
    assert summary["paper_steps"] == 0 and math.isnan(summary["seconds_per_step"])


def test_outside_the_cost_run_the_engine_trains_in_full(tmp_path):
    x, y = data()
    result = train_stacked(models(), x, y, config(tmp_path), measure=measure)
    assert sorted(result.history.epoch.unique()) == [0, 1, 2, 3, 4]
    hook = costed_training(lambda *index: None, measure, 10, 4, 2, torch.device("cpu"))
    assert hook.epochs(range(1, 5)) == range(1, 5) and list(hook.steps(range(10))) == list(range(10))


def test_a_bad_cap_and_a_nested_record_are_refused():
    with pytest.raises(ValueError, match="steps and items ≥ 1"):
        cost.StepCap(warmup=1, steps=0)
    with capped(cost.StepCap()):
        with pytest.raises(RuntimeError, match="already running"):
            with capped(cost.StepCap()):
                pass


def test_a_sampled_loop_runs_its_first_items_and_counts_the_rest_at_their_rate(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(cost.time, "perf_counter", lambda: clock[0])
    assert list(sampled(range(5))) == [0, 1, 2, 3, 4]  # no cost run: every item
    with capped(cost.StepCap(items=2)) as record:
        for outer in sampled(range(6)):  # 2 of 6 run
            for inner in sampled(range(4)):  # 2 of 4 run, 1 s each
                clock[0] += 1.0
    # each outer item: 2 s run + 2 s left-out inner items; the 4 left-out outer items at that rate
    assert record.unsampled_seconds == pytest.approx(2 * 2.0 + 4 * 4.0)


def test_left_out_batches_of_a_pass_count_in_the_pass(tmp_path):
    x, y = data()

    def batched_measure(stack, epoch):
        return {"seen": torch.tensor([float(len(list(sampled(range(10)))))] * stack.n_runs)}

    with capped(cost.StepCap(items=2)) as record:
        result = train_stacked(models(), x, y, config(tmp_path), measure=batched_measure)
    assert set(result.history.seen) == {2.0}  # a pass runs 2 of its 10 batches
    assert record.unsampled_seconds == 0  # their time went to the passes, which every epoch repeats


def test_a_model_cut_in_depth_is_extrapolated_to_its_real_depth():
    from isonorm.checkpoints.full_size import truncated_depth

    record = {"source": "random", "checkpoint": "qwen", "sizes": {"num_hidden_layers": 2}}
    assert truncated_depth(record) == (2, 32)
    assert truncated_depth({**record, "sizes": {"num_hidden_layers": 32}}) is None  # the whole model
    assert truncated_depth({**record, "source": "tiny"}) is None  # a stand-in of other sizes: nothing to scale
    with capped(cost.StepCap()) as job:
        scale_depth(2, 32, layer_bytes=2**30)
    whole = cost.JobCost(cost.StepCap()).summary(wall_seconds=36.0, device="cpu")
    cut = job.summary(wall_seconds=36.0, device="cpu")
    assert cut["projected_hours"] == pytest.approx(16 * whole["projected_hours"])
    assert cut["peak_rss_gb"] == pytest.approx(whole["peak_rss_gb"] + 30.0)
    assert cut["extrapolated"].startswith("ran 2 of 32 layers at full width: time × 16") and whole["extrapolated"] == ""


def test_left_out_micro_batches_of_a_step_count_in_the_step(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(cost.time, "perf_counter", lambda: clock[0])

    def step():  # an optimizer step over 8 micro-batches of 1 s each (the LoRA job's gradient accumulation)
        for _ in sampled(range(8)):
            clock[0] += 1.0

    with capped(cost.StepCap(warmup=1, steps=2, items=2)) as record:
        hook = costed_training(step, None, steps_per_epoch=10, epochs=1, checkpoint_every=1, device=torch.device("cpu"))
        for _ in hook.steps(range(10)):
            hook.step()
    (training,) = record.trainings
    assert training.warmup_seconds == [8.0] and training.step_seconds == [8.0, 8.0]
    assert record.unsampled_seconds == 0


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_a_jobs_wall_time_counts_from_its_process_start():
    import subprocess
    import sys

    # a fresh interpreter that sleeps before asking: its age includes the sleep and its own start
    code = "import time; time.sleep(0.5); from isonorm.cost import process_seconds; print(process_seconds())"
    age = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert 0.5 <= age < 60


def train(tmp_path: Path, name: str) -> pd.DataFrame:
    """A 4-epoch training of two small MLPs, with a measurement pass that loops over 10 like batches."""
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(100, 5, generator=gen), torch.randint(3, (100,), generator=gen)
    models = [mlp([5, 8, 3], generator=generator("cost", run)) for run in range(2)]
    config = TrainConfig("cost", name, epochs=4, batch_size=10, optimizer=OptimizerConfig("sgd", lr=0.1),
                         device="cpu", checkpoint_path=tmp_path / f"{name}.ckpt", checkpoint_every=2)

    def batches_seen(stack, epoch):
        return {"seen": torch.full((stack.n_runs,), float(len(list(sampled(range(10))))))}

    return train_stacked(models, x, y, config, measure=batches_seen).history


def test_the_cap_reaches_the_engine_and_the_sampled_loops_only_inside_the_context(tmp_path):
    assert list(sampled(range(5))) == [0, 1, 2, 3, 4]
    assert not isinstance(costed_training(lambda *index: None, None, 10, 4, 2, torch.device("cpu")), CappedTraining)
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
    frame, stored = costed_experiment(run, Job())
    assert frame["items"].tolist() == [5] and stored == {}
    frame, stored = costed_experiment({**run, CAP_SETTING: CAP}, Job(), torch.device("cpu"))
    assert frame["items"].tolist() == [2]
    assert stored["cost"]["rule"] == "paper_rule" and stored["cost"]["wildcards"] == "variant=a"
    assert stored["cost"]["trainings"] == 0 and stored["cost"]["projected_hours"] > 0


def test_only_the_cost_run_knows_the_step_caps_setting():
    """Model, experiment, training, report and workflow code reach the step cap through isonorm.cost alone."""
    allowed = {PACKAGE / "cost.py"}
    naming = sorted(
        str(file.relative_to(PACKAGE)) for file in PACKAGE.rglob("*")
        if file.is_file() and "__pycache__" not in file.parts and not allowed & {file, *file.parents}
        and re.search("shakedown", file.read_text(encoding="utf-8", errors="ignore"), re.IGNORECASE)
    )
    assert not naming, naming
