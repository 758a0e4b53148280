"""Compare rules, verdicts, claims files and the scoreboard CSV (architecture §7)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import yaml

from isonorm.report.claims import read_claims, validate_claims, write_claims
from isonorm.report.comparison import VERDICTS, describe_tolerance, verdict, within
from isonorm.report.scoreboard import (
    SCOREBOARD_COLUMNS,
    build_scoreboard,
    read_scoreboard,
    summarize_scoreboard,
    write_scoreboard,
)


@pytest.mark.parametrize(
    "reproduced, reported, compare, tolerance, expected",
    [
        (0.4, 0.3, "abs", 0.1, True),  # on the boundary despite 0.4 - 0.3 > 0.1 in binary floating point
        (0.41, 0.3, "abs", 0.1, False),
        (0.19, 0.3, "abs", 0.1, False),  # symmetric
        (-2.2, -2.0, "rel", 0.1, True),  # tolerance scales with |reported|, sign does not matter
        (-2.3, -2.0, "rel", 0.1, False),
        (5.0, 1.0, "le", 0.5, False),
        (1.5, 1.0, "le", 0.5, True),
        (-100.0, 1.0, "le", 0.0, True),  # one-sided: anything below is fine
        (0.5, 1.0, "ge", 0.5, True),
        (0.49, 1.0, "ge", 0.5, False),
        (1.0, 1.0, "true", 0.0, True),
        (0.0, 1.0, "true", 0.0, False),
        (0.999, 1.0, "true", 0.5, False),  # a boolean claim has no tolerance
    ],
)
def test_compare_rules(reproduced, reported, compare, tolerance, expected):
    assert within(reproduced, reported, compare, tolerance) is expected


def test_verdict_paths():
    assert verdict(1.0, 1.0, "abs", 0.0) == "match"
    assert verdict(2.0, 1.0, "abs", 0.5) == "mismatch"
    assert verdict(float("nan"), 1.0, "abs", 0.5) == "not-run"
    assert verdict(None, 1.0, "abs", 0.5) == "not-run"
    assert verdict(1.0, float("nan"), float("nan"), float("nan")) == "no-reference"
    with pytest.raises(ValueError, match="unknown compare rule 'near'"):
        verdict(1.0, 1.0, "near", 0.1)


def test_describe_tolerance_shows_the_acceptance_rule():
    assert describe_tolerance(2.0, "abs", 0.5) == "2 ± 0.5"
    assert describe_tolerance(2.0, "rel", 0.1) == "2 ± 10%"
    assert describe_tolerance(2.0, "le", 0.5) == "≤ 2.5"
    assert describe_tolerance(2.0, "ge", 0.5) == "≥ 1.5"


def reference(item, quantity, reported, compare="abs", tolerance=0.1):
    return {"item": item, "quantity": quantity, "description": quantity, "reported": reported,
            "kind": "read-off", "compare": compare, "tolerance": tolerance, "provenance": "printed", "source": "test"}


@pytest.fixture
def two_papers(tmp_path):
    """lu2024 with claims covering every verdict; joudaki2023 whose claims file does not exist."""
    refs = tmp_path / "reference"
    refs.mkdir()
    (refs / "lu2024.yaml").write_text(yaml.safe_dump({"paper": "lu2024", "title": "t", "references": [
        reference("lu2024-fig2", "a", 1.0),  # match
        reference("lu2024-fig2", "b", 1.0),  # mismatch
        reference("lu2024-table5", "c", 1.0),  # claims has NaN -> not-run
        reference("lu2024-table5", "d", 1.0),  # absent from claims -> not-run
        reference("lu2024-fig3", "holds", True, compare="true"),  # boolean claim that holds
    ]}))
    (refs / "joudaki2023.yaml").write_text(yaml.safe_dump({"paper": "joudaki2023", "title": "t", "references": [
        reference("joudaki2023-fig1", "a", 2.0),
    ]}))
    claims = pd.DataFrame({
        "item": ["lu2024-fig2", "lu2024-fig2", "lu2024-table5", "lu2024-fig3", "lu2024-fig9"],
        "quantity": ["a", "b", "c", "holds", "extra"],
        "value": [1.05, 1.5, float("nan"), 1.0, 7.0],
        "note": ["", "", "could not fit", "", "not in the paper"],
    })
    write_claims(claims, tmp_path / "results" / "lu2024" / "claims.parquet", "lu2024")
    reference_files = [refs / "lu2024.yaml", refs / "joudaki2023.yaml"]
    claims_files = [tmp_path / "results" / s / "claims.parquet" for s in ("lu2024", "joudaki2023")]
    return reference_files, claims_files


def test_every_verdict_path(two_papers):
    board = build_scoreboard(*two_papers, preset="quick")
    assert list(board.columns) == list(SCOREBOARD_COLUMNS)
    verdicts = {(r.item, r.quantity): r.verdict for r in board.itertuples()}
    assert verdicts == {
        ("lu2024-fig2", "a"): "match",
        ("lu2024-fig2", "b"): "mismatch",
        ("lu2024-table5", "c"): "not-run",
        ("lu2024-table5", "d"): "not-run",
        ("lu2024-fig3", "holds"): "match",
        ("joudaki2023-fig1", "a"): "not-run",  # claims file missing
        ("lu2024-fig9", "extra"): "no-reference",
    }
    assert (board["preset"] == "quick").all()
    extra = board[board["verdict"] == "no-reference"].iloc[0]
    assert extra["paper"] == "lu2024" and extra["reproduced"] == 7.0
    assert math.isnan(extra["reported"]) and math.isnan(extra["tolerance"])
    # Reference order first, unreferenced claims last.
    assert board["item"].tolist()[-1] == "lu2024-fig9"


def test_scoreboard_csv_round_trip(two_papers, tmp_path):
    board = build_scoreboard(*two_papers, preset="paper")
    path = write_scoreboard(board, tmp_path / "results" / "scoreboard.csv")
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []
    assert path.read_text().splitlines()[0] == ",".join(SCOREBOARD_COLUMNS)
    pd.testing.assert_frame_equal(read_scoreboard(path), board, check_dtype=False)


def test_read_scoreboard_rejects_other_csv(tmp_path):
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="missing column"):
        read_scoreboard(tmp_path / "x.csv")
    with pytest.raises(FileNotFoundError, match="build it first"):
        read_scoreboard(tmp_path / "none.csv")


def test_summary_counts_per_paper_and_verdict(two_papers):
    summary = summarize_scoreboard(build_scoreboard(*two_papers, preset="paper"))
    assert list(summary.columns) == [*VERDICTS, "total"]
    assert summary.loc["lu2024"].to_dict() == {"match": 2, "mismatch": 1, "not-run": 2, "no-reference": 1, "total": 6}
    assert summary.loc["joudaki2023", "not-run"] == 1
    assert summary.loc["total", "total"] == 7
    assert (summary.drop(index="total").sum() == summary.loc["total"]).all()


def test_claims_round_trip_and_validation(tmp_path):
    claims = pd.DataFrame({"item": ["lu2024-fig2"], "quantity": ["a"], "value": [True], "note": [None]})
    path = write_claims(claims, tmp_path / "claims.parquet", "lu2024")
    back = read_claims(path)
    assert back["value"].tolist() == [1.0] and back["note"].tolist() == [""]
    with pytest.raises(ValueError, match="missing \\['note'\\]"):
        validate_claims(claims.drop(columns="note"), "x")
    with pytest.raises(ValueError, match="row 0.*start it with 'meterez2024-'"):
        validate_claims(claims, "x", slug="meterez2024")
    with pytest.raises(ValueError, match="produced more than once"):
        validate_claims(pd.concat([claims, claims]), "x")
    with pytest.raises(ValueError, match="must be numeric"):
        validate_claims(claims.assign(value=["high"]), "x")


def test_match_rates_count_only_scored_references_per_provenance():
    from isonorm.report.scoreboard import match_rates

    board = pd.DataFrame({
        "paper": ["lu2024", "lu2024", "lu2024", "meterez2024", "meterez2024"],
        "verdict": ["match", "mismatch", "not-run", "match", "no-reference"],
        "provenance": ["printed", "printed", "read-off", "read-off", None],
    })
    rates = match_rates(board)
    assert rates.loc["lu2024", "printed"] == "1 / 2 (50 %)" and rates.loc["lu2024", "read-off"] == "–"
    assert rates.loc["meterez2024", "read-off"] == "1 / 1 (100 %)" and rates.loc["total", "derived"] == "–"
