"""Every scored row says where its number came from: the scoreboard's ``origin`` column (architecture §7), its kind
(``origin_kind``), the index's count of the headline rows by origin, the scoreboard page's origin cells and filter,
and an item's "Where these numbers come from" line."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from isonorm.report.markup import reference_table
from isonorm.report.scoreboard_page import ORIGIN_FILTER, origin_label, scoreboard_page
from isonorm.report.site import build_index
from isonorm.verdicts.claims import write_claims
from isonorm.verdicts.scoreboard import (ORIGIN_KINDS, SCOREBOARD_COLUMNS, SCORED_COLUMNS, UNKNOWN_ORIGIN,
                                         origin_counts, origin_kind, origin_line, read_scoreboard, read_scored,
                                         score_files, write_scoreboard, write_scored)
from isonorm.verdicts.stages import paper_scored

NAN = float("nan")
HERE = "computed (cpu:x86_64, 2026-12-01, b5ab422)"
BUNDLE = "imported from real-data-cpu-2026-12-02 (cpu:x86_64, 2026-12-02, c3fb5af)"
STALE = "stale, imported from old-cpu-2026-11-01 (cpu:x86_64, 2026-11-01, 1a2b3c4)"
ORIGINS = {
    "lu2024-fig2": HERE,
    "lu2024-fig3": f"{BUNDLE}; {HERE}",  # some of its files imported, some computed here
    "lu2024-table5": STALE,
    "lu2024-fig4": HERE,  # files of it exist, but it produced no claim: its rows are not run all the same
    "lu2024-fig9": BUNDLE,
    # lu2024-fig1 has none (a notebook-only item, or scored outside the workflow): computed
}


def reference(item, quantity, reported, **optional):
    return {"item": item, "quantity": quantity, "description": quantity, "reported": reported, "kind": "read-off",
            "compare": "abs", "tolerance": 0.1, "provenance": "printed", "source": "test", **optional}


@pytest.fixture
def paper(tmp_path):
    """lu2024's reference file and claims: a match, a mismatch, a NaN, a missing quantity, an item without claims,
    an alternative and a fitted reading, a consistency check, a quantity no reference lists."""
    path = tmp_path / "lu2024.yaml"
    path.write_text(yaml.safe_dump({"paper": "lu2024", "title": "t", "references": [
        reference("lu2024-fig2", "a", 1.0),  # match
        reference("lu2024-fig2", "b", 1.0),  # mismatch
        reference("lu2024-table5", "c", 1.0),  # NaN -> failed
        reference("lu2024-table5", "d", 1.0),  # not among the claims of an item that ran -> failed
        reference("lu2024-fig4", "a", 1.0),  # the item produced no claim -> not-run
        reference("lu2024-fig3", "e", 1.0),  # match
        reference("lu2024-fig3", "e_offset", 1.0, reading="alternative", note="another offset"),  # counted apart
        reference("lu2024-fig3", "e_d300", 1.0, reading="fitted", note="width chosen to fit"),  # counted apart
        reference("lu2024-fig3", "check", 1.0, check="consistency"),  # counted apart
        reference("lu2024-fig1", "f", 1.0),  # match, its item without an origin
    ]}))
    claims = pd.DataFrame({
        "item": ["lu2024-fig2", "lu2024-fig2", "lu2024-table5", "lu2024-fig3", "lu2024-fig3", "lu2024-fig3",
                 "lu2024-fig3", "lu2024-fig1", "lu2024-fig9"],
        "quantity": ["a", "b", "c", "e", "e_offset", "e_d300", "check", "f", "extra"],
        "value": [1.05, 1.5, NAN, 1.0, 1.0, 1.0, 1.0, 1.0, 7.0],
        "spread": [NAN] * 9, "runs": [NAN] * 9, "note": [""] * 9})
    return path, write_claims(claims, tmp_path / "claims.parquet", "lu2024")


def origins_of(frame: pd.DataFrame) -> dict[tuple[str, str], str]:
    return {(r.item, r.quantity): r.origin for r in frame.itertuples()}


def test_each_row_says_where_its_number_came_from(paper):
    board = score_files([paper[0]], [paper[1]], "paper", ORIGINS)
    assert list(board.columns) == list(SCORED_COLUMNS) and SCOREBOARD_COLUMNS[-2:] == ("preset", "origin")
    verdicts, origins = {(r.item, r.quantity): r.verdict for r in board.itertuples()}, origins_of(board)
    assert (verdicts[("lu2024-fig2", "a")], origins[("lu2024-fig2", "a")]) == ("match", HERE)  # computed here
    assert (verdicts[("lu2024-fig2", "b")], origins[("lu2024-fig2", "b")]) == ("mismatch", HERE)
    assert origins[("lu2024-fig3", "e")] == f"{BUNDLE}; {HERE}"  # imported (in part)
    assert origin_kind(origins[("lu2024-fig3", "e")]) == "imported"
    # A NaN or a missing value failed, but came from its item's files: it keeps their origin (here a stale import).
    assert (verdicts[("lu2024-table5", "c")], origins[("lu2024-table5", "c")]) == ("failed", STALE)
    assert (verdicts[("lu2024-table5", "d")], origins[("lu2024-table5", "d")]) == ("failed", STALE)
    assert (verdicts[("lu2024-fig4", "a")], origins[("lu2024-fig4", "a")]) == ("not-run", "not run")
    assert (verdicts[("lu2024-fig9", "extra")], origins[("lu2024-fig9", "extra")]) == ("no-reference", BUNDLE)
    assert origins[("lu2024-fig1", "f")] == "computed"  # an item without an entry
    assert set(score_files([paper[0]], [paper[1]], "paper")["origin"]) == {"computed", "not run"}  # none given


def test_a_smoke_runs_unproduced_rows_are_not_run(paper):
    origins = origins_of(score_files([paper[0]], [paper[1]], "quick", ORIGINS))
    assert origins[("lu2024-table5", "c")] == STALE  # failed (NaN): its files' origin
    assert origins[("lu2024-table5", "d")] == "not run"  # not-produced at these sizes
    assert origins[("lu2024-fig4", "a")] == "not run" and origins[("lu2024-fig2", "b")] == HERE


def test_a_failed_jobs_rows_name_its_log_and_the_scored_file_keeps_every_origin(paper, tmp_path):
    """The end of a failed run scores the paper with its unfinished items (isonorm.items.unfinished_items)."""
    unfinished = {"lu2024-fig4": {"state": "failed", "cause": "lu2024_fig4 failed: boom", "log": "logs/lu2024/f.log"},
                  "lu2024-fig2": {"state": "blocked", "cause": "r could not run: it needs x, which failed", "log": ""}}
    out = tmp_path / "scored.csv"
    paper_scored(paper[0], [paper[1]], "paper", out, unfinished, origins=ORIGINS)
    scored = read_scored(out)
    origins = origins_of(scored)
    assert origins[("lu2024-fig4", "a")] == "failed (log: logs/lu2024/f.log)"
    assert scored.set_index(["item", "quantity"]).loc[("lu2024-fig4", "a"), "verdict"] == "failed"
    assert origins[("lu2024-fig2", "a")] == HERE  # measured from what exists: its origin stays
    assert origins[("lu2024-fig3", "e")] == f"{BUNDLE}; {HERE}" and origins[("lu2024-fig1", "f")] == "computed"
    unlogged = {"lu2024-fig4": {**unfinished["lu2024-fig4"], "log": ""}}
    paper_scored(paper[0], [paper[1]], "paper", out, unlogged, origins=ORIGINS)
    assert origins_of(read_scored(out))[("lu2024-fig4", "a")] == "failed"


def test_a_scored_file_from_before_the_origin_column_reads_with_its_origin_unknown(paper, tmp_path):
    path = write_scored(score_files([paper[0]], [paper[1]], "paper", ORIGINS), tmp_path / "scored.csv")
    old = pd.read_csv(path).drop(columns="origin")
    old.to_csv(path, index=False)
    scored = read_scored(path)
    assert (scored["origin"] == UNKNOWN_ORIGIN).all() and origin_kind(UNKNOWN_ORIGIN) == "unknown"
    board = tmp_path / "scoreboard.csv"
    old.loc[:, [c for c in SCOREBOARD_COLUMNS if c != "origin"]].to_csv(board, index=False)
    assert (read_scoreboard(board)["origin"] == UNKNOWN_ORIGIN).all()
    old.drop(columns="verdict").to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"missing column\(s\) \['verdict', 'origin'\]"):  # any other: an error
        read_scored(path)


@pytest.mark.parametrize("text, kind", [
    (HERE, "computed"), ("computed", "computed"),
    (BUNDLE, "imported"), (f"{BUNDLE}; {HERE}", "imported"), (f"{HERE}; {BUNDLE}", "imported"),  # any part
    (STALE, "stale"), (f"{BUNDLE}; {STALE}; {HERE}", "stale"),  # stale shows whenever a part is
    ("failed (log: logs/a.log)", "failed"), ("failed", "failed"), ("not run", "not run"),
    ("", "unknown"), (NAN, "unknown"), (None, "unknown"), (UNKNOWN_ORIGIN, "unknown"), ("computedness", "unknown"),
])
def test_origin_kind(text, kind):
    assert origin_kind(text) == kind and kind in ORIGIN_KINDS


def board_of(rows: list[tuple[str, str, str, str]], preset: str = "paper") -> pd.DataFrame:
    """Rows of (verdict, reading, check, origin)."""
    frame = pd.DataFrame(rows, columns=["verdict", "reading", "check", "origin"]).assign(
        paper="lu2024", item=[f"lu2024-fig{i}" for i in range(len(rows))], quantity="a", preset=preset,
        provenance="printed", weak=False)
    return frame.reindex(columns=list(SCOREBOARD_COLUMNS))


def test_the_index_counts_the_headline_rows_by_origin():
    board = board_of([
        ("match", "default", "reproduction", HERE), ("mismatch", "default", "reproduction", HERE),
        ("match", "default", "reproduction", f"{BUNDLE}; {HERE}"), ("match", "default", "reproduction", BUNDLE),
        ("failed", "default", "reproduction", "failed (log: logs/a.log)"),
        ("failed", "default", "reproduction", STALE),  # a NaN from a stale import: stale
        ("not-run", "default", "reproduction", "not run"), ("not-run", "default", "reproduction", "not run"),
        ("no-reference", None, None, HERE),
        # not headline rows: counted apart, or repeating another row's value
        ("match", "alternative", "reproduction", BUNDLE), ("fitted", "fitted", "reproduction", HERE),
        ("match", "default", "consistency", HERE),
    ])
    repeat = board.iloc[[0]].assign(item="lu2024-fig99", same_as="lu2024-fig0:a")  # counted under lu2024-fig0
    board = pd.concat([board, repeat], ignore_index=True)
    assert origin_counts(board) == {"computed": 3, "imported": 2, "stale": 1, "failed": 1, "not run": 2, "unknown": 0}
    assert origin_line(board) == ("Where the numbers come from: 3 computed here, 2 imported (bundle "
                                  "real-data-cpu-2026-12-02), 1 imported stale (bundle old-cpu-2026-11-01), 1 failed, "
                                  "2 not run")
    assert origin_line(board.iloc[:0]) == "Where the numbers come from: no rows yet"
    # A smoke run counts every row, as its headline does.
    smoke = board_of([("computed", "alternative", "reproduction", HERE), ("not-produced", "default", None, "not run")],
                     preset="quick")
    assert origin_line(smoke) == "Where the numbers come from: 1 computed here, 1 not run"


def test_the_pages_show_the_origin(tmp_path):
    board = board_of([("match", "default", "reproduction", HERE), ("match", "default", "reproduction", BUNDLE),
                      ("failed", "default", "reproduction", "failed (log: logs/a.log)"),
                      ("not-run", "default", "reproduction", "not run")])
    report = tmp_path / "report"
    report.mkdir()
    pages = build_index(report, write_scoreboard(board, tmp_path / "scoreboard.csv"), [], {}, [], {}, "paper")
    index = pages.index.read_text()
    assert ('<p id="origins" class="note">Where the numbers come from: 1 computed here, 1 imported (bundle '
            "real-data-cpu-2026-12-02), 1 failed, 1 not run") in index
    assert index.index('id="origins"') > index.index('id="headline"')
    page = pages.scoreboard.read_text()
    assert f'<select id="{ORIGIN_FILTER}">' in page and '<option value="not run">not run</option>' in page
    assert [f'data-origin="{k}"' in page for k in ("computed", "imported", "failed", "not run")] == [True] * 4
    assert f'<td class="origin" title="{HERE}">computed</td>' in page  # the whole text on hover
    assert '<td class="origin" title="failed (log: logs/a.log)">failed (log)</td>' in page
    assert origin_label(BUNDLE) == "imported: real-data-cpu-2026-12-02" and origin_label(STALE).startswith("stale: ")
    # Without the column (a frame made elsewhere) the page still renders, each origin unknown.
    assert 'data-origin="unknown"' in scoreboard_page(board.assign(origin=NAN), {}, "t", "", "s.csv")


def test_an_items_table_says_where_its_numbers_come_from(paper, tmp_path):
    """The page reads the scored rows as the paper_claims job wrote them (notebook.open_paper)."""
    scored = read_scored(write_scored(score_files([paper[0]], [paper[1]], "paper", ORIGINS), tmp_path / "s.csv"))
    fig2 = reference_table(scored[scored["item"] == "lu2024-fig2"])
    assert f'<p class="origin">Where these numbers come from: {HERE}</p>' in fig2
    notes = fig2[fig2.index('<details class="notes">'):]
    assert "<th>origin</th>" in notes and f"<td>{HERE}</td>" in notes  # each row's, folded
    table5 = reference_table(scored[scored["item"] == "lu2024-table5"].assign(
        origin=[STALE, "not run"]))  # rows that differ: each origin with its count
    assert f"Where these numbers come from: {STALE} (1 row) · not run (1 row)</p>" in table5
