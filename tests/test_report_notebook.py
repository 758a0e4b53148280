"""ItemRenderer: files per item, the <figure id=...> HTML, the reference table, unique ids (architecture §2, §7)."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.image
import matplotlib.pyplot as plt
import pandas as pd
import pytest
import yaml

import isonorm.report.notebook as notebook
from isonorm.report.claims import write_claims
from isonorm.report.notebook import FIGURE_FORMATS, ItemRenderer


@pytest.fixture
def shown(monkeypatch):
    """What the renderer displays, as HTML strings (instead of a notebook's output area)."""
    outputs: list[str] = []
    monkeypatch.setattr(notebook, "display", lambda obj: outputs.append(obj.data))
    return outputs


@pytest.fixture
def paper_files(tmp_path):
    reference = tmp_path / "lu2024.yaml"
    reference.write_text(yaml.safe_dump({"paper": "lu2024", "title": "t", "references": [
        {"item": "lu2024-fig2", "quantity": "slope", "description": "slope of a line", "reported": 2.0,
         "kind": "claim", "compare": "abs", "tolerance": 0.5, "provenance": "printed", "source": "test source"},
        {"item": "lu2024-fig2", "quantity": "offset", "description": "offset", "reported": 0.0,
         "kind": "read-off", "compare": "abs", "tolerance": 0.1, "provenance": "printed", "source": "test"},
        {"item": "lu2024-table5", "quantity": "mean", "description": "a mean", "reported": 3.0,
         "kind": "exact", "compare": "rel", "tolerance": 0.01, "provenance": "printed", "source": "test"},
    ]}))
    claims = tmp_path / "claims.parquet"
    write_claims(pd.DataFrame({"item": ["lu2024-fig2", "lu2024-fig2"], "quantity": ["slope", "offset"],
                               "value": [2.2, 0.9], "note": ["fit", ""]}), claims, "lu2024")
    return reference, claims


def tiny_figure():
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([0, 1, 2], [0, 1, 4])
    return fig


def test_figure_writes_files_and_html(tmp_path, paper_files, shown):
    renderer = ItemRenderer("lu2024", tmp_path / "report", *paper_files, preset="quick")
    fig = tiny_figure()
    renderer.figure(fig, "lu2024-fig2", "Slope & offset <check>", deviations=["fewer seeds", "smaller width"])
    for fmt in FIGURE_FORMATS:
        assert (tmp_path / "report" / "lu2024" / f"lu2024-fig2.{fmt}").stat().st_size > 0
    height, width, _ = matplotlib.image.imread(tmp_path / "report" / "lu2024" / "lu2024-fig2.png").shape
    assert height > 0 and width > 0
    assert not plt.fignum_exists(fig.number)  # closed: the inline backend must not show it twice

    assert len(shown) == 1 and shown[0] == "<style>" + shown[0].split("<style>", 1)[1]  # styles travel along
    html = renderer.rendered["lu2024-fig2"]
    assert html in shown[0]
    assert re.search(r'<figure id="lu2024-fig2" class="item">', html)
    assert '<img src="lu2024/lu2024-fig2.png"' in html  # relative to report/lu2024.html
    assert "Slope &amp; offset &lt;check&gt;" in html  # escaped
    assert "fewer seeds; smaller width" in html
    assert "quick preset" in html
    # Reference rows of this item only, with the scoreboard's verdicts: |2.2-2| <= 0.5, |0.9-0| > 0.1.
    assert 'class="verdict-match">match' in html and 'class="verdict-mismatch">mismatch' in html
    assert "a mean" not in html
    assert html.index("<figcaption>") < html.index("Reported vs reproduced") < html.index("</figcaption>")


def test_paper_preset_has_no_badge_and_second_item_no_second_style(tmp_path, paper_files, shown):
    renderer = ItemRenderer("lu2024", tmp_path, *paper_files, preset="paper")
    renderer.figure(tiny_figure(), "lu2024-fig2", "c")
    renderer.figure(tiny_figure(), "lu2024-fig3", "c")
    assert "preset-badge" not in "".join(renderer.rendered.values())
    assert "<style>" in shown[0] and "<style>" not in shown[1]
    assert "Reported vs reproduced" not in renderer.rendered["lu2024-fig3"]  # no reference, no table


def test_table_writes_csv_markdown_latex(tmp_path, paper_files, shown):
    renderer = ItemRenderer("lu2024", tmp_path, *paper_files, preset="paper")
    frame = pd.DataFrame({"model": ["bert_1", "t5"], "mean": [1 / 3, 2.0]})
    renderer.table(frame, "lu2024-table5", "Means & 50% of_them", deviations="one model")
    out = tmp_path / "lu2024"
    pd.testing.assert_frame_equal(pd.read_csv(out / "lu2024-table5.csv"), frame)  # full precision
    markdown = (out / "lu2024-table5.md").read_text()
    assert markdown.splitlines()[0].replace(" ", "") == "|model|mean|" and "0.3333" in markdown
    latex = (out / "lu2024-table5.tex").read_text()
    assert "\\begin{tabular}" in latex and "\\label{lu2024-table5}" in latex and "bert\\_1" in latex
    assert "\\caption{Means \\& 50\\% of\\_them}" in latex
    html = renderer.rendered["lu2024-table5"]
    assert html.startswith('<figure id="lu2024-table5" class="item"><table class="data">')
    assert "0.3333" in html and "one model" in html
    assert 'href="lu2024/lu2024-table5.csv"' in html
    assert 'class="verdict-not-run">not-run' in html  # referenced, but no claim was produced


def test_not_reproducible_section(tmp_path, shown):
    renderer = ItemRenderer("daneshmand2021", tmp_path, None, None, preset="paper")
    renderer.not_reproducible("daneshmand2021-apph", "needs <proprietary> data")
    html = renderer.rendered["daneshmand2021-apph"]
    assert html.startswith('<section id="daneshmand2021-apph" class="item not-reproducible">')
    assert "needs &lt;proprietary&gt; data" in html
    assert not (tmp_path / "daneshmand2021").exists()  # nothing to save


def test_item_ids_are_unique_and_valid(tmp_path, shown):
    renderer = ItemRenderer("lu2024", tmp_path, None, tmp_path / "not-yet.parquet", preset="paper")
    renderer.figure(tiny_figure(), "lu2024-fig2", "c")
    with pytest.raises(ValueError, match="rendered twice"):
        renderer.table(pd.DataFrame({"a": [1]}), "lu2024-fig2", "c")
    with pytest.raises(ValueError, match="start it with 'lu2024-'"):
        renderer.not_reproducible("joudaki2023-fig2", "r")
    with pytest.raises(ValueError, match="lower-case"):
        renderer.not_reproducible("lu2024-Fig 2", "r")
    with pytest.raises(ValueError, match="unknown paper slug"):
        ItemRenderer("lu2023", tmp_path, None, None, preset="paper")
    assert list(renderer.rendered) == ["lu2024-fig2"]


def test_package_exports_renderer_lazily():
    import isonorm.report

    assert isonorm.report.ItemRenderer is ItemRenderer
    with pytest.raises(AttributeError, match="no attribute 'Renderer'"):
        isonorm.report.Renderer  # noqa: B018


def test_open_paper_reads_the_parameters_sets_the_style_and_loads_results(tmp_path, monkeypatch, paper_files):
    import seaborn as sns

    from isonorm.results import write_results

    reference, claims = paper_files
    monkeypatch.setattr(notebook, "REFERENCE_DIR", reference.parent)  # notebooks/reference/<slug>.yaml by default
    results = tmp_path / "results"
    write_results(pd.DataFrame({"x": [1.0, 2.0]}), results / "fig2" / "a.parquet", config={})
    results.joinpath("claims.parquet").write_bytes(claims.read_bytes())
    applied: dict = {}
    monkeypatch.setattr(sns, "set_theme", lambda **style: applied.update(style))

    page = notebook.open_paper("lu2024", results_dir=results, report_dir=tmp_path / "report", preset="quick",
                               config_json='{"fig2": {"layer": "linearH.0"}}', style={"style": "white"})
    assert page.cfg == {"fig2": {"layer": "linearH.0"}} and applied == {"style": "white"}
    assert list(page.load("fig2/*.parquet").x) == [1.0, 2.0]
    assert page.load("table5/*.parquet") is None  # not run in this configuration
    scored = page.render.scored  # the paper's reference values against this run's claims
    assert set(scored.quantity) == {"slope", "offset", "mean"}
