"""The index page (architecture §1, §3, §7) and runtime-per-rule from Snakemake benchmark files."""

from __future__ import annotations

import math
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pandas as pd
import pytest
import torch

from isonorm.report.benchmarks import read_benchmark, read_benchmarks, rule_and_wildcards, runtime_per_rule
from isonorm.report.item_grid import page_items, tile_state
from isonorm.report.markup import VERDICT_COLOURS, VERDICT_EDGES
from isonorm.verdicts.scoreboard import SCOREBOARD_COLUMNS, write_scoreboard
from isonorm.report.site import SitePages, build_index, job_devices
from isonorm.results import write_results
from isonorm.report.verdict_figure import verdict_counts

PAPERS = [
    {"slug": "lu2024", "title": "Paper <one>", "html": "lu2024.html"},
    {"slug": "joudaki2023", "title": "Paper two", "html": "joudaki2023.html"},
]


class Links(HTMLParser):
    """Ids, hrefs, srcs, tags, tiles and table rows of a page, for a static check (the browser check is in
    test_report_browser)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.ids, self.hrefs, self.srcs, self.tags = set(), [], [], set()
        self.tiles: dict[str, dict] = {}  # data-item -> tag, classes, href, title
        self.rows: list[dict] = []  # <tr data-verdict=...> of the scoreboard page
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.add(tag)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for key, bucket in (("href", self.hrefs), ("src", self.srcs)):
            if key in attrs:
                bucket.append(attrs[key])
        classes = (attrs.get("class") or "").split()
        if "tile" in classes:
            self.tiles[attrs["data-item"]] = {"tag": tag, "classes": classes, "href": attrs.get("href"),
                                              "title": attrs.get("title")}
        if tag == "tr" and "data-verdict" in attrs:
            self.rows.append(attrs)


# The lu2024 page as ItemRenderer writes it (figure or section of class "item"), inside nbconvert's wrapping.
LU2024_PAGE = """<html><body><div class="jp-OutputArea-output">
<figure id="lu2024-fig2" class="item"><img alt="x"><figcaption>fig2</figcaption></figure>
<figure id="lu2024-fig3" class="item"></figure>
<figure id="lu2024-fig4" class="item"></figure>
<figure id="lu2024-table5" class="item"></figure>
<section id="lu2024-fig5" class="item not-run"><h3>not run</h3></section>
<section id="lu2024-apptable3" class="item not-reproducible"><h3>not reproducible</h3></section>
<div id="lu2024-notanitem">an id, but not an item</div>
</div></body></html>"""


def write_benchmark(path: Path, rows: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("s\th:m:s\tmax_rss\tmax_vms\n" + rows)
    return path


@pytest.fixture
def fake_report(tmp_path):
    report = tmp_path / "report"
    report.mkdir()
    (report / "lu2024.html").write_text(LU2024_PAGE)
    nan = float("nan")
    board = pd.DataFrame([
        ["lu2024", "lu2024-fig2", "a", 1.0, 1.05, 0.1, "match", "printed", "paper"],
        ["lu2024", "lu2024-fig2", "b", 1.0, 3.0, 0.1, "mismatch", "read-off", "paper"],
        ["lu2024", "lu2024-fig2", "c", 1.0, nan, 0.1, "not-run", "read-off", "paper"],
        ["lu2024", "lu2024-fig3", "a", 10.0, 10.0, 0.5, "match", "derived", "paper"],
        ["lu2024", "lu2024-fig3", "extra", nan, 4.0, nan, "no-reference", nan, "paper"],
        ["lu2024", "lu2024-fig4", "extra", nan, 4.0, nan, "no-reference", nan, "paper"],
        ["lu2024", "lu2024-fig5", "a", 1.0, nan, 0.1, "not-run", "printed", "paper"],
        ["lu2024", "lu2024-apptable3", "a", 1.0, nan, 0.1, "not-run", "printed", "paper"],
        ["lu2024", "lu2024-fig9", "a", 2.0, 2.0, 0.1, "match", "printed", "paper"],  # on no page
        ["joudaki2023", "joudaki2023-fig1", "a", 2.0, nan, 0.1, "not-run", "read-off", "paper"],
        # Counted apart, never in the headline, the bars or the tiles: a fitted reading that would be a mismatch,
        # an alternative reading and a consistency check that do not match.
        ["lu2024", "lu2024-fig3", "a_d300", 10.0, 99.0, 0.5, "fitted", "printed", "paper"],
        ["lu2024", "lu2024-fig9", "a_offset", 2.0, 9.0, 0.1, "mismatch", "printed", "paper"],
        ["lu2024", "lu2024-fig9", "input_norm", 2.0, 9.0, 0.1, "mismatch", "printed", "paper"],
        # A default row that failed (the item ran, the value is NaN).
        ["lu2024", "lu2024-fig2", "d", 1.0, nan, 0.1, "failed", "derived", "paper"],
    ], columns=["paper", "item", "quantity", "reported", "reproduced", "tolerance", "verdict", "provenance", "preset"])
    board = board.reindex(columns=list(SCOREBOARD_COLUMNS))
    board["reading"] = ["default"] * 10 + ["fitted", "alternative", "default", "default"]
    board.loc[board["verdict"] == "no-reference", "reading"] = nan
    board["check"] = ["reproduction"] * 12 + ["consistency", "reproduction"]
    board["weak"] = [False, False, False, True] + [False] * 10  # lu2024-fig3 a: a weak match
    scoreboard = write_scoreboard(board, tmp_path / "results" / "scoreboard.csv")
    benchmarks = tmp_path / "results" / "benchmarks"
    files = [
        write_benchmark(benchmarks / "train_lu2024" / "bn" / "seed0.tsv", "12.5\t0:00:12\t300.0\t900.0\n"),
        write_benchmark(benchmarks / "train_lu2024" / "ln.tsv", "7.5\t0:00:07\tNA\tNA\n"),
        write_benchmark(benchmarks / "simulate" / "d64.tsv", "1.0\t0:00:01\t50\t60\n3.0\t0:00:03\t70\t80\n"),
        benchmarks / "never_ran" / "x.tsv",  # a job that has not run yet
    ]
    provenance = {"git_commit": "abc123", "device": "cpu:test", "packages": {"torch": "9.9"}}
    config = {"lu2024": {"fig2": {"widths": [8, 16]}}, "preset": "quick"}
    return report, scoreboard, files, provenance, config


def test_index_links_only_existing_pages_and_resolves(fake_report):
    report, scoreboard, files, provenance, config = fake_report
    pages = build_index(report, scoreboard, PAPERS, config, files, provenance, preset="quick")
    assert pages == SitePages(report / "index.html", report / "scoreboard.html")
    index = pages.index
    text = index.read_text()
    page = Links(text)

    assert "lu2024.html" in page.hrefs and not any(h.startswith("joudaki2023.html") for h in page.hrefs)
    assert "joudaki2023 <em>(not yet reproduced)</em>" in text
    assert "lu2024.html#lu2024-fig2" in page.hrefs  # tiles link into their page
    assert "scoreboard.html" in page.hrefs
    for href in page.hrefs:  # no broken link
        url = urlsplit(href)
        target = report / unquote(url.path) if url.path else index
        assert target.is_file(), href
        if url.fragment:
            assert url.fragment in Links(target.read_text()).ids, href
    # Self-contained: no script, no external asset.
    assert "script" not in page.tags and page.srcs == []
    assert not any(h.startswith(("http:", "https:", "//")) for h in page.hrefs)
    assert 'href="http' not in text and "<link" not in text

    assert 'class="made-with">Made with the <strong>quick</strong> preset, git commit <code>abc123</code>' in text
    assert "class=\"preset-banner\"" in text and "quick</strong> preset" in text
    assert "Paper &lt;one&gt;" in text  # escaped
    # One table of counts per paper (items, then the scoreboard rows by verdict); no separate summary table.
    # items 7; match, mismatch, inconclusive, failed, not-run, no-reference, total; matches within seed noise,
    # weak matches, alternatives, consistency, fitted
    assert '<tr id="paper-lu2024"><td><a href="lu2024.html">lu2024</a></td><td>Paper &lt;one&gt;</td>' \
           "<td>7</td><td>3</td><td>1</td><td>0</td><td>1</td><td>3</td><td>2</td><td>10</td>" \
           "<td>0</td><td>1</td><td>0 / 1</td><td>0 / 1</td><td>1</td></tr>" in text
    assert ('id="headline" class="headline"><strong>3 of 5 default rows match (3 at the reference&#x27;s '
            "precision, 0 within its seed noise; 1 weak); 1 mismatch; 1 failed; 4 not run; 0 inconclusive; "
            "alternatives 0/1; consistency 0/1; fitted 1</strong>") in text
    assert ("0 of 1 alternative readings match; 0 of 1 consistency checks hold; 1 fitted readings") in text
    assert "summary" not in page.ids and "Scoreboard summary" not in text
    assert "match-rates" in page.ids  # per paper and provenance: the printed match, the read-off does not
    assert "2 / 2 (100 %)" in text and "0 / 1 (0 %)" in text and "1 / 2 (50 %)" in text
    for needle in ("abc123", "cpu:test", "torch", "widths:", "train_lu2024", "simulate", "bn/seed0"):
        assert needle in text, needle
    # Top to bottom: the figure, the items, the papers, match rates, the scoreboard link, runtime, provenance.
    order = ["verdict-figure", 'id="items"', 'id="papers"', 'id="match-rates"', 'href="scoreboard.html">the',
             'id="runtime"', 'id="provenance"']
    assert [text.index(n) for n in order] == sorted(text.index(n) for n in order)


def test_tiles_are_coloured_by_the_worst_verdict_and_link_to_existing_ids(fake_report):
    report, scoreboard, files, provenance, config = fake_report
    tiles = Links(build_index(report, scoreboard, PAPERS, config, files, provenance, "quick").index.read_text()).tiles
    state = {item: next(c.removeprefix("verdict-") for c in t["classes"] if c.startswith("verdict-"))
             for item, t in tiles.items()}
    assert state == {
        "lu2024-fig2": "failed",  # match + mismatch + failed + not-run: failed is worst
        "lu2024-fig3": "match",  # neither a no-reference row nor a fitted reading counts against it
        "lu2024-fig4": "no-reference",
        "lu2024-table5": "no-reference",  # on the page, in no scoreboard row
        "lu2024-fig5": "not-run",
        "lu2024-apptable3": "not-reproducible",  # the page's mark wins over its not-run rows
        "lu2024-fig9": "match",  # its alternative reading and consistency check do not colour it
        "joudaki2023-fig1": "not-run",
    }
    assert list(tiles)[:6] == ["lu2024-fig2", "lu2024-fig3", "lu2024-fig4", "lu2024-table5", "lu2024-fig5",
                               "lu2024-apptable3"]  # page order, then items on no page
    ids_on_page = Links(LU2024_PAGE).ids
    for item in ("lu2024-fig2", "lu2024-fig3", "lu2024-fig4", "lu2024-table5", "lu2024-fig5", "lu2024-apptable3"):
        assert tiles[item]["tag"] == "a" and tiles[item]["href"] == f"lu2024.html#{item}", item
        assert item in ids_on_page
    for item in ("lu2024-fig9", "joudaki2023-fig1"):  # in the scoreboard, on no page: plain text
        assert tiles[item]["tag"] == "span" and tiles[item]["href"] is None, item
        assert "not on any page" in tiles[item]["title"]
    assert "lu2024-notanitem" not in tiles
    assert tiles["lu2024-fig2"]["title"] == "lu2024-fig2: 1 match, 1 mismatch, 1 failed, 1 not-run"
    assert tiles["lu2024-fig3"]["title"] == "lu2024-fig3: 1 match, 1 no-reference"
    assert tiles["lu2024-apptable3"]["title"] == "lu2024-apptable3: not reproducible; 1 not-run"
    assert tiles["lu2024-table5"]["title"] == "lu2024-table5: no reference values"
    text = (report / "index.html").read_text()
    for name in ("match", "mismatch", "failed", "not-run", "no-reference", "not-reproducible"):  # the legend
        assert f'class="swatch verdict-{name}"' in text
        # One palette: the tiles' and the verdict cells' colours come from it.
        assert f".tile.verdict-{name}, .swatch.verdict-{name} {{ background: {VERDICT_COLOURS[name]};" in text


def test_tile_state_order():
    assert tile_state({"match": 2, "mismatch": 1, "failed": 1, "not-run": 1}, {"item"}) == "failed"
    assert tile_state({"match": 2, "mismatch": 1, "not-run": 1}, {"item"}) == "mismatch"
    assert tile_state({"match": 2, "not-run": 1}, {"item"}) == "not-run"
    assert tile_state({"match": 2, "no-reference": 1}, {"item"}) == "match"
    assert tile_state({"no-reference": 3}, {"item"}) == "no-reference"
    assert tile_state({}, {"item", "not-run"}) == "not-run"
    assert tile_state({"match": 1}, {"item", "not-reproducible"}) == "not-reproducible"


def test_page_items_reads_item_ids_in_page_order(tmp_path):
    page = tmp_path / "p.html"
    page.write_text(LU2024_PAGE)
    items = page_items(page)
    assert list(items)[0] == "lu2024-fig2" and "not-reproducible" in items["lu2024-apptable3"]
    assert "lu2024-notanitem" not in items and page_items(tmp_path / "missing.html") == {}


def test_verdict_figure_is_inline_svg_in_the_palette(fake_report):
    report, scoreboard, files, provenance, config = fake_report
    text = build_index(report, scoreboard, PAPERS, config, files, provenance, "paper").index.read_text()
    start = text.index('<figure id="verdict-figure"')
    figure = text[start:text.index("</figure>", start)]
    assert "<svg " in figure and "<?xml" not in text and "<!DOCTYPE svg" not in text
    for name in ("match", "mismatch", "failed", "not-run"):  # the bars are filled and edged with the palette
        assert f"fill: {VERDICT_COLOURS[name]}" in figure and f"stroke: {VERDICT_EDGES[name]}" in figure
    assert "no paper reports: 2 in all) are left out of the bars" in figure
    counts = verdict_counts(pd.read_csv(scoreboard), ["lu2024", "joudaki2023", "meterez2024"])
    # The fitted, alternative and consistency rows are not in the bars.
    assert counts.loc["lu2024"].to_dict() == {"match": 3, "mismatch": 1, "inconclusive": 0, "failed": 1, "not-run": 3,
                                              "no-reference": 2}
    assert counts.loc["meterez2024"].sum() == 0  # a paper without rows has an empty bar
    assert "3 of 8 match (38 %), 1 mismatch, 1 failed" in figure


def test_scoreboard_page_has_every_row_filters_and_links(fake_report):
    report, scoreboard, files, provenance, config = fake_report
    text = build_index(report, scoreboard, PAPERS, config, files, provenance, "quick").scoreboard.read_text()
    page = Links(text)
    board = pd.read_csv(scoreboard)
    assert [r["data-verdict"] for r in page.rows] == list(board["verdict"])
    assert [r["data-paper"] for r in page.rows] == list(board["paper"])
    assert page.rows[0]["data-text"] == "lu2024-fig2 a"
    assert "14 of 14 rows shown" in text  # also without JavaScript
    assert [r["data-reading"] for r in page.rows] == list(board["reading"].fillna(""))
    assert [r["data-weak"] for r in page.rows] == ["yes" if w else "no" for w in board["weak"]]
    assert '<nav><a href="index.html">' in text
    # Items link to their page only where the page shows them.
    assert "lu2024.html#lu2024-fig2" in page.hrefs and "lu2024.html#lu2024-apptable3" in page.hrefs
    assert not any("lu2024-fig9" in h or "joudaki2023" in h for h in page.hrefs)
    assert "<td>lu2024-fig9</td>" in text and "<td>joudaki2023-fig1</td>" in text
    for element in ("filter-verdict", "filter-paper", "filter-reading", "filter-weak", "filter-text", "row-count",
                    "scoreboard-table"):
        assert element in page.ids
    for verdict in ("match", "mismatch", "failed", "fitted", "not-run", "no-reference", "alternative", "yes"):
        assert f'<option value="{verdict}">' in text
    assert '<td class="number" data-value="1.05">1.05</td>' in text  # numeric columns sort by their raw value
    assert '<td class="number" data-value="">–</td>' in text
    # Plain inline JavaScript, nothing external; the filters show only when it runs.
    assert "<script>" in text and page.srcs == [] and "<link" not in text
    assert '<form id="filters" class="filters" hidden>' in text


def test_paper_preset_has_no_banner(fake_report):
    report, scoreboard, files, provenance, config = fake_report
    text = build_index(report, scoreboard, PAPERS, config, [], provenance, preset="paper").index.read_text()
    assert "class=\"preset-banner\"" not in text and "No benchmark files yet" in text
    assert "Made with the <strong>paper</strong> preset" in text


def test_index_needs_complete_paper_entries(fake_report):
    report, scoreboard, files, provenance, config = fake_report
    with pytest.raises(ValueError, match="slug, title and html"):
        build_index(report, scoreboard, [{"slug": "lu2024"}], config, files, provenance, preset="paper")


def test_empty_scoreboard_builds(fake_report, tmp_path):
    report, _, files, provenance, config = fake_report
    empty = write_scoreboard(pd.DataFrame(columns=list(SCOREBOARD_COLUMNS)), tmp_path / "empty.csv")
    pages = build_index(report, empty, PAPERS, config, files, {}, preset="paper")
    text = pages.index.read_text()
    assert "<td>0</td><td>0</td><td>0</td><td>0</td><td>0</td><td>0</td><td>0</td><td>0 / 0</td>" in text
    assert 'id="verdict-figure"' in text and "no reference values" in text
    tiles = Links(text).tiles  # the page's items still show, with no reference values
    assert tiles["lu2024-fig2"]["classes"] == ["tile", "verdict-no-reference"]
    assert tiles["lu2024-apptable3"]["classes"] == ["tile", "verdict-not-reproducible"]
    assert "0 of 0 rows shown" in pages.scoreboard.read_text()
    assert 'id="verdict-figure"' in build_index(report, empty, [], config, [], {}, "paper").index.read_text()


def test_rule_and_wildcards_from_path():
    assert rule_and_wildcards("results/benchmarks/train/lu2024/bn.tsv") == ("train", "lu2024/bn")
    assert rule_and_wildcards("/x/benchmarks/a/benchmarks/fit/w8.tsv") == ("fit", "w8")  # the innermost
    assert rule_and_wildcards("results/benchmarks/download.tsv") == ("download", "")
    with pytest.raises(ValueError, match="results/benchmarks/<rule>/<wildcards>.tsv"):
        rule_and_wildcards("results/logs/train.tsv")


def test_benchmarks_average_repeats_and_tolerate_missing_memory(fake_report):
    files = fake_report[2]
    simulate = read_benchmark(files[2])
    assert simulate["seconds"] == 2.0 and simulate["max_rss_mb"] == 70.0 and simulate["repeats"] == 2
    assert math.isnan(read_benchmark(files[1])["max_rss_mb"])
    jobs = read_benchmarks(files)
    assert len(jobs) == 3  # the missing file is skipped
    per_rule = runtime_per_rule(jobs).set_index("rule")
    assert per_rule.loc["train_lu2024", "jobs"] == 2 and per_rule.loc["train_lu2024", "total_s"] == 20.0
    assert per_rule.loc["train_lu2024", "longest_s"] == 12.5 and per_rule.loc["train_lu2024", "max_rss_mb"] == 300.0


def test_non_benchmark_file_is_rejected(tmp_path):
    path = tmp_path / "benchmarks" / "rule" / "w.tsv"
    path.parent.mkdir(parents=True)
    path.write_text("a\tb\n1\t2\n")
    with pytest.raises(ValueError, match="not a Snakemake benchmark file"):
        read_benchmark(path)


def test_the_index_shows_the_device_each_job_ran_on(fake_report, tmp_path):
    report, scoreboard, files, provenance, config = fake_report
    results = tmp_path / "results"
    frame = pd.DataFrame({"metric": ["x"], "value": [1.0]})
    paths = [write_results(frame, results / "lu2024" / "table1" / f"{name}.parquet", device=device)
             for name, device in (("sgd", None), ("adam", torch.device("cpu")))]
    devices = job_devices(paths, results)
    assert list(devices.result) == ["lu2024/table1/sgd.parquet", "lu2024/table1/adam.parquet"]
    assert devices.device.str.startswith("cpu:").all()
    text = build_index(report, scoreboard, PAPERS, config, files, provenance, "quick", devices=devices).index.read_text()
    assert 'id="devices"' in text and "lu2024/table1/adam.parquet" in text
