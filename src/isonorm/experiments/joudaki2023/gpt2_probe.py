"""Fig. B.5: the isometry gap of the token Gram matrix after every submodule of pre-trained GPT-2.

Faithful to the authors' ``isometry_transformers.ipynb`` (joudaki2023-figb5, decision D7):

- ``GPT2Model`` (no LM head) with ``attn_implementation='eager'``; one text per batch, tokenized with
  pad_token = eos_token, ``padding=True, truncation=True`` (no-ops for a single text);
- ``model.train()``: dropout is active (p = 0.1), as in the notebook; torch is seeded with ``seed`` so the
  draw is reproducible (D7). Mode ``eval`` (no dropout) is the D7 variant;
- a forward hook on every submodule records (qualified name, first tensor among the positional inputs, first
  tensor of the output), in firing order (children finish before their parent);
- kept: modules whose name's second dot-field is an integer (inside or equal to block ``h.i``) with
  ``i > min_block`` (the paper: 6, so h.7-h.11) and whose input and output are 3-D (batch, tokens,
  features). ``attn.attn_dropout`` (4-D attention probabilities) is never kept;
- each kept output is flattened to tokens × features, G = H Hᵀ in float64, iso gap with ε = 0 (metrics M1);
- for a LayerNorm ("ln" in the name) an extra entry named with "ln" -> "Add" comes first, holding the gap of
  the LN's *input* (the residual stream), then the LN output entry.

Per block the entries are Add_1, ln_1, attn.c_attn, attn.c_proj, attn.resid_dropout, attn, Add_2, ln_2,
mlp.c_fc, mlp.act, mlp.c_proj, mlp.dropout, mlp, h.i. transformers 5 applies the attention dropout
functionally (its ``attn_dropout`` hook never fires) and returns a tensor from each block instead of a
tuple; neither changes the set of measured modules or their values.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd
import torch

from ...checkpoints import checkpoint_record, describe_checkpoint, load_checkpoint_model, load_checkpoint_tokenizer
from ...data.texts import load_texts, read_texts
from ...items import Item, Results
from ...metrics import gram, isometry_gap
from ...runtime import resolve_device
from . import gpt2_summaries

MODES = ("train", "eval")  # D7: train-mode dropout as in the original; eval mode as the variant
EPS = 0.0  # metrics M1: ε = 0 for Joudaki et al.'s GPT-2 probe


@dataclass(frozen=True)
class HookRecord:
    """What a forward hook saw: the module's name, its first positional tensor input and first output tensor."""

    name: str
    input: torch.Tensor | None
    output: torch.Tensor | None


def first_tensor(values: Any) -> torch.Tensor | None:
    """The first tensor of a tensor or of a tuple/list of values (None when there is none)."""
    if isinstance(values, torch.Tensor):
        return values
    if isinstance(values, (tuple, list)):
        return next((v for v in values if isinstance(v, torch.Tensor)), None)
    return None


def block_index(name: str) -> int | None:
    """``h.7.attn.c_proj`` -> 7, ``h.7`` -> 7; None when the second dot-field is not an integer."""
    parts = name.split(".")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def record_modules(model: torch.nn.Module, inputs: Mapping[str, torch.Tensor], keep) -> list[HookRecord]:
    """Run ``model(**inputs)`` with a forward hook on every submodule whose name passes ``keep``.

    Returns the records in hook firing order. Tensors are detached (the probe needs no gradients).
    """
    records: list[HookRecord] = []
    handles = []

    def hook_for(name: str):
        def hook(module, args, output):
            tensor_in, tensor_out = first_tensor(args), first_tensor(output)
            records.append(HookRecord(
                name,
                None if tensor_in is None else tensor_in.detach(),
                None if tensor_out is None else tensor_out.detach(),
            ))
        return hook

    for name, module in model.named_modules():
        if name and keep(name):
            handles.append(module.register_forward_hook(hook_for(name)))
    try:
        with torch.no_grad():
            model(**inputs)
    finally:
        for handle in handles:
            handle.remove()
    return records


def token_gram_gap(h: torch.Tensor) -> float:
    """Isometry gap (ε = 0) of the token Gram of ``h`` (batch, tokens, features), tokens of all batch rows pooled."""
    flat = h.reshape(-1, h.shape[-1])
    return float(isometry_gap(gram(flat), eps=EPS))


def probe_entries(records: Iterable[HookRecord]) -> list[dict[str, Any]]:
    """Fig. B.5 entries from hook records: 3-D modules only; each LN preceded by its "Add" (input) entry."""
    entries = []
    for rec in records:
        if rec.input is None or rec.output is None or rec.input.ndim != 3 or rec.output.ndim != 3:
            continue  # as in the original: positional 3-D input and 3-D output, else skipped
        block = block_index(rec.name)
        if "ln" in rec.name:
            entries.append({"module": rec.name.replace("ln", "Add"), "block": block,
                            "iso_gap": token_gram_gap(rec.input), "layernorm": False, "add": True})
        entries.append({"module": rec.name, "block": block, "iso_gap": token_gram_gap(rec.output),
                        "layernorm": "ln" in rec.name, "add": False})
    return entries


def probe_text(model: torch.nn.Module, tokenizer: Any, text: str, min_block: int, device: torch.device) -> list[dict]:
    """The entries of one text (batch of one), blocks with index > ``min_block``."""
    inputs = tokenizer(text, return_tensors="pt", padding=True, truncation=True)
    inputs = {k: v.to(device) for k, v in inputs.items() if k in ("input_ids", "attention_mask")}

    def keep(name: str) -> bool:
        block = block_index(name)
        return block is not None and block > min_block

    entries = probe_entries(record_modules(model, inputs, keep))
    for li, entry in enumerate(entries):
        entry["li"] = li
        entry["tokens"] = int(inputs["input_ids"].shape[-1])
    return entries


def _texts_description(texts: str | Path) -> str:
    source = read_texts(texts).get("source", {})
    if source.get("kind") == "huggingface":
        return f"{source['repo']}@{source['revision']}:{source['file']}"
    return str(source.get("kind", "unknown"))


def figb5(
    cfg: Mapping[str, Any], *, checkpoint_dir: str | Path, texts: str | Path, device: str = "auto"
) -> pd.DataFrame:
    """joudaki2023-figb5: rows (mode, text, li, module, block, iso_gap, layernorm, add, tokens, checkpoint,
    texts_source).

    ``cfg``: ``n_texts`` and ``max_chars`` (the first texts, cut to their first characters), ``min_block``
    (keep blocks with a larger index), ``modes`` (``train`` and/or ``eval``), ``seed`` (torch seed of the
    train-mode dropout). ``checkpoint_dir``: a fetched checkpoint folder; ``texts``: a fetched text corpus
    folder (``isonorm.data.fetch_texts``).
    """
    modes = list(cfg["modes"])
    unknown = [m for m in modes if m not in MODES]
    if not modes or unknown:
        raise ValueError(f"figb5: modes must be a non-empty subset of {MODES}, got {cfg['modes']!r}")
    target = resolve_device(device)
    corpus = load_texts(texts, cfg["n_texts"], cfg["max_chars"])
    model = load_checkpoint_model(checkpoint_dir, device=target, attn_implementation="eager")  # D7
    tokenizer = load_checkpoint_tokenizer(checkpoint_dir)
    tokenizer.pad_token = tokenizer.eos_token  # as the original notebook
    provenance = {"checkpoint": describe_checkpoint(checkpoint_record(checkpoint_dir)),
                  "texts_source": _texts_description(texts)}

    rows = []
    for mode in modes:
        model.train(mode == "train")
        # D7: seeded dropout; manual_seed reseeds every device, so all are forked and the caller's RNG is kept
        with torch.random.fork_rng(devices=range(torch.cuda.device_count())):
            torch.manual_seed(int(cfg["seed"]))
            for index, text in enumerate(corpus):
                for entry in probe_text(model, tokenizer, text, int(cfg["min_block"]), target):
                    rows.append({"mode": mode, "text": index, **entry, **provenance})
    frame = pd.DataFrame(rows)
    if frame.empty:
        raise ValueError(
            f"figb5: no module was measured; min_block={cfg['min_block']} keeps no block of this model "
            f"({model.config.n_layer} blocks, indices 0..{model.config.n_layer - 1})"
        )
    columns = ["mode", "text", "li", "module", "block", "iso_gap", "layernorm", "add", "tokens",
               "checkpoint", "texts_source"]
    return frame[columns]


ITEMS = (  # isonorm.items
    Item("joudaki2023-figb5", "Isometry gap across the modules of pre-trained GPT-2 (last blocks)", "at_init", figb5,
         {"figb5": Results("figb5/{checkpoint}.parquet", settings={"checkpoint": "figb5.checkpoint"})},
         gpt2_summaries.claims),
)
