"""Results bundles (isonorm.bundles, docs/bundles.md): export, the checks on reading one, and the import that a run
makes before it plans a job, on results files written as a job writes them (no workflow run here; the round trip
through Snakemake is in tests/test_bundles_workflow.py)."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from isonorm.bundles import __main__ as cli
from isonorm.bundles.export import export_bundle
from isonorm.bundles.importing import place_bundles
from isonorm.bundles.ledger import item_origins, read_ledger
from isonorm.bundles.manifest import MANIFEST, BundleError, read_bundle
from isonorm.fingerprints import code_fingerprint, computed_by, settings_fingerprint
from isonorm.results import write_results

FNN = "isonorm.experiments.lu2024.trained_nets:fnn"
OPTIMIZERS = ("sgd", "adam")


def run_of(optimizer: str, epochs: int = 20) -> dict:
    return {"function": FNN, "config": {"epochs": epochs, "dataset": "mnist"},
            "kwargs": {"optimizer": optimizer, "data_root": "resources/data", "device": "cpu"}}


def computed_run(root: Path, epochs: int = 20, value: float = 1.0) -> Path:
    """A results root as a run leaves it: lu2024 Table 1's files, written as scripts/run_experiment.py writes them."""
    for optimizer in OPTIMIZERS:
        run = run_of(optimizer, epochs)
        frame = pd.DataFrame({"epoch": [1, 2], "layer": ["linear", "linear"], "pii": [value, value / 2]})
        write_results(frame, root / "lu2024" / "table1" / f"{optimizer}.parquet", config=run, device="cpu",
                      extra=computed_by(run))
    return root


def job_of(epochs: int = 20, code: str | None = None):
    """What the workflow answers for a path (rules/common.smk bundle_job): the Table 1 job of this run, or none."""
    def answer(path: str):
        name = Path(path).name
        if "/lu2024/table1/" not in path or name.split(".")[0] not in OPTIMIZERS:
            return None
        run = run_of(name.split(".")[0], epochs)
        return "lu2024_table1", code or code_fingerprint(FNN), settings_fingerprint(run)
    return answer


@pytest.fixture
def bundle(tmp_path) -> Path:
    source = computed_run(tmp_path / "there" / "results")
    out = tmp_path / "run-a.tar"
    export_bundle(source, out, slugs=["lu2024"], preset="paper", note="two optimizers")
    return out


def place(paths, root, **kwargs):
    kwargs.setdefault("job_of", job_of())
    return place_bundles(paths, root, "paper", kwargs.pop("job_of"), results_prefix="results/", **kwargs)


def test_a_bundle_is_a_tar_with_a_manifest_readable_without_this_project(bundle, tmp_path):
    with tarfile.open(bundle) as archive:
        manifest = json.loads(archive.extractfile(MANIFEST).read())
        names = archive.getnames()
    assert manifest["format"] == "isonorm-bundle" and manifest["preset"] == "paper"
    assert manifest["name"] == "run-a" and manifest["note"] == "two optimizers"
    assert sorted(names) == [MANIFEST, "results/lu2024/table1/adam.parquet", "results/lu2024/table1/sgd.parquet"]
    entry = next(f for f in manifest["files"] if f["path"] == "lu2024/table1/sgd.parquet")
    assert entry["items"] == ["lu2024-table1"] and entry["result_key"] == "table1"
    assert entry["job"] == "unknown rule[optimizer=sgd]"  # no Snakemake record of the file here
    assert entry["device"].startswith("cpu") and entry["written"] and entry["function"] == FNN
    assert entry["code_fingerprint"] == code_fingerprint(FNN)
    assert entry["settings_fingerprint"] == settings_fingerprint(run_of("sgd"))
    assert "torch" in entry["packages"] and manifest["made_by"]["commit"]


def test_export_leaves_out_what_cannot_travel(tmp_path):
    root = computed_run(tmp_path / "results")
    write_results(pd.DataFrame({"x": [1]}), root / "lu2024" / "table1" / "rmsprop.parquet", config={})  # no prints
    (root / "lu2024" / "claims.parquet").write_bytes(b"measured again by the importing checkout")
    bundle, left_out = export_bundle(root, tmp_path / "b.tar", slugs=["lu2024"], preset="paper")
    assert [f.path for f in bundle.files] == ["lu2024/table1/adam.parquet", "lu2024/table1/sgd.parquet"]
    assert len(left_out) == 1 and "rmsprop.parquet records no fingerprints" in left_out[0]
    with pytest.raises(BundleError, match="no item"):
        export_bundle(root, tmp_path / "c.tar", slugs=["lu2024"], preset="paper", items=["lu2024-table9"])


def test_import_places_current_files_and_says_where_they_came_from(bundle, tmp_path):
    root = tmp_path / "here" / "results"
    done = place([bundle], root)
    there = tmp_path / "there" / "results" / "lu2024" / "table1"
    for optimizer in OPTIMIZERS:
        assert (root / "lu2024/table1" / f"{optimizer}.parquet").read_bytes() == (there / f"{optimizer}.parquet").read_bytes()
    assert done.used == {"lu2024/table1/adam.parquet", "lu2024/table1/sgd.parquet"}
    assert "2 of 2 results files used: lu2024-table1 (2)" in done.lines[0]
    assert set(read_ledger(root)) == done.used
    origin = item_origins(root, {"lu2024-table1": [root / "lu2024/table1/sgd.parquet"]})["lu2024-table1"]
    assert origin.startswith("imported from run-a (cpu")
    again = place([bundle], root)  # the next run: the files are in place, nothing is written again
    assert again.bundles[0].in_place and not again.bundles[0].placed


def digests(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()} if root.exists() else {}


def rewritten(bundle: Path, out: Path, change) -> Path:
    """The bundle with its members changed by ``change(name, data) -> data`` and its manifest kept."""
    with tarfile.open(bundle) as source, tarfile.open(out, "w") as target:
        for member in source.getmembers():
            data = change(member.name, source.extractfile(member).read())
            member.size = len(data)
            target.addfile(member, io.BytesIO(data))
    return out


def test_an_edited_or_truncated_bundle_is_refused_and_nothing_is_written(bundle, tmp_path):
    root = tmp_path / "here" / "results"
    computed_run(root, value=7.0)  # what this checkout has computed already must survive the refusal
    before = digests(root)
    edited = rewritten(bundle, tmp_path / "edited.tar",
                       lambda name, data: data[:-9] + b"x" + data[-8:] if name.endswith("sgd.parquet") else data)
    with pytest.raises(BundleError, match="sgd.parquet does not match its checksum"):
        place([edited], root)
    cut = tmp_path / "cut.tar"
    cut.write_bytes(bundle.read_bytes()[: bundle.stat().st_size // 2])
    with pytest.raises(BundleError, match="cut.tar"):
        place([cut], root)
    added = rewritten(bundle, tmp_path / "added.tar", lambda name, data: data)
    with tarfile.open(added, "a") as archive:
        info = tarfile.TarInfo("results/lu2024/table1/rmsprop.parquet")
        info.size = 3
        archive.addfile(info, io.BytesIO(b"abc"))
    with pytest.raises(BundleError, match="does not list"):
        place([added], root)
    with pytest.raises(BundleError, match="does not exist"):
        place([tmp_path / "missing.tar"], root)
    assert digests(root) == before


def test_a_bundle_of_changed_code_or_settings_is_named_stale_and_used_only_when_asked(bundle, tmp_path):
    root = tmp_path / "here" / "results"
    done = place([bundle], root, job_of=job_of(code="0" * 64))
    assert not done.used and not (root / "lu2024").exists()
    assert "stale, not used: 2 file(s), lu2024-table1 (2): the code that computes them changed since" in done.lines[1]
    assert "stale_bundles=use" in done.lines[1]
    settings = place([bundle], root, job_of=job_of(epochs=1))
    assert "this run's settings for them differ" in settings.lines[1]
    used = place([bundle], root, job_of=job_of(code="0" * 64), stale="use")
    assert used.used and all(e["stale"] for e in read_ledger(root).values())
    origin = item_origins(root, {"t1": [root / "lu2024/table1/sgd.parquet"]})["t1"]
    assert origin.startswith("stale, imported from run-a")
    back = place([bundle], root, job_of=job_of(code="0" * 64))  # stale_bundles back to skip: the copies go again
    assert back.removed and not (root / "lu2024/table1/sgd.parquet").exists()


def test_a_partial_bundle_gives_what_it_has_and_says_so(tmp_path):
    source = computed_run(tmp_path / "there" / "results")
    (source / "lu2024/table1/adam.parquet").unlink()
    out = tmp_path / "partial.tar"
    export_bundle(source, out, slugs=["lu2024"], preset="paper")
    root = tmp_path / "here" / "results"
    done = place([out], root, item_files={"lu2024-table1": ["lu2024/table1/sgd.parquet", "lu2024/table1/adam.parquet"]})
    assert done.used == {"lu2024/table1/sgd.parquet"}
    assert any(line.strip().startswith("partial: lu2024-table1") for line in done.lines)


def test_two_bundles_with_different_copies_of_a_result_stop_the_run_naming_both(bundle, tmp_path):
    other_root = computed_run(tmp_path / "elsewhere" / "results", value=3.0)
    other = tmp_path / "run-b.tar"
    export_bundle(other_root, other, slugs=["lu2024"], preset="paper")
    root = tmp_path / "here" / "results"
    with pytest.raises(BundleError, match=r"run-a .*and run-b .*different copies of 2 results file"):
        place([bundle, other], root)
    assert not root.exists()


def test_nothing_this_checkout_computed_is_overwritten_or_removed(bundle, tmp_path):
    root = tmp_path / "here" / "results"
    computed_run(root, value=5.0)
    ours = digests(root)
    done = place([bundle], root)
    assert digests(root) == ours and len(done.bundles[0].kept) == 2 and "kept 2 file(s)" in done.lines[1]
    origin = item_origins(root, {"t1": [root / "lu2024/table1/sgd.parquet"]})["t1"]
    assert origin.startswith("computed (cpu")


def test_a_bundle_no_longer_listed_takes_its_copies_back_but_not_what_a_job_rewrote(bundle, tmp_path):
    root = tmp_path / "here" / "results"
    place([bundle], root)
    write_results(pd.DataFrame({"pii": [9.0]}), root / "lu2024/table1/adam.parquet", config=run_of("adam"),
                  extra=computed_by(run_of("adam")))  # a job of this checkout computed it again since
    done = place([], root)
    assert done.removed == ["lu2024/table1/sgd.parquet"] and not (root / "lu2024/table1/sgd.parquet").exists()
    assert (root / "lu2024/table1/adam.parquet").is_file() and read_ledger(root) == {}


def test_a_dry_run_writes_nothing(bundle, tmp_path):
    root = tmp_path / "here" / "results"
    done = place([bundle], root, dry_run=True)
    assert "2 of 2 results files would be used" in done.lines[0] and not root.exists()


def test_a_bundle_of_another_preset_or_listed_twice_is_refused(bundle, tmp_path):
    with pytest.raises(BundleError, match="'paper' preset, and this run is 'quick'"):
        place_bundles([bundle], tmp_path / "results", "quick", job_of())
    with pytest.raises(BundleError, match="twice"):
        place([bundle, bundle], tmp_path / "results")


def test_the_command_line_verifies_lists_and_refuses_a_damaged_bundle(bundle, tmp_path, capsys):
    assert cli.main(["verify", str(bundle)]) == 0
    out = capsys.readouterr().out
    assert "checksums: all 2 files match" in out and "code: 2 of 2 files were computed by the code" in out
    assert cli.main(["list", str(bundle)]) == 0
    assert "lu2024/table1/sgd.parquet  unknown rule[optimizer=sgd]" in capsys.readouterr().out
    cut = tmp_path / "cut.tar"
    cut.write_bytes(bundle.read_bytes()[:700])
    assert cli.main(["verify", str(cut)]) == 1
    assert capsys.readouterr().err.startswith("error: ")
    assert read_bundle(bundle).name == "run-a"


def test_bundles_of_different_results_combine(tmp_path):
    first = computed_run(tmp_path / "cpu" / "results")
    (first / "lu2024/table1/adam.parquet").unlink()
    second = computed_run(tmp_path / "gpu" / "results", value=2.0)
    (second / "lu2024/table1/sgd.parquet").unlink()
    export_bundle(first, tmp_path / "cpu-run.tar", slugs=["lu2024"], preset="paper")
    export_bundle(second, tmp_path / "gpu-run.tar", slugs=["lu2024"], preset="paper")
    root = tmp_path / "here" / "results"
    done = place([tmp_path / "cpu-run.tar", tmp_path / "gpu-run.tar"], root)
    assert done.used == {"lu2024/table1/sgd.parquet", "lu2024/table1/adam.parquet"}
    ledger = read_ledger(root)
    assert ledger["lu2024/table1/sgd.parquet"]["bundle"] == "cpu-run"
    assert ledger["lu2024/table1/adam.parquet"]["bundle"] == "gpu-run"
    origin = item_origins(root, {"t1": [root / "lu2024/table1/sgd.parquet", root / "lu2024/table1/adam.parquet"]})
    assert origin["t1"].startswith("imported from cpu-run (") and "; imported from gpu-run (" in origin["t1"]
