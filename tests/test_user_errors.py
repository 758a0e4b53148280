"""Errors the user fixes by changing a setting: each case says its cause and fix in at most MAX_LINES lines from
`error:` on, with no Python traceback (isonorm.user_errors), and the nearest valid name where there is one. Each test
is a dry run of a copy of the workflow, stopped at parse time (a few seconds each)."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, copy_workflow, error_lines, snakemake



@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """One copy of the workflow for the module: every run here stops before any job, so none changes it."""
    return copy_workflow(tmp_path_factory.mktemp("user-errors"))


def dry_run(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return snakemake(workdir, "-n", "--cores", "2", *args, timeout=120)


def test_a_local_path_that_does_not_exist_stops_the_run_before_any_job(workdir, tmp_path):
    nowhere = tmp_path / "nowhere"
    lines = error_lines(dry_run(workdir, "--config", f"data={{datasets: {{mnist: {{source: local, path: {nowhere}}}}}}}"))
    text = "\n".join(lines)
    assert f"data: datasets: mnist: path: {nowhere} does not exist (set in --config)" in text
    assert "Set `path:` to the pre-staged copy, or choose another `source:`" in text


@pytest.mark.parametrize("paper, hint", [("lu2042", " — did you mean 'lu2024'?"), ("foo", "")])
def test_an_unknown_paper_is_told_with_the_nearest_one(workdir, paper, hint):
    lines = error_lines(dry_run(workdir, "--config", f"papers=[{paper}]"))
    assert lines[0] == f"error: unknown paper {paper!r} under `papers:` (set in --config){hint}"
    assert "lu2024" in lines[1] and "adding one: docs/adding.md" in lines[1]
    assert "expected text matching" not in "\n".join(lines)  # not the schema's regular expression


def test_the_quick_preset_with_a_local_data_set_names_the_sizes_it_keeps(workdir, tmp_path):
    lines = error_lines(dry_run(workdir, "--configfile", "presets/quick.yaml", "--config",
                                f"data={{datasets: {{mnist: {{source: local, path: {tmp_path}}}}}}}"))
    text = "\n".join(lines)
    assert ("data: datasets: mnist: n_train: 1000, n_test: 200 (set in presets/quick.yaml) size the synthetic "
            "stand-in, but the source is 'local' (set in --config)") in text
    assert "n_train: null, n_test: null" in text and "limit" not in text


def test_more_problems_than_shown_still_fit(workdir):
    lines = error_lines(dry_run(workdir, "--config", *(f"bogus{i}={i}" for i in range(5))))
    assert sum("unknown key 'bogus" in line for line in lines) == 3
    assert lines[-1].startswith("…and 2 more. Edit the file named in brackets")


# Case 5: `--configfile` and `--config` take every word after them, so a target written after one is read as a config
# file (or entry) by Snakemake's command line, which fails with its own traceback before the workflow is read: no
# workflow code, profile included, can catch it (docs/configuration.md, "Errors and interrupted runs"). What the
# workflow can do is to never show that order.

DOCUMENTED = [REPO / "README.md", REPO / "benchmarks" / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
GREEDY = {"--configfile", "--configfiles", "--config", "-C"}


def documented_commands() -> list[tuple[str, str]]:
    """(file, command) of every `snakemake …` the documentation shows, inline or in a code block."""
    found = []
    for doc in DOCUMENTED:
        text = doc.read_text(encoding="utf-8")
        inline = re.findall(r"`(snakemake [^`]+)`", text)
        blocks = re.findall(r"^(snakemake .+)$", "\n".join(re.findall(r"```.*?\n(.*?)```", text, re.S)), re.M)
        found += [(str(doc.relative_to(REPO)), command) for command in inline + blocks]
    return found


def swallowed(command: str) -> list[str]:
    """The words of ``command`` that `--configfile`/`--config` would take although they are no config file or
    `key=value` entry: targets written after the options instead of before them or after `--`."""
    taken, greedy = [], None
    for word in shlex.split(command, comments=True)[1:]:
        if word == "--":
            break
        if word.startswith("-"):
            greedy = word if word in GREEDY else None
        elif greedy in ("--config", "-C") and "=" not in word:
            taken.append(word)
        elif greedy and greedy.startswith("--configfile") and not word.endswith((".yaml", ".yml", ".json")):
            taken.append(word)
    return taken


def test_targets_come_before_the_config_options_or_after_a_double_dash(workdir):
    commands = documented_commands()
    assert len(commands) > 20  # the scan finds the documentation's commands
    assert not [(doc, command) for doc, command in commands if swallowed(command)]
    assert swallowed("snakemake --cores 2 --configfile presets/quick.yaml results/quick/scoreboard.csv")
    done = dry_run(workdir, "--configfile", "presets/quick.yaml", "--", "results/quick/scoreboard.csv")
    assert done.returncode == 0 and "scoreboard" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
