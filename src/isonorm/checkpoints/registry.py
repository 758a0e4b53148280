"""Checkpoints by name: Hugging Face repository, pinned revision, model class and the files a run needs.

architecture §4: a checkpoint is "a Hugging Face id pinned by revision, or a local folder in the same layout". Only
the allow-listed files are downloaded (GPT-2's repository also holds TF/Flax/ONNX/Rust weights, ~3 GB).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..sources import Registry


@dataclass(frozen=True)
class CheckpointSpec:
    """What the pipeline needs of one checkpoint."""

    name: str
    repo: str
    revision: str  # a full 40-hex commit sha: a branch name would let the weights change under a result
    model_class: str  # a class of `transformers`, e.g. GPT2Model (the base model, no LM head)
    files: tuple[str, ...]  # the allow-list, every one of them required
    weights: str = "model.safetensors"
    tiny_family: str = "gpt2"  # which tiny random stand-in `source: tiny` builds (same architecture class)
    sharded: bool = False  # weights = model.safetensors.index.json + shards; only the needed shards are fetched
    optional_files: tuple[str, ...] = ()  # allow-list patterns fetched when present (tokenizer, remote code)
    gated: bool = False  # the Hub asks for an accepted licence and a token (HF_TOKEN) before any download
    remote_code: bool = False  # the model class lives in the repository's .py files (trust_remote_code)

    @property
    def url(self) -> str:
        return f"https://huggingface.co/{self.repo}"

    def missing_files(self, folder: str | Path) -> list[str]:
        return [f for f in self.files if not (Path(folder) / f).is_file()]


INDEX = "model.safetensors.index.json"  # the Hub's name for the shard index of a sharded safetensors checkpoint
SHARDED_FILES = ("config.json", INDEX)  # required; the shards themselves are chosen at fetch time
# Tokenizer files in their usual Hub names: fetched when the revision has them, never required (Table 5 (b)/(c)
# needs only weights; a missing tokenizer must not fail a PII run).
TOKENIZER_FILES = (
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.json", "vocab.txt", "merges.txt",
    "spiece.model", "tokenizer.model", "generation_config.json",
)

# Files of a GPT-2 style checkpoint that loading needs: the config, the safetensors weights (never the
# pickled pytorch_model.bin) and the byte-level BPE tokenizer in both of its on-disk forms.
GPT2_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt")


def _one_file(name: str, repo: str, revision: str, model_class: str) -> CheckpointSpec:
    """A Table 5 (b) checkpoint: config and one weights file required, tokenizer files kept when present; its
    tiny stand-in is the family of the same name."""
    return CheckpointSpec(name=name, repo=repo, revision=revision, model_class=model_class,
                          files=("config.json", "model.safetensors"), optional_files=TOKENIZER_FILES, tiny_family=name)


def _sharded(name: str, repo: str, revision: str, model_class: str, tiny_family: str, **more) -> CheckpointSpec:
    """A Table 5 (c)/(d) 7B checkpoint: the index and only the shards a run needs (tokenizer files when present)."""
    return CheckpointSpec(name=name, repo=repo, revision=revision, model_class=model_class, files=SHARDED_FILES,
                          weights=INDEX, sharded=True, tiny_family=tiny_family,
                          **{"optional_files": TOKENIZER_FILES, **more})


CHECKPOINTS: dict[str, CheckpointSpec] = {
    # joudaki2023-figb5: Hugging Face `gpt2` (GPT-2 small, 124M), which now resolves to
    # openai-community/gpt2; loaded as GPT2Model (no LM head). Revision (decision D7: pin it): the commit
    # that huggingface_hub 2.4.0's own docstring resolves "openai-community/gpt2" to
    # (huggingface_hub/_revision.py, ResolvedRevision example), also pinned by many public projects.
    "gpt2": CheckpointSpec(
        name="gpt2",
        repo="openai-community/gpt2",
        revision="607a30d783dfa663caf39e06633721c8d4cfcd7e",
        model_class="GPT2Model",
        files=GPT2_FILES,
    ),
    # lu2024-table5 (b): PLM.py uses `bert-base-uncased`, now google-bert/bert-base-uncased. Revision: the
    # commit pinned by many public projects (revision locks, HF cache snapshot paths), with model.safetensors.
    "bert": _one_file("bert", "google-bert/bert-base-uncased", "86b5e0934494bd15c9632b12f734a8a67f723594", "BertModel"),
    # lu2024-table5 (b): PLM.py's active model `roberta-base` = FacebookAI/roberta-base; revision as pinned by
    # several public projects (listing config.json, model.safetensors of 498,818,054 bytes, tokenizer files).
    "roberta": _one_file("roberta", "FacebookAI/roberta-base", "e2da8e2f811d1448a5b465c236feacd80ffbac7b",
                         "RobertaModel"),
    # lu2024-table5 (b), decision A11: t5-base = google-t5/t5-base; revision: the HF cache snapshot many public
    # projects point at (holding model.safetensors, spiece.model, tokenizer.json).
    "t5": _one_file("t5", "google-t5/t5-base", "a9723ea7f1b39c1eae772870f3b547bf6ef7e6c1", "T5Model"),
    # lu2024-table5 (c), decision A12: LLaMA-1 7B as converted by huggyllama; revision: the repository sha of the
    # Hub API record (last modified 2023-04-07) and of many HF cache paths holding model-0000{1,2}-of-00002.
    "llama": _sharded("llama", "huggyllama/llama-7b", "8416d3fefb0cb3ff5775a7b13c1692d10ff1aa16", "LlamaForCausalLM",
                      "llama"),
    # lu2024-table5 (c), decision A12: gated (licence + token). Revision: the sha pinned by public revision
    # tables and HF cache paths (model-0000{1,2}-of-00002.safetensors).
    "llama2": _sharded("llama2", "meta-llama/Llama-2-7b-hf", "01c7f73d771dfac7d292323805ebc428287df4f9",
                       "LlamaForCausalLM", "llama", gated=True),
    # lu2024-table5 (c)/lu2024-table5 (d): Qwen (v1) 7B, remote code; its tensors are read without building the model. The
    # LoRA part builds it, so the remote-code .py files, qwen.tiktoken and the CUDA kernel sources are allow-
    # listed too. Revision: the sha public projects cite for Qwen/Qwen-7B (Hub API record, SBOM purl, caches).
    "qwen": _sharded("qwen", "Qwen/Qwen-7B", "ef3c5c9c57b252f3149c1408daf4d649ec8b6c85", "AutoModelForCausalLM",
                     "qwen2", optional_files=(*TOKENIZER_FILES, "*.py", "qwen.tiktoken", "*.cpp", "*.cu"),
                     remote_code=True),
}


CHECKPOINT_REGISTRY = Registry(
    CHECKPOINTS, "checkpoint",
    "isonorm.checkpoints.registry.CHECKPOINTS (repository, pinned revision, model class, files)",
)
checkpoint_spec = CHECKPOINT_REGISTRY.lookup  # the entry for a name, or an error listing the known checkpoints
