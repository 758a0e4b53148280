"""The workflow's contracts that need no run: lint, the paper DAG, config errors, download errors."""

from __future__ import annotations

import pytest
import yaml

from conftest import snakemake

pytestmark = pytest.mark.integration


def test_lint_is_clean(workflow_dir):
    done = snakemake(workflow_dir, "--lint")
    assert done.returncode == 0, done.stdout + done.stderr


def test_paper_dag_has_downloads_and_gpu_training(workflow_dir):
    done = snakemake(workflow_dir, "-n", "--quiet", "rules")
    assert done.returncode == 0, done.stderr
    for rule in ("fetch_dataset", "daneshmand2021_depth_training", "daneshmand2021_fig4b", "daneshmand2021_appfig7",
                 "daneshmand2021_fig3", "paper_notebook", "report_index"):
        assert rule in done.stdout, rule


def test_data_free_dag_has_no_download(workflow_dir):
    done = snakemake(workflow_dir, "-n", "--quiet", "rules", "--config", "compute=data-free")
    assert done.returncode == 0, done.stderr
    assert "fetch_dataset" not in done.stdout and "daneshmand2021_fig3" in done.stdout


@pytest.mark.parametrize(
    "override, key",
    [
        ({"bogus_setting": 1}, "bogus_setting"),
        ({"daneshmand2021": {"fig4b": {"depht": 3}}}, "depht"),
        ({"data": {"datasets": {"cifar10": {"source": "ftp"}}}}, "ftp"),
    ],
)
def test_wrong_config_fails_at_parse_time_naming_the_key(workflow_dir, tmp_path, override, key):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(override))
    done = snakemake(workflow_dir, "-n", "--configfile", str(bad))
    assert done.returncode != 0
    assert key in done.stdout + done.stderr


def test_unreachable_download_fails_at_once_naming_the_fixes(workflow_dir, tmp_path):
    # A proxy on a closed local port makes every download fail immediately, with or without internet.
    closed = {"http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
              "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}
    config = tmp_path / "download.yaml"
    config.write_text(yaml.safe_dump({"data": {"root": str(tmp_path / "data"), "download_retries": 0}}))
    done = snakemake(workflow_dir, f"{tmp_path}/data/cifar10/.ready", "--cores", "1", "--configfile", str(config),
                     env=closed, timeout=300)
    assert done.returncode != 0
    log = (workflow_dir / "logs" / "data" / "fetch_cifar10.log").read_text()
    assert "presets/quick.yaml" in log and "local" in log
