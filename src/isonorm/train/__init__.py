"""The shared training engine (DESIGN 8): R runs of one architecture stacked into one batched computation.

- ``stacking``    :class:`StackedModels`, R modules as (R, ...) tensors evaluated with torch.func.vmap
- ``batches``     per-(run, epoch) seeded permutations, batches as index slices of device-resident data
- ``optimizers``  :class:`OptimizerConfig` and :func:`build_optimizer` (sgd, adam, adamw, rmsprop)
- ``config``      :class:`TrainConfig`
- ``checkpoint``  atomic, fingerprinted, resumable checkpoints
- ``loop``        :func:`train_stacked`, the loop itself (optional on-device augmentation), returning a tidy history
- ``predict``     :func:`predict`, all runs' outputs on a data set, for measurements
"""

from .batches import batch_slices, epoch_permutations
from .checkpoint import CheckpointError
from .config import TrainConfig
from .loop import Augment, Measure, TrainResult, train_stacked
from .optimizers import OptimizerConfig, build_optimizer
from .predict import predict
from .stacking import StackedModels

__all__ = [
    "Augment",
    "CheckpointError",
    "Measure",
    "OptimizerConfig",
    "StackedModels",
    "TrainConfig",
    "TrainResult",
    "batch_slices",
    "build_optimizer",
    "epoch_permutations",
    "predict",
    "train_stacked",
]
