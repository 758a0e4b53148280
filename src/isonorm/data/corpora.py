"""Word-level language-modelling corpora (WikiText-2), frozen into ``<root>/<name>/{train,valid,test}.txt``.

Lu et al. (2024), Table 5 (first row) trains "six Transformers" on WikiText-2 (lu2024-table5-transformer,
decision A10). The frozen layout is the one PyTorch's ``word_language_model`` example reads: one text line
per line, split files ``train.txt``, ``valid.txt``, ``test.txt``. Sources:

- ``huggingface``: the three parquet files of ``Salesforce/wikitext``, config ``wikitext-2-raw-v1``, at a
  pinned revision (one row per line of the original files; column ``text``), converted to the layout above;
- ``local``: a pre-staged folder holding ``{train,valid,test}.txt`` (this stage's output, or the example's
  ``data/wikitext-2``) or the original release's ``wiki.{train,valid,test}.{raw,tokens}``;
- ``synthetic``: a deterministic generated corpus with a Zipf-like vocabulary and a learnable bigram
  structure (the offline quick preset).

Tokenisation follows the example's ``data.py``: each line is split on whitespace and ends with ``<eos>``;
the vocabulary is built from the training split in order of first appearance ([I]; the example also adds
the words of valid/test, which changes nothing for the ``<unk>``-ed ``wikitext-2-v1`` files). Words of
valid/test absent from train map to ``<unk>`` (added to the vocabulary when train lacks it, as in the raw
configuration). :func:`isonorm.sources.fetch` writes the ``.ready`` marker last; a complete corpus is never
rewritten.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import torch

from ..atomic import write_text_atomically
from ..runtime import generator
from ..sources import Build, Registry, SourceKind, check_positive, download_file, fetch, staged_folder

log = logging.getLogger(__name__)

SPLITS: tuple[str, ...] = ("train", "valid", "test")  # the example's file names
EOS = "<eos>"  # word_language_model data.py: appended to every line
UNK = "<unk>"  # WikiText's own unknown-word token
DOWNLOAD_DIR = ".download"  # parquet files land here and are removed once the .txt files are written
# Names a pre-staged folder may use for each split: this stage's / the example's, then the original release's.
LOCAL_NAMES: dict[str, tuple[str, ...]] = {
    "train": ("train.txt", "wiki.train.raw", "wiki.train.tokens"),
    "valid": ("valid.txt", "wiki.valid.raw", "wiki.valid.tokens"),
    "test": ("test.txt", "wiki.test.raw", "wiki.test.tokens"),
}


@dataclass(frozen=True)
class HubCorpus:
    """The three split files of one configuration of a Hugging Face dataset repository, at a pinned revision."""

    repo: str
    revision: str
    config: str
    files: Mapping[str, str]  # split -> parquet path inside the repository
    rows: Mapping[str, int]  # split -> expected number of rows (lines); a mismatch means another data set

    def url(self, split: str) -> str:
        return f"https://huggingface.co/datasets/{self.repo}/blob/{self.revision}/{self.files[split]}"


@dataclass(frozen=True)
class CorpusSpec:
    name: str
    title: str
    hub: HubCorpus
    license: str
    license_url: str


def _wikitext_files(config: str) -> dict[str, str]:
    # Layout of the repository's parquet conversion: <config>/<split>-00000-of-00001.parquet.
    return {split: f"{config}/{hub}-00000-of-00001.parquet"
            for split, hub in (("train", "train"), ("valid", "validation"), ("test", "test"))}


# Revision b08601e04326c79dfdd32d625aee71d232d685c3: the commit of Salesforce/wikitext that independent
# public projects pin for this very configuration and these files (resolve URLs
# `.../resolve/b08601e.../wikitext-2-raw-v1/test-00000-of-00001.parquet`, `datasets` cache records
# `hf://datasets/Salesforce/wikitext@b08601e.../...`). Not verified online; the fetch checks the row counts.
WIKITEXT_REVISION = "b08601e04326c79dfdd32d625aee71d232d685c3"
WIKITEXT2_ROWS = {"train": 36718, "valid": 3760, "test": 4358}  # dataset card / TFDS catalogue of wikitext-2

CORPORA: dict[str, CorpusSpec] = {
    "wikitext2": CorpusSpec(
        name="wikitext2",
        title="WikiText-2",
        hub=HubCorpus(
            repo="Salesforce/wikitext",
            revision=WIKITEXT_REVISION,
            config="wikitext-2-raw-v1",  # lu2024-table5-transformer: HF `wikitext`, config `wikitext-2-raw-v1`
            files=_wikitext_files("wikitext-2-raw-v1"),
            rows=WIKITEXT2_ROWS,
        ),
        license="CC BY-SA 3.0",  # and GFDL: the dataset card (Merity et al. 2016, text from Wikipedia)
        license_url="https://creativecommons.org/licenses/by-sa/3.0/",
    ),
}


def _write_split(folder: Path, split: str, lines: Sequence[str]) -> None:
    """One line per entry, each entry's own line break(s) removed (rows of the Hub files end with '\\n')."""
    text = "".join(line.rstrip("\n").replace("\n", " ") + "\n" for line in lines)
    write_text_atomically(folder / f"{split}.txt", text)


# --- the three sources -------------------------------------------------------------------------------------


def read_text_column(parquet: Path) -> list[str]:
    """Column ``text`` of ``parquet`` in file order (= line order); an unreadable file is removed."""
    import pyarrow.parquet as pq  # deferred: only the huggingface source needs it

    try:
        table = pq.read_table(parquet)
        if "text" not in table.column_names:
            raise ValueError(f"no `text` column (columns: {table.column_names})")
        return [t if t is not None else "" for t in table.column("text").to_pylist()]
    except (OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
        parquet.unlink(missing_ok=True)
        raise ValueError(
            f"the downloaded file {parquet} is unreadable as a corpus ({err}); it has been removed, run the fetch "
            "again to download it anew"
        ) from err


def _from_hub(build: Build) -> dict[str, Any]:
    hub, folder = build.entry.hub, build.folder
    download = folder / DOWNLOAD_DIR
    counts = {}
    for split in SPLITS:
        parquet = download_file(
            hub.repo, hub.revision, hub.files[split], download, what=f"corpus {hub.config} ({split})",
            offline_sources="`local` (a folder of .txt files) or `synthetic`", retries=build.retries,
            backoff_s=build.backoff_s,
        )
        lines = read_text_column(parquet)
        expected = hub.rows.get(split)
        if expected is not None and len(lines) != expected:
            raise ValueError(
                f"{hub.url(split)} holds {len(lines)} lines, expected {expected}: it is not the {hub.config} "
                "split this corpus describes. Check `revision`/`config` in the config, or drop the row check by "
                "adding the corpus under another name."
            )
        _write_split(folder, split, lines)
        counts[split] = len(lines)
    shutil.rmtree(download, ignore_errors=True)
    return {"kind": "huggingface", "repo": hub.repo, "revision": hub.revision, "config": hub.config,
            "files": dict(hub.files), "lines": counts}


def _local_file(path: Path, split: str) -> Path:
    for name in LOCAL_NAMES[split]:
        if (path / name).is_file():
            return path / name
    raise FileNotFoundError(
        f"local corpus folder {path} has no {split} split; it needs one of {list(LOCAL_NAMES[split])} for each "
        "split (as written by the fetch_data rule, PyTorch's word_language_model data/wikitext-2, or the "
        "original WikiText-2 release). Or use source `huggingface` / `synthetic`."
    )


def _from_local(build: Build) -> dict[str, Any]:
    path = staged_folder(
        build.path, "corpus", build.name,
        "a folder holding train.txt, valid.txt, test.txt, or use source `huggingface` / `synthetic`",
    )
    folder = build.folder
    counts, staged = {}, {}
    for split in SPLITS:
        file = _local_file(path, split)
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as err:
            raise ValueError(f"local corpus file {file} is unreadable as UTF-8 text ({err})") from err
        if not any(line.strip() for line in lines):
            raise ValueError(f"local corpus file {file} holds no words; every split needs text")
        _write_split(folder, split, lines)
        counts[split], staged[split] = len(lines), str(file.resolve())
    return {"kind": "local", "staged_from": staged, "lines": counts}


def synthetic_lines(name: str, split: str, vocab_size: int, n_lines: int, words_per_line: int,
                    zipf_exponent: float = 1.0, repeat_prob: float = 0.5) -> list[str]:
    """A deterministic corpus split: words ``w0..w{V-1}`` drawn from p(k) ∝ (k+1)^(−s) (Zipf-like, as word
    frequencies are), except that with probability ``repeat_prob`` a word is followed by its successor
    ``w{(k+1) mod V}`` — a bigram rule a language model can learn, so training visibly lowers perplexity.
    Line lengths vary uniformly in [words_per_line/2, 3·words_per_line/2]. Seeded by (name, split)."""
    check_positive(vocab_size=vocab_size, n_lines=n_lines, words_per_line=words_per_line)
    gen = generator("corpus", name, split)
    ranks = torch.arange(1, vocab_size + 1, dtype=torch.float64)
    weights = ranks.pow(-float(zipf_exponent))
    low, high = max(1, words_per_line // 2), max(1, words_per_line // 2) + words_per_line
    lengths = torch.randint(low, high + 1, (n_lines,), generator=gen).tolist()
    total = sum(lengths)
    draws = torch.multinomial(weights, total, replacement=True, generator=gen).tolist()
    follow = (torch.rand(total, generator=gen) < repeat_prob).tolist()
    words, previous = [], draws[0]
    for index, (draw, successor) in enumerate(zip(draws, follow)):
        word = (previous + 1) % vocab_size if successor and index > 0 else draw
        words.append(word)
        previous = word
    lines, start = [], 0
    for length in lengths:
        lines.append(" ".join(f"w{w}" for w in words[start:start + length]))
        start += length
    return lines


def _from_synthetic(build: Build) -> dict[str, Any]:
    name, folder, settings = build.name, build.folder, build.request["synthetic"]
    counts = {}
    for split in SPLITS:
        n_lines = int(settings["n_lines"][split])
        lines = synthetic_lines(name, split, int(settings["vocab_size"]), n_lines, int(settings["words_per_line"]),
                                float(settings["zipf_exponent"]), float(settings["repeat_prob"]))
        _write_split(folder, split, lines)
        counts[split] = n_lines
    return {"kind": "synthetic", **settings, "lines": counts}


SYNTHETIC_DEFAULTS: dict[str, Any] = {
    "vocab_size": 200,  # quick preset: small softmax, yet a long Zipf tail
    "n_lines": {"train": 400, "valid": 40, "test": 40},  # ≈ 10k training tokens: seconds per epoch on a CPU
    "words_per_line": 24,  # WikiText-2 paragraphs are longer; only the shape of the data matters here
    "zipf_exponent": 1.0,  # Zipf's law for word frequencies
    "repeat_prob": 0.5,  # half the words follow the bigram rule (learnable structure)
}


# repo/revision/config override the registry's Hub files (source huggingface only; another `config` such as
# wikitext-2-v1 takes the same file layout); `synthetic`: overrides of SYNTHETIC_DEFAULTS (source synthetic
# only). Settings of the other sources are ignored, so a preset can switch the source without deleting keys
# (Snakemake merges config files key by key).
OPTIONS: dict[str, Any] = {"repo": None, "revision": None, "config": None, "synthetic": None}


def _configure(spec: CorpusSpec, options: dict[str, Any]) -> CorpusSpec:
    """The entry with the config's Hub repository, revision and configuration."""
    hub = spec.hub
    chosen = options["config"] or hub.config
    return replace(spec, hub=HubCorpus(
        repo=options["repo"] or hub.repo, revision=options["revision"] or hub.revision, config=chosen,
        files=_wikitext_files(chosen) if chosen != hub.config else hub.files, rows=hub.rows,
    ))


def _request(spec: CorpusSpec, source: str, options: dict[str, Any]) -> dict[str, Any]:
    request: dict[str, Any] = {"source": source}
    if source == "huggingface":
        request.update(repo=spec.hub.repo, revision=spec.hub.revision, config=spec.hub.config)
    if source == "synthetic":
        settings = {**SYNTHETIC_DEFAULTS, **(options["synthetic"] or {})}
        unknown = sorted(set(settings) - set(SYNTHETIC_DEFAULTS))
        if unknown:
            raise ValueError(f"unknown synthetic corpus settings {unknown}; known: {sorted(SYNTHETIC_DEFAULTS)}")
        if set(settings["n_lines"]) != set(SPLITS):
            raise ValueError(f"synthetic n_lines must give a count for each of {SPLITS}, got {settings['n_lines']}")
        request["synthetic"] = settings
    return request


CORPUS = SourceKind(
    name="corpus",
    registry=Registry(CORPORA, "corpus", "isonorm.data.corpora.CORPORA (a CorpusSpec)"),
    builders={"huggingface": _from_hub, "local": _from_local, "synthetic": _from_synthetic},
    options=OPTIONS,
    configure=_configure,
    request=_request,
    fetcher="isonorm.data.corpora.fetch_corpus(name, root, source)",
    finish=lambda build, record: {"source": record, "license": build.entry.license,
                                  "license_url": build.entry.license_url},
)
fetch_corpus = partial(fetch, CORPUS)  # (name, root, source, *, path, retries, backoff_s, **OPTIONS)


# --- word-level tokenisation (word_language_model data.py) --------------------------------------------------


def split_words(lines: Sequence[str]) -> list[str]:
    """Every line's whitespace-separated words followed by ``<eos>`` (word_language_model ``tokenize``)."""
    return [word for line in lines for word in (*line.split(), EOS)]


def build_vocabulary(words: Sequence[str]) -> list[str]:
    """Distinct words in order of first appearance (the example's ``Dictionary``), plus ``<unk>`` at the end
    when absent (the raw configuration has none; valid/test words unseen in train map to it)."""
    vocabulary = list(dict.fromkeys(words))
    if UNK not in vocabulary:
        vocabulary.append(UNK)
    return vocabulary


def encode(words: Sequence[str], vocabulary: Sequence[str]) -> torch.Tensor:
    """Word ids (int64); words outside the vocabulary become ``<unk>``."""
    index = {word: i for i, word in enumerate(vocabulary)}
    unk = index[UNK]
    return torch.tensor([index.get(word, unk) for word in words], dtype=torch.long)


@dataclass(frozen=True)
class Corpus:
    """A tokenised corpus: id streams per split and the vocabulary (id -> word)."""

    vocabulary: list[str]
    ids: dict[str, torch.Tensor]
    unknown: dict[str, int]  # per split: words mapped to <unk> because train lacks them (excl. literal <unk>)

    @property
    def n_tokens(self) -> int:
        return len(self.vocabulary)


def read_split(folder: str | Path, split: str) -> list[str]:
    """The lines of one split of a fetched corpus (marker required)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; use one of {SPLITS}")
    return CORPUS.read_file(folder, f"{split}.txt", str.splitlines)


def load_corpus(folder: str | Path) -> Corpus:
    """Tokenise all three splits of a fetched corpus with the training split's vocabulary."""
    words = {split: split_words(read_split(folder, split)) for split in SPLITS}
    vocabulary = build_vocabulary(words["train"])
    known = set(vocabulary)
    unknown = {split: sum(w not in known for w in words[split]) for split in SPLITS}
    return Corpus(vocabulary, {split: encode(words[split], vocabulary) for split in SPLITS}, unknown)


def lm_windows(ids: torch.Tensor, bptt: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Consecutive non-overlapping windows: x (N, bptt) and the next tokens y (N, bptt), y[n, t] = x[n, t+1]
    in the stream. These are the example's ``get_batch`` chunks (length ``bptt``) of one stream; a tail
    shorter than ``bptt`` is dropped here (:func:`tail_window` returns it for evaluation)."""
    check_positive(bptt=bptt)
    if ids.ndim != 1:
        raise ValueError(f"ids must be one token stream (1-D), got shape {tuple(ids.shape)}")
    n = (ids.numel() - 1) // bptt
    if n < 1:
        raise ValueError(f"a stream of {ids.numel()} tokens holds no window of bptt={bptt}+1 tokens; lower bptt")
    return ids[: n * bptt].view(n, bptt), ids[1 : n * bptt + 1].view(n, bptt)


def tail_window(ids: torch.Tensor, bptt: int) -> tuple[torch.Tensor, torch.Tensor] | None:
    """The last, shorter window (1, L) left after :func:`lm_windows`, or None when there is none."""
    start = (ids.numel() - 1) // bptt * bptt
    length = ids.numel() - 1 - start
    if length < 1:
        return None
    return ids[start : start + length].view(1, length), ids[start + 1 : start + 1 + length].view(1, length)
