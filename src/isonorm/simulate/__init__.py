"""Random-network simulations: chains of Gaussian linear maps with or without batch normalization."""

from .chains import (
    ACTIVATIONS,
    batch_normalize,
    gaussian_product,
    run_chain,
)

__all__ = ["ACTIVATIONS", "batch_normalize", "gaussian_product", "run_chain"]
