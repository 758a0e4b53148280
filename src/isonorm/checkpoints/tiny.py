"""The ``tiny`` source: a small random model of the same class, written in the Hub's on-disk layout.

architecture §4: "the quick preset builds tiny random models of the same architecture classes locally (no
download)". The folder holds exactly the files of the real checkpoint (config.json, model.safetensors and
the byte-level BPE tokenizer as tokenizer.json, tokenizer_config.json, vocab.json, merges.txt), so the very
same loading code (``AutoTokenizer`` / ``GPT2Model.from_pretrained(folder)``) runs on it. The tokenizer is
trained with the ``tokenizers`` library on the texts that ship with the project. Same seed, same files.
``transformers`` and ``tokenizers`` are imported where they are used: they are slow to import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import torch

# joudaki2023-figb5 "Smoke test": GPT2Config(n_layer=2, n_embd=64, n_head=2). n_positions bounds the
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


def write_gpt2_tokenizer(folder: Path, texts: Sequence[str], vocab_size: int, max_length: int) -> int:
    """GPT-2's four tokenizer files for a BPE learnt from ``texts`` (ids < ``vocab_size``); returns the
    <|endoftext|> id. Shared by the ``tiny`` and ``random`` GPT-2s."""
    from transformers import GPT2TokenizerFast

    bpe = train_byte_level_bpe(texts, vocab_size)
    bpe.model.save(str(folder))  # vocab.json + merges.txt, the slow-tokenizer form the Hub repo also has
    tokenizer = GPT2TokenizerFast(
        tokenizer_object=bpe, bos_token=END_OF_TEXT, eos_token=END_OF_TEXT, unk_token=END_OF_TEXT,
        model_max_length=max_length,
    )
    tokenizer.save_pretrained(folder)  # tokenizer.json + tokenizer_config.json
    return bpe.token_to_id(END_OF_TEXT)


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
    from transformers import GPT2Config, GPT2Model

    if n_embd % n_head:
        raise ValueError(f"tiny gpt2: n_embd ({n_embd}) must be a multiple of n_head ({n_head})")
    if vocab_size <= 257:
        raise ValueError(f"tiny gpt2: vocab_size must exceed the 256 byte symbols + {END_OF_TEXT}, got {vocab_size}")
    if not texts:
        raise ValueError("tiny gpt2: the tokenizer needs at least one text to learn from")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    end_id = write_gpt2_tokenizer(folder, texts, vocab_size, n_positions)
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


# --- tiny stand-ins of the Table 5 (b)/(c) checkpoints (lu2024-table5 (b) "Smoke test": hidden 32, 2 layers, 2 heads,
# intermediate 64; lu2024-table5 (d) "Smoke test": a 2-layer, hidden-64 LLaMA/Qwen2 config). One set of size keys for every
# family; each family maps them onto its config class. vocab_size bounds the BPE vocabulary of the causal LMs.
TINY_TRANSFORMER = {
    "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 128,
    "vocab_size": 512, "max_position_embeddings": 128,
}
# Families written as sharded safetensors (index + ≥ 2 shards), so that the quick preset runs the shard path
# the 7B checkpoints need (lu2024-table5 (c): "use the safetensors index to fetch one shard").
SHARDED_FAMILIES = frozenset({"llama", "qwen2"})
TINY_FAMILIES = ("gpt2", "bert", "roberta", "t5", "llama", "qwen2")
END_OF_TEXT_LM = "<|endoftext|>"  # eos = pad of the tiny causal LMs (Qwen's own end-of-text token name)


def tiny_sizes(family: str) -> dict[str, int]:
    """The default sizes of the ``tiny`` stand-in of ``family`` (the keys a config may override)."""
    if family not in TINY_FAMILIES:
        raise ValueError(f"unknown tiny family {family!r}; known: {list(TINY_FAMILIES)}")
    return dict(TINY_GPT2 if family == "gpt2" else TINY_TRANSFORMER)


def _config(family: str, sizes: dict[str, int]):
    import transformers

    layers, hidden, heads = sizes["num_hidden_layers"], sizes["hidden_size"], sizes["num_attention_heads"]
    if hidden % heads:
        raise ValueError(f"tiny {family}: hidden_size ({hidden}) must be a multiple of num_attention_heads ({heads})")
    if family in ("bert", "roberta"):
        cls = transformers.BertConfig if family == "bert" else transformers.RobertaConfig
        return cls(num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads,
                   intermediate_size=sizes["intermediate_size"], vocab_size=sizes["vocab_size"],
                   max_position_embeddings=sizes["max_position_embeddings"] + 2)  # RoBERTa offsets positions by 2
    if family == "t5":
        return transformers.T5Config(num_layers=layers, d_model=hidden, num_heads=heads, d_kv=hidden // heads,
                                     d_ff=sizes["intermediate_size"], vocab_size=sizes["vocab_size"])
    cls = transformers.LlamaConfig if family == "llama" else transformers.Qwen2Config
    return cls(num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads, num_key_value_heads=heads,
               intermediate_size=sizes["intermediate_size"], vocab_size=sizes["vocab_size"],
               max_position_embeddings=sizes["max_position_embeddings"], tie_word_embeddings=False)


def _model_class(family: str):
    import transformers

    return {
        "bert": transformers.BertModel, "roberta": transformers.RobertaModel, "t5": transformers.T5Model,
        "llama": transformers.LlamaForCausalLM, "qwen2": transformers.Qwen2ForCausalLM,
    }[family]


def tiny_model_class(family: str) -> str:
    """Name of the ``transformers`` class the ``tiny`` stand-in of ``family`` is written as."""
    return "GPT2Model" if family == "gpt2" else _model_class(family).__name__


def write_causal_tokenizer(folder: Path, texts: Sequence[str], vocab_size: int, max_length: int) -> int:
    """A byte-level BPE (tokenizer.json + tokenizer_config.json) for the tiny causal LMs; returns the eos id."""
    from transformers import PreTrainedTokenizerFast

    bpe = train_byte_level_bpe(texts, vocab_size)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token=END_OF_TEXT_LM, pad_token=END_OF_TEXT_LM, unk_token=END_OF_TEXT_LM,
        model_max_length=max_length,
    )
    tokenizer.save_pretrained(folder)
    return bpe.token_to_id(END_OF_TEXT_LM)


def write_tiny(family: str, folder: str | Path, texts: Sequence[str], *, seed: int = 0, **sizes: int) -> Path:
    """Write the ``tiny`` stand-in of ``family`` into ``folder``: same class and parameter names as the real one.

    GPT-2 keeps :func:`write_tiny_gpt2`. BERT, RoBERTa and T5 are written as one model.safetensors (no
    tokenizer: the PLM rows of Table 5 read weights only); LLaMA and Qwen2 (the Qwen-style stand-in) as a
    sharded checkpoint (model.safetensors.index.json + ≥ 2 shards) with a BPE tokenizer learnt from ``texts``,
    so that a causal-LM build (the LoRA part) works on it too.
    """
    if family == "gpt2":
        return write_tiny_gpt2(folder, texts, seed=seed, **sizes)
    unknown = sorted(set(sizes) - set(TINY_TRANSFORMER))
    if unknown:
        raise ValueError(f"tiny {family}: unknown size(s) {unknown}; known: {sorted(TINY_TRANSFORMER)}")
    sizes = {**tiny_sizes(family), **sizes}
    config = _config(family, sizes)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if family in SHARDED_FAMILIES:
        if not texts:
            raise ValueError(f"tiny {family}: the tokenizer needs at least one text to learn from")
        end_id = write_causal_tokenizer(folder, texts, sizes["vocab_size"], sizes["max_position_embeddings"])
        config.bos_token_id = config.eos_token_id = config.pad_token_id = end_id
    with torch.random.fork_rng(devices=range(torch.cuda.device_count())):
        torch.manual_seed(seed)
        model = _model_class(family)(config)
    if family in SHARDED_FAMILIES:
        n_bytes = sum(p.numel() * p.element_size() for p in model.state_dict().values())
        model.save_pretrained(folder, max_shard_size=max(n_bytes // 3, 1))  # ≥ 2 shards (about 3-4)
    else:
        model.save_pretrained(folder)
    return folder
