"""Small text corpora for probing language models, frozen into one ``texts.json`` per corpus.

Joudaki et al. (2023), Fig. B.5 feeds GPT-2 the first 512 characters of the first 10 articles of Simple
English Wikipedia (``load_dataset('wikipedia', '20220301.simple')``, train split, dataset order;
joudaki2023-figb5). The legacy loading script no longer runs on recent ``datasets`` versions, so, per decision D7, the
download stage fetches ONE parquet file of a pinned dataset revision, keeps only those 10 strings and writes
``<root>/<name>/texts.json`` with the source (repository, file, revision) and the CC BY-SA 3.0 attribution.
Sources:

- ``huggingface``: that download (preferred repository first, then the fallback if the first is gone);
- ``local``: a pre-staged ``texts.json`` (e.g. written by this stage on a machine with internet);
- ``shipped``: a few short texts written for this project (``shipped_texts.json``; the offline quick preset).

:func:`isonorm.sources.fetch` writes the ``.ready`` marker last; a complete corpus is never rewritten.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass, replace
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from ..atomic import write_text_atomically
from ..sources import Build, HubNotFoundError, Registry, SourceKind, check_positive, download_file, fetch

log = logging.getLogger(__name__)

TEXTS_FILE = "texts.json"
SHIPPED_FILE = "shipped_texts.json"
DOWNLOAD_DIR = ".download"  # the parquet lands here and is removed once texts.json is written


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
            # Preferred (joudaki2023-figb5): the processed 20220301.simple dump the paper loaded, in the repository
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
            # Fallback (joudaki2023-figb5): the Wikimedia-maintained dump of 2023-11-01; article order and texts
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
    """The first ``n_texts`` texts, each cut to its first ``max_chars`` characters (joudaki2023-figb5)."""
    check_positive(n_texts=n_texts, max_chars=max_chars)
    if len(texts) < n_texts:
        raise ValueError(
            f"{where} holds {len(texts)} text(s) but {n_texts} were asked for; lower `n_texts` in the config "
            "or use a source that provides more (huggingface)"
        )
    return [t[:max_chars] for t in texts[:n_texts]]


def read_texts(folder: str | Path) -> dict[str, Any]:
    """The validated ``texts.json`` of a fetched corpus folder (marker required)."""
    return validate_record(TEXTS.read_file(folder, TEXTS_FILE, json.loads), Path(folder) / TEXTS_FILE)


def load_texts(folder: str | Path, n_texts: int | None = None, max_chars: int | None = None) -> list[str]:
    """The texts of a fetched corpus: the first ``n_texts``, cut to ``max_chars`` (None: all, uncut)."""
    texts = read_texts(folder)["texts"]
    n = len(texts) if n_texts is None else n_texts
    chars = max(len(t) for t in texts) if max_chars is None else max_chars
    return _select(texts, n, chars, str(Path(folder) / TEXTS_FILE))


# --- the three sources: each returns the record that is frozen into texts.json ------------------------------


def read_first_rows(parquet: Path, n_rows: int) -> list[dict[str, Any]]:
    """The first ``n_rows`` rows (file order = dataset order) of columns text, title, url of ``parquet``."""
    import pyarrow.parquet as pq  # deferred: only the huggingface source needs it

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


def _from_hub(build: Build) -> dict[str, Any]:
    spec, n_texts, max_chars = build.entry, build.options["n_texts"], build.options["max_chars"]
    candidates = spec.candidates
    failures = []
    for index, source in enumerate(candidates):
        download = build.folder / DOWNLOAD_DIR
        try:
            parquet = download_file(
                source.repo, source.revision, source.file, download, what=f"texts from {source.repo}",
                offline_sources="`local` (a texts.json) or `shipped`", retries=build.retries,
                backoff_s=build.backoff_s,
            )
        except HubNotFoundError as err:
            failures.append(str(err))
            if index + 1 < len(candidates):
                log.warning("%s not found on the Hub; trying the fallback %s", source.url, candidates[index + 1].url)
            continue
        rows = read_first_rows(parquet, n_texts)
        texts = _select([r["text"] for r in rows], n_texts, max_chars, source.url)
        shutil.rmtree(download, ignore_errors=True)  # ~100-160 MB; only the 10 strings are kept (D7)
        return {
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
    raise HubNotFoundError("none of the configured sources of the texts exists:\n  " + "\n  ".join(failures))


def _from_local(build: Build) -> dict[str, Any]:
    path = build.path.expanduser()
    file = path / TEXTS_FILE if path.is_dir() else path
    if not file.is_file():
        raise FileNotFoundError(
            f"local texts {file} do not exist; set `path:` to a texts.json written by the fetch_data rule on a "
            "machine with internet (or the folder holding it), or use source `huggingface` / `shipped`"
        )
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"local texts {file} are not valid JSON ({err})") from err
    record = validate_record(record, file)
    texts = _select(record["texts"], build.options["n_texts"], build.options["max_chars"], str(file))
    return {**record, "texts": texts, "staged_from": str(file.resolve())}


def _from_package(build: Build) -> dict[str, Any]:
    n_texts, max_chars = build.options["n_texts"], build.options["max_chars"]
    return {
        "name": build.name,
        "texts": _select(shipped_texts(), n_texts, max_chars, f"isonorm/data/{SHIPPED_FILE}"),
        "source": {"kind": "shipped", "file": f"isonorm/data/{SHIPPED_FILE}", "n_texts": n_texts,
                   "max_chars": max_chars},
        "license": "MIT (isonorm)",
        "attribution": f"Short texts written for this project; stand-ins for {build.entry.title} (offline preset).",
    }


# --- the kind --------------------------------------------------------------------------------------------

# repo/revision/file/config override the preferred Hub parquet (source huggingface); `fallback` allows the
# registry's later candidates when it is not found. Hub settings stay in the config when a preset switches
# the source (Snakemake merges config files key by key), so the other sources ignore them rather than fail.
OPTIONS: dict[str, Any] = {
    "n_texts": 10,  # joudaki2023-figb5: articles 0..9
    "max_chars": 512,  # joudaki2023-figb5: the first 512 characters (characters, not tokens)
    "repo": None, "revision": None, "file": None, "config": None, "fallback": True,
}
HUB_KEYS = ("repo", "revision", "file", "config")


def _configure(spec: TextCorpusSpec, options: dict[str, Any]) -> TextCorpusSpec:
    """The candidates to try: the preferred one with the config's overrides, then (``fallback``) the others."""
    overrides = {key: options[key] for key in HUB_KEYS if options[key]}
    fallbacks = spec.candidates[1:] if options["fallback"] else ()
    return replace(spec, candidates=(replace(spec.candidates[0], **overrides), *fallbacks))


def _request(spec: TextCorpusSpec, source: str, options: dict[str, Any]) -> dict[str, Any]:
    check_positive(n_texts=options["n_texts"], max_chars=options["max_chars"])
    request: dict[str, Any] = {"source": source, "n_texts": options["n_texts"], "max_chars": options["max_chars"]}
    if source == "huggingface":
        request["candidates"] = [c.url for c in spec.candidates]
    return request


def _freeze(build: Build, record: dict[str, Any]) -> dict[str, Any]:
    """Write the record as texts.json; the marker keeps its source and size."""
    write_text_atomically(build.folder / TEXTS_FILE, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return {"source": record.get("source", {}), "n_texts": len(record["texts"])}


TEXTS = SourceKind(
    name="texts",
    registry=Registry(TEXT_CORPORA, "text corpus", "isonorm.data.texts.TEXT_CORPORA (a TextCorpusSpec)"),
    builders={"huggingface": _from_hub, "local": _from_local, "shipped": _from_package},
    options=OPTIONS,
    configure=_configure,
    request=_request,
    fetcher="isonorm.data.fetch_texts(name, root, source)",
    finish=_freeze,
)
fetch_texts = partial(fetch, TEXTS)  # (name, root, source, *, path, retries, backoff_s, **OPTIONS)
