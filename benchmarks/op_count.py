"""Counting the ATen operators a piece of work dispatches: a device-independent proxy for kernel launches.

A width-100, batch-100 step of a 1000-layer network is bound by kernel launches on a GPU (issue meterez2024,
"Speed"), so the number of operators one training step runs is what the engine must keep small, and it can be
counted on any device. :class:`OpCounter` sits below autograd (``TorchDispatchMode``), so it sees the forward,
the backward and the update; views, allocations and profiler bookkeeping launch nothing and are not counted.
Used by ``benchmarks/meterez_engine.py`` and by tests/test_train_native_stack.py, which keeps the stacked step's
count in check (benchmark-only code, so it lives here and not in src/).
"""

from __future__ import annotations

import collections

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

NO_WORK = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "detach", "alias", "lift_fresh",
    "_record_function_enter_new", "_record_function_exit",
})


class OpCounter(TorchDispatchMode):
    """``with OpCounter() as counter: ...`` then ``counter.counts`` (operator name → calls), ``counter.total``, and
    ``counter.bytes``: the bytes of every tensor argument and result of the counted operators, what they read and
    write when each is a kernel of its own (no fusion)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: collections.Counter[str] = collections.Counter()
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        out = func(*args, **(kwargs or {}))
        if not func.is_view and name not in NO_WORK:
            self.counts[name] += 1
            self.bytes += sum(t.nbytes for t in tree_leaves((args, kwargs, out)) if isinstance(t, torch.Tensor))
        return out

    @property
    def total(self) -> int:
        return sum(self.counts.values())
