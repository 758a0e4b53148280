"""Progress lines of a training (isonorm.train.progress): the rate and the time left, within an epoch that runs
long and at the end of each epoch, on a clock the test moves."""

from __future__ import annotations

import logging

from isonorm.train.progress import Progress, duration


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_durations_read_at_a_glance():
    assert (duration(42), duration(600), duration(3 * 3600 + 5 * 60)) == ("42 s", "10 min", "3 h 05 min")


def test_a_long_epoch_says_where_it_is_and_what_is_left(caplog):
    clock = Clock()
    progress = Progress("lu2024/resnet18", epochs=200, first_epoch=1, steps_per_epoch=400, every_s=30, clock=clock)
    progress.start_epoch(1)
    with caplog.at_level(logging.INFO, logger="isonorm.train.progress"):
        for step in range(1, 101):
            clock.now += 0.5  # 2 steps/s: 200 s per epoch
            progress.step(step)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1  # at most one line per 30 s: at 30 s of the 50 s
    assert "epoch 1/200: step 60/400 (15 %), 2 steps/s; epoch ends in 3 min, training in 11 h 06 min" in lines[0]


def test_each_epoch_line_ends_with_its_time_and_the_time_left_after_a_resume():
    clock = Clock()
    progress = Progress("m24", epochs=1000, first_epoch=101, steps_per_epoch=10, clock=clock)  # resumed after 100
    for epoch in (101, 102):
        progress.start_epoch(epoch)
        clock.now += 6.0
        line = progress.epoch_line()
    assert line == "6.0 s (6 s/epoch); 90 min left"  # 898 epochs of 6 s
    progress.start_epoch(1000)
    assert progress.epoch_line().endswith("; done")


def test_training_logs_progress_with_the_time_left(caplog):
    import torch

    from isonorm.train import TrainConfig, train_stacked

    x, y = torch.randn(64, 4), torch.randint(0, 2, (64,))
    models = [torch.nn.Linear(4, 2) for _ in range(2)]
    config = TrainConfig("test", "progress", epochs=3, batch_size=16, device="cpu")
    with caplog.at_level(logging.INFO, logger="isonorm.train.loop"):
        train_stacked(models, x, y, config, run_ids=[0, 1])
    epochs = [r.getMessage() for r in caplog.records if " epoch " in r.getMessage()]
    assert len(epochs) == 3 and all("s/epoch); " in line for line in epochs)
    assert epochs[0].endswith(" left") and epochs[-1].endswith("; done")
