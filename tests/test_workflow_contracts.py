"""The workflow's contracts that need no run: lint, the paper DAG, config errors, download errors."""

from __future__ import annotations

import re

import pytest
import yaml

from conftest import snakemake
from isonorm import gpus

pytestmark = pytest.mark.integration


def test_lint_is_clean(workflow_dir):
    done = snakemake(workflow_dir, "--lint")
    assert done.returncode == 0, done.stdout + done.stderr


def test_paper_dag_has_downloads_and_gpu_training(workflow_dir):
    # device=cpu: trainings planned whatever this machine has (with `auto` a machine without a GPU plans none:
    # tests/test_workflow_partial.py); `oversize: run`, or the LoRA job's 49 GB stops a smaller machine's dry run
    done = snakemake(workflow_dir, "-n", "--quiet", "rules", "--config", "device=cpu", "resources={oversize: run}")
    assert done.returncode == 0, done.stderr
    for rule in ("fetch_data", "daneshmand2021_depth_training", "daneshmand2021_fig4b", "daneshmand2021_appfig7",
                 "daneshmand2021_fig3", "paper_notebook", "report_index", "fetch_checkpoint",
                 "joudaki2023_train_runs", "joudaki2023_fig3", "joudaki2023_figb4", "joudaki2023_figb5",
                 "joudaki2023_simulation", "joudaki2023_strengths", "plain_simulation", "meterez2024_at_init",
                 "lu2024_fig1", "meterez2024_tabled1", "meterez2024_training", "lu2024_table1", "lu2024_table3", "lu2024_apptable4",
                 "lu2024_simple_cnn", "lu2024_resnet18", "lu2024_table5_transformer", "lu2024_table5_checkpoints",
                 "lu2024_table5_lora"):
        assert rule in done.stdout, rule


@pytest.mark.parametrize("device, held", [
    ("cpu", "gpu=0"),
    # without a GPU, `device: cuda` stops before any job (tests/test_workflow_partial.py); RunPlan.gpus_per_training
    # gives the count everywhere (tests/test_gpus.py)
    pytest.param("cuda", "gpu=1", marks=pytest.mark.skipif(not gpus.gpu_visible(), reason="needs a GPU")),
])
def test_a_local_training_job_holds_a_gpu_only_when_it_runs_on_one(workflow_dir, device, held):
    """On a CPU the profile's pool of one GPU would run the trainings one at a time with a core idle."""
    done = snakemake(workflow_dir, "-n", "--forceall", "--configfile", "presets/quick.yaml", "--config",
                     f"device={device}", "--", "results/quick/lu2024/table1/sgd.parquet")  # listed if made already
    assert done.returncode == 0, done.stderr
    (training,) = [job for job in done.stdout.split("\n\n") if "rule lu2024_table1:" in job]
    assert re.search(rf"resources: .*\b{held}\b", training), training


def test_data_free_dag_has_no_download(workflow_dir):
    done = snakemake(workflow_dir, "-n", "--quiet", "rules", "--config", "compute=data-free")
    assert done.returncode == 0, done.stderr
    assert "fetch_data" not in done.stdout and "daneshmand2021_fig3" in done.stdout
    for rule in ("fetch_checkpoint", "joudaki2023_train_runs",
                 "joudaki2023_figb5", "meterez2024_training", "meterez2024_at_init", "lu2024_table1"):
        assert rule not in done.stdout, rule
    for rule in ("joudaki2023_simulation", "joudaki2023_strengths", "plain_simulation", "lu2024_fig1"):
        assert rule in done.stdout, rule


@pytest.mark.parametrize(
    "override, key",
    [
        ({"bogus_setting": 1}, "bogus_setting"),
        ({"daneshmand2021": {"fig4b": {"depht": 3}}}, "depht"),
        ({"data": {"datasets": {"cifar10": {"source": "ftp"}}}}, "ftp"),
        ({"joudaki2023": {"fig5_6": {"normalisations": ["layer"]}}}, "normalisations"),
        ({"checkpoints": {"models": {"gpt2": {"source": "hub"}}}}, "hub"),
    ],
)
def test_wrong_config_fails_at_parse_time_naming_the_key(workflow_dir, tmp_path, override, key):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(override))
    done = snakemake(workflow_dir, "-n", "--configfile", str(bad))
    assert done.returncode != 0
    output = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert any(key in line for line in output) and len(output) <= 15, "\n".join(output)  # fits a screen


def fetch_offline(workflow_dir, tmp_path, section: str, target: str):
    """Run the fetch rule for ``target`` (under ``tmp_path``) with every download failing at once: a proxy on a
    closed local port refuses the connection, with or without internet (the Hub's probe goes to that proxy and fails
    at once, docs/data.md "Offline machines are recognised at once"); no retries of ours."""
    closed = {"http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
              "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "HF_HOME": str(tmp_path / "hf")}
    config = tmp_path / "download.yaml"
    config.write_text(yaml.safe_dump({section: {"root": str(tmp_path / section), "download_retries": 0}}))
    return snakemake(workflow_dir, f"{tmp_path}/{section}/{target}", "--cores", "1", "--configfile", str(config),
                     env=closed, timeout=300)


def test_unreachable_download_fails_at_once_naming_the_fixes(workflow_dir, tmp_path):
    done = fetch_offline(workflow_dir, tmp_path, "data", "cifar10/.ready")
    assert done.returncode != 0
    log = (workflow_dir / "logs" / "data" / "fetch_cifar10.log").read_text()
    assert "presets/quick.yaml" in log and "local" in log
    # the run ends with its summary, but a run asked for one fetch makes no report (rules/common.smk end_of_run)
    summary = done.stderr[done.stderr.index("=== end of run ==="):]
    assert "failed: fetch_data[name=cifar10]: DownloadError" in summary and "report:" not in summary


def test_unreachable_checkpoint_download_fails_at_once_naming_the_fixes(workflow_dir, tmp_path):
    done = fetch_offline(workflow_dir, tmp_path, "checkpoints", "gpt2/.ready")
    assert done.returncode != 0
    log = (workflow_dir / "logs" / "checkpoints" / "fetch_gpt2.log").read_text()
    assert "local" in log and "tiny" in log
    assert not (tmp_path / "checkpoints" / "gpt2" / ".ready").exists()
