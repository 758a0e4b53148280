"""The word-level Transformer language model of Lu et al. (2024), Table 5, first row (lu2024-table5-transformer, decision A10).

The paper only says "composed of six Transformers and trained on the WikiText-2 dataset" and that "the final
fully connected layer in the last segment did not integrate the combination of normalization and residual
connections". The proposal of lu2024-table5-transformer (decision A10): PyTorch's ``word_language_model``
``TransformerModel`` (embedding × √d_model + sinusoidal positions, post-norm ``nn.TransformerEncoderLayer``
blocks with ReLU, a causal mask, a linear decoder) with 6 layers, d_model 200, 2 heads, FFN 200, dropout 0.2, where in the LAST block the FFN
output bypasses the residual connection and the LayerNorm (``last_ffn_bypass=True``; False gives the plain
example model, for the ablation).

Parameter names follow the example and ``nn.TransformerEncoderLayer`` (``encoder.weight``,
``transformer_encoder.layers.{i}.self_attn.in_proj_weight`` (3E×E: Q, K, V row blocks),
``...self_attn.out_proj.weight``, ``...linear1.weight``, ``...linear2.weight``, ``...norm1``/``norm2``,
``decoder.weight``), so the Table-5 matrices are addressed as in the paper's column names. The layer is
written out (not ``nn.MultiheadAttention``) so that it runs under ``torch.func.vmap`` for stacked runs
(``isonorm.train.StackedModels``) in training and evaluation mode alike; it computes what the torch layer
computes (tests/test_lu2024_wikitext.py compares them).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

LAYERNORM_EPS = 1e-5  # nn.TransformerEncoderLayer's default layer_norm_eps
EMBEDDING_INIT_RANGE = 0.1  # word_language_model TransformerModel.init_weights: uniform(-0.1, 0.1)


def sinusoidal_positions(length: int, d_model: int, device: torch.device | None = None) -> torch.Tensor:
    """(length, d_model) sin/cos position codes of the example's ``PositionalEncoding`` (Vaswani et al. 2017)."""
    position = torch.arange(length, dtype=torch.float32, device=device).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32, device=device) * (-math.log(10000.0) / d_model))
    codes = torch.zeros(length, d_model, device=device)
    codes[:, 0::2] = torch.sin(position * div_term)
    codes[:, 1::2] = torch.cos(position * div_term)[:, : d_model // 2]
    return codes


def causal_mask(length: int, device: torch.device | None = None) -> torch.Tensor:
    """(length, length) bool, True where attention is forbidden: position t sees positions ≤ t only
    (the example's ``_generate_square_subsequent_mask``)."""
    return torch.ones(length, length, dtype=torch.bool, device=device).triu(1)


class SelfAttention(nn.Module):
    """Multi-head self-attention with ``nn.MultiheadAttention``'s parameters and initialisation."""

    def __init__(self, d_model: int, n_heads: int, dropout: float, generator: torch.Generator | None = None):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.n_heads = n_heads
        self.dropout = dropout
        self.in_proj_weight = nn.Parameter(torch.empty(3 * d_model, d_model))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model))
        self.out_proj = nn.Linear(d_model, d_model)
        # nn.MultiheadAttention._reset_parameters: xavier_uniform_ in_proj, zero biases; out_proj keeps
        # nn.Linear's kaiming-uniform weight.
        nn.init.xavier_uniform_(self.in_proj_weight, generator=generator)
        _linear_init(self.out_proj, generator)
        nn.init.zeros_(self.out_proj.bias)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        batch, length, d_model = x.shape
        head = d_model // self.n_heads
        q, k, v = F.linear(x, self.in_proj_weight, self.in_proj_bias).chunk(3, dim=-1)
        q, k, v = (t.reshape(batch, length, self.n_heads, head).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(head)
        weights = scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
        weights = F.dropout(weights, self.dropout, self.training)  # MultiheadAttention's attention dropout
        out = (weights @ v).transpose(1, 2).reshape(batch, length, d_model)
        return self.out_proj(out)


def _linear_init(layer: nn.Linear, generator: torch.Generator | None) -> None:
    """nn.Linear.reset_parameters, drawn from ``generator``: kaiming_uniform(a=√5) weight, U(±1/√fan_in) bias."""
    nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
    if layer.bias is not None:
        bound = 1 / math.sqrt(layer.weight.shape[1])
        nn.init.uniform_(layer.bias, -bound, bound, generator=generator)


class EncoderLayer(nn.Module):
    """Post-norm ``nn.TransformerEncoderLayer`` (ReLU): x = LN1(x + SA(x)); x = LN2(x + FFN(x)).

    ``ffn_bypass=True`` (the paper's last segment): x = LN1(x + SA(x)); out = FFN(x) — no residual, no LN2.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float, ffn_bypass: bool = False,
                 generator: torch.Generator | None = None):
        super().__init__()
        self.self_attn = SelfAttention(d_model, n_heads, dropout, generator)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        _linear_init(self.linear1, generator)
        _linear_init(self.linear2, generator)
        self.norm1 = nn.LayerNorm(d_model, eps=LAYERNORM_EPS)
        self.ffn_bypass = ffn_bypass
        if not ffn_bypass:  # a bypassed FFN has no second LayerNorm (no unused parameters)
            self.norm2 = nn.LayerNorm(d_model, eps=LAYERNORM_EPS)
        self.dropout_p = dropout  # the layer's dropout, dropout1 and dropout2 all use it (torch default)

    def _drop(self, x: torch.Tensor) -> torch.Tensor:
        return F.dropout(x, self.dropout_p, self.training)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.norm1(x + self._drop(self.self_attn(x, mask)))
        ffn = self._drop(self.linear2(self._drop(F.relu(self.linear1(x)))))
        return ffn if self.ffn_bypass else self.norm2(x + ffn)


class TransformerEncoder(nn.Module):
    """A stack of :class:`EncoderLayer` under ``layers`` (``nn.TransformerEncoder``'s naming)."""

    def __init__(self, layers: list[EncoderLayer]):
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, mask)
        return x


class WordTransformerLM(nn.Module):
    """Causal word-level Transformer LM: (B, T) token ids -> (B, T, n_tokens) next-word logits.

    - ``n_tokens``: vocabulary size (from the training split).
    - ``d_model=200``, ``n_heads=2``, ``d_ff=200``, ``n_layers=6``, ``dropout=0.2``: lu2024-table5-transformer proposal (the
      example's Transformer settings, with 6 layers for "six Transformers").
    - ``last_ffn_bypass=True``: lu2024-table5-transformer / decision A10, the last block's FFN skips residual and LayerNorm.
    - ``generator``: draws every initial value, so a run is reproducible from its seed; None: torch's RNG.
    """

    def __init__(self, n_tokens: int, d_model: int = 200, n_heads: int = 2, d_ff: int = 200, n_layers: int = 6,
                 dropout: float = 0.2, last_ffn_bypass: bool = True, generator: torch.Generator | None = None):
        super().__init__()
        for key, value in {"n_tokens": n_tokens, "d_model": d_model, "n_heads": n_heads, "d_ff": d_ff,
                           "n_layers": n_layers}.items():
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{key} must be a positive integer, got {value!r}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must lie in [0, 1), got {dropout}")
        self.d_model = d_model
        self.dropout_p = dropout
        self.encoder = nn.Embedding(n_tokens, d_model)
        self.transformer_encoder = TransformerEncoder([
            EncoderLayer(d_model, n_heads, d_ff, dropout, last_ffn_bypass and i == n_layers - 1, generator)
            for i in range(n_layers)
        ])
        self.decoder = nn.Linear(d_model, n_tokens)
        # TransformerModel.init_weights: embedding and decoder weights U(-0.1, 0.1), decoder bias 0.
        nn.init.uniform_(self.encoder.weight, -EMBEDDING_INIT_RANGE, EMBEDDING_INIT_RANGE, generator=generator)
        nn.init.uniform_(self.decoder.weight, -EMBEDDING_INIT_RANGE, EMBEDDING_INIT_RANGE, generator=generator)
        nn.init.zeros_(self.decoder.bias)

    @property
    def layers(self) -> nn.ModuleList:
        return self.transformer_encoder.layers

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.ndim != 2:
            raise ValueError(f"tokens must be (batch, length) word ids, got shape {tuple(tokens.shape)}")
        length = tokens.shape[1]
        x = self.encoder(tokens) * math.sqrt(self.d_model)
        x = F.dropout(x + sinusoidal_positions(length, self.d_model, x.device), self.dropout_p, self.training)
        x = self.transformer_encoder(x, causal_mask(length, x.device))
        return self.decoder(x)


def attention_matrices(in_proj_weight: torch.Tensor) -> dict[str, torch.Tensor]:
    """Query, Keys, Values: the three E×E row blocks of a packed (…, 3E, E) ``in_proj_weight`` (lu2024-table5-transformer; the
    paper's Qwen script splits ``c_attn`` the same way)."""
    if in_proj_weight.shape[-2] % 3:
        raise ValueError(f"in_proj_weight must have 3E rows, got shape {tuple(in_proj_weight.shape)}")
    query, keys, values = in_proj_weight.chunk(3, dim=-2)
    return {"Query": query, "Keys": keys, "Values": values}


# Table 5's column names -> parameter of one encoder layer (lu2024-table5-transformer: nn.TransformerEncoderLayer names).
TABLE5_MATRICES: dict[str, str] = {
    "Query": "self_attn.in_proj_weight",
    "Keys": "self_attn.in_proj_weight",
    "Values": "self_attn.in_proj_weight",
    "Atten_Output": "self_attn.out_proj.weight",
    "Linear_1": "linear1.weight",
    "Linear_2": "linear2.weight",
}


def layer_matrices(params: dict[str, torch.Tensor], layer: int, prefix: str = "transformer_encoder.layers") -> dict[str, torch.Tensor]:
    """The six Table-5 matrices of encoder layer ``layer`` from a (possibly stacked, (R, …)) parameter dict."""
    base = f"{prefix}.{layer}."
    try:
        out = attention_matrices(params[base + TABLE5_MATRICES["Query"]])
        out.update({name: params[base + TABLE5_MATRICES[name]] for name in ("Atten_Output", "Linear_1", "Linear_2")})
    except KeyError as err:
        raise KeyError(f"no parameter {err} in the model: is layer {layer} within its depth?") from None
    return out
