"""Checkpoints by name: Hugging Face repository, pinned revision, model class and the files a run needs.

DESIGN 4: a checkpoint is "a Hugging Face id pinned by revision, or a local folder in the same layout". Only
the allow-listed files are downloaded (GPT-2's repository also holds TF/Flax/ONNX/Rust weights, ~3 GB).
"""

from __future__ import annotations

from dataclasses import dataclass


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

    @property
    def url(self) -> str:
        return f"https://huggingface.co/{self.repo}"

    def missing_files(self, folder) -> list[str]:
        from pathlib import Path

        return [f for f in self.files if not (Path(folder) / f).is_file()]


# Files of a GPT-2 style checkpoint that loading needs: the config, the safetensors weights (never the
# pickled pytorch_model.bin) and the byte-level BPE tokenizer in both of its on-disk forms.
GPT2_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt")

CHECKPOINTS: dict[str, CheckpointSpec] = {
    # spec joudaki2023 D-FigB5: Hugging Face `gpt2` (GPT-2 small, 124M), which now resolves to
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
}


def checkpoint_spec(name: str) -> CheckpointSpec:
    try:
        return CHECKPOINTS[name]
    except KeyError:
        raise ValueError(
            f"unknown checkpoint {name!r}; known: {sorted(CHECKPOINTS)}. Add a CheckpointSpec to "
            "isonorm.checkpoints.registry.CHECKPOINTS (repository, pinned revision, model class, files)."
        ) from None
