"""Compare rules, verdicts, claims files and the scoreboard CSV (architecture §7)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import yaml

from isonorm.verdicts.claims import as_text, read_claims, validate_claims, write_claims
from isonorm.verdicts.comparison import HEADLINE_VERDICTS, describe_tolerance, judge, verdict, weak, weak_reason, within
from isonorm.verdicts.scoreboard import (
    SCOREBOARD_COLUMNS,
    SCORED_COLUMNS,
    apart_counts,
    build_scoreboard,
    headline,
    match_rates,
    read_scoreboard,
    read_scored,
    score_files,
    scoreboard_of,
    summarize_scoreboard,
    write_scoreboard,
    write_scored,
)

NAN = float("nan")


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
    assert within(reproduced, reported, compare, tolerance, NAN) is expected  # NaN spread: none


@pytest.mark.parametrize(
    "reproduced, spread, reported, compare, tolerance, expected",
    [
        (0.45, 0.1, 0.3, "abs", 0.1, True),  # |x - r| = 0.15 <= t + s = 0.2
        (0.45, 0.04, 0.3, "abs", 0.1, False),
        (-2.5, 0.3, -2.0, "rel", 0.1, True),  # 0.5 <= 0.1 * 2 + 0.3
        (-2.5, 0.2, -2.0, "rel", 0.1, False),
        (0.9, 0.1, 1.0, "le", 0.0, True),  # x + s <= r + t: the claim holds beyond the seed noise
        (0.95, 0.1, 1.0, "le", 0.0, False),  # x alone is below, but not by more than its spread
        (1.1, 0.1, 1.0, "ge", 0.0, True),
        (1.05, 0.1, 1.0, "ge", 0.0, False),
        (0.0, 5.0, 1.0, "true", 0.0, False),  # a spread never turns a false claim true
    ],
)
def test_compare_rules_with_the_seed_spread(reproduced, spread, reported, compare, tolerance, expected):
    assert within(reproduced, reported, compare, tolerance, spread) is expected


def test_verdict_paths():
    assert verdict(1.0, 1.0, "abs", 0.0) == "match"
    assert verdict(2.0, 1.0, "abs", 0.5) == "mismatch"
    assert verdict(2.0, 1.0, "abs", 0.5, spread=0.5) == "match"
    # The item ran: a NaN, infinite or absent value fails; it is not-run only when the item produced nothing.
    assert judge(NAN, 1.0, "abs", 0.5) == ("failed", "the reproduced value is NaN")
    assert verdict(float("inf"), 1.0, "le", 0.5) == "failed"
    assert verdict(float("-inf"), 1.0, "le", 0.5) == "failed"
    assert judge(None, 1.0, "abs", 0.5).reason == "the item ran but did not produce this quantity"
    assert verdict(None, 1.0, "abs", 0.5, ran=False) == "not-run"
    assert verdict(NAN, 1.0, "abs", 0.5, ran=False) == "not-run"
    assert verdict(1.0, NAN, NAN, NAN) == "no-reference"
    # A fitted reading is never a match, whatever its value.
    assert verdict(1.0, 1.0, "abs", 0.5, reading="fitted") == "fitted"
    assert verdict(9.0, 1.0, "abs", 0.5, reading="fitted") == "fitted"
    assert verdict(1.0, 1.0, "abs", 0.5, reading="alternative") == "match"
    with pytest.raises(ValueError, match="unknown compare rule 'near'"):
        verdict(1.0, 1.0, "near", 0.1)


def test_describe_tolerance_shows_the_acceptance_rule_and_the_spread():
    assert describe_tolerance(2.0, "abs", 0.5) == "2 ± 0.5"
    assert describe_tolerance(2.0, "rel", 0.1) == "2 ± 10%"
    assert describe_tolerance(2.0, "le", 0.5) == "≤ 2.5"
    assert describe_tolerance(2.0, "ge", 0.5) == "≥ 1.5"
    assert describe_tolerance(0.5, "abs", 0.1, 0.03) == "0.5 ± 0.1 (x ± 0.03)"
    assert describe_tolerance(2.0, "le", 0.5, 0.03) == "≤ 2.5 (x + 0.03)"
    assert describe_tolerance(2.0, "ge", 0.5, 0.03) == "≥ 1.5 (x − 0.03)"
    assert describe_tolerance(2.0, "abs", 0.5, NAN) == "2 ± 0.5"


@pytest.mark.parametrize(
    "args, expected",
    [
        # factor 2 on a linear scale: r ± w with (|r| + w) / (|r| - w) > 2, i.e. w > |r| / 3
        (dict(reported=3.0, compare="abs", tolerance=0.9), ""),
        (dict(reported=3.0, compare="abs", tolerance=1.1), "a factor 2.16 apart"),
        (dict(reported=3.0, compare="abs", tolerance=0.9, spread=0.2), "a factor 2.16 apart"),  # the spread counts
        (dict(reported=2.0, compare="rel", tolerance=0.3), ""),
        (dict(reported=2.0, compare="rel", tolerance=0.4), "a factor 2.33 apart"),
        # containing 0 while r != 0
        (dict(reported=0.1, compare="abs", tolerance=0.1), "contains 0"),
        (dict(reported=0.0, compare="abs", tolerance=0.1), ""),
        # log scales: 10^(r ± w) spans 10^(2w) > 2 when w > 0.15; e^(r ± w) when w > 0.35
        (dict(reported=-2.0, compare="abs", tolerance=0.1, scale="log10"), ""),
        (dict(reported=-2.0, compare="abs", tolerance=0.2, scale="log10"), "a factor 2.51 apart"),
        (dict(reported=-2.0, compare="abs", tolerance=0.3, scale="ln"), ""),
        (dict(reported=-2.0, compare="abs", tolerance=0.4, scale="ln"), "a factor 2.23 apart"),
        # one-sided rules and boolean claims have no interval ...
        (dict(reported=1.0, compare="le", tolerance=5.0), ""),
        (dict(reported=1.0, compare="true", tolerance=0.0), ""),
        # ... but any rule is weak when its margin covers the effect the item is about (its contrast)
        (dict(reported=1.0, compare="abs", tolerance=0.1, reproduced=1.0, contrast=1.05), "to its contrast"),
        (dict(reported=1.0, compare="abs", tolerance=0.1, reproduced=1.0, contrast=1.5), ""),
        (dict(reported=1.0, compare="le", tolerance=0.0, spread=0.2, reproduced=0.9, contrast=1.0), "to its contrast"),
        (dict(reported=1.0, compare="abs", tolerance=0.1, reproduced=1.0, contrast=NAN), ""),  # contrast absent
        (dict(reported=NAN, compare=NAN, tolerance=NAN), ""),  # no reference
    ],
)
def test_weak_tolerances(args, expected):
    reason = weak_reason(**args)
    assert (expected in reason) if expected else reason == ""
    assert weak(**args) is bool(expected)


def reference(item, quantity, reported, compare="abs", tolerance=0.1, **optional):
    return {"item": item, "quantity": quantity, "description": quantity, "reported": reported,
            "kind": "read-off", "compare": compare, "tolerance": tolerance, "provenance": "printed", "source": "test",
            **optional}


@pytest.fixture
def two_papers(tmp_path):
    """lu2024 with claims covering every verdict; joudaki2023 whose claims file does not exist."""
    refs = tmp_path / "reference"
    refs.mkdir()
    (refs / "lu2024.yaml").write_text(yaml.safe_dump({"paper": "lu2024", "title": "t", "references": [
        reference("lu2024-fig2", "a", 1.0),  # match
        reference("lu2024-fig2", "b", 1.0),  # mismatch
        reference("lu2024-table5", "c", 1.0),  # claims has NaN -> failed
        reference("lu2024-table5", "d", 1.0),  # absent from claims of an item that ran -> failed
        reference("lu2024-fig3", "holds", True, compare="true"),  # boolean claim that holds
        reference("lu2024-fig4", "a", 1.0),  # the item produced no claim -> not-run
        reference("lu2024-fig2", "a_offset", 1.0, reading="alternative", note="another offset"),  # match, apart
        reference("lu2024-fig2", "a_d300", 1.0, reading="fitted", note="width chosen to fit"),  # fitted
        reference("lu2024-fig3", "input_norm", 1.0, check="consistency"),  # a consistency check that fails
        reference("lu2024-fig3", "wide", 1.0, tolerance=0.5, basis="claim"),  # a weak match
        reference("lu2024-fig3", "spread", 1.0, contrast="wide"),  # spread wider than its tolerance: inconclusive
        reference("lu2024-fig1", "one_run", 1.0),  # a single stochastic run, no sibling with a spread: inconclusive
    ]}))
    (refs / "joudaki2023.yaml").write_text(yaml.safe_dump({"paper": "joudaki2023", "title": "t", "references": [
        reference("joudaki2023-fig1", "a", 2.0),
    ]}))
    claims = pd.DataFrame({
        "item": ["lu2024-fig2", "lu2024-fig2", "lu2024-table5", "lu2024-fig3", "lu2024-fig9", "lu2024-fig2",
                 "lu2024-fig2", "lu2024-fig3", "lu2024-fig3", "lu2024-fig3", "lu2024-fig1"],
        "quantity": ["a", "b", "c", "holds", "extra", "a_offset", "a_d300", "input_norm", "wide", "spread", "one_run"],
        "value": [1.05, 1.5, NAN, 1.0, 7.0, 0.95, 1.0, 2.0, 1.2, 1.25, 1.0],
        "spread": [NAN, NAN, NAN, NAN, NAN, 0.01, NAN, NAN, NAN, 0.2, NAN],
        "runs": [NAN, NAN, NAN, NAN, NAN, 10, NAN, NAN, NAN, 10, 1],
        "note": ["", "", "could not fit", "", "not in the paper", "", "", "", "", "", ""],
    })
    write_claims(claims, tmp_path / "results" / "lu2024" / "claims.parquet", "lu2024")
    reference_files = [refs / "lu2024.yaml", refs / "joudaki2023.yaml"]
    claims_files = [tmp_path / "results" / s / "claims.parquet" for s in ("lu2024", "joudaki2023")]
    return reference_files, claims_files


def test_a_smoke_run_is_not_compared_to_the_paper(two_papers):
    """Any preset but the paper configuration: computed, failed (NaN), not-produced, not-run; no match, no weak."""
    board = build_scoreboard(*two_papers, preset="quick")
    verdicts = {(r.item, r.quantity): r.verdict for r in board.itertuples()}
    assert verdicts[("lu2024-fig2", "b")] == "computed"  # a mismatch at the paper's settings
    assert verdicts[("lu2024-table5", "c")] == "failed" and verdicts[("lu2024-table5", "d")] == "not-produced"
    assert verdicts[("lu2024-fig4", "a")] == "not-run" and verdicts[("lu2024-fig9", "extra")] == "computed"
    assert set(verdicts.values()) == {"computed", "failed", "not-produced", "not-run"} and not board["weak"].any()
    assert headline(board).startswith("Smoke run (quick preset), not compared to the papers: ")
    assert "; 1 failed (its job failed, or NaN or infinite); 1 not produced at these sizes; " in headline(board)


def test_every_verdict_path(two_papers):
    board = build_scoreboard(*two_papers, preset="paper")
    assert list(board.columns) == list(SCOREBOARD_COLUMNS)
    verdicts = {(r.item, r.quantity): r.verdict for r in board.itertuples()}
    assert verdicts == {
        ("lu2024-fig2", "a"): "match",
        ("lu2024-fig2", "b"): "mismatch",
        ("lu2024-table5", "c"): "failed",
        ("lu2024-table5", "d"): "failed",
        ("lu2024-fig3", "holds"): "match",
        ("lu2024-fig4", "a"): "not-run",
        ("lu2024-fig2", "a_offset"): "match",
        ("lu2024-fig2", "a_d300"): "fitted",
        ("lu2024-fig3", "input_norm"): "mismatch",
        ("lu2024-fig3", "wide"): "match",
        ("lu2024-fig3", "spread"): "inconclusive",
        ("lu2024-fig1", "one_run"): "inconclusive",
        ("joudaki2023-fig1", "a"): "not-run",  # claims file missing
        ("lu2024-fig9", "extra"): "no-reference",
    }
    rows = board.set_index(["item", "quantity"])
    # The CSV reads on its own: the note says why a row failed or did not run, after it the claim's note.
    assert rows.loc[("lu2024-table5", "c"), "note"] == "the reproduced value is NaN; could not fit"
    assert rows.loc[("lu2024-table5", "d"), "note"] == "the item ran but did not produce this quantity"
    assert rows.loc[("lu2024-fig4", "a"), "note"] == "the item produced no claims in this run"
    assert rows.loc[("lu2024-fig2", "a_d300"), "note"] == "width chosen to fit"
    assert rows.loc[("lu2024-fig2", "a_offset"), "spread"] == 0.01
    # An undecided row says what would decide it: 10 runs gave ±0.2 at a tolerance of 0.1, so about 40 would.
    assert rows.loc[("lu2024-fig3", "spread"), "note"].startswith(
        "the spread ±0.2 is too wide to decide at the tolerance (it would need ±0.1); about 40 runs would decide it")
    assert rows.loc[("lu2024-fig1", "one_run"), "note"].startswith("one run has no spread")
    assert rows.loc[("lu2024-fig3", "wide"), "basis"] == "claim" and rows.loc[("lu2024-fig3", "wide"), "basis_detail"]
    assert (rows.loc[("lu2024-fig3", "input_norm"), ["reading", "check"]] == ["default", "consistency"]).all()
    weak_rows = {key for key, w in rows["weak"].items() if w}
    # wide: 1 ± 0.5 spans a factor 3; spread: its margin 0.1 + 0.2 covers |1.25 - 1.2|, the effect it is about
    assert weak_rows == {("lu2024-fig3", "wide"), ("lu2024-fig3", "spread")}
    assert (board["preset"] == "paper").all()
    extra = board[board["verdict"] == "no-reference"].iloc[0]
    assert extra["paper"] == "lu2024" and extra["reproduced"] == 7.0
    assert math.isnan(extra["reported"]) and math.isnan(extra["tolerance"]) and not extra["weak"]
    # Reference order first, unreferenced claims last.
    assert board["item"].tolist()[-1] == "lu2024-fig9"


def test_scoreboard_csv_round_trip(two_papers, tmp_path):
    board = build_scoreboard(*two_papers, preset="paper")
    path = write_scoreboard(board, tmp_path / "results" / "scoreboard.csv")
    assert [p.name for p in path.parent.iterdir() if ".tmp" in p.name] == []
    assert path.read_text().splitlines()[0] == ",".join(SCOREBOARD_COLUMNS)
    pd.testing.assert_frame_equal(read_scoreboard(path), board, check_dtype=False)


@pytest.mark.parametrize("preset", ["paper", "quick"])
def test_the_papers_scored_one_by_one_make_the_scoreboard_of_one_scoring(two_papers, tmp_path, preset):
    """Each paper is scored once, by its claims job (scored.csv, which its page shows); the scoreboard puts them
    together, row for row and digit for digit what scoring them all at once gives, the claims no reference lists
    last."""
    scored = [write_scored(score_files([reference], [claims], preset), tmp_path / f"{reference.stem}.csv")
              for reference, claims in zip(*two_papers)]
    assert scored[0].read_text().splitlines()[0] == ",".join(SCORED_COLUMNS)  # the page's columns too
    board = write_scoreboard(scoreboard_of(read_scored(path) for path in scored), tmp_path / "scoreboard.csv")
    whole = write_scoreboard(build_scoreboard(*two_papers, preset=preset), tmp_path / "whole.csv")
    assert board.read_text() == whole.read_text()
    assert read_scoreboard(board)["item"].tolist()[-1] == "lu2024-fig9"  # after joudaki2023's rows
    assert scoreboard_of([]).columns.tolist() == list(SCOREBOARD_COLUMNS)


def test_read_scoreboard_rejects_other_csv(tmp_path):
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="missing column"):
        read_scoreboard(tmp_path / "x.csv")
    with pytest.raises(FileNotFoundError, match="build it first"):
        read_scoreboard(tmp_path / "none.csv")


def test_summary_counts_only_default_reproduction_rows(two_papers):
    board = build_scoreboard(*two_papers, preset="paper")
    summary = summarize_scoreboard(board)
    assert list(summary.columns) == [*HEADLINE_VERDICTS, "total"] and "fitted" not in summary.columns
    # The alternative, the fitted reading and the consistency check are not in the headline counts.
    assert summary.loc["lu2024"].to_dict() == {"match": 3, "mismatch": 1, "inconclusive": 2, "failed": 2,
                                               "not-run": 1, "no-reference": 1, "total": 10}
    assert summary.loc["joudaki2023", "not-run"] == 1
    assert summary.loc["total", "total"] == 11
    assert (summary.drop(index="total").sum() == summary.loc["total"]).all()


def test_apart_counts_and_headline(two_papers):
    board = build_scoreboard(*two_papers, preset="paper")
    apart = apart_counts(board)
    assert apart.loc["lu2024"].to_dict() == {"precision": 3, "seed_noise": 0, "weak": 1, "alternatives": 1,
                                             "alternatives_match": 1,
                                             "consistency": 1, "consistency_hold": 0, "fitted": 1}
    assert apart.loc["total", "fitted"] == 1
    assert headline(board) == ("3 of 6 default rows match (3 at the reference's precision, 0 within its seed noise; "
                               "1 weak); 1 mismatch; 2 failed; 2 not run; 2 inconclusive; alternatives 1/1; "
                               "consistency 0/1; fitted 1")
    # After a round trip through the CSV (weak as text, readings of no-reference rows empty) the same.
    assert headline(read_scoreboard(write_scoreboard(board, two_papers[0][0].parent / "s.csv"))) == headline(board)
    empty = pd.DataFrame(columns=list(SCOREBOARD_COLUMNS))
    assert headline(empty) == ("0 of 0 default rows match (0 at the reference's precision, 0 within its seed noise; "
                               "0 weak); 0 mismatch; 0 failed; 0 not run; 0 inconclusive; alternatives 0/0; "
                               "consistency 0/0; fitted 0")


def test_the_headline_names_the_root_failure_of_items_that_could_not_run_once():
    """An item whose input could not be made (a download that failed) is not run, not failed; the headline counts it
    so and names the failed input once, however many rows it kept from running (unfinished_rows' notes)."""
    blocked = "not run in this run: {} could not run: it needs fetch_data[name={}], which failed: OSError: offline"
    board = pd.DataFrame({
        "paper": ["lu2024"] * 5, "item": ["lu2024-table3"] * 3 + ["lu2024-fig4", "lu2024-table1"],
        "quantity": list("abcde"), "reading": ["default"] * 5, "check": ["reproduction"] * 5,
        "verdict": ["not-run"] * 4 + ["failed"],
        "note": [blocked.format("lu2024_table3", "mnist")] * 3 + [blocked.format("lu2024_fig4", "cifar10"),
                                                                   "the job failed in this run: RuntimeError: boom"],
        "preset": ["paper"] * 5})
    text = headline(board)
    assert "; 1 failed; 4 not run (4 of them: an input could not be made, fetch_data[name=mnist] failed, and 1 other " \
           "input(s)); " in text
    assert text.count("fetch_data") == 1
    board.loc[3, "note"] = ""  # not run for a reason of the plan (no GPU): nothing to name
    board.loc[:2, "note"] = ""
    assert "; 4 not run; " in headline(board)


def test_a_repeated_reported_value_is_shown_but_counted_once():
    board = pd.DataFrame({
        "paper": ["joudaki2023"] * 3, "item": ["joudaki2023-table2", "joudaki2023-tableb1", "joudaki2023-fig5"],
        "quantity": ["beta_relu_a1", "beta_relu_a1", "log10_gap_l30"], "verdict": ["match", "match", "mismatch"],
        "provenance": ["printed"] * 3, "reading": ["default"] * 3, "check": ["consistency", "consistency", "reproduction"],
        "same_as": [None, "joudaki2023-table2:beta_relu_a1", None], "weak": [False] * 3,
    })
    assert apart_counts(board).loc["joudaki2023", "consistency"] == 1
    assert headline(board).startswith("0 of 1 default rows match")


def test_a_fitted_reading_never_counts_as_a_match():
    board = pd.DataFrame({
        "paper": ["lu2024"] * 3, "item": ["lu2024-fig2"] * 3, "quantity": ["a", "a_d300", "a_offset"],
        "verdict": ["mismatch", "fitted", "match"], "provenance": ["printed"] * 3,
        "reading": ["default", "fitted", "alternative"], "check": ["reproduction"] * 3, "weak": [False] * 3,
    })
    assert summarize_scoreboard(board).loc["lu2024", "match"] == 0
    assert match_rates(board).loc["lu2024", "printed"] == "0 / 1 (0 %)"
    assert headline(board).startswith("0 of 1 default rows match")


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
    board = pd.DataFrame({
        "paper": ["lu2024", "lu2024", "lu2024", "lu2024", "lu2024", "meterez2024", "meterez2024"],
        "verdict": ["match", "mismatch", "not-run", "failed", "match", "match", "no-reference"],
        "provenance": ["printed", "printed", "read-off", "derived", "printed", "read-off", None],
        "reading": ["default", "default", "default", "default", "alternative", "default", None],
    })
    rates = match_rates(board)  # the failure is scored; the alternative is not a headline row
    assert rates.loc["lu2024", "printed"] == "1 / 2 (50 %)" and rates.loc["lu2024", "read-off"] == "–"
    assert rates.loc["lu2024", "derived"] == "0 / 1 (0 %)"
    assert rates.loc["meterez2024", "read-off"] == "1 / 1 (100 %)" and rates.loc["total", "derived"] == "0 / 1 (0 %)"


def test_an_all_empty_text_column_reads_back_as_empty_strings():
    """A CSV text column with every cell empty reads as float NaN; it comes back as "" (no fill of a string into a
    float column, which pandas 4 refuses), and numbers in a text column as their text."""
    assert as_text(pd.Series([float("nan")] * 2)).tolist() == ["", ""]
    assert as_text(pd.Series([1.5, None, "x"], dtype=object)).tolist() == ["1.5", "", "x"]
