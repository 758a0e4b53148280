"""The index page (architecture §1, §3, §7) and runtime-per-rule from Snakemake benchmark files."""

from __future__ import annotations

import math
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pandas as pd
import pytest

from isonorm.report.benchmarks import read_benchmark, read_benchmarks, rule_and_wildcards, runtime_per_rule
from isonorm.report.scoreboard import SCOREBOARD_COLUMNS, write_scoreboard
from isonorm.report.site import build_index

PAPERS = [
    {"slug": "lu2024", "title": "Paper <one>", "html": "lu2024.html"},
    {"slug": "joudaki2023", "title": "Paper two", "html": "joudaki2023.html"},
]


class Links(HTMLParser):
    """Ids, hrefs, srcs and tags of a page, for a static check (the browser check is in test_report_browser)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.ids, self.hrefs, self.srcs, self.tags = set(), [], [], set()
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.add(tag)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for key, bucket in (("href", self.hrefs), ("src", self.srcs)):
            if key in attrs:
                bucket.append(attrs[key])


def write_benchmark(path: Path, rows: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("s\th:m:s\tmax_rss\tmax_vms\n" + rows)
    return path


@pytest.fixture
def fake_report(tmp_path):
    report = tmp_path / "report"
    report.mkdir()
    (report / "lu2024.html").write_text('<html><body><figure id="lu2024-fig2"></figure></body></html>')
    board = pd.DataFrame([
        ["lu2024", "lu2024-fig2", "a", 1.0, 1.05, 0.1, "match", "printed", "quick"],
        ["lu2024", "lu2024-fig2", "b", 1.0, 3.0, 0.1, "mismatch", "read-off", "quick"],
        ["joudaki2023", "joudaki2023-fig1", "a", 2.0, float("nan"), 0.1, "not-run", "read-off", "quick"],
    ], columns=list(SCOREBOARD_COLUMNS))
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
    index = build_index(report, scoreboard, PAPERS, config, files, provenance, preset="quick")
    assert index == report / "index.html"
    text = index.read_text()
    page = Links(text)

    assert "lu2024.html" in page.hrefs and not any(h.startswith("joudaki2023.html") for h in page.hrefs)
    assert "joudaki2023 <em>(not yet reproduced)</em>" in text
    assert "lu2024.html#lu2024-fig2" in page.hrefs  # scoreboard items link into their page
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

    assert "class=\"preset-banner\"" in text and "quick</strong> preset" in text
    assert "Paper &lt;one&gt;" in text  # escaped
    assert 'class="verdict-mismatch">mismatch' in text
    assert '<tr id="paper-lu2024"><td><a href="lu2024.html">lu2024</a></td><td>Paper &lt;one&gt;</td>' \
           "<td>1</td><td>1</td><td>0</td><td>0</td><td>2</td></tr>" in text
    assert "match-rates" in page.ids  # per paper and provenance: the printed match, the read-off does not
    assert "1 / 1 (100 %)" in text and "0 / 1 (0 %)" in text
    for needle in ("abc123", "cpu:test", "torch", "widths:", "train_lu2024", "simulate", "bn/seed0"):
        assert needle in text, needle


def test_paper_preset_has_no_banner(fake_report):
    report, scoreboard, files, provenance, config = fake_report
    text = build_index(report, scoreboard, PAPERS, config, [], provenance, preset="paper").read_text()
    assert "class=\"preset-banner\"" not in text and "No benchmark files yet" in text


def test_index_needs_complete_paper_entries(fake_report):
    report, scoreboard, files, provenance, config = fake_report
    with pytest.raises(ValueError, match="slug, title and html"):
        build_index(report, scoreboard, [{"slug": "lu2024"}], config, files, provenance, preset="paper")


def test_empty_scoreboard_builds(fake_report, tmp_path):
    report, _, files, provenance, config = fake_report
    empty = write_scoreboard(pd.DataFrame(columns=list(SCOREBOARD_COLUMNS)), tmp_path / "empty.csv")
    text = build_index(report, empty, PAPERS, config, files, provenance, preset="paper").read_text()
    assert "<td>0</td><td>0</td><td>0</td><td>0</td><td>0</td>" in text


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
