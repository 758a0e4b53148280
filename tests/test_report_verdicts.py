"""Three outcomes (docs/decisions/README.md, "Three outcomes"): a run decides a row only when its own spread is
narrow enough; a single stochastic run decides nothing; an inconclusive row says how many runs would decide it."""

import math

import pytest

from isonorm.verdicts.comparison import INCONCLUSIVE, MATCH, MISMATCH, decide, judge, runs_to_decide

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
    from isonorm.verdicts.claims import write_claims
    from isonorm.verdicts.scoreboard import build_scoreboard, reported_noise

    assert reported_noise(0.05, 10, 10) == pytest.approx(0.05) and reported_noise(0.05, 40, 10) == pytest.approx(0.1)
    assert math.isnan(reported_noise(NAN, 10, 10)) and math.isnan(reported_noise(0.05, NAN, 10))
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
    from isonorm.verdicts.claims import measured_over_runs

    one = measured_over_runs([0.996])
    assert one.runs == 1 and math.isnan(one.spread)
    assert judge(one.value, 0.995, "abs", 0.0005, one.spread, runs=one.runs).verdict == INCONCLUSIVE
    many = measured_over_runs([0.996, 0.9955, 0.9962])
    assert many.runs == 3 and many.spread > 0


def _scored(tmp_path, rows, claims, readoffs=None):
    """The scoreboard of reference ``rows`` (lu2024 rows of a printed table) against ``claims`` (item, quantity,
    value, spread, runs)."""
    import pandas as pd
    import yaml
    from isonorm.verdicts.claims import write_claims
    from isonorm.verdicts.scoreboard import build_scoreboard

    base = {"description": "d", "kind": "exact", "compare": "abs", "provenance": "printed", "source": "s",
            "basis": "digits"}
    doc = {"paper": "lu2024", "title": "t", "references": [{**base, **row} for row in rows]}
    path = tmp_path / "lu2024.yaml"
    path.write_text(yaml.safe_dump({**doc, **({"readoffs": readoffs} if readoffs else {})}))
    frame = pd.DataFrame(claims, columns=["item", "quantity", "value", "spread", "runs"]).assign(note="")
    write_claims(frame, tmp_path / "claims.parquet", "lu2024")
    return build_scoreboard([path], [tmp_path / "claims.parquet"], preset="paper").set_index("quantity")


def test_a_printed_single_run_brings_its_own_noise(tmp_path):
    """lu2024 prints one run (seed 42) per cell to two decimals (`paper_runs: 1`): three runs of the pipeline
    decide the cell once the printed run's own seed noise (this run's spread scaled to one run) is in the
    tolerance; without it the spread is wider than half a printed digit and nothing is decided."""
    rows = [{"item": "lu2024-table3", "quantity": q, "reported": 98.24, "tolerance": 0.005}
            for q in ("close", "near", "far")]
    claims = [("lu2024-table3", q, x, 0.2, 3.0) for q, x in (("close", 98.10), ("near", 97.9), ("far", 97.0))]
    plain = _scored(tmp_path, rows, claims)
    assert plain["verdict"].to_dict() == {"close": INCONCLUSIVE, "near": MISMATCH, "far": MISMATCH}
    board = _scored(tmp_path, [{**row, "paper_runs": 1} for row in rows], claims)
    assert board["verdict"].to_dict() == {"close": MATCH, "near": MATCH, "far": MISMATCH}  # 1.24 > 0.005 + 0.35 + 0.2
    assert board.loc["near", "tolerance"] == pytest.approx(0.005 + 0.2 * math.sqrt(3))
    assert "the reported value is one run: its own seed noise ±0.35" in board.loc["near", "basis_detail"]
    assert board["within"].to_dict() == {"close": "precision", "near": "seed-noise", "far": ""}


def test_a_single_run_borrows_its_items_spread(tmp_path):
    """A gross gap of one run is a mismatch, not inconclusive: the run takes the widest relative spread its item's
    rows of several runs show (here 1 % of the value), and 11.35 against 97.54 lies far outside it. A small gap
    of one run stays decided the same way; a one-run row with no such sibling stays inconclusive."""
    rows = [{"item": "lu2024-table3", "quantity": q, "reported": r, "tolerance": 0.005, "paper_runs": 1}
            for q, r in (("gross", 97.54), ("close", 98.16), ("sibling", 98.24))]
    rows.append({"item": "lu2024-table1", "quantity": "alone", "reported": 97.54, "tolerance": 0.005})
    claims = [("lu2024-table3", "gross", 11.35, NAN, 1.0), ("lu2024-table3", "close", 98.0, NAN, 1.0),
              ("lu2024-table3", "sibling", 98.1, 98.1 * 0.01 / math.sqrt(3), 3.0),
              ("lu2024-table1", "alone", 11.35, NAN, 1.0)]
    board = _scored(tmp_path, rows, claims)
    assert board["verdict"].to_dict() == {"gross": MISMATCH, "close": MATCH, "sibling": MATCH,
                                          "alone": INCONCLUSIVE}
    assert board.loc["close", "spread"] == pytest.approx(0.98)  # 1 % of 98.0
    assert "a single run: its spread is the widest its item's runs show" in board.loc["gross", "note"]
    assert board.loc["alone", "note"].startswith("one run has no spread")


def test_a_match_says_whether_the_precision_or_the_noise_decided_it(tmp_path):
    rows = [{"item": "lu2024-table3", "quantity": q, "reported": 0.081, "tolerance": 0.0005, "paper_runs": 1}
            for q in ("exact", "noisy")]
    claims = [("lu2024-table3", "exact", 0.0812, 0.0004, 3.0), ("lu2024-table3", "noisy", 0.0830, 0.0008, 3.0)]
    board = _scored(tmp_path, rows, claims)
    assert board["verdict"].to_dict() == {"exact": MATCH, "noisy": MATCH}
    assert board["within"].to_dict() == {"exact": "precision", "noisy": "seed-noise"}
