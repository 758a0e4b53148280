"""The real sizes and dtypes of the registry's checkpoints, for the ``random`` source (:mod:`.random_weights`).

Keyed by registry name; each entry's ``tiny_family`` picks the ``transformers`` config/model class, these are
its keyword arguments. Only what changes tensor names, shapes or the config a reader looks at is set; the rest
keeps the class's defaults. Numbers are those of the config.json of the pinned repositories in config.yaml
(and their model cards); the dtype is the one their safetensors weights are stored in.
"""

from __future__ import annotations

import torch

_LLAMA_7B = {  # huggyllama/llama-7b config.json (LLaMA-1 7B, Touvron et al. 2023, Table 2: 4096 wide, 32 layers/heads)
    "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 2048, "rms_norm_eps": 1e-6,
    "tie_word_embeddings": False,
}

FULL_SIZES: dict[str, dict] = {
    # openai-community/gpt2 config.json = GPT2Config() defaults: 12 layers, 768 wide, 12 heads, 50257 tokens,
    # 1024 positions
    "gpt2": {"n_layer": 12, "n_embd": 768, "n_head": 12, "n_positions": 1024, "vocab_size": 50257},
    # google-bert/bert-base-uncased config.json = BertConfig() defaults: 12 layers, 768 wide, 3072, 30522 tokens,
    # 512 positions, 2 token types
    "bert": {"num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072,
             "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2},
    # FacebookAI/roberta-base config.json: BERT-base sizes, byte-level BPE of 50265 tokens, 514 positions (offset 2
    # for the padding index), one token type, LayerNorm eps 1e-5, pad 1 / bos 0 / eos 2
    "roberta": {"num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072,
                "vocab_size": 50265, "max_position_embeddings": 514, "type_vocab_size": 1, "layer_norm_eps": 1e-5,
                "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2},
    # google-t5/t5-base config.json: d_model 768, d_ff 3072, 12 encoder + 12 decoder blocks, 12 heads of d_kv 64,
    # 32128 tokens (SentencePiece 32000 + 100 sentinels, padded)
    "t5": {"d_model": 768, "d_ff": 3072, "num_layers": 12, "num_heads": 12, "d_kv": 64, "vocab_size": 32128},
    "llama": _LLAMA_7B,
    # meta-llama/Llama-2-7b-hf config.json: the LLaMA-1 7B shapes; context 4096, RMSNorm eps 1e-5 (no tensor changes)
    "llama2": {**_LLAMA_7B, "max_position_embeddings": 4096, "rms_norm_eps": 1e-5},
    # Qwen/Qwen-7B config.json (v1, remote code; written on the Qwen2 class of its tiny stand-in, which has the same
    # layer structure: Q/K/V with bias, SwiGLU MLP, RMSNorm): hidden 4096, 32 layers/heads, no GQA, 151936 tokens,
    # untied output; v1's `intermediate_size` 22016 counts its two 11008-wide input projections w1, w2 together
    "qwen": {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
             "num_key_value_heads": 32, "vocab_size": 151936, "max_position_embeddings": 8192, "rms_norm_eps": 1e-6,
             "tie_word_embeddings": False},
}

# The dtype of each repository's safetensors weights (config.json `torch_dtype`; GPT-2/BERT/RoBERTa/T5: fp32).
FULL_DTYPES: dict[str, torch.dtype] = {
    "gpt2": torch.float32, "bert": torch.float32, "roberta": torch.float32, "t5": torch.float32,
    "llama": torch.float16, "llama2": torch.float16, "qwen": torch.bfloat16,
}

# The config key(s) holding the depth that the `num_hidden_layers` option truncates (T5: encoder and decoder).
DEPTH_KEYS: dict[str, tuple[str, ...]] = {"gpt2": ("n_layer",), "t5": ("num_layers", "num_decoder_layers")}


def full_sizes(name: str, num_hidden_layers: int | None = None) -> dict:
    """The config keyword arguments of checkpoint ``name`` at its real sizes, depth cut to ``num_hidden_layers``."""
    if name not in FULL_SIZES:
        raise ValueError(f"no full sizes for checkpoint {name!r}; known: {sorted(FULL_SIZES)} "
                         "(isonorm.checkpoints.full_size.FULL_SIZES)")
    sizes = dict(FULL_SIZES[name])
    if num_hidden_layers is not None:
        keys = DEPTH_KEYS.get(name, ("num_hidden_layers",))
        if not 1 <= int(num_hidden_layers) <= sizes[keys[0]]:
            raise ValueError(f"checkpoint {name}: `num_hidden_layers` truncates the depth of the random model to "
                             f"1..{sizes[keys[0]]} (the real one's) layers, got {num_hidden_layers}")
        sizes.update(dict.fromkeys(keys, int(num_hidden_layers)))
    return sizes


def truncated_depth(record: dict) -> tuple[int, int] | None:
    """(layers written, real layers) of a ``random`` checkpoint cut by ``num_hidden_layers`` (its marker's
    ``record``, :func:`~.load.checkpoint_record`); None for any other checkpoint. A job on it extrapolates."""
    if record.get("source") != "random":
        return None
    name = record["checkpoint"]
    key = DEPTH_KEYS.get(name, ("num_hidden_layers",))[0]
    written, real = int(record["sizes"][key]), int(FULL_SIZES[name][key])
    return (written, real) if written < real else None
