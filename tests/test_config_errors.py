"""Config errors fit on a screen: the key's path, what was expected, the nearest valid key, the file to edit."""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from snakemake.utils import update_config  # how Snakemake merges config files and --config, key by key

from conftest import REPO, snakemake
from isonorm.config_check import (ConfigError, ConfigSources, check_config, check_dataset_sizes, check_local_sources,
                                  check_papers, shape_of, source_of)
from isonorm.user_errors import MAX_LINES

SCHEMA = REPO / "schemas" / "config.schema.yaml"
BASE = yaml.safe_load((REPO / "config.yaml").read_text())
SCREEN_LINES = 15  # the whole output of a dry run stopped by a config error, Snakemake's own lines included


@pytest.fixture
def files(tmp_path, monkeypatch):
    """config.yaml (the repository's) and an empty preset.yaml in a working directory of their own."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(BASE))
    (tmp_path / "preset.yaml").write_text("{}\n")
    return tmp_path


def message(files: Path, preset: dict | None = None, cli: dict | None = None) -> str:
    """The ConfigError of config.yaml + preset.yaml + --config, merged as Snakemake merges them."""
    (files / "preset.yaml").write_text(yaml.safe_dump(preset or {}))
    config = copy.deepcopy(BASE)
    update_config(config, preset or {})
    update_config(config, cli or {})
    sources = ConfigSources(files=[files / "config.yaml", files / "preset.yaml"], cli=cli or {})
    with pytest.raises(ConfigError) as caught:
        check_config(config, SCHEMA, sources, log_path=files / "logs" / "config_check.log")
    return str(caught.value)


def test_the_shipped_configuration_and_presets_pass(tmp_path):
    for preset in (None, "quick", "budget"):
        config = copy.deepcopy(BASE)
        if preset:
            update_config(config, yaml.safe_load((REPO / "presets" / f"{preset}.yaml").read_text()))
        check_config(config, SCHEMA, log_path=tmp_path / "log")
    assert not (tmp_path / "log").exists()


def test_misspelt_top_level_key_names_the_nearest_and_the_command_line(files):
    text = message(files, cli={"devise": "cpu"})
    assert "unknown key 'devise' at the top level — did you mean 'device'? (in --config)" in text


def test_misspelt_nested_key_names_the_nearest_only_and_its_file(files):
    text = message(files, preset={"meterez2024": {"training": {"epocs": 3}}})
    assert "unknown key 'epocs' under meterez2024: training: — did you mean 'epochs'? (in preset.yaml)" in text
    assert "epoch_caps" not in text  # a farther match is left out


def test_misspelt_name_in_a_closed_list_follows_the_schema(files):
    text = message(files, preset={"data": {"datasets": {"cifar1O": {"source": "synthetic"}}}})
    assert "unknown key 'cifar1O' under data: datasets:" in text and "'cifar10'" in text


def test_wrong_type_says_what_was_expected_and_given(files):
    text = message(files, preset={"meterez2024": {"training": {"epochs": "three"}}})
    assert "meterez2024: training: epochs: expected an integer; got 'three' (set in preset.yaml)" in text


def test_bad_enum_value_lists_the_allowed_values(files):
    text = message(files, cli={"data": {"datasets": {"cifar10": {"source": "ftp"}}}})
    assert "data: datasets: cifar10: source: expected one of torchvision, local, synthetic; got 'ftp'" in text


def test_below_the_minimum_says_the_bound(files):
    text = message(files, preset={"meterez2024": {"training": {"width": 0}}})
    assert "meterez2024: training: width: expected ≥ 1; got 0" in text


def test_one_of_lists_every_alternative(files):
    text = message(files, preset={"joudaki2023": {"simulator": {"gains": [1.0, "xavie"]}}})
    assert "joudaki2023: simulator: gains[1]: expected a number or exactly xavier; got 'xavie'" in text


def test_file_attribution_follows_snakemakes_merge_order(files):
    path = ["meterez2024", "training", "epochs"]
    (files / "preset.yaml").write_text(yaml.safe_dump({"meterez2024": {"training": {"epochs": 3}}}))
    both = ConfigSources(files=[files / "config.yaml", files / "preset.yaml"])
    assert source_of(path, both) == "preset.yaml"  # the later file wins
    assert source_of(path, ConfigSources(files=[files / "config.yaml"])) == "config.yaml"
    cli = {"meterez2024": {"training": {"epochs": 4}}}
    assert source_of(path, ConfigSources(files=both.files, cli=cli)) == "--config"  # --config wins over any file
    assert source_of(["nowhere"], both) == "--config"  # set by no file: it came from the command line


def test_sources_of_a_workflow_put_command_line_files_last(files):
    """Workflow.configfiles lists --configfile files before the Snakefile's, yet Snakemake merges them on top."""
    preset = (files / "preset.yaml").resolve()
    workflow = SimpleNamespace(configfiles=[preset, "config.yaml"],
                               config_settings=SimpleNamespace(configfiles=[preset], config={"device": "cpu"}))
    sources = ConfigSources.of(workflow)
    assert sources.files == [(files / "config.yaml").resolve(), preset] and sources.cli == {"device": "cpu"}


def test_at_most_three_errors_then_a_count_and_the_log(files):
    text = message(files, cli={f"bogus{i}": i for i in range(5)})
    assert text.count("unknown key") == 3 and "…and 2 more. Edit the file" in text
    assert len(text.splitlines()) == MAX_LINES  # the count shares the fix's line (isonorm.user_errors.MAX_LINES)
    log = files / "logs" / "config_check.log"
    assert str(log) in text and "Failed validating 'additionalProperties'" in log.read_text()


def test_verbose_prints_the_full_detail(files, capsys):
    config = {**BASE, "devise": "cpu"}
    with pytest.raises(ConfigError):
        check_config(config, SCHEMA, log_path=files / "log", verbose=True)
    assert "Failed validating" in capsys.readouterr().err


# --- what `snakemake -n` prints: the whole output fits a screen, naming the key and the suggestion ---------


def lines_of(done) -> list[str]:
    return [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]


@pytest.mark.integration
def test_misspelt_top_level_key_on_the_command_line(workflow_dir):
    done = snakemake(workflow_dir, "-n", "--config", "devise=cpu")
    lines = lines_of(done)
    assert done.returncode != 0 and len(lines) <= SCREEN_LINES, "\n".join(lines)
    assert any("'devise'" in line and "did you mean 'device'?" in line for line in lines), "\n".join(lines)
    assert (workflow_dir / "logs" / "config_check.log").is_file()


@pytest.mark.integration
def test_misspelt_nested_key_in_a_config_file(workflow_dir, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"meterez2024": {"training": {"epocs": 3}}}))
    done = snakemake(workflow_dir, "-n", "--configfile", str(bad))
    lines = lines_of(done)
    assert done.returncode != 0 and len(lines) <= SCREEN_LINES, "\n".join(lines)
    assert any("'epocs'" in line and "did you mean 'epochs'?" in line and str(bad) in line for line in lines), \
        "\n".join(lines)
    assert "Job stats" not in done.stdout + done.stderr  # stopped at parse time, before any DAG or job


# --- a paper the schema does not describe (docs/adding.md) --------------------------------------------------

NEW_PAPER = {"fig1": {"width": 64, "gain": 1.0, "depths": [2, 4], "seed": None, "activation": "relu"}}


def new_paper_message(files: Path, override: dict) -> str:
    """The ConfigError of config.yaml with a paper `smith2099` the schema has no entry for, plus ``override``."""
    defaults = {**BASE, "papers": [*BASE["papers"], "smith2099"], "smith2099": NEW_PAPER}
    (files / "config.yaml").write_text(yaml.safe_dump(defaults))
    config = copy.deepcopy(defaults)
    update_config(config, override)
    (files / "preset.yaml").write_text(yaml.safe_dump(override))
    sources = ConfigSources(files=[files / "config.yaml", files / "preset.yaml"])
    check_config(config, SCHEMA, sources, log_path=files / "log", defaults=files / "config.yaml")
    return ""


def test_a_new_papers_section_is_checked_against_its_defaults(files):
    new_paper_message(files, {"smith2099": {"fig1": {"width": 8, "gain": 2, "depths": [3], "seed": 5}}})
    with pytest.raises(ConfigError, match=r"unknown key 'widht' under smith2099: fig1: — did you mean 'width'"):
        new_paper_message(files, {"smith2099": {"fig1": {"widht": 8}}})
    with pytest.raises(ConfigError, match=r"smith2099: fig1: width: expected an integer; got 'wide'"):
        new_paper_message(files, {"smith2099": {"fig1": {"width": "wide"}}})
    with pytest.raises(ConfigError, match=r"smith2099: fig1: depths\[0\]: expected an integer"):
        new_paper_message(files, {"smith2099": {"fig1": {"depths": [0.5]}}})


def test_a_new_items_section_of_a_described_paper_is_checked_against_its_defaults(files):
    """meterez2024's schema entry lists its sections; a section added to config.yaml for a new item needs no entry
    (docs/adding.md) and is checked against its defaults' keys and types."""
    defaults = copy.deepcopy(BASE)
    defaults["meterez2024"]["figz9"] = {"width": 8, "depths": [3]}
    (files / "config.yaml").write_text(yaml.safe_dump(defaults))

    def check(override):
        config = copy.deepcopy(defaults)
        update_config(config, override)
        (files / "preset.yaml").write_text(yaml.safe_dump(override))
        check_config(config, SCHEMA, ConfigSources(files=[files / "config.yaml", files / "preset.yaml"]),
                     log_path=files / "log", defaults=files / "config.yaml")

    check({"meterez2024": {"figz9": {"width": 16}}})
    with pytest.raises(ConfigError, match=r"unknown key 'widht' under meterez2024: figz9: — did you mean 'width'"):
        check({"meterez2024": {"figz9": {"widht": 16}}})
    with pytest.raises(ConfigError, match=r"meterez2024: figz9: depths\[0\]: expected an integer"):
        check({"meterez2024": {"figz9": {"depths": [0.5]}}})


def test_shape_of_follows_the_defaults_types():
    assert shape_of({"a": 1, "b": [0.5], "c": None}) == {
        "type": "object", "additionalProperties": False,
        "properties": {"a": {"type": "integer"}, "b": {"type": "array", "items": {"type": "number"}}, "c": {}}}
    assert shape_of([1, "x"])["items"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert shape_of(True) == {"type": "boolean"}


def paper_files(root: Path, *slugs: str) -> Path:
    """Empty notebooks/<slug>.py and notebooks/reference/<slug>.yaml under ``root`` (a rules file only if not all
    plain)."""
    for slug in slugs:
        for name in (f"notebooks/{slug}.py", f"notebooks/reference/{slug}.yaml"):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("")
    return root


def test_a_listed_paper_needs_its_section_and_files(tmp_path):
    paper_files(tmp_path, "lu2024")
    (tmp_path / "notebooks/smith2099.py").write_text("")  # begun, after docs/adding.md: incomplete, not unknown
    assert check_papers({"papers": ["lu2024"], "lu2024": {}}, tmp_path) == ["lu2024"]
    with pytest.raises(ConfigError) as caught:
        check_papers({"papers": ["lu2024", "smith2099"], "lu2024": {}}, tmp_path)
    text = str(caught.value)
    assert ("smith2099: no `smith2099:` section in the config; notebooks/reference/smith2099.yaml does not exist"
            in text and "docs/adding.md" in text)
    assert "rules/" not in text and len(text.splitlines()) <= MAX_LINES


def test_an_unknown_paper_names_the_nearest_and_the_papers_there_are(tmp_path):
    paper_files(tmp_path, "lu2024", "meterez2024")
    sources = ConfigSources(cli={"papers": ["lu2042"]})
    with pytest.raises(ConfigError) as caught:
        check_papers({"papers": ["lu2042"]}, tmp_path, sources)
    assert str(caught.value).splitlines() == [
        "unknown paper 'lu2042' under `papers:` (set in --config) — did you mean 'lu2024'?",
        "(papers of this workflow: lu2024, meterez2024; adding one: docs/adding.md)"]
    with pytest.raises(ConfigError, match=r"unknown paper 'Lu 2024' .*\n\(papers of this workflow"):
        check_papers({"papers": ["Lu 2024"], "Lu 2024": {}}, tmp_path)  # not a slug: no paper, whatever it has


def test_many_unknown_papers_fit_the_lines(tmp_path):
    with pytest.raises(ConfigError) as caught:
        check_papers({"papers": [f"x{i}" for i in range(6)]}, paper_files(tmp_path, "lu2024"))
    lines = str(caught.value).splitlines()
    assert len(lines) == MAX_LINES and lines[-1].startswith("…and 3 more. (papers of this workflow: lu2024;")


# --- data sets and checkpoints of `source: local`: their pre-staged copy, before any job -------------------


def local(section: str, name: str, path, root: Path) -> dict:
    """A config holding the one entry ``name`` under ``section`` (`datasets`, `models`, …) with source local."""
    group = "checkpoints" if section == "models" else "data"
    return {group: {"root": str(root), section: {name: {"source": "local", "path": path}}}}


def test_a_local_path_that_does_not_exist_names_its_key_path_and_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sources = ConfigSources(cli={"data": {"corpora": {"wikitext2": {"path": "staged/wt2"}}}})
    with pytest.raises(ConfigError) as caught:
        check_local_sources(local("corpora", "wikitext2", "staged/wt2", tmp_path / "data"), sources)
    text = str(caught.value)
    assert f"data: corpora: wikitext2: path: staged/wt2 does not exist in {tmp_path} (set in --config)" in text
    assert "Set `path:` to the pre-staged copy" in text and len(text.splitlines()) <= MAX_LINES
    (tmp_path / "staged/wt2").mkdir(parents=True)  # the corpus's files are its fetch job's to check
    check_local_sources(local("corpora", "wikitext2", "staged/wt2", tmp_path / "data"), sources)


def test_a_local_entry_without_a_path_and_a_missing_checkpoint_folder(tmp_path):
    config = {**local("models", "gpt2", str(tmp_path / "gpt2"), tmp_path / "ckpt"),
              **local("instructions", "alpaca", None, tmp_path / "data")}
    with pytest.raises(ConfigError) as caught:
        check_local_sources(config)
    text = str(caught.value)
    assert "data: instructions: alpaca: path: not set" in text
    assert f"checkpoints: models: gpt2: path: {tmp_path / 'gpt2'} does not exist" in text


def test_a_local_data_set_outside_torchvisions_layout_names_the_missing_files(tmp_path):
    (tmp_path / "staged").mkdir()
    with pytest.raises(ConfigError, match=r"data: datasets: mnist: path: .*lacks 4 file\(s\): train-images-idx3"):
        check_local_sources(local("datasets", "mnist", str(tmp_path / "staged"), tmp_path / "data"))


def test_a_fetched_local_entry_needs_its_copy_no_more(tmp_path):
    (tmp_path / "data/mnist").mkdir(parents=True)
    (tmp_path / "data/mnist/.ready").write_text("{}")  # isonorm.sources.fetch stops at a complete marker
    check_local_sources(local("datasets", "mnist", str(tmp_path / "gone"), tmp_path / "data"))


def test_a_size_under_a_real_source_names_both_settings_and_their_files(files):
    (files / "preset.yaml").write_text(yaml.safe_dump({"data": {"datasets": {"mnist": {"n_train": 10, "n_test": 5}}}}))
    sources = ConfigSources(files=[files / "config.yaml", files / "preset.yaml"],
                            cli={"data": {"datasets": {"mnist": {"source": "local"}}}})
    config = {"data": {"datasets": {"mnist": {"source": "local", "path": "x", "n_train": 10, "n_test": 5},
                                    "cifar10": {"source": "synthetic", "n_train": 10}}}}
    with pytest.raises(ConfigError) as caught:
        check_dataset_sizes(config, sources)
    text = str(caught.value)
    assert ("data: datasets: mnist: n_train: 10, n_test: 5 (set in preset.yaml) size the synthetic stand-in, but the "
            "source is 'local' (set in --config)") in text
    assert "n_train: null, n_test: null" in text and "cifar10" not in text
    check_dataset_sizes({"data": {"datasets": {"mnist": {"source": "local", "n_train": None}}}})
