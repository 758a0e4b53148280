"""Instruction-tuning sets (instruction, input, output), frozen into one ``instructions.json`` per set.

Lu et al. (2024), Table 5 (d) fine-tunes Qwen-7B with LoRA on an instruction set the paper does not name;
decision A13 takes the first 5,000 examples of ``tatsu-lab/alpaca`` (Stanford Alpaca, 52,002
instruction-following demonstrations). As :mod:`.texts` does for text corpora, the download stage fetches ONE
parquet file of a pinned dataset revision, keeps the first ``n_examples`` rows (file order = dataset order)
and writes ``<root>/<name>/instructions.json`` with the source and the licence. Sources:

- ``huggingface``: that download (one file, retried by :func:`isonorm.sources.download_file`);
- ``local``: a pre-staged file: this stage's ``instructions.json`` (or its folder), the original
  ``alpaca_data.json`` (a JSON list), a JSON-lines file or a parquet file with columns instruction/input/output;
- ``synthetic``: tiny generated instruction/response pairs (deterministic; the offline quick preset).

:func:`isonorm.sources.fetch` writes the ``.ready`` marker last; a complete set is never rewritten.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from ..atomic import write_text_atomically
from ..runtime import derive_seed
from ..sources import Build, Registry, SourceKind, check_positive, download_file, fetch
from .texts import HubParquet

INSTRUCTIONS_FILE = "instructions.json"
DOWNLOAD_DIR = ".download"  # the parquet lands here and is removed once instructions.json is written
FIELDS = ("instruction", "input", "output")  # the Alpaca record format (github.com/tatsu-lab/stanford_alpaca)


@dataclass(frozen=True)
class InstructionSetSpec:
    name: str
    title: str
    hub: HubParquet
    license: str
    license_url: str


INSTRUCTION_SETS: dict[str, InstructionSetSpec] = {
    "alpaca": InstructionSetSpec(
        name="alpaca",
        title="Stanford Alpaca",
        # decision A13: tatsu-lab/alpaca. Revision: the repository's head commit as reported by the
        # Hub API (`"sha": "dce01c9b08f87459cf36a430d809084718273017"`, lastModified 2023-05-22) and pinned by
        # several public projects; file: its single train shard, 52,002 rows, columns instruction, input,
        # output, text (public listings and projects pinning that revision; SHA-256 06391b65...517073). Not
        # verified here (no internet).
        hub=HubParquet(
            repo="tatsu-lab/alpaca",
            revision="dce01c9b08f87459cf36a430d809084718273017",
            file="data/train-00000-of-00001-a09b74b3ef9c3b56.parquet",
            config="default",
        ),
        license="CC BY-NC 4.0",  # the dataset card of tatsu-lab/alpaca
        license_url="https://creativecommons.org/licenses/by-nc/4.0/",
    ),
}


# --- validation --------------------------------------------------------------------------------------------


def validate_examples(examples: Any, where: str | Path) -> list[dict[str, str]]:
    """A non-empty list of {instruction, input, output} string records (input may be empty), or a ValueError."""
    if not isinstance(examples, list) or not examples:
        raise ValueError(
            f"{where} holds no instruction examples: it needs a non-empty list of objects with string fields "
            f"{', '.join(FIELDS)} (the Alpaca format)"
        )
    out = []
    for i, example in enumerate(examples):
        if not isinstance(example, dict) or any(not isinstance(example.get(f, ""), str) for f in FIELDS):
            raise ValueError(f"{where}: example {i} is not an object with string fields {', '.join(FIELDS)}")
        record = {f: example.get(f) or "" for f in FIELDS}
        if not record["instruction"].strip() or not record["output"].strip():
            raise ValueError(
                f"{where}: example {i} has an empty `instruction` or `output`; every example needs both "
                "(`input` may be empty)"
            )
        out.append(record)
    return out


def _first(examples: Sequence[dict[str, str]], n_examples: int, where: str) -> list[dict[str, str]]:
    """The first ``n_examples`` (decision A13: the first 5,000, in dataset order)."""
    check_positive(n_examples=n_examples)
    if len(examples) < n_examples:
        raise ValueError(
            f"{where} holds {len(examples)} example(s) but {n_examples} were asked for; lower `n_examples` in the "
            "config or use a source that provides more (huggingface)"
        )
    return list(examples[:n_examples])


def read_instructions(folder: str | Path) -> dict[str, Any]:
    """The validated ``instructions.json`` record of a fetched set folder (marker required)."""
    record = INSTRUCTIONS.read_file(folder, INSTRUCTIONS_FILE, json.loads)
    path = Path(folder) / INSTRUCTIONS_FILE
    record = record if isinstance(record, dict) else {}  # anything else has no `examples`: rejected below
    record["examples"] = validate_examples(record.get("examples"), path)
    return record


def load_instructions(folder: str | Path, n_examples: int | None = None) -> list[dict[str, str]]:
    """The first ``n_examples`` examples of a fetched set (None: all)."""
    examples = read_instructions(folder)["examples"]
    return _first(examples, len(examples) if n_examples is None else n_examples, str(Path(folder) / INSTRUCTIONS_FILE))


def describe_instructions(folder: str | Path) -> str:
    """One line for captions: where the examples came from."""
    source = read_instructions(folder).get("source", {})
    if source.get("kind") == "huggingface":
        return f"{source['repo']}@{source['revision']}:{source['file']}"
    if source.get("kind") == "local":
        return f"local file {source.get('path')}"
    return str(source.get("kind", "unknown"))


# --- synthetic ---------------------------------------------------------------------------------------------

_WORDS = ("river", "stone", "cloud", "garden", "lamp", "window", "forest", "letter", "bridge", "candle")


def synthetic_examples(n_examples: int, seed: int = 0) -> list[dict[str, str]]:
    """``n_examples`` small deterministic instruction/response pairs in the Alpaca format (same seed, same pairs).

    Three task kinds (arithmetic without input, word reversal and list sorting with an input) so that both
    Alpaca prompt templates (with and without input) are exercised.
    """
    check_positive(n_examples=n_examples)
    rng = random.Random(derive_seed("instructions", "synthetic", seed))
    examples = []
    for i in range(n_examples):
        kind = i % 3
        if kind == 0:
            a, b = rng.randint(1, 99), rng.randint(1, 99)
            examples.append({"instruction": f"Add {a} and {b}.", "input": "", "output": f"{a} + {b} = {a + b}."})
        elif kind == 1:
            word = rng.choice(_WORDS)
            examples.append({"instruction": "Reverse the letters of the word.", "input": word,
                             "output": word[::-1]})
        else:
            words = rng.sample(_WORDS, 3)
            examples.append({"instruction": "Sort these words alphabetically.", "input": ", ".join(words),
                             "output": ", ".join(sorted(words))})
    return examples


# --- the three sources -------------------------------------------------------------------------------------


def read_parquet_examples(parquet: Path, n_rows: int | None, remove_on_error: bool) -> list[dict[str, Any]]:
    """The first ``n_rows`` rows (None: all) of columns instruction, input, output, in file order."""
    import pyarrow.parquet as pq  # deferred: only the huggingface and local .parquet sources need it

    try:
        file = pq.ParquetFile(parquet)
        missing = [c for c in FIELDS if c not in file.schema_arrow.names]
        if missing:
            raise ValueError(f"no column(s) {missing} (columns: {file.schema_arrow.names})")
        rows: list[dict[str, Any]] = []
        for batch in file.iter_batches(batch_size=min(n_rows or 10_000, 10_000), columns=list(FIELDS)):
            rows.extend(batch.to_pylist())
            if n_rows is not None and len(rows) >= n_rows:
                break
    except (OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
        if remove_on_error:
            parquet.unlink(missing_ok=True)
            raise ValueError(
                f"the downloaded file {parquet} is unreadable as an instruction parquet ({err}); it has been "
                "removed, run the fetch again to download it anew"
            ) from err
        raise ValueError(f"{parquet} is unreadable as an instruction parquet ({err})") from err
    return rows if n_rows is None else rows[:n_rows]


def _from_hub(build: Build) -> dict[str, Any]:
    spec, n_examples = build.entry, build.options["n_examples"]
    source = spec.hub
    download = build.folder / DOWNLOAD_DIR
    parquet = download_file(
        source.repo, source.revision, source.file, download, what=f"instructions from {source.repo}",
        offline_sources="`local` (a pre-staged instructions.json / alpaca_data.json) or `synthetic`",
        retries=build.retries, backoff_s=build.backoff_s,
    )
    rows = read_parquet_examples(parquet, n_examples, remove_on_error=True)
    examples = _first(validate_examples(rows, source.url), n_examples, source.url)
    shutil.rmtree(download, ignore_errors=True)  # ~24 MB; only the first examples are kept
    return {
        "name": spec.name,
        "examples": examples,
        "source": {"kind": "huggingface", "repo": source.repo, "revision": source.revision, "file": source.file,
                   "url": source.url, "n_examples": n_examples},
        "license": spec.license,
        "license_url": spec.license_url,
        "attribution": (
            f"The first {n_examples} examples of {spec.title} (Taori et al. 2023, "
            f"https://github.com/tatsu-lab/stanford_alpaca), Hugging Face dataset {source.repo}, file "
            f"{source.file}, revision {source.revision}; licensed under {spec.license} ({spec.license_url})."
        ),
    }


def _read_local(file: Path) -> list[Any]:
    if file.suffix == ".parquet":
        return read_parquet_examples(file, None, remove_on_error=False)
    text = file.read_text(encoding="utf-8")
    if file.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    data = json.loads(text)
    return data.get("examples") if isinstance(data, dict) else data


def _from_local(build: Build) -> dict[str, Any]:
    path, n_examples = build.path.expanduser(), build.options["n_examples"]
    file = path / INSTRUCTIONS_FILE if path.is_dir() else path
    if not file.is_file():
        raise FileNotFoundError(
            f"local instructions {file} do not exist; set `path:` to an instructions.json written by the "
            "fetch_data rule on a machine with internet (or its folder), Stanford Alpaca's "
            "alpaca_data.json, a .jsonl or a .parquet with columns instruction/input/output; or use source "
            "`huggingface` / `synthetic`"
        )
    try:
        examples = _read_local(file)
    except (OSError, ValueError) as err:  # JSONDecodeError is a ValueError
        raise ValueError(f"local instructions {file} are unreadable ({err})") from err
    examples = _first(validate_examples(examples, file), n_examples, str(file))
    return {"name": build.name, "examples": examples,
            "source": {"kind": "local", "path": str(file.resolve()), "n_examples": n_examples},
            "staged_from": str(file.resolve())}


def _from_synthetic(build: Build) -> dict[str, Any]:
    n_examples, seed = build.options["n_examples"], build.options["seed"]
    return {
        "name": build.name,
        "examples": synthetic_examples(n_examples, seed),
        "source": {"kind": "synthetic", "seed": seed, "n_examples": n_examples},
        "license": "MIT (isonorm)",
        "attribution": "Generated arithmetic / word tasks; an offline stand-in for Stanford Alpaca (quick preset).",
    }


# --- the kind --------------------------------------------------------------------------------------------

# repo/revision/file override the registry's pinned parquet (source huggingface; ignored by the others, so
# a preset that switches the source may keep them). seed: the synthetic pairs.
OPTIONS: dict[str, Any] = {
    "n_examples": 5000,  # decision A13: the first 5,000 examples
    "repo": None, "revision": None, "file": None, "seed": 0,
}


def _request(spec: InstructionSetSpec, source: str, options: dict[str, Any]) -> dict[str, Any]:
    check_positive(n_examples=options["n_examples"])
    request: dict[str, Any] = {"source": source, "n_examples": options["n_examples"]}
    if source == "huggingface":
        request["url"] = spec.hub.url
    elif source == "synthetic":
        request["seed"] = options["seed"]
    return request


def _freeze(build: Build, record: dict[str, Any]) -> dict[str, Any]:
    """Write the record as instructions.json; the marker keeps its source and size."""
    write_text_atomically(build.folder / INSTRUCTIONS_FILE, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return {"source": record["source"], "n_examples": len(record["examples"])}


INSTRUCTIONS = SourceKind(
    name="instructions",
    registry=Registry(INSTRUCTION_SETS, "instruction set",
                      "isonorm.data.instructions.INSTRUCTION_SETS (an InstructionSetSpec)"),
    builders={"huggingface": _from_hub, "local": _from_local, "synthetic": _from_synthetic},
    options=OPTIONS,
    configure=lambda spec, options: replace(spec, hub=replace(
        spec.hub, **{key: options[key] for key in ("repo", "revision", "file") if options[key]})),
    request=_request,
    fetcher="isonorm.data.instructions.fetch_instructions(name, root, source)",
    finish=_freeze,
)
fetch_instructions = partial(fetch, INSTRUCTIONS)  # (name, root, source, *, path, retries, backoff_s, **OPTIONS)
