"""Meterez et al. 2024's ``MLPWithBatchNorm`` (C.0), natively stacked over R runs.

Every parameter carries a leading run dimension R, so R networks run as batched matmuls (``torch.baddbmm``)
without ``vmap``: a width-100 step of a 1000-layer network is launch-bound, and one stack of R runs costs
about as many kernel launches as one run (issue: "stack the runs that share a depth into one batched
computation"). Runs may use different activations (``activations=``): runs of equal activation form
contiguous slices, so one stack trains sin, tanh and identity of one depth together (and, with ``classes``, of
two data sets at once).

Inside, activations are feature-major, hᵀ of shape (R, d, B): then fc is ``baddbmm(b, W, xᵀ)`` and the R·d
BatchNorm channels of a layer are contiguous rows of B samples, so torch BN of all runs is ONE native
``F.batch_norm`` on the view (1, R·d, B) (statistics, running-stat update and backward in one op each,
instead of ~30 elementwise ops), and the logits (R, C, B) go to ``F.cross_entropy`` without a copy. The
per-run activations act on ``torch.split`` chunks joined by one ``torch.cat``, whose backward is one
``cat`` too (slicing would cost a zero fill and a copy per group). ``benchmarks/meterez_engine.py`` counts
the ops per step. The public interface stays samples-first: inputs (B, D) or (R, B, D), logits (R, B, C).

A launch-bound step on a GPU is cut further by :meth:`StackedBNMLP.fuse_norm_act`: each hidden layer's norm, gain
and activation (with their backward) fused into one block by ``torch.compile``, used by the training forward only
(evaluation and traces stay eager). One compiled call spans ``FUSED_LAYERS`` hidden layers, their products between
the blocks included, and one graph serves every span (weights, biases and gains are its tensor arguments): a
compiled call's own cost, about 0.1 ms on a CPU with its backward, is then paid once per span, not per layer
(benchmarks/README.md, ``cpu_limits.py``). Its numbers are the eager ones within float32 rounding
(tests/test_train_native_stack.py, tests/test_train_engine_equivalence.py; benchmarks/meterez_fusion.py counts its
kernels).

Forward (order ``norm_act``, PDF eq. 11): for ℓ < L, h = fc_ℓ(x); z = Norm_ℓ(h); x = σ(α_ℓ·z); the output is
fc_L(x) without activation. α_ℓ = gain·(ℓ+1)^(−a), ℓ 0-indexed (C.0 "Gain schedule"; ``gain`` is the
constant of Fig. E1, decision C7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..metrics import get_activation

NORMS = ("bn", "torch_bn", "none")
INITS = ("orthogonal", "xavier_normal")
BN_EPS = 1e-5  # nn.BatchNorm1d default (C.0 "Normalisation": torch BN with eps 1e-5, momentum 0.1)
BN_MOMENTUM = 0.1  # nn.BatchNorm1d default (C.0)
# hidden layers per compiled call of the fused forward: on a 2-core CPU the step plateaus from 10 (5: 6 % slower at
# depth 500, 20 and 25: the same within 1 %; each span graph takes seconds more to compile), benchmarks/README.md
FUSED_LAYERS = 10


@dataclass(frozen=True)
class BNMLPConfig:
    """Architecture of one ``MLPWithBatchNorm`` (C.0; field meanings in the m24 contract).

    - ``depth`` L: fc_0 (D_in→d), fc_1..fc_{L−1} (d→d), fc_L (d→C); L norms and L activations.
    - ``norm``: "bn" (the paper's custom BN: no ε, no affine), "torch_bn" (BatchNorm1d semantics), "none".
    - ``mean_reduction`` / ``force_factor``: custom BN only; each column is divided by (its norm over the batch)/f
      with f = sqrt(n) when ``force_factor`` is None (the code's default), f = ``force_factor`` otherwise
      (1.0 = paper eq. 4).
    - ``init``: "orthogonal" (nn.init.orthogonal_, gain 1) or "xavier_normal" (gain = torch's
      calculate_gain of the activation, 1 for identity and for sin, which torch does not know [I]).
    - ``gain_exponent`` a, ``gain`` α_0: α_ℓ = gain·(ℓ+1)^(−a) (C.0; run.py negates the CLI flag, so
      a = +0.4 here is the training setting of decision C3).
    - ``bias``: Linear biases with nn.Linear's default U(±1/sqrt(fan_in)) init (decision C4 turns it on).
    """

    in_features: int
    width: int
    out_features: int
    depth: int
    activation: str = "identity"
    norm: str = "bn"
    mean_reduction: bool = False
    force_factor: float | None = None
    init: str = "orthogonal"
    gain_exponent: float = 0.0
    gain: float = 1.0
    bias: bool = False

    def __post_init__(self) -> None:
        for name in ("in_features", "width", "out_features", "depth"):
            if getattr(self, name) < 1:
                raise ValueError(f"BNMLPConfig.{name} must be ≥ 1, got {getattr(self, name)}")
        if self.norm not in NORMS:
            raise ValueError(f"unknown norm {self.norm!r}; use one of {NORMS}")
        if self.init not in INITS:
            raise ValueError(f"unknown init {self.init!r}; use one of {INITS}")
        if self.force_factor is not None and not self.force_factor > 0:
            raise ValueError(f"force_factor must be > 0 or None (f = sqrt(n)), got {self.force_factor}")
        get_activation(self.activation)  # raises with the list of known names

    def gains(self) -> list[float]:
        """α_ℓ for ℓ = 0..L−1."""
        return [self.gain * (layer + 1) ** (-self.gain_exponent) for layer in range(self.depth)]

    def layer_shapes(self) -> list[tuple[int, int]]:
        """(out, in) of fc_0..fc_L."""
        d = self.width
        return [(d, self.in_features)] + [(d, d)] * (self.depth - 1) + [(self.out_features, d)]


def _xavier_gain(activation: str) -> float:
    try:
        return nn.init.calculate_gain(activation)  # type: ignore[arg-type]
    except ValueError:  # sin and the like: torch has no recommended gain, use 1 [I]
        return 1.0


def draw_run_weights(
    config: BNMLPConfig, generator: torch.Generator, activation: str | None = None
) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
    """One run's initial (weight, bias) per layer, float32 on the CPU, drawn from ``generator`` only.

    Layer by layer: the weight (orthogonal or Xavier normal), then the bias U(±1/sqrt(fan_in)) when
    ``config.bias`` (nn.Linear's default bias init, kept by the original's ``reset_parameters``).
    """
    activation = activation or config.activation
    layers = []
    for out_features, in_features in config.layer_shapes():
        weight = torch.empty(out_features, in_features)
        if config.init == "orthogonal":
            nn.init.orthogonal_(weight, gain=1.0, generator=generator)
        else:
            nn.init.xavier_normal_(weight, gain=_xavier_gain(activation), generator=generator)
        bias = None
        if config.bias:
            bound = 1.0 / math.sqrt(in_features)
            bias = torch.empty(out_features).uniform_(-bound, bound, generator=generator)
        layers.append((weight, bias))
    return layers


def _pad_rows(tensor: torch.Tensor, rows: int) -> torch.Tensor:
    """``tensor`` (out, ...) with zero rows appended up to ``rows`` (a stack's fc_L)."""
    if tensor.shape[0] == rows:
        return tensor
    return torch.cat([tensor, tensor.new_zeros(rows - tensor.shape[0], *tensor.shape[1:])])


def paper_batch_norm(
    h: torch.Tensor, mean_reduction: bool, force_factor: float | None, batch_dim: int = -2
) -> torch.Tensor:
    """The paper's custom BN of h over the batch dimension (C.0, no ε, no affine): −2 for samples-first
    (..., n, d), −1 for the feature-major (..., d, n) of :class:`StackedBNMLP`."""
    if mean_reduction:
        h = h - h.mean(dim=batch_dim, keepdim=True)
    factor = math.sqrt(h.shape[batch_dim]) if force_factor is None else force_factor
    return h * (factor / torch.linalg.vector_norm(h, dim=batch_dim, keepdim=True))


class StackedLinear(nn.Module):
    """R independent Linear layers on feature-major activations: weight (R, out, in), bias (R, out) or None;
    xᵀ (R, in, B) ↦ W xᵀ + b (R, out, B)."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None):
        super().__init__()
        self.weight = nn.Parameter(weight)
        self.bias = nn.Parameter(bias) if bias is not None else None

    def forward(self, xt: torch.Tensor) -> torch.Tensor:
        if self.bias is None:
            return torch.bmm(self.weight, xt)
        return torch.baddbmm(self.bias.unsqueeze(2), self.weight, xt)


class StackedBatchNorm(nn.Module):
    """R independent BatchNorm1d(d) over feature-major hᵀ (R, d, B), as ONE ``F.batch_norm`` whose R·d
    channels are the (run, feature) pairs: batch statistics over B (biased variance to normalise, unbiased
    for the running variance) and the running-stat update in train mode, running statistics in eval —
    torch's own kernel, so the numbers are nn.BatchNorm1d's."""

    def __init__(self, n_runs: int, width: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n_runs, width))
        self.bias = nn.Parameter(torch.zeros(n_runs, width))
        self.register_buffer("running_mean", torch.zeros(n_runs, width))
        self.register_buffer("running_var", torch.ones(n_runs, width))

    def forward(self, ht: torch.Tensor) -> torch.Tensor:
        return stacked_batch_norm(ht, self.weight, self.bias, self.running_mean, self.running_var, self.training)


def stacked_batch_norm(ht: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, running_mean: torch.Tensor,
                       running_var: torch.Tensor, training: bool) -> torch.Tensor:
    """:class:`StackedBatchNorm` on its tensors (R, d each): one ``F.batch_norm`` over the R·d channels of hᵀ."""
    runs, width, batch = ht.shape
    out = F.batch_norm(ht.reshape(1, runs * width, batch), running_mean.view(-1), running_var.view(-1),
                       weight.view(-1), bias.view(-1), training=training, momentum=BN_MOMENTUM, eps=BN_EPS)
    return out.view(runs, width, batch)


def activate_groups(z: torch.Tensor, sigmas: Sequence, sizes: Sequence[int]) -> torch.Tensor:
    """Each contiguous group of runs of z (R, ...) through its activation: ``torch.split`` views, whose backward
    is one ``cat``."""
    if len(sigmas) == 1:
        return sigmas[0](z)
    return torch.cat([sigma(chunk) for sigma, chunk in zip(sigmas, torch.split(z, list(sizes), dim=0))], dim=0)


class PaperBatchNorm(nn.Module):
    """The custom BN as a module (no parameters) over ``batch_dim``: −2 for (B, d) (the single-run
    reference), −1 for the stack's feature-major (R, d, B)."""

    def __init__(self, mean_reduction: bool = False, force_factor: float | None = None, batch_dim: int = -2):
        super().__init__()
        self.mean_reduction, self.force_factor, self.batch_dim = mean_reduction, force_factor, batch_dim

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return paper_batch_norm(h, self.mean_reduction, self.force_factor, self.batch_dim)


def _norm_module(config: BNMLPConfig, n_runs: int | None) -> nn.Module:
    if config.norm == "bn":  # the stack is feature-major (batch last), the reference samples-first
        return PaperBatchNorm(config.mean_reduction, config.force_factor, -1 if n_runs is not None else -2)
    if config.norm == "torch_bn":
        return StackedBatchNorm(n_runs, config.width) if n_runs is not None else nn.BatchNorm1d(config.width)
    return nn.Identity()


def activation_groups(activations: Sequence[str]) -> list[tuple[str, slice]]:
    """Contiguous (activation, run slice) groups; refuses interleaved activations (say a, b, a)."""
    groups: list[tuple[str, slice]] = []
    start = 0
    for index in range(1, len(activations) + 1):
        if index == len(activations) or activations[index] != activations[start]:
            groups.append((activations[start], slice(start, index)))
            start = index
    names = [name for name, _ in groups]
    if len(set(names)) != len(names):
        raise ValueError(
            f"per-run activations must be grouped into contiguous runs (got {list(activations)}); "
            "order the runs by activation, e.g. sin, sin, tanh, tanh"
        )
    return groups


class StackedBNMLP(nn.Module):
    """R ``MLPWithBatchNorm`` networks in one module; run r is initialised from ``generators[r]`` alone.

    ``activations`` (optional, one name per run, grouped contiguously) overrides ``config.activation`` per
    run. ``classes`` (optional, one count ≤ ``config.out_features`` per run) gives runs of fewer classes, so
    data sets of different class counts (CIFAR-10 with CIFAR-100) share a stack: run r's fc_L is drawn with
    ``classes[r]`` rows — exactly the network trained alone — and zero-padded to ``config.out_features``; its
    padded logits are −inf (buffer ``logit_mask``), so they take no probability, get no gradient and never win
    an argmax. ``inputs`` (optional, one count ≤ ``config.in_features`` per run) likewise gives runs of fewer
    input features, so MNIST (784) shares a stack with CIFAR-10 (3,072): run r's fc_0 is drawn with ``inputs[r]``
    columns and zero-padded to ``config.in_features``; its inputs are zero-padded too (the caller's), so the
    padding columns meet zeros, get zero gradients and stay zero. Parameters ``fc.{ℓ}.weight`` (R, out, in),
    ``fc.{ℓ}.bias`` (R, out); with torch_bn also ``norm.{ℓ}.weight/bias`` (R, d) and buffers
    ``norm.{ℓ}.running_mean/var`` (R, d). Train mode by default (C.0: BN uses batch statistics at init).
    """

    def __init__(
        self,
        config: BNMLPConfig,
        generators: Sequence[torch.Generator],
        activations: Sequence[str] | None = None,
        classes: Sequence[int] | None = None,
        inputs: Sequence[int] | None = None,
    ):
        super().__init__()
        if not generators:
            raise ValueError("StackedBNMLP needs one generator per run (at least one)")
        self.config = config
        self.n_runs = len(generators)
        if activations is None:
            activations = [config.activation] * self.n_runs
        if len(activations) != self.n_runs:
            raise ValueError(f"got {len(activations)} activations for {self.n_runs} runs; give one per run")
        for name in activations:
            get_activation(name)
        self.activations = list(activations)
        self.classes = [config.out_features] * self.n_runs if classes is None else [int(c) for c in classes]
        if len(self.classes) != self.n_runs or not all(1 <= c <= config.out_features for c in self.classes):
            raise ValueError(f"classes must give one count in 1..{config.out_features} (config.out_features) per "
                             f"run; got {list(classes or [])} for {self.n_runs} runs")
        self.inputs = [config.in_features] * self.n_runs if inputs is None else [int(n) for n in inputs]
        if len(self.inputs) != self.n_runs or not all(1 <= n <= config.in_features for n in self.inputs):
            raise ValueError(f"inputs must give one count in 1..{config.in_features} (config.in_features) per "
                             f"run; got {list(inputs or [])} for {self.n_runs} runs")
        self.groups = [(get_activation(name), index) for name, index in activation_groups(self.activations)]
        self.group_sizes = [index.stop - index.start for _, index in self.groups]
        self.gains = config.gains()
        runs = [draw_run_weights(replace(config, in_features=n, out_features=c), g, a)
                for g, a, c, n in zip(generators, self.activations, self.classes, self.inputs)]
        width_out = config.out_features
        for run in runs:  # fc_L of a run with fewer classes: zero rows up to config.out_features
            weight, bias = run[-1]
            run[-1] = (_pad_rows(weight, width_out), None if bias is None else _pad_rows(bias, width_out))
            weight, bias = run[0]  # fc_0 of a run with fewer inputs: zero columns up to config.in_features
            run[0] = (_pad_rows(weight.T, config.in_features).T, bias)
        self.fc = nn.ModuleList(
            StackedLinear(
                torch.stack([run[layer][0] for run in runs]),
                torch.stack([run[layer][1] for run in runs]) if config.bias else None,
            )
            for layer in range(config.depth + 1)
        )
        self.norm = nn.ModuleList(_norm_module(config, self.n_runs) for _ in range(config.depth))
        mask = None
        if any(c < config.out_features for c in self.classes):
            mask = torch.zeros(self.n_runs, config.out_features, 1)
            for run, count in enumerate(self.classes):
                mask[run, count:] = -math.inf
        self.register_buffer("logit_mask", mask)
        # α_ℓ as a tensor for the fused block; not persistent, so checkpoints do not change with it
        self.register_buffer("gain_values", torch.tensor(self.gains, dtype=torch.float32), persistent=False)
        self.fused_span = None  # fuse_norm_act(): the compiled span of hidden layers the training forward uses
        self.span_layers = FUSED_LAYERS

    def norm_act_block(self):
        """The eager block of one hidden layer after its weight product W xᵀ: ``block(h, bias, gain,
        *norm_tensors)``, the fc's bias (R, d, or None), the norm in train mode (torch BN with its running-stat
        update, or the paper's custom BN), the gain α_ℓ (a 0-dim tensor) and each activation group, as
        :meth:`forward` computes them; ``norm_tensors`` are :meth:`norm_tensors`. The bias is in the block so that
        its gradient, a sum over the batch, is computed by the block's backward and not by a kernel of its own."""
        config, sigmas, sizes = self.config, [sigma for sigma, _ in self.groups], self.group_sizes

        def block(h: torch.Tensor, bias: torch.Tensor | None, gain: torch.Tensor, *norm: torch.Tensor) -> torch.Tensor:
            if bias is not None:
                h = h + bias.unsqueeze(2)
            if config.norm == "torch_bn":
                h = stacked_batch_norm(h, *norm, training=True)
            elif config.norm == "bn":
                h = paper_batch_norm(h, config.mean_reduction, config.force_factor, batch_dim=-1)
            return activate_groups(h * gain, sigmas, sizes)

        return block

    def norm_tensors(self, layer: int) -> tuple[torch.Tensor, ...]:
        """The tensors of layer ``layer``'s norm that the block takes: torch BN's weight, bias and running
        statistics; none for the paper's BN (no parameters) and for no norm."""
        norm = self.norm[layer]
        if self.config.norm == "torch_bn":
            return norm.weight, norm.bias, norm.running_mean, norm.running_var
        return ()

    @staticmethod
    def layer_span(block):
        """A run of hidden layers ℓ..ℓ+k−1 through ``block`` (:meth:`norm_act_block`'s signature), from the
        first one's product W_ℓ xᵀ on: ``span(h, weights, biases, gains, norms)``, ``weights`` those of layers
        ℓ+1..ℓ+k−1 (their products are inside the span), ``biases``, ``gains`` and ``norms``
        (:meth:`norm_tensors`) one per layer. The first product stays outside, so that every span, the first one
        included, takes the same shapes."""
        def span(h: torch.Tensor, weights: list, biases: list, gains: list, norms: list) -> torch.Tensor:
            xt = block(h, biases[0], gains[0], *norms[0])
            for weight, bias, gain, norm in zip(weights, biases[1:], gains[1:], norms[1:]):
                xt = block(torch.bmm(weight, xt), bias, gain, *norm)
            return xt

        return span

    def fuse_norm_act(self, layers: int = FUSED_LAYERS) -> "StackedBNMLP":
        """Compile :meth:`layer_span` of :meth:`norm_act_block` over ``layers`` hidden layers (``torch.compile``,
        static shapes: one graph serves every span, and a second one a shorter last span) for the training
        forward; compiled on first use. Returns the model."""
        if layers < 1:
            raise ValueError(f"a fused span needs at least one layer, got {layers}")
        self.fused_span = torch.compile(self.layer_span(self.norm_act_block()), dynamic=False)
        self.span_layers = layers
        return self

    def run_weight(self, layer: int, run: int) -> torch.Tensor:
        """Run ``run``'s fc_``layer`` weight without padding rows or columns (out, in)."""
        weight = self.fc[layer].weight[run]
        weight = weight[:, : self.inputs[run]] if layer == 0 else weight
        return weight[: self.classes[run]] if layer == self.config.depth else weight

    def _activate(self, z: torch.Tensor, layer: int) -> torch.Tensor:
        z = z * self.gains[layer] if self.gains[layer] != 1.0 else z
        return activate_groups(z, [sigma for sigma, _ in self.groups], self.group_sizes)

    def forward(self, x: torch.Tensor, trace: bool = False):
        """Logits (R, B, C) from x (R, B, D_in) per run or (B, D_in) shared; with ``trace=True`` also
        ``{"fc": [h_0..h_{L−1}], "norm": [...], "act": [...]}``, lists of (R, B, d) tensors (views of the
        feature-major activations, module docstring)."""
        if x.dim() not in (2, 3) or x.shape[-1] != self.config.in_features:
            raise ValueError(
                f"input must be (B, {self.config.in_features}) or (R, B, {self.config.in_features}), "
                f"got {tuple(x.shape)}; flatten images first"
            )
        if x.dim() == 3 and x.shape[0] != self.n_runs:
            raise ValueError(f"per-run input has {x.shape[0]} runs, the stack has {self.n_runs}")
        xt = x.mT if x.dim() == 3 else x.T.expand(self.n_runs, *x.T.shape)  # (R, D_in, B), a view
        records: dict[str, list[torch.Tensor]] = {"fc": [], "norm": [], "act": []}
        if self.fused_span is not None and self.training and not trace:
            for start in range(0, self.config.depth, self.span_layers):
                layers = range(start, min(start + self.span_layers, self.config.depth))
                xt = self.fused_span(torch.bmm(self.fc[start].weight, xt),
                                     [self.fc[layer].weight for layer in layers[1:]],
                                     [self.fc[layer].bias for layer in layers],
                                     [self.gain_values[layer] for layer in layers],
                                     [self.norm_tensors(layer) for layer in layers])
            return self._logits(xt)
        for layer in range(self.config.depth):
            h = self.fc[layer](xt)
            z = self.norm[layer](h)
            xt = self._activate(z, layer)
            if trace:
                records["fc"].append(h.mT)
                records["norm"].append(z.mT)
                records["act"].append(xt.mT)
        logits = self._logits(xt)
        return (logits, records) if trace else logits

    def _logits(self, xt: torch.Tensor) -> torch.Tensor:
        """(R, B, C) from the last hidden activations (R, d, B): fc_L, the padded classes masked."""
        logits = self.fc[-1](xt)  # (R, C, B)
        if self.logit_mask is not None:
            logits = logits + self.logit_mask
        return logits.mT

    def weights(self) -> list[torch.Tensor]:
        """fc_0..fc_L weights, each (R, out, in)."""
        return [layer.weight for layer in self.fc]


class _Gain(nn.Module):
    def __init__(self, gain: float):
        super().__init__()
        self.gain = gain

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gain


class _Act(nn.Module):
    def __init__(self, name: str):
        super().__init__()
        self.sigma = get_activation(name)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sigma(x)


def single_run_reference(
    config: BNMLPConfig, generator: torch.Generator, activation: str | None = None
) -> nn.Sequential:
    """One run as a plain eager ``nn.Sequential`` (nn.Linear, nn.BatchNorm1d / PaperBatchNorm, gain,
    activation) with the weights :class:`StackedBNMLP` gives the run seeded by ``generator``: the naive
    baseline of the benchmark and the tests' reference."""
    activation = activation or config.activation
    layers: list[nn.Module] = []
    drawn = draw_run_weights(config, generator, activation)
    gains = config.gains()
    for layer, (weight, bias) in enumerate(drawn):
        linear = nn.Linear(weight.shape[1], weight.shape[0], bias=config.bias)
        with torch.no_grad():
            linear.weight.copy_(weight)
            if bias is not None:
                linear.bias.copy_(bias)
        layers.append(linear)
        if layer < config.depth:
            layers += [_norm_module(config, None), _Gain(gains[layer]), _Act(activation)]
    return nn.Sequential(*layers)
