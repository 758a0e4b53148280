"""Data-dependent SVD initialisations of daneshmand2021 ("iterative orthogonalisation").

Both follow the authors' code, not the paper's Eq. (6) (daneshmand2021-fig5 "Iterative init as coded",
decision B6; daneshmand2021-appfig7a/b "SVD init", decision B10). Each weight is computed from the representation that reaches
its layer on an init batch, so layers are set in order while the batch is propagated through the network.
The SVDs and the propagation run in float64 (the formulas invert singular values); the weights are then cast
to the parameters' dtype and device. The caller draws the init batch (daneshmand2021-fig5: 3·width CIFAR-10 images for the
MLP, 256 unnormalised images for the ConvNet) and may choose which layers to set (``select``, default all): the
others keep their weights, and the batch propagates through them as they are.
"""

from __future__ import annotations

from typing import Callable, Iterable, TypeVar

import torch
import torch.nn.functional as F
from torch import nn

Layer = TypeVar("Layer", bound=nn.Module)
# select(layers) -> the layers to re-initialise, a subsequence in network order. It is drawn from lazily, the next
# layer only once the previous one is set, so a selector may time the layers it yields and count the others at
# their rate (how the cost of a paper run is projected: docs/cost.md).
Select = Callable[[list[Layer]], Iterable[Layer]]


def _leading_singular_values_positive(s: torch.Tensor, count: int, shape: torch.Size, where: str) -> None:
    """Refuse a representation whose ``count`` leading singular values include a numerical zero: the
    formulas divide by them."""
    tolerance = s[0] * max(shape) * torch.finfo(s.dtype).eps
    if s[count - 1] <= tolerance:
        raise ValueError(
            f"{where}: the init-batch representation has rank below {count} (singular value "
            f"{s[count - 1].item():.3g}), so the SVD init is undefined; use a larger or more varied init batch"
        )


def _parameter_free(module: nn.Module, allowed: str) -> None:
    if any(True for _ in module.parameters()):
        raise TypeError(
            f"{type(module).__name__} has parameters; only {allowed} may carry weights in a network given to "
            "this init (the init batch is propagated through every module in order)"
        )


def _all_selected_set(left: nn.Module | None, layers: str) -> None:
    """Refuse a selection that the pass through the network did not reach: a layer out of network order, or
    not one of the given ones, would otherwise leave every layer after it unset without a word."""
    if left is not None:
        raise ValueError(f"select must yield some of the given {layers}, in network order; it yielded "
                         f"{type(left).__name__} {left}, which the pass did not reach in order")


def _iterative_weight(h: torch.Tensor) -> torch.Tensor:
    """W = U[:d,:d] · diag(1/S) · Vᵀ for H = U S Vᵀ (reduced SVD, H of shape n×d), scaled so ‖H Wᵀ‖_F = 1.

    torch.linalg.svd returns Vᴴ, which is the Vᵀ of the formula (real H). Consequence used by the tests:
    H Wᵀ = U U[:d,:d]ᵀ / ‖U[:d,:d]‖_F — its first d rows are symmetric positive semi-definite, and for n = d
    it is I_d/√d (columns exactly orthogonal); for n > d the column Gram is U[:d,:d] U[:d,:d]ᵀ / ‖U[:d,:d]‖_F²,
    close to, but not exactly, I_d/d.
    """
    u, s, vh = torch.linalg.svd(h, full_matrices=False)
    d = h.shape[1]
    _leading_singular_values_positive(s, d, h.shape, "iterative_orthogonal_init_")
    w = (u[:d, :d] / s) @ vh
    return w / torch.linalg.matrix_norm(h @ w.T)


def iterative_orthogonal_init_(mlp: nn.Sequential, x_init: torch.Tensor, select: Select = iter) -> nn.Sequential:
    """Re-initialise the hidden d×d Linear layers of ``mlp`` in place (daneshmand2021-fig5, as coded).

    ``mlp`` is a flat nn.Sequential of bias-free nn.Linear layers and parameter-free activations (as built by
    ``isonorm.models.mlp.mlp(..., bias=False)``). The first Linear (input → width) and the last (width →
    classes) keep their Xavier weights; each Linear in between gets :func:`_iterative_weight` of the
    post-activation representation H (n×d) reaching it, after which H ← activation(H Wᵀ) is propagated.
    ``x_init`` is the (n, in_features) init batch with n ≥ width (daneshmand2021-fig5 uses n = 3·width). ``select`` picks
    the hidden layers to set (:data:`Select`; default all), the others keep their weights. Returns ``mlp``.
    """
    if not isinstance(mlp, nn.Sequential):
        raise TypeError(f"mlp must be an nn.Sequential of Linear and activation modules, got {type(mlp).__name__}")
    linears = [module for module in mlp if isinstance(module, nn.Linear)]
    if not linears:
        raise ValueError("mlp contains no nn.Linear layer to initialise")
    hidden = linears[1:-1]
    for index, linear in enumerate(hidden, start=1):
        if linear.in_features != linear.out_features:
            raise ValueError(
                f"hidden Linear {index} is {linear.in_features}→{linear.out_features}; the iterative init needs "
                "square hidden layers (constant width)"
            )
        if linear.bias is not None:
            raise ValueError(
                f"hidden Linear {index} has a bias; the iterative init is defined for bias-free layers "
                "(daneshmand2021-fig4a/daneshmand2021-fig5) — build the MLP with bias=False"
            )
    if x_init.ndim != 2 or x_init.shape[1] != linears[0].in_features:
        raise ValueError(
            f"x_init must have shape (n, {linears[0].in_features}) (flattened inputs), got {tuple(x_init.shape)}"
        )
    if hidden and x_init.shape[0] < hidden[0].in_features:
        raise ValueError(
            f"x_init has n={x_init.shape[0]} samples but the width is d={hidden[0].in_features}; the init "
            "needs n >= d (daneshmand2021-fig5 draws n = 3·width)"
        )

    for module in mlp:
        if not isinstance(module, nn.Linear):
            _parameter_free(module, "nn.Linear layers")

    h = x_init.to(device=linears[0].weight.device, dtype=torch.float64)
    _set_while_propagating(mlp, nn.Linear, select(hidden), h, lambda h, _: _iterative_weight(h), F.linear,
                           "hidden Linear layers")
    return mlp


def _set_while_propagating(modules: nn.Sequential, kind: type, chosen: Iterable[nn.Module], h: torch.Tensor,
                           weight_of: Callable[[torch.Tensor, nn.Module], torch.Tensor],
                           apply: Callable[..., torch.Tensor], what: str) -> None:
    """Propagate ``h`` through ``modules`` in float64; each layer of ``kind`` that ``chosen`` yields next gets
    ``weight_of(h, layer)`` from the representation reaching it before ``h`` passes it (``apply(h, weight, bias,
    *layer geometry)``). ``chosen`` is drawn from lazily, one layer at a time (:data:`Select`)."""
    chosen = iter(chosen)
    next_layer = next(chosen, None)
    with torch.no_grad():
        for module in modules:
            if not isinstance(module, kind):
                h = module(h)
                continue
            if module is next_layer:
                weight = weight_of(h, module)
                module.weight.copy_(weight)
                next_layer = next(chosen, None)
            else:
                weight = module.weight.to(torch.float64)
            bias = None if module.bias is None else module.bias.to(torch.float64)
            geometry = (module.stride, module.padding, module.dilation) if isinstance(module, nn.Conv2d) else ()
            h = apply(h, weight, bias, *geometry)
    _all_selected_set(next_layer, what)


def _conv_svd_weight(x: torch.Tensor, conv: nn.Conv2d) -> torch.Tensor:
    """W = U[:C,:C] · diag(S[:C]^{-1/2}) · Vᵀ[:C,:] for the patch matrix P = U S Vᵀ of the conv's input,
    reshaped to (C, C, kh, kw) and scaled so the bias-free conv output on ``x`` has unit Frobenius norm.

    P is (N·L) × (C·kh·kw): ``F.unfold`` with the conv's own zero padding (1 in daneshmand2021-appfig7a/b) and geometry, rows
    ordered sample-major, columns in the order of ``weight.reshape(C, -1)``, so conv(x) = P Wᵀ exactly.
    Note the exponent −1/2 here vs −1 in the MLP init (daneshmand2021-appfig7a/b).
    """
    channels = conv.out_channels
    patches = F.unfold(x, conv.kernel_size, dilation=conv.dilation, padding=conv.padding, stride=conv.stride)
    p = patches.transpose(1, 2).reshape(-1, patches.shape[1])
    if p.shape[0] < channels:
        raise ValueError(
            f"conv_svd_init_: {p.shape[0]} patches (init batch × positions) for a conv with {channels} "
            "channels; the init needs at least as many patches as channels — use a larger init batch"
        )
    u, s, vh = torch.linalg.svd(p, full_matrices=False)
    _leading_singular_values_positive(s, channels, p.shape, f"conv_svd_init_ ({channels}→{channels} conv)")
    w = (u[:channels, :channels] * s[:channels].rsqrt()) @ vh[:channels]
    w = w / torch.linalg.matrix_norm(p @ w.T)
    return w.reshape(conv.weight.shape)


def conv_svd_init_(net: nn.Module, x_init: torch.Tensor, select: Select = iter) -> nn.Module:
    """Re-initialise, in place, every Conv2d with in_channels == out_channels of a ConvNet
    (daneshmand2021-appfig7a/b, ``novel_initialization`` as coded).

    ``net`` is an nn.Sequential, or a model with a ``features`` nn.Sequential (e.g. ``AlexNetDeep``), whose
    modules are applied in order; only Conv2d modules may carry parameters there. The other convs keep their
    weights; biases are left as they are (zero after daneshmand2021-appfig7a/b's Xavier init), so each re-initialised conv's
    output on the propagated init batch has unit Frobenius norm. ``x_init`` is the (N, C, H, W) init batch
    (daneshmand2021-appfig7a/b: 256 training images, ToTensor only, no normalisation). ``select`` picks the square convs to set
    (:data:`Select`; default all), the others keep their weights. Returns ``net``.
    """
    features = net if isinstance(net, nn.Sequential) else getattr(net, "features", None)
    if not isinstance(features, nn.Sequential):
        raise TypeError(
            f"net must be an nn.Sequential or have a `features` nn.Sequential, got {type(net).__name__}"
        )
    convs = [module for module in features if isinstance(module, nn.Conv2d)]
    if not convs:
        raise ValueError("net has no nn.Conv2d in its feature sequence to initialise")
    for conv in convs:
        if conv.groups != 1 or conv.padding_mode != "zeros" or isinstance(conv.padding, str):
            raise ValueError(
                "conv_svd_init_ needs ungrouped convs with explicit zero padding (daneshmand2021-appfig7a/b zero-pads by 1); "
                f"got groups={conv.groups}, padding={conv.padding!r}, padding_mode={conv.padding_mode!r}"
            )
    if x_init.ndim != 4 or x_init.shape[1] != convs[0].in_channels:
        raise ValueError(
            f"x_init must be images of shape (N, {convs[0].in_channels}, H, W), got {tuple(x_init.shape)}"
        )

    for module in features:
        if not isinstance(module, nn.Conv2d):
            _parameter_free(module, "nn.Conv2d layers")

    x = x_init.to(device=convs[0].weight.device, dtype=torch.float64)
    square = [conv for conv in convs if conv.in_channels == conv.out_channels]
    _set_while_propagating(features, nn.Conv2d, select(square), x, _conv_svd_weight, F.conv2d, "square convs")
    return net
