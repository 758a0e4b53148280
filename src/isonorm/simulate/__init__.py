"""Random-network simulations.

- ``chains``      chains of Gaussian linear maps with or without batch normalization (Daneshmand et al. 2021)
- ``mean_field``  the synthetic mean-field simulator of Joudaki et al. (2023), D.0 (A)
"""

from . import mean_field
from .chains import (
    ACTIVATIONS,
    batch_normalize,
    gaussian_product,
    run_chain,
    spectrum_chain,
    standard_normal,
)

__all__ = ["ACTIVATIONS", "batch_normalize", "gaussian_product", "mean_field", "run_chain", "spectrum_chain",
           "standard_normal"]
