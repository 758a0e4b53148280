"""Model (F) of Lu et al. 2024: the MNIST FNN of MLP.py (A.1.4 (F); decisions A2, A4, A5, A9).

``linear`` in→width, activation; then ``blocks`` hidden blocks ``linearH.i`` width→width; ``out`` width→classes.
A block, with x_in its input and h = act(linearH.i(x_in)), returns per variant (lu2024-apptable4, decision A9):

- ``original``  h                      (no normalisation, no residual; as in ``original_adaHB.py``)
- ``norm``      BN(h)                  (normalisation only)
- ``res``       h + x_in               (residual only)
- ``norm_res``  BN(h + x_in)           (post-norm after the residual sum, paper Eq. 2, MLP.py as shipped)

``shared_norm=True`` (decision A5, MLP.py as shipped) uses ONE ``BatchNorm1d`` module ``norm`` for all blocks
(shared affine parameters and running statistics); ``False`` gives one ``norms.i`` per block. There is no BN
after the first layer (A.1.4 (F)). Parameters start at PyTorch's default draw; :func:`constant_init`
sets a named layer to a constant afterwards (MLP.py's ``init_weights`` on ``linearH[1]``).
"""

from __future__ import annotations

import torch
from torch import nn

from .mlp import ACTIVATIONS, check_model

VARIANTS = ("original", "norm", "res", "norm_res")


class LuFNN(nn.Module):
    """The FNN of MLP.py; defaults are its settings (A.1.4 (F): 784 → 500, 5 blocks of 500, 10 classes)."""

    def __init__(
        self,
        variant: str = "norm_res",  # MLP.py as shipped (A.1.4 (F))
        activation: str = "gelu",  # MLP.py (A.1.4 (F))
        in_features: int = 784,  # 28×28 MNIST, flattened (A.1.4 (F))
        width: int = 500,  # hidden width (A.1.4 (F))
        blocks: int = 5,  # number_H = 5 (A.1.4 (F))
        num_classes: int = 10,  # MNIST
        shared_norm: bool = True,  # decision A5: replicate the single shared BatchNorm1d
    ) -> None:
        super().__init__()
        check_model(variant, VARIANTS, activation, "FNN", in_features=in_features, width=width, blocks=blocks,
                    num_classes=num_classes)
        self.variant = variant
        self.use_norm = variant in ("norm", "norm_res")
        self.use_res = variant in ("res", "norm_res")
        self.shared_norm = shared_norm
        self.linear = nn.Linear(in_features, width)
        self.linearH = nn.ModuleList(nn.Linear(width, width) for _ in range(blocks))
        if self.use_norm:
            if shared_norm:
                self.norm = nn.BatchNorm1d(width)
            else:
                self.norms = nn.ModuleList(nn.BatchNorm1d(width) for _ in range(blocks))
        self.out = nn.Linear(width, num_classes)
        self.act = ACTIVATIONS[activation]()

    def _norm(self, index: int) -> nn.Module:
        return self.norm if self.shared_norm else self.norms[index]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.act(self.linear(x.flatten(1)))
        for index, layer in enumerate(self.linearH):
            h = self.act(layer(x))
            if self.use_res:
                h = h + x
            if self.use_norm:
                h = self._norm(index)(h)
            x = h
        return self.out(x)


def constant_init(model: nn.Module, layer: str, value: float) -> None:
    """Set ``layer``'s weight and bias (when present) to ``value`` (MLP.py: linearH[1] = 0.1 → PII 1.0)."""
    modules = dict(model.named_modules())
    if layer not in modules or not hasattr(modules[layer], "weight"):
        weighted = [name for name, m in modules.items() if isinstance(getattr(m, "weight", None), torch.Tensor)]
        raise ValueError(f"no layer with weights named {layer!r}; choose one of {weighted}")
    module = modules[layer]
    with torch.no_grad():
        module.weight.fill_(value)
        if getattr(module, "bias", None) is not None:
            module.bias.fill_(value)
