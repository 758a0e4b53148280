"""The ``tiny`` source: a small random model of the same class, written in the Hub's on-disk layout.

DESIGN 4: "the quick preset builds tiny random models of the same architecture classes locally (no
download)". The folder holds exactly the files of the real checkpoint (config.json, model.safetensors and
the byte-level BPE tokenizer as tokenizer.json, tokenizer_config.json, vocab.json, merges.txt), so the very
same loading code (``AutoTokenizer`` / ``GPT2Model.from_pretrained(folder)``) runs on it. The tokenizer is
trained with the ``tokenizers`` library on the texts that ship with the project. Same seed, same files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import torch

# Spec joudaki2023 D-FigB5 "Smoke test": GPT2Config(n_layer=2, n_embd=64, n_head=2). n_positions bounds the
# tokens per text (the probe needs tokens < n_embd for a non-singular token Gram); vocab_size bounds the BPE
# vocabulary learnt from the few shipped texts (256 byte symbols + merges + <|endoftext|>).
TINY_GPT2 = {"n_layer": 2, "n_embd": 64, "n_head": 2, "n_positions": 128, "vocab_size": 512}
END_OF_TEXT = "<|endoftext|>"  # GPT-2's only special token: bos = eos = unk (and pad, set by the probe)


def train_byte_level_bpe(texts: Sequence[str], vocab_size: int):
    """A GPT-2 style byte-level BPE ``tokenizers.Tokenizer`` learnt from ``texts`` (deterministic)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)  # as GPT-2
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[END_OF_TEXT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # every byte encodable, as in GPT-2
        show_progress=False,
    )
    tokenizer.train_from_iterator(list(texts), trainer=trainer)
    return tokenizer


def write_tiny_gpt2(
    folder: str | Path,
    texts: Sequence[str],
    *,
    seed: int = 0,
    n_layer: int = TINY_GPT2["n_layer"],
    n_embd: int = TINY_GPT2["n_embd"],
    n_head: int = TINY_GPT2["n_head"],
    n_positions: int = TINY_GPT2["n_positions"],
    vocab_size: int = TINY_GPT2["vocab_size"],
) -> Path:
    """Write a random ``GPT2Model`` and a BPE tokenizer trained on ``texts`` into ``folder``."""
    from transformers import GPT2Config, GPT2Model, GPT2TokenizerFast

    if n_embd % n_head:
        raise ValueError(f"tiny gpt2: n_embd ({n_embd}) must be a multiple of n_head ({n_head})")
    if vocab_size <= 257:
        raise ValueError(f"tiny gpt2: vocab_size must exceed the 256 byte symbols + {END_OF_TEXT}, got {vocab_size}")
    if not texts:
        raise ValueError("tiny gpt2: the tokenizer needs at least one text to learn from")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)

    bpe = train_byte_level_bpe(texts, vocab_size)
    end_id = bpe.token_to_id(END_OF_TEXT)
    bpe.model.save(str(folder))  # vocab.json + merges.txt, the slow-tokenizer form the Hub repo also has
    tokenizer = GPT2TokenizerFast(
        tokenizer_object=bpe, bos_token=END_OF_TEXT, eos_token=END_OF_TEXT, unk_token=END_OF_TEXT,
        model_max_length=n_positions,
    )
    tokenizer.save_pretrained(folder)  # tokenizer.json + tokenizer_config.json

    config = GPT2Config(
        n_layer=n_layer, n_embd=n_embd, n_head=n_head, n_positions=n_positions, vocab_size=vocab_size,
        bos_token_id=end_id, eos_token_id=end_id,
    )
    # Seeded init without touching the caller's RNG streams (manual_seed reseeds every device).
    with torch.random.fork_rng(devices=range(torch.cuda.device_count())):
        torch.manual_seed(seed)
        model = GPT2Model(config)
    model.save_pretrained(folder)  # config.json + model.safetensors
    return folder
