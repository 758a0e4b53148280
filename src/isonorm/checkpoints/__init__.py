"""Pre-trained checkpoints: a registry of pinned Hugging Face repositories and four sources (architecture §4).

``fetch_checkpoint`` (run by the fetch_checkpoint rule; the ``CHECKPOINT`` kind of :func:`isonorm.sources.fetch`)
leaves ``<root>/<name>/`` with the model's files (config.json, model.safetensors, tokenizer files) and a
``.ready`` marker; ``load_checkpoint_model`` / ``load_checkpoint_tokenizer`` check that folder and load it with
``transformers``. Sources: ``huggingface`` (pinned revision, allow-listed files, kept in the user's Hugging
Face cache and linked into the folder: :mod:`.cache`), ``local`` (a pre-staged folder), ``tiny`` (a small
random model of the same class, for the offline quick preset), ``random`` (random weights at the real sizes,
names and dtypes, for the shapes preset). Hub errors are those of :mod:`isonorm.sources`.
"""

from .errors import CheckpointError, CorruptCheckpointError, MissingCheckpointFilesError
from .fetch import CHECKPOINT, fetch_checkpoint
from .load import checkpoint_record, describe_checkpoint, load_checkpoint_model, load_checkpoint_tokenizer
from .registry import CHECKPOINTS, CheckpointSpec, checkpoint_spec

__all__ = [
    "CHECKPOINT",
    "CHECKPOINTS",
    "CheckpointError",
    "CheckpointSpec",
    "CorruptCheckpointError",
    "MissingCheckpointFilesError",
    "checkpoint_record",
    "checkpoint_spec",
    "describe_checkpoint",
    "fetch_checkpoint",
    "load_checkpoint_model",
    "load_checkpoint_tokenizer",
]
