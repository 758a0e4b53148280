"""The fetch layer itself (isonorm.sources): the shared steps on a toy kind, then every real kind's wiring.

The toy kind's builders write a small file and count their calls, so each step of :func:`fetch` (lookup,
source and option checks, the completeness decision, the marker written last) is seen on its own.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import yaml

from conftest import REPO, snakemake
from isonorm.checkpoints import CHECKPOINT
from isonorm.data import DATASET, TEXTS
from isonorm.data.corpora import CORPUS
from isonorm.data.instructions import INSTRUCTIONS
from isonorm.sources import (
    Build,
    Registry,
    SourceKind,
    check_positive,
    download_file,
    fetch,
    link_or_copy,
    read_marker,
)
from isonorm.callables import resolve
from isonorm.workflow import FETCH_KINDS

TOY_ENTRIES = {"alpha": "the first", "beta": "the second"}


class Toy:
    """A kind whose builders record each build; ``fail`` makes the next build write half its file and raise."""

    def __init__(self, **fields):
        self.builds: list[Build] = []
        self.fail = False
        self.kind = SourceKind(**{
            "name": "toy",
            "registry": Registry(TOY_ENTRIES, "toy input", "tests.TOY_ENTRIES"),
            "builders": {"made": self.build, "local": self.build},
            "options": {"size": 1},
            "request": lambda entry, source, options: {"source": source, "size": options["size"]},
            "fetcher": "toy_fetch(name, root, source)",
            **fields,
        })

    def build(self, build: Build) -> dict:
        self.builds.append(build)
        (build.folder / "data.txt").write_text(f"{build.entry}\n" * build.options["size"])
        if self.fail:
            raise KeyboardInterrupt  # killed half-way: the file is there, the marker is not
        return {"lines": build.options["size"]}

    def fetch(self, root: Path, source: str = "made", **options) -> Path:
        return fetch(self.kind, "alpha", root, source, **options)


# ---- the completeness decision ------------------------------------------------------------------------------

def test_a_build_writes_the_marker_last_with_the_request_and_the_extras(tmp_path):
    toy = Toy()
    folder = toy.fetch(tmp_path, size=2)
    assert folder == tmp_path / "alpha" and (folder / "data.txt").read_text() == "the first\n" * 2
    marker = read_marker(folder)
    assert marker["request"] == {"source": "made", "size": 2} and marker["lines"] == 2 and marker["toy"] == "alpha"
    assert "timestamp" in marker
    build = toy.builds[0]
    assert (build.name, build.source, build.options, build.path, build.retries) == ("alpha", "made", {"size": 2}, None, 3)


def test_a_complete_folder_is_skipped_without_calling_the_builder(tmp_path):
    toy = Toy()
    folder = toy.fetch(tmp_path)
    marker = (folder / ".ready").read_text()
    assert toy.fetch(tmp_path) == folder
    assert len(toy.builds) == 1 and (folder / ".ready").read_text() == marker


def test_a_complete_folder_holding_another_request_is_refused_with_the_fix(tmp_path):
    toy = Toy()
    folder = toy.fetch(tmp_path)
    with pytest.raises(RuntimeError) as err:
        toy.fetch(tmp_path, size=3)
    message = str(err.value)
    assert "already holds a complete toy input alpha" in message and "'size': 3" in message
    assert "never overwritten" in message and "its own root folder" in message and f"delete {folder}" in message
    assert len(toy.builds) == 1 and (folder / "data.txt").read_text() == "the first\n"


def test_an_interrupted_build_leaves_no_marker_and_the_next_call_builds_again(tmp_path):
    toy = Toy()
    toy.fail = True
    with pytest.raises(KeyboardInterrupt):
        toy.fetch(tmp_path, size=2)
    assert (tmp_path / "alpha" / "data.txt").exists() and read_marker(tmp_path / "alpha") is None
    toy.fail = False
    toy.fetch(tmp_path, size=3)  # an incomplete folder holds nothing: any request builds
    assert len(toy.builds) == 2 and read_marker(tmp_path / "alpha")["lines"] == 3


def test_a_failing_check_after_the_build_leaves_no_marker(tmp_path):
    def reject(build, extras):
        raise ValueError("the build is corrupt")

    with pytest.raises(ValueError, match="corrupt"):
        Toy(finish=reject).fetch(tmp_path)
    assert read_marker(tmp_path / "alpha") is None


def test_satisfies_lets_another_complete_request_serve(tmp_path):
    toy = Toy(satisfies=lambda existing, request: existing["request"]["source"] == "local")
    toy.fetch(tmp_path, source="local", path=tmp_path)
    assert toy.fetch(tmp_path, source="made", size=5) == tmp_path / "alpha"  # served by the local copy
    assert len(toy.builds) == 1


def test_a_flat_marker_holds_the_request_at_its_top_level(tmp_path):
    toy = Toy(flat_marker=True, finish=lambda build, extras: {**extras, "checked": True})
    marker = read_marker(toy.fetch(tmp_path, size=2))
    assert (marker["source"], marker["size"], marker["lines"], marker["checked"]) == ("made", 2, 2, True)
    with pytest.raises(RuntimeError, match=r"\{'source': 'made', 'size': 2\}.*never overwritten"):
        toy.fetch(tmp_path, size=4)


# ---- argument checks --------------------------------------------------------------------------------------

def test_the_lookup_error_lists_the_known_names_and_where_to_add_one(tmp_path):
    with pytest.raises(ValueError, match=r"unknown toy input 'gamma'; known: alpha, beta\. Add an entry to "
                                         r"tests\.TOY_ENTRIES"):
        fetch(Toy().kind, "gamma", tmp_path, "made")


@pytest.mark.parametrize("source, path, options, match", [
    ("ftp", None, {}, r"unknown toy input source 'ftp' for alpha; use one of \('made', 'local'\)"),
    ("local", None, {}, "`path` is required by source `local`"),
    ("made", "/staged", {}, "used by no other source"),
    ("made", None, {"colour": "red"}, r"toy input alpha: unknown option\(s\) \['colour'\]; known: \['size'\]"),
])
def test_bad_arguments_are_named_before_anything_is_written(tmp_path, source, path, options, match):
    toy = Toy()
    with pytest.raises(ValueError, match=match):
        toy.fetch(tmp_path, source=source, path=path, **options)
    assert not toy.builds and not (tmp_path / "alpha").exists()


def test_check_positive_names_the_bad_value():
    check_positive(n=1, m=7)
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(ValueError, match=f"n must be a positive integer, got {bad!r}"):
            check_positive(n=bad)


# ---- readers of a fetched folder ----------------------------------------------------------------------------

def test_readers_name_the_fetch_of_an_absent_or_unfinished_folder(tmp_path):
    kind = Toy().kind
    with pytest.raises(FileNotFoundError, match=r"holds no complete toy input: it does not exist\. Fetch it "
                                                r"first: the fetch_data rule .*toy_fetch"):
        kind.require_complete(tmp_path / "alpha")
    (tmp_path / "alpha").mkdir()
    with pytest.raises(FileNotFoundError, match="has no .ready marker"):
        kind.read_file(tmp_path / "alpha", "data.txt")


def test_read_file_parses_a_frozen_file_and_names_a_damaged_one(tmp_path):
    toy = Toy()
    folder = toy.fetch(tmp_path, size=2)
    assert toy.kind.read_file(folder, "data.txt", str.splitlines) == ["the first", "the first"]
    with pytest.raises(ValueError, match=f"data.txt is damaged .*Delete {folder} and run snakemake again, which "
                                         "fetches the toy input anew"):
        toy.kind.read_file(folder, "data.txt", json.loads)


def test_link_or_copy_places_the_file_and_leaves_no_temporary(tmp_path):
    source = tmp_path / "a.bin"
    source.write_bytes(b"data")
    link_or_copy(source, tmp_path / "b.bin")
    link_or_copy(source, tmp_path / "b.bin")  # already the same file: nothing to do
    assert (tmp_path / "b.bin").read_bytes() == b"data"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin", "b.bin"]


def test_download_file_asks_the_hub_for_the_repository_type(tmp_path, monkeypatch):
    calls = []

    def hf_hub_download(repo_id, filename, *, repo_type, revision, local_dir):
        calls.append((repo_id, filename, repo_type, revision))
        return str(Path(local_dir) / filename)

    monkeypatch.setattr("huggingface_hub.hf_hub_download", hf_hub_download)
    path = download_file("org/model", "0" * 40, "config.json", tmp_path, repo_type="model", what="x",
                         offline_sources="`local`", retries=0, backoff_s=0)
    assert path == tmp_path / "config.json" and calls == [("org/model", "config.json", "model", "0" * 40)]


# ---- the real kinds ---------------------------------------------------------------------------------------

# (kind, a registered name, a source that needs no network, options of two different requests)
KINDS = [
    (DATASET, "mnist", "synthetic", {"n_train": 20, "n_test": 10}, {"n_train": 20, "n_test": 10, "seed": 1}),
    (TEXTS, "simplewiki", "shipped", {"n_texts": 2}, {"n_texts": 3}),
    (CORPUS, "wikitext2", "synthetic", {"synthetic": {"vocab_size": 30}}, {"synthetic": {"vocab_size": 31}}),
    (INSTRUCTIONS, "alpaca", "synthetic", {"n_examples": 3}, {"n_examples": 4}),
    (CHECKPOINT, "gpt2", "tiny", {}, {"seed": 3}),
]


@pytest.mark.parametrize("kind, name, source, options, other", KINDS, ids=lambda v: getattr(v, "name", None))
def test_every_kind_names_bad_names_sources_and_paths(tmp_path, kind, name, source, options, other):
    with pytest.raises(ValueError, match=f"unknown {kind.what} 'nope'; known: .*{name}"):
        fetch(kind, "nope", tmp_path, source)
    with pytest.raises(ValueError, match=f"unknown {kind.what} source 'ftp'"):
        fetch(kind, name, tmp_path, "ftp")
    with pytest.raises(ValueError, match="`path` is required"):
        fetch(kind, name, tmp_path, "local")
    with pytest.raises(ValueError, match="unknown option"):
        fetch(kind, name, tmp_path, source, colour="red")
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("kind, name, source, options, other", [k for k in KINDS if k[0] is not CHECKPOINT],
                         ids=lambda v: getattr(v, "name", None))
def test_every_kind_keeps_a_complete_folder_and_refuses_another_request(tmp_path, kind, name, source, options,
                                                                         other):
    """(The checkpoint kind: tests/test_checkpoints.py, with its tiny stand-in.)"""
    folder = fetch(kind, name, tmp_path, source, **options)
    marker = (folder / ".ready").read_text()
    files = {p: p.stat().st_mtime_ns for p in folder.rglob("*")}
    assert fetch(kind, name, tmp_path, source, **options) == folder
    assert (folder / ".ready").read_text() == marker and {p: p.stat().st_mtime_ns for p in folder.rglob("*")} == files
    assert json.loads(marker)[kind.name] == name
    with pytest.raises(RuntimeError, match="never overwritten"):
        fetch(kind, name, tmp_path, source, **other)


def test_the_workflow_names_every_kind_by_its_own_name():
    for name, target in FETCH_KINDS.items():
        assert resolve(target).name == name


def test_sources_import_neither_data_nor_checkpoints():
    """The fetch layer sits below the kinds: no module of it imports another isonorm package but atomic."""
    for module in (REPO / "src/isonorm/sources").glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 2:
                assert node.module == "atomic", (module.name, node.module)
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                assert not (node.module or "").startswith("isonorm"), (module.name, node.module)


# ---- the workflow's name -> kind resolution (rules/common.smk) ----------------------------------------------

def data_kinds_of(tmp_path: Path, override: dict):
    """Parse rules/common.smk alone with the repository's config plus ``override``; (returncode, output)."""
    (tmp_path / "Snakefile").write_text(
        f'configfile: "{REPO}/config.yaml"\n'
        f'include: "{REPO}/rules/common.smk"\n'
        'print("KINDS", {name: data_entry(name)[0] for name in DATA_KINDS})\n'
    )
    (tmp_path / "override.yaml").write_text(yaml.safe_dump(override))
    done = snakemake(tmp_path, "-n", "--configfile", "override.yaml", timeout=300)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.integration
def test_the_config_section_that_lists_a_name_gives_its_kind(tmp_path):
    code, output = data_kinds_of(tmp_path, {})
    assert code == 0, output
    line = next(line for line in output.splitlines() if line.startswith("KINDS"))
    kinds = ast.literal_eval(line.removeprefix("KINDS "))
    assert kinds == {"cifar10": "dataset", "mnist": "dataset", "cifar100": "dataset", "fashionmnist": "dataset",
                     "simplewiki": "texts", "wikitext2": "corpus", "alpaca": "instructions"}


@pytest.mark.integration
def test_a_name_listed_in_two_data_sections_is_refused_at_parse_time(tmp_path):
    code, output = data_kinds_of(tmp_path, {"data": {"corpora": {"simplewiki": {"source": "synthetic"}}}})
    assert code != 0
    assert "'simplewiki' is listed under both data: texts: and data: corpora:" in output
    assert "keep it in one section" in output
