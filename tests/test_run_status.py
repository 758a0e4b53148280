"""What a run did (isonorm.run_status) and what it plans (isonorm.plan): failure records, the sorting of unfinished
jobs, the causes the pages show, the end-of-run summary, and the plan on a machine without a GPU."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from isonorm import gpus
from isonorm.plan import NEEDS_DATA, TRAINS, DeviceUnavailableError, RunPlan, cost_lines, shapes_command
from isonorm.run_status import (
    BLOCKED,
    FAILED,
    NOT_STARTED,
    absence_text,
    command_line,
    failure_record,
    job_outcomes,
    missing_causes,
    read_failure,
    record_failure,
    summary_lines,
    untrusted_jobs,
)
from isonorm.user_errors import MAX_LINES, brief
from isonorm.workflow import logged_job


def job(tmp: Path, rule: str, outputs: list[str], inputs: list[str] = (), **wildcards) -> SimpleNamespace:
    return SimpleNamespace(rule=SimpleNamespace(name=rule), output=[str(tmp / o) for o in outputs],
                           input=[str(tmp / i) for i in inputs], log=[str(tmp / "logs" / f"{rule}.log")],
                           wildcards=wildcards)


def test_a_failed_fetch_blocks_its_chain_and_each_job_names_the_root(tmp_path):
    fetch = job(tmp_path, "fetch_data", ["data/.ready"], name="cifar10")
    train = job(tmp_path, "train", ["r/train.parquet"], ["data/.ready"])
    reading = job(tmp_path, "reading", ["r/reading.parquet"], ["r/train.parquet"])
    done = job(tmp_path, "done", ["r/done.parquet"])
    Path(done.output[0]).parent.mkdir(parents=True)
    Path(done.output[0]).write_text("x")
    record_failure(fetch.log[0], "fetch_data", fetch.output, RuntimeError("offline\nWays forward: ..."))
    outcomes = {o.rule: o for o in job_outcomes([reading, train, fetch, done])}
    assert set(outcomes) == {"fetch_data", "train", "reading"}  # done has its results
    assert outcomes["fetch_data"].state == FAILED and outcomes["fetch_data"].cause == "RuntimeError: offline"
    assert outcomes["train"].state == BLOCKED and outcomes["reading"].state == BLOCKED
    assert outcomes["reading"].blocked_by == "fetch_data[name=cifar10]"  # the root, not the job in between
    assert "which failed: RuntimeError: offline" in outcomes["reading"].cause
    causes = missing_causes(outcomes.values())
    assert causes[reading.output[0]]["cause"].startswith("reading could not run: it needs fetch_data[name=cifar10]")
    assert causes[reading.output[0]]["log"] == "" and causes[fetch.output[0]]["log"].endswith("fetch_data.log")


def test_a_job_without_record_or_missing_input_did_not_start(tmp_path):
    (outcome,) = job_outcomes([job(tmp_path, "sim", ["r/sim.parquet"])])
    assert outcome.state == NOT_STARTED and "logs/sim.log" in outcome.cause


def test_a_job_that_died_in_this_run_failed_and_a_stop_fails_nothing(tmp_path):
    """A job killed without a record (SIGKILL, out of memory) has written its log in this run: it failed. Stopped by
    Ctrl-C, the same job was cut short: not finished, and the run says so once, with the command that resumes it."""
    killed = job(tmp_path, "train", ["r/t.parquet"])
    after = job(tmp_path, "reading", ["r/r.parquet"], ["r/t.parquet"])
    started = __import__("time").time() - 1
    Path(killed.log[0]).parent.mkdir(parents=True)
    Path(killed.log[0]).write_text("epoch 1 ...")
    (died, blocked) = job_outcomes([killed, after], run_started=started)
    assert died.state == FAILED and "without finishing" in died.cause and blocked.state == BLOCKED
    assert job_outcomes([killed], run_started=started + 3600)[0].state == NOT_STARTED  # an old log: never started
    cut, waiting = job_outcomes([killed, after], stopped=True, run_started=started)
    assert cut.state == waiting.state == NOT_STARTED and "stopped (Ctrl-C)" in cut.cause
    lines = summary_lines([cut, waiting], {}, 5, "report/index.html", "snakemake --cores 2", stopped=True)
    assert lines == ["3 of 5 planned jobs have their results.",
                     "stopped: the run was stopped (Ctrl-C) with 2 job(s) unfinished; resume it with "
                     "`snakemake --cores 2` (only what is missing runs).",
                     "report: report/index.html"]


def test_outputs_after_a_job_this_run_did_not_finish_are_untrusted(tmp_path):
    """The end-of-run report writes claims and pages from what exists; every output after a job of this run that did
    not finish is then marked incomplete, so that the same command remakes it, and on its way the job. A result an
    earlier run made whose input has gone since (a data set deleted after its training) is no such job."""
    for name in ("r/old.parquet", "claims.parquet", "board.csv", "index.html", "other.csv"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    train = job(tmp_path, "train", ["r/missing.parquet"])
    old = job(tmp_path, "old", ["r/old.parquet"], ["data/gone/.ready"])
    other = job(tmp_path, "other", ["other.csv"], ["r/old.parquet"])
    claims = job(tmp_path, "claims", ["claims.parquet"], ["r/old.parquet", "r/missing.parquet"])
    board = job(tmp_path, "board", ["board.csv"], ["claims.parquet"])
    index = job(tmp_path, "index", ["index.html", "gone.html"], ["board.csv"])
    downstream = {id(train): [claims], id(claims): [board], id(board): [index], id(index): [], id(other): [],
                  id(old): [other, claims]}
    untrusted = untrusted_jobs([train, claims, board, index], lambda j: downstream[id(j)], lambda j: j.output)
    assert sorted(j.rule.name for j in untrusted) == ["board", "claims", "index"]


def test_summary_says_what_ran_what_was_left_out_and_how_to_finish(tmp_path):
    fetch = job(tmp_path, "fetch_data", ["data/.ready"], name="mnist")
    train = job(tmp_path, "train", ["r/t.parquet"], ["data/.ready"])
    record_failure(fetch.log[0], "fetch_data", fetch.output, OSError("no route"))
    left = {"results/x/train.parquet": {"cause": "trains a network, and this machine has no GPU (`device: auto`)",
                                        "fix": "--config device=cpu"}}
    lines = summary_lines(job_outcomes([fetch, train]), left, 10, "report/index.html", "snakemake --cores 2")
    text = "\n".join(lines)
    assert lines[0] == "8 of 10 planned jobs have their results."
    assert "not planned: 1 results file(s), because the item trains a network" in text
    assert "`--config device=cpu` computes them" in text
    assert "failed: fetch_data[name=mnist]: OSError: no route (log: " in text
    assert "not run, an input missing: 1 job(s) after fetch_data[name=mnist]." in text
    assert "run `snakemake --cores 2` again" in text


def test_absence_text_merges_alike_causes_and_gives_the_projected_cost():
    text = absence_text([
        {"cause": "trains a network, and this machine has no GPU (`device: auto`)", "fix": "--config device=cpu",
         "hours": 2.0, "device": "cpu (x86_64, 1 threads)"},
        {"cause": "trains a network, and this machine has no GPU (`device: auto`)", "fix": "--config device=cpu",
         "hours": 1.5, "device": "cpu (x86_64, 1 threads)"},
    ])
    assert text.count("trains a network") == 1
    assert "Projected cost of its results: 3.5 h on cpu (x86_64, 1 threads)" in text
    assert "`--config device=cpu` computes it." in text
    unmeasured = absence_text([{"cause": "trains a network, and this machine has no GPU", "fix": "--config device=cpu"}])
    assert "presets/shapes.yaml" in unmeasured


def test_command_line_gives_the_run_back():
    assert command_line(["/venv/bin/snakemake", "--cores", "2", "--config", "papers=[lu2024]"]) == \
        "snakemake --cores 2 --config 'papers=[lu2024]'"


def test_logged_job_records_a_failure_once_and_a_restart_clears_it(tmp_path, capsys):
    log = tmp_path / "logs" / "job.log"
    smk = SimpleNamespace(log=[str(log)], rule="fig9", wildcards={}, output=[str(tmp_path / "out.parquet")], threads=1)
    with pytest.raises(SystemExit) as stop:
        with logged_job(smk):
            raise ValueError("width must be even; set `width: 64`")
    assert stop.value.code == 1
    assert read_failure(log)["cause"] == "ValueError: width must be even; set `width: 64`"
    err = capsys.readouterr().err
    assert err.count("width must be even") == 1 and "Traceback" not in err  # once, the traceback in the log
    assert "Traceback" in log.read_text()
    with logged_job(smk):
        assert not failure_record(log).exists()


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(gpus, "gpu_visible", lambda: False)


def plan(measures_cost: bool = False, **settings) -> RunPlan:
    """The plan of a local run with ``settings`` over the paper configuration's."""
    return RunPlan.of({"device": "auto", "compute": "all", **settings}, local=True, measures_cost=measures_cost)


def test_no_gpu_here_plans_no_training_and_says_how_to_train_anyway(no_gpu):
    here = plan()
    assert here.left_out(NEEDS_DATA) is None and not here.trains_here
    assert here.left_out(TRAINS).fix == "--config device=cpu"
    assert "no training is planned" in here.device_line()
    assert plan(device="cpu").trains_here  # on purpose
    assert plan(measures_cost=True).trains_here  # the shapes preset measures the cost here
    assert RunPlan.of({"device": "auto", "compute": "all"}, local=False).trains_here  # a cluster's GPU nodes
    data_free = plan(compute="data-free")
    assert data_free.left_out(NEEDS_DATA).fix == "--config compute=all" and data_free.left_out(TRAINS) is not None


def test_cuda_without_a_gpu_stops_before_any_job(no_gpu):
    with pytest.raises(DeviceUnavailableError, match="`--config device=cpu` trains on the CPU on purpose") as stop:
        plan(device="cuda:1").check()
    lines = brief(stop.value).splitlines()  # as the terminal shows it: the cause first, then the fixes
    assert len(lines) <= MAX_LINES and max(map(len, lines)) <= 110, lines
    assert lines[0].startswith("error: config `device: cuda:1`, but this machine has no GPU")
    assert [line.split("`")[1] for line in lines[2:4]] == ["--config device=auto", "--config device=cpu"]
    RunPlan.of({"device": "cuda", "compute": "all"}, local=False).check()  # the nodes have one: no error


CPU = "cpu (x86_64, 1 threads)"
TABLE = "results/shapes/cost.csv"


def test_the_run_states_the_projected_hours_of_the_jobs_it_will_run():
    """Jobs, not files: a job that writes two files counts once, by the row of its first; trainings apart."""
    costs = {"lu2024/table1/sgd.parquet": (2.0, CPU), "lu2024/table5/llms.parquet": (0.5, CPU),
             "lu2024/table1/adam.parquet": (1.0, CPU)}
    jobs = [["lu2024/table1/sgd.parquet"], ["lu2024/table1/adam.parquet"], ["lu2024/table1/new.parquet"],
            ["lu2024/table5/llms.parquet", "lu2024/table5/llms-extra.parquet"]]
    trainings = {"lu2024/table1/sgd.parquet", "lu2024/table1/adam.parquet", "lu2024/table1/new.parquet"}
    first, second = cost_lines(costs, jobs, trainings, TABLE, "cpu")
    assert first == f"cost: 3.5 h projected for 3 of the 4 data and GPU jobs this run will run, one at a time on {CPU}"
    assert second == (f"  as {TABLE} measured them (docs/cost.md): trainings 3.0 h (2 of 3), the others 0.5 h (1 of 1)"
                      "; 1 without a row, unprojected")
    no_training = cost_lines(costs, jobs[3:], set(), TABLE, "auto")
    assert no_training[1].endswith("no training planned") and "3 of" not in no_training[0]
    assert cost_lines(costs, [], trainings, TABLE, "cpu") == []  # nothing that costs: no line


def test_without_a_table_the_run_says_how_to_measure_one_on_its_device():
    lines = cost_lines({}, [["a.parquet"], ["b.parquet"]], {"b.parquet"}, TABLE, "cpu")
    assert lines[0] == (f"cost: no cost table ({TABLE}) projects the 2 data and GPU jobs this run will run, 1 of them "
                        "trainings;")
    assert f"`{shapes_command('cpu')}` measures one" in lines[1]
    assert shapes_command("cpu").endswith("presets/shapes.yaml --config device=cpu")
    assert shapes_command("auto").endswith("presets/shapes.yaml")  # the preset's own device: auto


def test_alike_failures_take_one_line(tmp_path):
    """Every Hub fetch of an offline machine fails alike: one line names them all, with the first one's cause."""
    fetches = [job(tmp_path, "fetch_checkpoint", [f"{m}/.ready"], model=m) for m in ("bert", "gpt2", "t5")]
    for fetch, model in zip(fetches, ("bert", "gpt2", "t5")):
        fetch.log = [str(tmp_path / "logs" / f"fetch_{model}.log")]
        record_failure(fetch.log[0], "fetch_checkpoint", fetch.output, OSError(f"{model}: the Hub is unreachable"))
    lines = summary_lines(job_outcomes(fetches), {}, 3)
    failed = [line for line in lines if line.startswith("failed:")]
    assert failed == [f"failed: fetch_checkpoint × 3 (model=bert, model=gpt2, model=t5), alike: OSError: bert: the Hub "
                      f"is unreachable (logs in {tmp_path / 'logs'})"]


def test_a_job_stopped_by_ctrl_c_exits_quietly_without_a_failure_record(tmp_path, capsys):
    """Ctrl-C reaches every job of the run: each exits with 130, its traceback in its log only, no failure record
    (the run says "stopped" once)."""
    log = tmp_path / "logs" / "job.log"
    smk = SimpleNamespace(log=[str(log)], rule="fig9", wildcards={}, output=[str(tmp_path / "out.parquet")], threads=1)
    with pytest.raises(SystemExit) as stop:
        with logged_job(smk):
            raise KeyboardInterrupt
    assert stop.value.code == 130 and read_failure(log) is None
    assert "KeyboardInterrupt" not in capsys.readouterr().err and "KeyboardInterrupt" in log.read_text()
