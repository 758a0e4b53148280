"""The shapes preset's cost table (isonorm.cost) and the page that draws it (isonorm.report.cost_page, docs/cost.md)."""

from __future__ import annotations

import pandas as pd
import pytest

from isonorm.cost import (
    Coverage, MissingCostRecordError, cost_table, coverage, memory_warnings, read_cost_table, write_cost_table,
)
from isonorm.report.cost_page import cost_page, hours_by_rule
from isonorm.results import write_results


def record(rule: str, outputs: list[str], hours: float, rss: float, memory: float = 16.0, cuda=float("nan")):
    return {"rule": rule, "wildcards": "w=1", "outputs": outputs, "device": "cpu (test)", "device_memory_gb": memory,
            "wall_seconds": 10.0, "trainings": 1, "steps_measured": 3, "seconds_per_step": 0.5, "paper_steps": 100,
            "seconds_per_pass": 1.0, "paper_passes": 11, "checkpoint_bytes": 1000, "projected_hours": hours,
            "peak_rss_gb": rss, "peak_cuda_gb": cuda}


@pytest.fixture
def shapes_results(tmp_path):
    """Three jobs of a shapes run under tmp/results/shapes; the second writes a second file without a record."""
    root = tmp_path / "results" / "shapes"
    frame = pd.DataFrame({"value": [1.0]})
    files = {
        "a": root / "lu2024" / "table1" / "sgd.parquet",
        "b": root / "lu2024" / "table3" / "x.parquet",
        "b_weights": root / "lu2024" / "table3_weights" / "x.parquet",
        "c": root / "meterez2024" / "training" / "s.parquet",
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    write_results(frame, files["a"], extra={"cost": record("lu2024_table1", [str(files["a"])], 0.5, 1.0)})
    write_results(frame, files["b"], extra={"cost": record("lu2024_table3", [str(files["b"]), str(files["b_weights"])],
                                                           2.0, 20.0)})
    write_results(frame, files["b_weights"])
    write_results(frame, files["c"], extra={"cost": record("meterez2024_training", [str(files["c"])], 7.0, 30.0,
                                                           memory=80.0, cuda=3.0)})
    return root, files


def test_one_row_per_job_with_paths_relative_to_the_results_root(shapes_results, tmp_path):
    root, files = shapes_results
    table = cost_table([str(f) for f in files.values()], root)
    assert list(table.rule) == ["lu2024_table1", "lu2024_table3", "meterez2024_training"]
    assert list(table.result) == ["lu2024/table1/sgd.parquet", "lu2024/table3/x.parquet",
                                  "meterez2024/training/s.parquet"]
    assert list(table.paper) == ["lu2024", "lu2024", "meterez2024"]
    # on CUDA the peak is the device's allocation, else the resident memory; the guard compares it with the device
    assert list(table.peak_memory_gb) == [1.0, 20.0, 3.0]
    assert list(table.fits) == [True, False, True]
    write_cost_table(table, tmp_path / "cost.csv")
    pd.testing.assert_frame_equal(read_cost_table(tmp_path / "cost.csv"), table, check_dtype=False)


def test_the_memory_guard_names_the_job_and_the_device(shapes_results):
    root, files = shapes_results
    (warning,) = memory_warnings(cost_table(list(files.values()), root))
    assert warning.startswith("lu2024_table3 (w=1): peak memory 20.0 GB > 16.0 GB of cpu (test)")


def test_a_results_file_of_another_run_is_refused(shapes_results):
    root, files = shapes_results
    stray = root / "lu2024" / "table1" / "adam.parquet"
    write_results(pd.DataFrame({"value": [1.0]}), stray)
    with pytest.raises(MissingCostRecordError, match="adam.parquet.*not made by a shapes run"):
        cost_table([*files.values(), stray], root)


def test_the_page_totals_the_hours_and_draws_one_bar_per_rule(shapes_results):
    root, files = shapes_results
    table = cost_table(list(files.values()), root)
    assert list(hours_by_rule(table).rule) == ["meterez2024_training", "lu2024_table3", "lu2024_table1"]
    page = cost_page(table, "shapes")
    assert "<strong>9.5 hours</strong>" in page and 'id="cost-figure"><svg' in page
    assert ">7 h<" in page and ">2 h<" in page  # bar labels per rule
    assert "lu2024_table3 (w=1): peak memory 20.0 GB" in page


def test_jobs_without_a_row_are_reported_as_unmeasured_and_left_out_of_the_total(shapes_results):
    root, files = shapes_results
    table = cost_table(list(files.values()), root)
    jobs = {"lu2024/table1/sgd.parquet", "lu2024/table3/x.parquet", "lu2024/table9/new.parquet"}
    found = coverage(table, jobs)
    assert found.unmeasured == ["lu2024/table9/new.parquet"]  # a job added since the table was measured
    assert found.unknown == ["meterez2024/training/s.parquet"]  # a row of a job the run no longer has
    assert coverage(table, table.result) == Coverage(unmeasured=[], unknown=[])
    page = cost_page(table, "shapes", unmeasured=found.unmeasured)
    assert "not the 1 unmeasured ones" in page and "<li>lu2024/table9/new.parquet</li>" in page
    assert "<strong>9.5 hours</strong>" in page  # the measured jobs only
    assert "Unmeasured" not in cost_page(table, "shapes")
