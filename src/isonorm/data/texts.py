"""Small text corpora for probing language models, frozen into one ``texts.json`` per corpus.

Joudaki et al. (2023), Fig. B.5 feeds GPT-2 the first 512 characters of the first 10 articles of Simple
English Wikipedia (``load_dataset('wikipedia', '20220301.simple')``, train split, dataset order; spec
joudaki2023 D-FigB5). The legacy loading script no longer runs on recent ``datasets`` versions, so, per
decision D7 and the paper's own decision paragraph, the download stage fetches ONE parquet file of a pinned
dataset revision, keeps only those 10 strings and writes ``<root>/<name>/texts.json`` with the source
(repository, file, revision) and the CC BY-SA 3.0 attribution. Sources:

- ``huggingface``: that download (preferred repository first, then the fallback if the first is gone);
- ``local``: a pre-staged ``texts.json`` (e.g. written by this stage on a machine with internet);
- ``shipped``: a few short texts written for this project (``shipped_texts.json``; the offline quick preset).

The ``.ready`` marker (:mod:`.marker`) is written last; a complete corpus is never rewritten.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Sequence

from ..atomic import write_text_atomically
from .marker import (
    already_complete, check_positive, check_source, download_dataset_file, read_frozen_json, read_marker,
    write_marker,
)

log = logging.getLogger(__name__)

TEXTS_FILE = "texts.json"
SHIPPED_FILE = "shipped_texts.json"
DOWNLOAD_DIR = ".download"  # the parquet lands here and is removed once texts.json is written
SOURCES: tuple[str, ...] = ("huggingface", "local", "shipped")
TextSource = Literal["huggingface", "local", "shipped"]


@dataclass(frozen=True)
class HubParquet:
    """One parquet file of a Hugging Face dataset repository at a pinned revision."""

    repo: str
    revision: str
    file: str
    config: str  # the dataset configuration the file belongs to (for the attribution)

    @property
    def url(self) -> str:
        return f"https://huggingface.co/datasets/{self.repo}/blob/{self.revision}/{self.file}"


@dataclass(frozen=True)
class TextCorpusSpec:
    name: str
    title: str
    candidates: tuple[HubParquet, ...]  # preferred first; later ones only if an earlier one is not found
    license: str
    license_url: str


TEXT_CORPORA: dict[str, TextCorpusSpec] = {
    "simplewiki": TextCorpusSpec(
        name="simplewiki",
        title="Simple English Wikipedia",
        candidates=(
            # Preferred (spec D-FigB5): the processed 20220301.simple dump the paper loaded, in the repository
            # the old `wikipedia` id now redirects to. File path: public listings of this repository
            # (`resolve/main/data/20220301.simple/train-00000-of-00001.parquet`, 205,328 rows; columns id,
            # url, title, text). Revision: the commit third-party projects pin for this repository's
            # `data/20220301.en` shards; that it also holds the .simple file is inferred, not verified here.
            HubParquet(
                repo="legacy-datasets/wikipedia",
                revision="97a0b052c326b45fb68593a14972d9eed884cd17",
                file="data/20220301.simple/train-00000-of-00001.parquet",
                config="20220301.simple",
            ),
            # Fallback (spec D-FigB5): the Wikimedia-maintained dump of 2023-11-01; article order and texts
            # differ from the paper's. Revision: widely pinned commit of wikimedia/wikipedia; file: its
            # single .simple shard (about 157 MB, 241,787 rows), per public listings.
            HubParquet(
                repo="wikimedia/wikipedia",
                revision="b04c8d1ceb2f5cd4588862100d08de323dccfbaa",
                file="20231101.simple/train-00000-of-00001.parquet",
                config="20231101.simple",
            ),
        ),
        license="CC BY-SA 3.0",  # and GFDL: the dataset cards of both repositories
        license_url="https://creativecommons.org/licenses/by-sa/3.0/",
    ),
}


def text_corpus_spec(name: str) -> TextCorpusSpec:
    try:
        return TEXT_CORPORA[name]
    except KeyError:
        raise ValueError(
            f"unknown text corpus {name!r}; known: {sorted(TEXT_CORPORA)}. Add a TextCorpusSpec to "
            "isonorm.data.texts.TEXT_CORPORA."
        ) from None


def shipped_texts() -> list[str]:
    """The short English texts that ship with the project (offline stand-ins for Simple Wikipedia)."""
    record = json.loads(resources.files(__package__).joinpath(SHIPPED_FILE).read_text(encoding="utf-8"))
    return list(record["texts"])


def attribution(spec: TextCorpusSpec, source: HubParquet, n_texts: int, max_chars: int) -> str:
    return (
        f"The first {max_chars} characters of the first {n_texts} articles of {spec.title} "
        f"(dump {source.config}), as processed in the Hugging Face dataset {source.repo}, file {source.file}, "
        f"revision {source.revision}. Text from Wikipedia by Wikipedia contributors (authors: see each "
        f"article's history at its URL), licensed under {spec.license} ({spec.license_url}) and the GFDL; "
        "shortened from the original articles."
    )


# --- validation --------------------------------------------------------------------------------------------


def validate_record(record: Any, where: str | Path) -> dict[str, Any]:
    """A ``texts.json`` object with a non-empty list of non-empty strings under ``texts``, or a ValueError."""
    if not isinstance(record, dict) or not isinstance(record.get("texts"), list) or not record["texts"]:
        raise ValueError(
            f"{where} is not a texts file: it needs a JSON object with a non-empty list `texts` of strings "
            "(as written by isonorm.data.fetch_texts)"
        )
    bad = [i for i, t in enumerate(record["texts"]) if not isinstance(t, str) or not t.strip()]
    if bad:
        raise ValueError(f"{where}: texts {bad} are empty or not strings; every entry must be a non-empty string")
    return record


def _select(texts: Sequence[str], n_texts: int, max_chars: int, where: str) -> list[str]:
    """The first ``n_texts`` texts, each cut to its first ``max_chars`` characters (spec D-FigB5)."""
    check_positive(n_texts=n_texts, max_chars=max_chars)
    if len(texts) < n_texts:
        raise ValueError(
            f"{where} holds {len(texts)} text(s) but {n_texts} were asked for; lower `n_texts` in the config "
            "or use a source that provides more (huggingface)"
        )
    return [t[:max_chars] for t in texts[:n_texts]]


def read_texts(folder: str | Path) -> dict[str, Any]:
    """The validated ``texts.json`` of a fetched corpus folder (marker required)."""
    record = read_frozen_json(folder, TEXTS_FILE, "text corpus", "isonorm.data.fetch_texts")
    path = Path(folder) / TEXTS_FILE
    return validate_record(record, path)


def load_texts(folder: str | Path, n_texts: int | None = None, max_chars: int | None = None) -> list[str]:
    """The texts of a fetched corpus: the first ``n_texts``, cut to ``max_chars`` (None: all, uncut)."""
    texts = read_texts(folder)["texts"]
    n = len(texts) if n_texts is None else n_texts
    chars = max(len(t) for t in texts) if max_chars is None else max_chars
    return _select(texts, n, chars, str(Path(folder) / TEXTS_FILE))


# --- the three sources -------------------------------------------------------------------------------------


def read_first_rows(parquet: Path, n_rows: int) -> list[dict[str, Any]]:
    """The first ``n_rows`` rows (file order = dataset order) of columns text, title, url of ``parquet``."""
    import pyarrow.parquet as pq

    try:
        file = pq.ParquetFile(parquet)
        columns = [c for c in ("title", "url", "text") if c in file.schema_arrow.names]
        if "text" not in columns:
            raise ValueError(f"{parquet} has no `text` column (columns: {file.schema_arrow.names})")
        rows: list[dict[str, Any]] = []
        for batch in file.iter_batches(batch_size=n_rows, columns=columns):
            rows.extend(batch.to_pylist())
            if len(rows) >= n_rows:
                break
    except (OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
        parquet.unlink(missing_ok=True)
        raise ValueError(
            f"the downloaded file {parquet} is unreadable as parquet ({err}); it has been removed, "
            "run the fetch again to download it anew"
        ) from err
    return rows[:n_rows]


def _from_hub(
    spec: TextCorpusSpec, folder: Path, candidates: Sequence[HubParquet], n_texts: int, max_chars: int,
    retries: int, backoff_s: float,
) -> dict[str, Any]:
    from ..checkpoints.errors import HubNotFoundError

    failures = []
    for index, source in enumerate(candidates):
        download = folder / DOWNLOAD_DIR
        try:
            parquet = download_dataset_file(
                source.repo, source.revision, source.file, download, what=f"texts from {source.repo}",
                offline_sources="`local` (a texts.json) or `shipped`", retries=retries, backoff_s=backoff_s,
            )
        except HubNotFoundError as err:
            failures.append(str(err))
            if index + 1 < len(candidates):
                log.warning("%s not found on the Hub; trying the fallback %s", source.url, candidates[index + 1].url)
            continue
        rows = read_first_rows(parquet, n_texts)
        texts = _select([r["text"] for r in rows], n_texts, max_chars, source.url)
        record = {
            "name": spec.name,
            "texts": texts,
            "titles": [r.get("title") for r in rows],
            "urls": [r.get("url") for r in rows],
            "source": {"kind": "huggingface", "repo": source.repo, "revision": source.revision,
                       "file": source.file, "config": source.config, "url": source.url,
                       "fallback": index > 0, "n_texts": n_texts, "max_chars": max_chars},
            "license": spec.license,
            "license_url": spec.license_url,
            "attribution": attribution(spec, source, n_texts, max_chars),
        }
        write_text_atomically(folder / TEXTS_FILE, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
        shutil.rmtree(download, ignore_errors=True)  # ~100-160 MB; only the 10 strings are kept (D7)
        return record
    raise HubNotFoundError("none of the configured sources of the texts exists:\n  " + "\n  ".join(failures))


def _from_local(path: Path, folder: Path, n_texts: int, max_chars: int) -> dict[str, Any]:
    path = Path(path).expanduser()
    file = path / TEXTS_FILE if path.is_dir() else path
    if not file.is_file():
        raise FileNotFoundError(
            f"local texts {file} do not exist; set `path:` to a texts.json written by the fetch_texts rule on a "
            "machine with internet (or the folder holding it), or use source `huggingface` / `shipped`"
        )
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"local texts {file} are not valid JSON ({err})") from err
    record = validate_record(record, file)
    record = {**record, "texts": _select(record["texts"], n_texts, max_chars, str(file)),
              "staged_from": str(file.resolve())}
    write_text_atomically(folder / TEXTS_FILE, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return record


def _from_package(spec: TextCorpusSpec, folder: Path, n_texts: int, max_chars: int) -> dict[str, Any]:
    record = {
        "name": spec.name,
        "texts": _select(shipped_texts(), n_texts, max_chars, f"isonorm/data/{SHIPPED_FILE}"),
        "source": {"kind": "shipped", "file": f"isonorm/data/{SHIPPED_FILE}", "n_texts": n_texts,
                   "max_chars": max_chars},
        "license": "MIT (isonorm)",
        "attribution": f"Short texts written for this project; stand-ins for {spec.title} (offline preset).",
    }
    write_text_atomically(folder / TEXTS_FILE, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return record


def fetch_texts(
    name: str = "simplewiki",
    root: str | Path = "resources/data",
    source: TextSource = "huggingface",
    *,
    path: str | Path | None = None,
    n_texts: int = 10,  # spec D-FigB5: articles 0..9
    max_chars: int = 512,  # spec D-FigB5: the first 512 characters (characters, not tokens)
    repo: str | None = None,
    revision: str | None = None,
    file: str | None = None,
    config: str | None = None,
    fallback: bool = True,
    retries: int = 3,
    backoff_s: float = 1.0,
) -> Path:
    """Make ``root/<name>/texts.json`` hold the corpus from ``source``; returns ``root/<name>``.

    ``repo``/``revision``/``file``/``config`` override the preferred Hub parquet (source ``huggingface``, ignored
    by the others);
    ``fallback`` allows the registry's later candidates when it is not found. ``path``: the pre-staged
    texts.json or its folder (source ``local`` only). ``retries``/``backoff_s``: as the data stage.
    """
    spec = text_corpus_spec(name)
    check_source("text", name, source, SOURCES, path)
    # Hub settings stay in the config when a preset switches the source (Snakemake merges config files key
    # by key), so the other sources ignore them rather than fail.
    overrides = {k: v for k, v in {"repo": repo, "revision": revision, "file": file, "config": config}.items() if v}
    check_positive(n_texts=n_texts, max_chars=max_chars)
    candidates = [replace(spec.candidates[0], **overrides), *(spec.candidates[1:] if fallback else ())]
    request: dict[str, Any] = {"source": source, "n_texts": n_texts, "max_chars": max_chars}
    if source == "huggingface":
        request["candidates"] = [c.url for c in candidates]

    folder = Path(root) / name
    existing = read_marker(folder)
    held = None if existing is None else existing.get("request", {})
    if already_complete(folder, f"text corpus {name}", held, request, held == request):
        return folder

    folder.mkdir(parents=True, exist_ok=True)
    if source == "huggingface":
        record = _from_hub(spec, folder, candidates, n_texts, max_chars, retries, backoff_s)
    elif source == "local":
        record = _from_local(Path(path), folder, n_texts, max_chars)
    else:
        record = _from_package(spec, folder, n_texts, max_chars)
    write_marker(folder, {"texts": name, "request": request, "source": record.get("source", {}),
                          "n_texts": len(record["texts"])})
    return folder
