"""Three outcomes (docs/decisions/README.md, "Three outcomes"): a run decides a row only when its own spread is
narrow enough; a single stochastic run decides nothing; an inconclusive row says how many runs would decide it."""

import math

import pytest

from isonorm.report.comparison import INCONCLUSIVE, MATCH, MISMATCH, decide, judge, runs_to_decide

NAN = math.nan


@pytest.mark.parametrize("reproduced, spread, reported, compare, tolerance, expected", [
    (1.02, 0.05, 1.0, "abs", 0.1, MATCH),  # spread below the tolerance, inside it
    (1.13, 0.05, 1.0, "abs", 0.1, MATCH),  # inside t + s: the run's own noise is no evidence against the paper
    (1.2, 0.05, 1.0, "abs", 0.1, MISMATCH),
    (1.0, 0.2, 1.0, "abs", 0.1, INCONCLUSIVE),  # right on the paper, but the spread cannot resolve ±0.1
    (1.5, 0.2, 1.0, "abs", 0.1, MISMATCH),  # outside even with the spread: a wide spread still finds this
    (1.0, 0.2, 1.0, "rel", 0.1, INCONCLUSIVE),
    (1.0, NAN, 1.0, "abs", 0.1, MATCH),  # no spread: the tolerance decides
    (0.8, 0.1, 1.0, "le", 0.0, MATCH),  # the bound holds beyond the spread
    (1.05, 0.1, 1.0, "le", 0.0, INCONCLUSIVE),  # x ± s straddles the bound
    (1.2, 0.1, 1.0, "le", 0.0, MISMATCH),  # fails beyond the spread
    (1.2, 0.1, 1.0, "ge", 0.0, MATCH),
    (0.95, 0.1, 1.0, "ge", 0.0, INCONCLUSIVE),
    (0.8, 0.1, 1.0, "ge", 0.0, MISMATCH),
    (0.95, NAN, 1.0, "ge", 0.0, MISMATCH),  # no spread: nothing to straddle
    (0.0, 5.0, 1.0, "true", 0.0, MISMATCH),  # a spread never makes a false claim undecided
])
def test_three_outcomes(reproduced, spread, reported, compare, tolerance, expected):
    assert decide(reproduced, reported, compare, tolerance, spread)[0] == expected
    assert judge(reproduced, reported, compare, tolerance, spread, runs=10).verdict == expected


def test_a_single_run_decides_nothing_a_deterministic_value_does():
    one_run = judge(1.0, 1.0, "abs", 0.0005, NAN, runs=1)
    assert one_run.verdict == INCONCLUSIVE and "one run has no spread" in one_run.reason
    assert judge(1.0, 1.0, "abs", 0.0005, NAN, runs=NAN).verdict == MATCH  # a closed form has no seed
    assert judge(1.0, 1.0, "true", 0.0, NAN, runs=1).verdict == MATCH  # a boolean is no noisy number


def test_the_runs_that_would_decide():
    assert runs_to_decide(10, 0.2, 0.1) == 40  # a spread falls as 1/sqrt(runs)
    assert runs_to_decide(NAN, 0.2, 0.1) is None and runs_to_decide(10, 0.2, 0.0) is None
    reason = judge(1.0, 1.0, "abs", 0.1, 0.3, runs=5).reason
    assert "it would need ±0.1" in reason and "about 45 runs would decide it (this run: 5)" in reason
    bound = judge(1.05, 1.0, "le", 0.0, 0.1, runs=4).reason
    assert "at the bound (it would need ±0.05)" in bound and "about 16 runs" in bound


def test_a_figure_of_a_few_runs_brings_its_own_noise(tmp_path):
    """A read-off of a figure that plots a mean of 10 runs: its tolerance is the read-off precision plus the seed
    noise of such a mean (this run's spread scaled to 10 runs), so a run of as many seeds can decide it; the
    same row without the figure's run count cannot (its spread is wider than the precision)."""
    import pandas as pd
    import yaml
    from isonorm.report.claims import write_claims
    from isonorm.report.scoreboard import build_scoreboard, figure_noise

    assert figure_noise(0.05, 10, 10) == pytest.approx(0.05) and figure_noise(0.05, 40, 10) == pytest.approx(0.1)
    assert math.isnan(figure_noise(NAN, 10, 10)) and math.isnan(figure_noise(0.05, NAN, 10))
    readoff = {"scale": "log10", "precision": 0.01, "how": "test",
               "source": {"kind": "vector-pdf", "repo": "owner/name", "commit": "0" * 40, "path": "f.pdf"},
               "calibration": {"anchors": "ticks", "per": "1 pt", "residual": 0.0}}
    rows = [{"item": "lu2024-fig2", "quantity": q, "description": q, "reported": 0.0, "kind": "read-off",
             "compare": "abs", "tolerance": 0.01, "provenance": "read-off", "source": "s", "basis": "read-off"}
            for q in ("near", "far")]
    claims = pd.DataFrame({"item": ["lu2024-fig2"] * 2, "quantity": ["near", "far"], "value": [0.04, 0.2],
                           "spread": [0.05, 0.05], "runs": [10.0, 10.0], "note": ["", ""]})
    write_claims(claims, tmp_path / "claims.parquet", "lu2024")
    verdicts = {}
    for runs in (None, 10):
        entry = readoff if runs is None else {**readoff, "runs": runs}
        path = tmp_path / "lu2024.yaml"
        path.write_text(yaml.safe_dump({"paper": "lu2024", "title": "t", "references": rows,
                                        "readoffs": {"lu2024-fig2": entry}}))
        board = build_scoreboard([path], [tmp_path / "claims.parquet"], preset="paper").set_index("quantity")
        verdicts[runs] = board["verdict"].to_dict()
        if runs:
            assert board.loc["near", "tolerance"] == pytest.approx(0.06)
            assert "mean of 10 runs: its own seed noise ±0.05" in board.loc["near", "basis_detail"]
    assert verdicts[None] == {"near": INCONCLUSIVE, "far": MISMATCH}
    assert verdicts[10] == {"near": MATCH, "far": MISMATCH}  # 0.2 > 0.06 + 0.05: still found


def test_a_cell_of_one_seed_is_inconclusive():
    """lu2024's trained tables run one seed (`seeds: [42]`): their cells carry runs = 1 and no spread, so a
    difference at half a printed digit is not scored as a match or a mismatch ("No verdict without a spread")."""
    from isonorm.report.claims import measured_over_runs

    one = measured_over_runs([0.996])
    assert one.runs == 1 and math.isnan(one.spread)
    assert judge(one.value, 0.995, "abs", 0.0005, one.spread, runs=one.runs).verdict == INCONCLUSIVE
    many = measured_over_runs([0.996, 0.9955, 0.9962])
    assert many.runs == 3 and many.spread > 0
