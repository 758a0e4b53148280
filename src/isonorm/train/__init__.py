"""The shared training engine (architecture §8): R runs of one architecture stacked into one batched computation.

- ``loop``        :func:`train_epochs`, THE epoch loop around a pluggable :class:`Step` (batch orders, resume,
                  per-run epoch caps, NaN stops, measures, tidy history); :func:`train_stacked` runs it with a
                  :class:`VmapStep`
- ``vmap_step``   :class:`VmapStep`, a torch optimizer over :class:`StackedModels` (optional on-device augmentation)
- ``fast_step``   :class:`StackedSGDStep`, foreach SGD on a natively stacked module, a CUDA graph on CUDA
- ``stacking``    :class:`StackedModels`, R modules as (R, ...) tensors evaluated with torch.func.vmap
- ``batches``     per-(run, epoch) seeded permutations, batches as index slices of device-resident data
- ``optimizers``  :class:`OptimizerConfig` and :func:`build_optimizer` (sgd, adam, adamw, rmsprop)
- ``config``      :class:`TrainConfig`
- ``checkpoint``  atomic, fingerprinted, resumable checkpoints
- ``history``     the history's rows: one per (run, epoch), statistics and measures
- ``predict``     :func:`predict`, all runs' outputs on a data set, for measurements

The shapes preset's cost run is not the engine's: :func:`train_epochs` trains through its one hook
(isonorm.cost.costed_training), which changes nothing in any other run.
"""

from .batches import EpochPlan, batch_slices, epoch_permutations, run_permutations
from .checkpoint import CheckpointError
from .config import TrainConfig
from .fast_step import StackedSGDStep
from .loop import Measure, Step, TrainResult, stacked_step, train_epochs, train_stacked
from .optimizers import OptimizerConfig, build_optimizer
from .predict import predict
from .stacking import StackedModels
from .vmap_step import Augment, VmapStep

__all__ = [
    "Augment",
    "CheckpointError",
    "Measure",
    "EpochPlan",
    "OptimizerConfig",
    "StackedModels",
    "StackedSGDStep",
    "Step",
    "TrainConfig",
    "TrainResult",
    "VmapStep",
    "batch_slices",
    "build_optimizer",
    "epoch_permutations",
    "predict",
    "run_permutations",
    "stacked_step",
    "train_epochs",
    "train_stacked",
]
