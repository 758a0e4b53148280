"""Integration: a run that cannot get everything still ends with a full report, and the same command finishes it.

lu2024 under the quick preset, in a copy of the workflow whose own src/ is imported (PYTHONPATH), with three faults
planted: the WikiText-2 corpus switched to its Hugging Face source on a machine that is offline (HF_HUB_OFFLINE=1,
an empty cache), so its fetch fails and the Table-5 transformer cannot train; App. Table 4's training made to
raise; and Table 1's SGD job killed once (SIGKILL: no record, no traceback, as the kernel's OOM killer or a lost node
leaves it). Then the faults are removed and the command given again. Then Ctrl-C of the whole run while a training
job runs (the terminal's SIGINT to the run's process group), and the same command again. Each resumed run ends with
rc 0, its results and scored rows byte-identical to those of the session's clean quick run (conftest ``quick_run``).
Also: what a run plans on a machine without a GPU (dry runs of the paper configuration, the GPUs hidden), and what a
CPU run states at its start and stops on (a small cost table of the test's own).
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import QUICK, copy_workflow, error_lines, snakemake
from isonorm.cost import COLUMNS
from isonorm.results import METADATA_KEY
from isonorm.verdicts.scoreboard import headline, read_scoreboard
from isonorm.results import read_metadata, read_results, write_results
from isonorm.run_status import read_failure

pytestmark = pytest.mark.integration

RUN = ("--cores", "2", "--configfile", "presets/quick.yaml", "offline.yaml", "--config", "papers=[lu2024]")
FAULT = 'raise RuntimeError("planted: App. Table 4 cannot train")'
TRAINING_RULES = ("lu2024_table1", "lu2024_resnet18", "lu2024_simple_cnn", "meterez2024_training",
                  "joudaki2023_train_runs", "daneshmand2021_depth_training", "lu2024_table5_lora")


def plant_fault(workdir: Path) -> Path:
    """App. Table 4's jobs raise at once (the first statement of trained_nets.fnn, for item apptable4)."""
    module = workdir / "src" / "isonorm" / "experiments" / "lu2024" / "trained_nets.py"
    text = module.read_text(encoding="utf-8")
    anchor = re.search(r"def fnn\(.*?\) -> pd\.DataFrame:\n", text, re.S)
    module.write_text(text[:anchor.end()] + f'    if item == "apptable4":\n        {FAULT}\n' + text[anchor.end():],
                      encoding="utf-8")
    return module


def plant_once(workdir: Path, condition: str, statement: str, name: str) -> Path:
    """In trained_nets.fnn, for the jobs where ``condition`` holds (on its arguments): ``statement``, once (a marker,
    ``struck-<name>`` beside the workflow copy, records that it struck), as a node failure strikes. Returns the
    marker."""
    module = workdir / "src" / "isonorm" / "experiments" / "lu2024" / "trained_nets.py"
    text = module.read_text(encoding="utf-8")
    anchor = re.search(r"def fnn\(.*?\) -> pd\.DataFrame:\n", text, re.S)  # its first statement, as plant_fault
    marker = workdir / f"struck-{name}"
    planted = (f'    if {condition} and not __import__("os").path.exists("{marker}"):\n'
               f'        open("{marker}", "w").close()\n'
               f"        {statement}\n")
    module.write_text(text[:anchor.end()] + planted + text[anchor.end():], encoding="utf-8")
    return marker


def results_files(workdir: Path) -> dict[str, bytes]:
    """Every results file of lu2024 (its jobs' Parquet files, its claims and its scored rows), by path: its bytes, a
    Parquet file's with the code fingerprint of its metadata left out (isonorm.fingerprints: the jobs that ran while
    trained_nets.py held a planted fault record that module's fingerprint, rightly, and compute the same numbers)."""
    root = workdir / QUICK["results"] / "lu2024"
    found = {}
    for f in sorted([*root.rglob("*.parquet"), root / "scored.csv"]):
        if f.suffix != ".parquet":
            found[str(f.relative_to(root))] = f.read_bytes()
            continue
        table = pq.read_table(f)
        meta = json.loads(table.schema.metadata[METADATA_KEY])
        meta.pop("code_fingerprint", None)
        kept = table.replace_schema_metadata({**table.schema.metadata, METADATA_KEY: json.dumps(meta).encode()})
        sink = pa.BufferOutputStream()
        pq.write_table(kept, sink)
        found[str(f.relative_to(root))] = sink.getvalue().to_pybytes()
    return found


def assert_equal_to_clean_run(workdir: Path, clean: Path) -> None:
    """lu2024's results files and scored rows, and its rows of the scoreboard, byte for byte those of a clean run."""
    resumed, reference = results_files(workdir), results_files(clean)
    assert sorted(resumed) == sorted(reference)
    assert not [name for name in reference if resumed[name] != reference[name]], "results differ from a clean run's"
    board = (workdir / QUICK["results"] / "scoreboard.csv").read_text(encoding="utf-8").splitlines()
    clean_board = (clean / QUICK["results"] / "scoreboard.csv").read_text(encoding="utf-8").splitlines()
    assert board == [clean_board[0], *(row for row in clean_board[1:] if row.startswith("lu2024,"))]


def not_run_section(page: str, item: str) -> str:
    """The item's "not run" placeholder up to its reason (nbconvert may reorder the attributes)."""
    found = re.search(rf'<section class="item not-run" id="{item}">.*?</p>', page, re.S) or re.search(
        rf'<section id="{item}" class="item not-run">.*?</p>', page, re.S)
    assert found, f"{item} is not shown as not run"
    return found.group(0)


@pytest.fixture(scope="module")
def partial_run(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("partial"))
    original = (workdir / "src/isonorm/experiments/lu2024/trained_nets.py").read_text(encoding="utf-8")
    plant_fault(workdir)
    plant_once(workdir, 'item == "table1" and optimizer == "sgd"', '__import__("os").kill(__import__("os").getpid(), 9)',
               "kill")
    (workdir / "offline.yaml").write_text("data:\n  corpora:\n    wikitext2: {source: huggingface}\n")
    env = {"PYTHONPATH": str(workdir / "src"), "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(workdir / "hf-cache")}
    done = snakemake(workdir, *RUN, env=env)
    return workdir, done, original, env


def test_every_page_is_written_and_the_missing_items_say_why(partial_run):
    workdir, done, _, _ = partial_run
    assert done.returncode != 0, "a run with a failed job must not report success"
    report, results = workdir / QUICK["report"], workdir / QUICK["results"]
    for page in ("index.html", "scoreboard.html", "lu2024.html"):
        assert (report / page).is_file(), f"{page} not written:\n{done.stderr[-4000:]}"
    assert (results / "scoreboard.csv").is_file()
    page = (report / "lu2024.html").read_text(encoding="utf-8")
    apptable4 = not_run_section(page, "lu2024-apptable4")
    assert "lu2024_apptable4 failed: RuntimeError: planted: App. Table 4 cannot train" in apptable4
    assert "logs/quick/lu2024/apptable4-" in apptable4 and "run the same command again" in apptable4
    transformer = not_run_section(page, "lu2024-table5-transformer")
    assert "needs fetch_data[name=wikitext2], which failed" in transformer and "HF_HUB_OFFLINE is set" in transformer
    assert all(re.search(rf'<figure[^>]*id="{item}"', page) for item in ("lu2024-fig1", "lu2024-table3"))  # what ran
    assert read_failure(workdir / "logs/quick/lu2024/apptable4-original.log")["rule"] == "lu2024_apptable4"
    # a failed measurement is a failure: the rows of the items whose job failed (or was blocked) say so
    board = read_scoreboard(results / "scoreboard.csv")
    apptable4_rows = board[board["item"] == "lu2024-apptable4"]
    assert len(apptable4_rows) and set(apptable4_rows.verdict) == {"failed"}, apptable4_rows
    assert all("lu2024_apptable4 failed: RuntimeError" in note for note in apptable4_rows.note)
    # its part (a) could not train, its corpus not fetched: not run, the root failure named (not a failure of its own)
    table5 = board[(board["item"] == "lu2024-table5") & board.note.str.contains("wikitext2", na=False)]
    assert len(table5) and set(table5.verdict) == {"not-run"}, board[board["item"] == "lu2024-table5"]
    assert all("needs fetch_data[name=wikitext2], which failed: HubUnreachableError" in note for note in table5.note)
    assert "failed" not in set(board[board["item"] == "lu2024-table5"].verdict)
    assert not (board[board["item"] == "lu2024-table3"].verdict == "failed").any()  # what ran is not touched
    killed = board[(board["item"] == "lu2024-table1") & (board["verdict"] == "failed")]  # its SGD job was killed
    assert len(killed) and all("it ended without finishing" in note for note in killed.note)


def test_the_run_ends_with_a_summary_on_the_terminal_and_the_index(partial_run):
    workdir, done, _, _ = partial_run
    summary = done.stderr[done.stderr.index("=== end of run ==="):]
    assert re.search(r"\d+ of \d+ planned jobs have their results\.", summary)
    assert "failed: fetch_data[name=wikitext2]: HubUnreachableError" in summary
    # its two jobs failed alike: one line (isonorm.run_status.summary_lines)
    assert re.search(r"failed: lu2024_apptable4 × 2 \(variant=\w+, variant=\w+\), alike: RuntimeError: planted", summary)
    assert "not run, an input missing: 1 job(s) after fetch_data[name=wikitext2]." in summary
    assert "failed: lu2024_table1[optimizer=sgd]: it ended without finishing or a record of why (killed" in summary
    assert "Traceback" not in done.stderr
    assert "report: report/quick/index.html" in summary and "to finish: fix the causes above" in summary
    assert done.stderr.count("planted: App. Table 4 cannot train") <= 2 * 2  # each job's: at failure, in summary
    index = (workdir / QUICK["report"] / "index.html").read_text(encoding="utf-8")
    this_run = re.search(r'<section id="this-run">.*?</section>', index, re.S).group(0)
    assert "failed: lu2024_apptable4" in this_run and "to finish:" in this_run


def test_the_same_command_finishes_it_once_the_faults_are_gone(partial_run, quick_run):
    workdir, _, original, env = partial_run
    (workdir / "src/isonorm/experiments/lu2024/trained_nets.py").write_text(original, encoding="utf-8")
    (workdir / "offline.yaml").write_text("{}\n")
    again = snakemake(workdir, *RUN, env=env)
    assert again.returncode == 0, again.stderr[-4000:]
    assert "have their results: all of them." in again.stderr
    page = (workdir / QUICK["report"] / "lu2024.html").read_text(encoding="utf-8")
    assert 'class="item not-run"' not in page
    assert read_failure(workdir / "logs/quick/lu2024/apptable4-original.log") is None
    ran = set(re.findall(r"^(?:local)?rule (\w+):", again.stdout + again.stderr, re.M))
    assert {"lu2024_table1", "lu2024_apptable4", "paper_claims"} <= ran and "lu2024_fig1" not in ran, ran
    assert_equal_to_clean_run(workdir, quick_run)


def test_ctrl_c_stops_the_run_once_and_the_same_command_resumes_it(partial_run, quick_run):
    workdir, _, _, env = partial_run
    # Work for the run: two results gone, and each file from them to the targets (Snakemake decides from the targets
    # down: while those stand up to date, it looks no further)
    results, report = workdir / QUICK["results"], workdir / QUICK["report"]
    for path in (results / "lu2024/apptable4/original.parquet", results / "lu2024/table1/sgd.parquet",
                 results / "lu2024/scored.csv", results / "scoreboard.csv", report / "lu2024.html",
                 report / "index.html"):
        path.unlink(missing_ok=True)
    started = plant_once(workdir, 'item == "apptable4"', '__import__("time").sleep(600)', "sleep")
    run = subprocess.Popen([sys.executable, "-m", "snakemake", *RUN], cwd=workdir, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env={**os.environ, **env}, start_new_session=True)
    deadline = time.monotonic() + 600
    while not started.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)
    assert started.exists(), "the planted training job never started"
    time.sleep(1)
    os.killpg(run.pid, signal.SIGINT)  # what Ctrl-C on a terminal sends: the whole foreground process group
    _, err = run.communicate(timeout=600)
    assert run.returncode != 0
    assert err.count("stopped: the run was stopped (Ctrl-C)") == 1, err[-4000:]
    assert "resume it with `" in err and "not finished:" not in err and "KeyboardInterrupt" not in err, err[-4000:]
    again = snakemake(workdir, *RUN, env=env)
    assert again.returncode == 0 and "have their results: all of them." in again.stderr, again.stderr[-4000:]
    assert re.search(r"^(?:local)?rule lu2024_apptable4:", again.stdout + again.stderr, re.M)
    assert_equal_to_clean_run(workdir, quick_run)


def test_a_nan_in_a_job_result_is_the_smoke_runs_failure(partial_run):
    """A smoke run compares nothing to the paper, but a value that comes out NaN is a fault: its row fails, and the
    headline counts it. Planted in the finished run's Fig. 1 weights, then the scoreboard is rebuilt."""
    workdir, _, _, env = partial_run
    path = workdir / QUICK["results"] / "lu2024" / "fig1" / "init_weights.parquet"
    frame = read_results(path)
    frame.at[0, "weight"] = [math.nan, *frame.at[0, "weight"][1:]]
    write_results(frame, path, config=read_metadata(path)["config"])
    again = snakemake(workdir, *RUN, "--", f"{QUICK['results']}/scoreboard.csv",
                      env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    board = read_scoreboard(workdir / QUICK["results"] / "scoreboard.csv")
    row = board[(board["item"] == "lu2024-fig1") & (board["quantity"] == "pii_init")].iloc[0]
    assert row.verdict == "failed" and "NaN" in row.note
    assert set(board.verdict) <= {"computed", "failed", "not-produced", "not-run"}  # nothing compared to the paper
    assert "; 1 failed (its job failed, or NaN or infinite); " in headline(board)


@pytest.fixture(scope="module")
def paper_copy(tmp_path_factory) -> Path:
    return copy_workflow(tmp_path_factory.mktemp("nogpu"))


NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}  # isonorm.gpus.gpu_visible: no GPU, whatever the machine has


def test_without_a_gpu_the_paper_run_plans_no_training_and_says_why(paper_copy):
    done = snakemake(paper_copy, "-n", "--cores", "2", env=NO_GPU)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout + done.stderr
    assert "no training is planned" in out and "`--config device=cpu` trains on the CPU anyway" in out
    planned = set(re.findall(r"^rule (\w+):", done.stdout, re.M)) | set(re.findall(r"^(\w+)\s+\d+$", out, re.M))
    assert not planned & set(TRAINING_RULES), planned & set(TRAINING_RULES)
    assert {"paper_notebook", "report_index"} <= planned
    on_purpose = snakemake(paper_copy, "-n", "--cores", "2", "--config", "device=cpu", "resources={oversize: run}",
                           env=NO_GPU)  # the LoRA job's 49 GB would stop it on a smaller machine (the test below)
    assert on_purpose.returncode == 0 and "meterez2024_training" in on_purpose.stdout + on_purpose.stderr


def test_cuda_without_a_gpu_fails_before_any_job(paper_copy):
    done = snakemake(paper_copy, "-n", "--cores", "2", "--config", "device=cuda", env=NO_GPU)
    assert error_lines(done)[0].startswith("error: config `device: cuda`, but this machine has no GPU")  # ≤ 5 lines
    # a run asked for one training's results file builds no paper's list of results: the training job itself asks
    one = snakemake(paper_copy, "-n", "--cores", "2", "results/meterez2024/training/mnist+fashionmnist-d100.parquet",
                    "--config", "device=cuda", env=NO_GPU)
    assert error_lines(one)[0].startswith("error: config `device: cuda`, but this machine has no GPU")
    assert "rule fetch_data:" not in one.stdout + one.stderr  # stopped before its inputs' fetches too


@pytest.fixture(scope="module")
def costed_copy(tmp_path_factory) -> Path:
    """A copy of the workflow with a small cost table of its own at results/shapes/cost.csv: two lu2024 Table 1
    trainings, one of them asking for 100,000 GB, more than any machine has."""
    workdir = copy_workflow(tmp_path_factory.mktemp("costed"))
    rows = [{"paper": "lu2024", "rule": "lu2024_table1", "wildcards": f"optimizer={name}",
             "result": f"lu2024/table1/{name}.parquet", "device": "cpu (test machine, 1 threads)",
             "projected_hours": hours, "peak_rss_gb": rss, "peak_memory_gb": rss, "device_memory_gb": 16.0,
             "fits": rss <= 16.0} for name, hours, rss in (("sgd", 2.0, 1.0), ("adam", 1.5, 100_000.0))]
    table = workdir / "results" / "shapes" / "cost.csv"
    table.parent.mkdir(parents=True)
    pd.DataFrame(rows, columns=COLUMNS).to_csv(table, index=False)
    return workdir


def test_a_cpu_run_states_the_cost_of_the_jobs_it_will_run(costed_copy):
    done = snakemake(costed_copy, "-n", "--cores", "2", "--config", "device=cpu", "papers=[lu2024]",
                     "resources={oversize: run}", env=NO_GPU)
    assert done.returncode == 0, done.stderr[-3000:]
    device = done.stderr.index("device: the jobs run on this machine, on `cpu`\n")
    cost = re.search(r"^cost: 3\.5 h projected for 2 of the (\d+) data and GPU jobs this run will run, one at a "
                     r"time on cpu \(test machine, 1 threads\)\n  as results/shapes/cost\.csv measured them "
                     r"\(docs/cost\.md\): trainings 3\.5 h \(2 of (\d+)\), the others 0\.0 h \(0 of \d+\); "
                     r"\d+ without a row, unprojected$", done.stderr, re.M)
    assert cost and device < cost.start() and int(cost.group(1)) > int(cost.group(2)) > 30, done.stderr[-3000:]


def test_a_job_too_large_for_this_machine_stops_the_run_before_any_job(costed_copy):
    done = snakemake(costed_copy, "-n", "--cores", "2", "--config", "device=cpu", "papers=[lu2024]", env=NO_GPU)
    error = error_lines(done)  # rc != 0, at most 5 lines, no traceback
    assert re.fullmatch(r"error: \d+ jobs? of this run asks? for more memory \(`mem_mb`\) than this machine has, "
                        r"[\d.]+ GB(; the largest)?:", error[0]), error
    assert error[1].startswith("lu2024_table1[optimizer=adam]: 150000.0 GB (")  # 100,000 GB x the margin
    assert "`--config 'resources={oversize: run}'`" in error[2] and len(error) <= 5
    assert not re.search(r"^rule \w+:", done.stdout + done.stderr, re.M)  # no job listed: it stopped before them
    # without a GPU, `device: auto` plans no training: the paper run does not stop on one
    auto = snakemake(costed_copy, "-n", "--cores", "2", "--config", "papers=[lu2024]", env=NO_GPU)
    assert auto.returncode == 0 and "error:" not in auto.stderr, auto.stderr[-3000:]
