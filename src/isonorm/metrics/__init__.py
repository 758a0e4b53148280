"""Every measured quantity of the four papers, computed in float64 (architecture §6).

Definitions: docs/decisions/metrics.md.

- ``orthogonality``  V(H), |cos| of two samples, the training-time spectral gap (Daneshmand et al. 2021)
- ``isometry``       Gram matrices, isometry and its gap, Lyapunov potential γ (Meterez 2024, Joudaki 2023)
- ``gradients``      gradient log-norms and the rate of explosion (Meterez et al. 2024)
- ``hermite``        Hermite coefficients and the isometry strength β (Joudaki et al. 2023)
- ``activations``    the registry of named activations σ used for β
- ``pii``            parameters independence index and cosine-similarity matrices (Lu et al. 2024)

Tensor metrics take torch tensors (or arrays) whose leading dimensions are batch dimensions, and return
float64 tensors; β and Hermite coefficients return Python floats / NumPy arrays.
"""

from .activations import ACTIVATIONS, Activation, get_activation, leaky_relu
from .gradients import explosion_rate, grad_log_norm
from .hermite import (
    CLOSED_FORMS,
    GaussianMoments,
    NonFiniteActivationError,
    gaussian_moments,
    hermite_coefficients,
    isometry_strength,
    isometry_strength_closed_form,
)
from .isometry import (
    gram,
    isometry,
    isometry_gap,
    lyapunov_potential,
    training_isometry_gap,
    weight_isometry_gap,
)
from .orthogonality import (
    abs_cosine,
    max_orthogonality_gap,
    orthogonality_gap,
    orthogonality_gap_of_gram,
    orthogonality_gap_samples_first,
    spectral_orthogonality_gap,
)
from .pii import conv_centre_tap, cosine_similarity_matrix, pii

__all__ = [
    "ACTIVATIONS",
    "CLOSED_FORMS",
    "Activation",
    "GaussianMoments",
    "NonFiniteActivationError",
    "abs_cosine",
    "conv_centre_tap",
    "cosine_similarity_matrix",
    "explosion_rate",
    "gaussian_moments",
    "get_activation",
    "grad_log_norm",
    "gram",
    "hermite_coefficients",
    "isometry",
    "isometry_gap",
    "isometry_strength",
    "isometry_strength_closed_form",
    "leaky_relu",
    "lyapunov_potential",
    "max_orthogonality_gap",
    "orthogonality_gap",
    "orthogonality_gap_of_gram",
    "orthogonality_gap_samples_first",
    "pii",
    "spectral_orthogonality_gap",
    "training_isometry_gap",
    "weight_isometry_gap",
]
