"""Fig. 1: the geometric reading of isometry, drawn (joudaki2023-fig1, decision D11).

The paper's schematic has no code or data behind it. Each panel shows n = 2 or n = 3 vectors and is annotated
with I(G) of their Gram matrix, computed by ``isonorm.metrics.isometry`` (Definition 1: det(G)^{1/n} / (tr G/n)),
so the printed value always matches the drawing. For two vectors this equals ab·sinθ / ((a² + b²)/2); the
paper's text writes ab·sinθ/(a² + b²), a factor 2 short of Definition 1 (D11).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np
import torch

from ...items import Item
from ...metrics import gram, isometry

if TYPE_CHECKING:  # matplotlib on use only: the workflow imports this module (its record) when it parses
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

# Top row: low isometry (small angle, unequal lengths); bottom row: orthogonal vectors of equal length (I = 1).
PLANE_VECTORS = {"low": np.array([[1.6, 0.0], [1.0, 0.45]]), "high": np.array([[1.0, 0.0], [0.0, 1.0]])}
SPACE_VECTORS = {
    "low": np.array([[1.4, 0.0, 0.0], [0.9, 0.35, 0.0], [0.7, 0.2, 0.35]]),
    "high": np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
}


def vectors_isometry(vectors: np.ndarray) -> float:
    """I of the Gram of the rows of ``vectors`` (one vector per row)."""
    return float(isometry(gram(torch.as_tensor(vectors, dtype=torch.float64))))


def _plane_panel(ax: plt.Axes, vectors: np.ndarray) -> None:
    a, b = vectors
    ax.fill([0, a[0], a[0] + b[0], b[0]], [0, a[1], a[1] + b[1], b[1]], color="tab:blue", alpha=0.25)
    for v, name in zip(vectors, ("a", "b")):
        ax.annotate("", xy=v, xytext=(0, 0), arrowprops=dict(arrowstyle="-|>", lw=2, color="black"))
        ax.text(*(v * 1.08), name, fontsize=12)
    ax.set(xlim=(-0.3, 2.9), ylim=(-0.3, 1.6), aspect="equal")


def _space_panel(ax, vectors: np.ndarray) -> None:
    corners = [sum(c * v for c, v in zip(coef, vectors)) for coef in itertools.product((0, 1), repeat=3)]
    for i, j in itertools.combinations(range(8), 2):
        if bin(i ^ j).count("1") == 1:  # parallelepiped edges join corners differing in one coefficient
            p, q = corners[i], corners[j]
            ax.plot(*zip(p, q), color="tab:blue", alpha=0.5)
    for v in vectors:
        ax.quiver(0, 0, 0, *v, color="black", lw=2, arrow_length_ratio=0.12)
    ax.set(xlim=(0, 2.2), ylim=(0, 1.4), zlim=(0, 1.2))
    ax.set_axis_off()


def isometry_schematic() -> Figure:
    """The 2 × 2 panel figure: rows low / high isometry, columns n = 2 (parallelogram), n = 3 (parallelepiped)."""
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(8, 6.5))
    for row, level in enumerate(("low", "high")):
        plane = fig.add_subplot(2, 2, 2 * row + 1)
        _plane_panel(plane, PLANE_VECTORS[level])
        plane.set_title(f"n = 2: I = {vectors_isometry(PLANE_VECTORS[level]):.2f}")
        space = fig.add_subplot(2, 2, 2 * row + 2, projection="3d")
        _space_panel(space, SPACE_VECTORS[level])
        space.set_title(f"n = 3: I = {vectors_isometry(SPACE_VECTORS[level]):.2f}")
    fig.tight_layout()
    return fig


ITEMS = (Item("joudaki2023-fig1", "Geometric interpretation of isometry (schematic)", "notebook"),)  # drawn here
