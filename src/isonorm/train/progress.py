"""Progress lines of a training job, readable in a job log (a SLURM job's included): each epoch's line ends with
the rate and the time left, and an epoch that runs longer than ``every_s`` says where it is at that interval.

The time left is the mean time of the epochs this process has run (measurements and checkpoints included) times
the epochs still to run, an upper bound where runs stop early (``stop_non_finite``, ``run_epochs``). Within the
first epoch it comes from the step rate. On a GPU a step returns before its kernels finish; over an interval of
many steps the queue fills and the rate is the device's.
"""

from __future__ import annotations

import logging
import time
from typing import Callable

log = logging.getLogger(__name__)

EVERY_S = 30.0  # a line within an epoch at most this often: a ResNet-18 epoch on a CPU takes many minutes


def duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3 h 05 min``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes:02d} min"


class Progress:
    """The progress of one training: :meth:`step` after every step, :meth:`epoch_line` after every epoch."""

    def __init__(self, label: str, epochs: int, first_epoch: int, steps_per_epoch: int, every_s: float = EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.epochs, self.steps_per_epoch = label, epochs, max(1, steps_per_epoch)
        self.every_s, self.clock = every_s, clock
        self.started = clock()
        self.first_epoch = first_epoch  # the first epoch this process runs (after a resume, not 1)
        self.epoch_started = self.last_line = self.started
        self.epoch = first_epoch

    def start_epoch(self, epoch: int) -> None:
        self.epoch, self.epoch_started = epoch, self.clock()
        self.last_line = self.epoch_started

    def _seconds_per_epoch(self, steps_done: int, now: float) -> float:
        finished = self.epoch - self.first_epoch  # epochs this process has finished
        if finished > 0:
            return (self.epoch_started - self.started) / finished
        rate = steps_done / max(now - self.epoch_started, 1e-9)
        return self.steps_per_epoch / max(rate, 1e-9)

    def step(self, steps_done: int) -> None:
        """Called after each step of the epoch (``steps_done`` so far): a line when ``every_s`` has passed."""
        now = self.clock()
        if now - self.last_line < self.every_s:
            return
        self.last_line = now
        rate = steps_done / max(now - self.epoch_started, 1e-9)
        epoch_left = (self.steps_per_epoch - steps_done) / max(rate, 1e-9)
        job_left = epoch_left + (self.epochs - self.epoch) * self._seconds_per_epoch(steps_done, now)
        log.info("%s epoch %d/%d: step %d/%d (%.0f %%), %.3g steps/s; epoch ends in %s, training in %s",
                 self.label, self.epoch, self.epochs, steps_done, self.steps_per_epoch,
                 100 * steps_done / self.steps_per_epoch, rate, duration(epoch_left), duration(job_left))

    def epoch_line(self) -> str:
        """The end of an epoch's line: its time, the mean per epoch and the time left."""
        now = self.clock()
        took = now - self.epoch_started
        done_here = self.epoch - self.first_epoch + 1
        per_epoch = (now - self.started) / done_here
        left = (self.epochs - self.epoch) * per_epoch
        return (f"{took:.1f} s ({per_epoch:.3g} s/epoch); " + (f"{duration(left)} left" if left > 0 else "done"))
