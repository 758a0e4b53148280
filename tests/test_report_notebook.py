"""ItemRenderer: files per item, the <figure id=...> HTML, the reference table of the scored rows, unique ids
(architecture §2, §7); open_paper and PaperPage: what the notebook rule passes, the results and their settings."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.image
import matplotlib.pyplot as plt
import pandas as pd
import pytest
import seaborn as sns
import yaml

import isonorm.report.item_notes as item_notes
import isonorm.report.notebook as notebook
from isonorm.verdicts.claims import write_claims
from isonorm.report.figure_style import THEME
from isonorm.report.item_files import FIGURE_FORMATS
from isonorm.report.markup import escape
from isonorm.report.notebook import ItemRenderer
from isonorm.verdicts.references import load_references
from isonorm.verdicts.scoreboard import read_scored, score_files, write_scored
from isonorm.results import write_results


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


def scored_renderer(report_dir, reference, claims=None, preset="paper", slug="lu2024"):
    """A renderer as open_paper makes it: the reference file loaded, the claims scored as the paper_claims rule
    scores them and read back from its ``scored.csv``."""
    scored = write_scored(score_files([reference], [] if claims is None else [claims], preset),
                          report_dir.parent / f"{report_dir.name}-scored.csv")
    return ItemRenderer(slug, report_dir, load_references(reference), read_scored(scored), preset=preset)


def tiny_figure():
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([0, 1, 2], [0, 1, 4])
    return fig


def test_figure_writes_files_and_html(tmp_path, paper_files, shown):
    renderer = scored_renderer(tmp_path / "report", *paper_files, preset="quick")
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
    assert re.search(r'<figure id="lu2024-fig2" class="item" data-paper-points="0">', html)
    assert '<img src="lu2024/lu2024-fig2.png"' in html  # relative to report/lu2024.html
    assert "Slope &amp; offset &lt;check&gt;" in html  # escaped
    assert "fewer seeds; smaller width" in html
    assert "quick preset" in html
    # Reference rows of this item only; a quick run's are computed, not compared to the paper (judge_smoke)
    assert html.count('class="verdict-computed">computed') == 2 and 'class="verdict-match"' not in html
    compared = scored_renderer(tmp_path / "paper", *paper_files, preset="paper")
    compared.figure(tiny_figure(), "lu2024-fig2", "c")
    # at the paper's settings, the scoreboard's verdicts: |2.2-2| <= 0.5, |0.9-0| > 0.1.
    paper_html = compared.rendered["lu2024-fig2"]
    assert 'class="verdict-match">match' in paper_html and 'class="verdict-mismatch">mismatch' in paper_html
    assert "a mean" not in html
    assert html.index("<figcaption>") < html.index("Reported vs reproduced") < html.index("</figcaption>")


def test_paper_preset_has_no_badge_and_second_item_no_second_style(tmp_path, paper_files, shown):
    renderer = scored_renderer(tmp_path / "report", *paper_files, preset="paper")
    renderer.figure(tiny_figure(), "lu2024-fig2", "c")
    renderer.figure(tiny_figure(), "lu2024-fig3", "c")
    assert "preset-badge" not in "".join(renderer.rendered.values())
    assert "<style>" in shown[0] and "<style>" not in shown[1]
    assert "Reported vs reproduced" not in renderer.rendered["lu2024-fig3"]  # no reference, no table


def test_table_writes_csv_markdown_latex(tmp_path, paper_files, shown):
    renderer = scored_renderer(tmp_path / "report", *paper_files, preset="paper")
    frame = pd.DataFrame({"model": ["bert_1", "t5"], "mean": [1 / 3, 2.0]})
    renderer.table(frame, "lu2024-table5", "Means & 50% of_them", deviations="one model")
    out = tmp_path / "report" / "lu2024"
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
    renderer = ItemRenderer("lu2024", tmp_path, None, None, preset="paper")
    renderer.figure(tiny_figure(), "lu2024-fig2", "c")
    with pytest.raises(ValueError, match="rendered twice"):
        renderer.table(pd.DataFrame({"a": [1]}), "lu2024-fig2", "c")
    with pytest.raises(ValueError, match="start it with 'lu2024-'"):
        renderer.not_reproducible("joudaki2023-fig2", "r")
    with pytest.raises(ValueError, match="lower-case"):
        renderer.not_reproducible("lu2024-Fig 2", "r")
    with pytest.raises(ValueError, match="invalid paper slug"):
        ItemRenderer("Lu-2024", tmp_path, None, None, preset="paper")
    assert list(renderer.rendered) == ["lu2024-fig2"]


def test_package_exports_renderer_lazily():
    import isonorm.report

    assert isonorm.report.ItemRenderer is ItemRenderer
    with pytest.raises(AttributeError, match="no attribute 'Renderer'"):
        isonorm.report.Renderer  # noqa: B018


def test_open_paper_reads_the_parameters_sets_the_style_and_loads_results(tmp_path, monkeypatch, paper_files):
    import seaborn as sns

    reference, claims = paper_files
    results = tmp_path / "results"
    write_results(pd.DataFrame({"x": [1.0, 2.0]}), results / "fig2" / "a.parquet", config={})
    scored = write_scored(score_files([reference], [claims], "quick"), results / "scored.csv")
    applied: dict = {}
    monkeypatch.setattr(sns, "set_theme", lambda **style: applied.update(style))

    run = {"results_dir": str(results), "report_dir": str(tmp_path / "report"), "preset": "quick",
           "config": {"fig2": {"layer": "linearH.0"}}, "references": str(reference), "scored": str(scored)}
    page = notebook.open_paper("lu2024", run)
    assert page.cfg == {"fig2": {"layer": "linearH.0"}} and applied == THEME  # one style for every paper
    assert list(page.load("fig2/*.parquet").x) == [1.0, 2.0]
    assert page.load("table5/*.parquet") is None  # not run in this configuration
    # the rows the paper_claims rule scored and the references, both from the rule's inputs
    assert set(page.render.scored.quantity) == {"slope", "offset", "mean"}
    assert set(page.render.references.quantity) == {"slope", "offset", "mean"}
    bare = notebook.open_paper("lu2024", {**run, "references": None, "scored": None})
    assert bare.render.scored is None and bare.render.references is None  # no tables, no paper points


def test_a_page_reads_the_settings_its_results_were_computed_with(tmp_path):
    """Settings as the job got them (the run stored in each results file's provenance), not merged again."""
    merged = {"runs": 30, "dtype": "float32"}  # what rules/common.smk item_settings gave the job
    for variant in ("a", "b"):
        write_results(pd.DataFrame({"x": [1.0]}), tmp_path / "fig2" / f"{variant}.parquet",
                      config={"function": "isonorm.experiments.lu2024.trained_nets:fnn", "config": merged,
                              "kwargs": {"variant": variant}})
    write_results(pd.DataFrame({"x": [1.0]}), tmp_path / "fig3" / "a.parquet", config={"config": {"runs": 1}})
    write_results(pd.DataFrame({"x": [1.0]}), tmp_path / "fig3" / "b.parquet", config={"config": {"runs": 2}})
    page = notebook.PaperPage("lu2024", {"fnn": {"runs": 10}, "fig2": {"runs": 30}}, tmp_path,
                              ItemRenderer("lu2024", tmp_path / "report", None, None, preset="paper"))
    assert page.settings("fig2/*.parquet") == merged
    with pytest.raises(FileNotFoundError, match="table5"):
        page.settings("table5/*.parquet")
    with pytest.raises(ValueError, match="one item's settings"):
        page.settings("fig3/*.parquet")


# --- the paper's values drawn on the figure (`plot` in the reference file, architecture §7) -------------------
# Made-up values and labels: only the drawing is under test, never what a paper reported.


def reference_entry(quantity, reported, plot=None, item="lu2024-fig2", provenance="read-off"):
    entry = {"item": item, "quantity": quantity, "description": quantity, "reported": reported,
             "kind": "read-off", "compare": "abs", "tolerance": 0.1, "provenance": provenance, "source": "test"}
    return {**entry, "plot": plot} if plot is not None else entry


# A made-up calibrated source: every read-off names one (docs/decisions/README.md, "Read-offs").
READOFF = {"scale": "linear", "precision": 0.1, "how": "test",
           "source": {"kind": "vector-pdf", "repo": "owner/name", "commit": "0" * 40, "path": "fig.pdf"},
           "calibration": {"anchors": "two ticks", "per": "1 pt per unit", "residual": 0.0}}


def renderer_with(tmp_path, entries, preset="paper"):
    reference = tmp_path / "lu2024.yaml"
    readoffs = {e["item"]: READOFF for e in entries if e["provenance"] == "read-off"}
    reference.write_text(yaml.safe_dump({"paper": "lu2024", "title": "t", "references": entries,
                                         "readoffs": readoffs}, allow_unicode=True))
    return scored_renderer(tmp_path / "report", reference, preset=preset)


def two_panels():
    """Two titled panels with a hue legend on the right one only, as many paper figures have."""
    fig, axes = plt.subplots(1, 2, figsize=(5, 2))
    frame = pd.DataFrame({"layer": [0, 1, 2] * 4, "gap": [1.0, 0.5, 0.2, 1.0, 0.8, 0.7] * 2,
                          "act": ["ReLU, β = 1.27"] * 3 + ["tanh"] * 3 + ["ReLU, β = 1.27"] * 3 + ["tanh"] * 3})
    for ax, title in zip(axes, ("layer centering", "mf centering")):
        sns.lineplot(data=frame, x="layer", y="gap", hue="act", ax=ax, legend=ax is axes[1])
        ax.set(title=title, yscale="log")
    return fig


def markers(fig):
    return [(ax, line) for ax in fig.axes for line in ax.get_lines() if line.get_label() == "_paper"]


def legend_labels(legend):
    return [t.get_text() for t in legend.get_texts()]


def test_plot_entries_are_drawn_as_paper_markers(tmp_path, shown):
    renderer = renderer_with(tmp_path, [
        reference_entry("gap_relu_l2", -1.0, {"x": 2, "panel": "layer centering", "series": "ReLU", "y": "pow10"}),
        reference_entry("gap_tanh_l2", 0.0, {"x": 2, "panel": 1, "series": "tanh", "y": "pow10"}),
        reference_entry("gap_l0", 0.0, {"x": 0, "y": "pow10"}),  # no panel: the first; no series: black
        reference_entry("gap_min", -2.0),  # a read-off without `plot`: in the table only
    ])
    fig = two_panels()
    colors = {label: line.get_color() for label, line in
              zip(legend_labels(fig.axes[1].get_legend()), fig.axes[1].get_legend().legend_handles)}
    renderer.figure(fig, "lu2024-fig2", "gaps")
    drawn = markers(fig)
    assert len(drawn) == 3
    at = {(ax.get_title(), line.get_xdata()[0]): line for ax, line in drawn}
    relu, tanh, black = at[("layer centering", 2)], at[("mf centering", 2)], at[("layer centering", 0)]
    # y: 10**reported (`pow10`), a display mapping of the made-up values above.
    assert [line.get_ydata()[0] for line in (relu, tanh, black)] == pytest.approx([0.1, 1.0, 1.0])
    # Coloured like the curve they belong to (the legend of the other panel says which colour that is).
    assert matplotlib.colors.same_color(relu.get_markerfacecolor(), colors["ReLU, β = 1.27"])
    assert matplotlib.colors.same_color(tanh.get_markerfacecolor(), colors["tanh"])
    assert matplotlib.colors.same_color(black.get_markerfacecolor(), "black")
    assert all(line.get_marker() == "*" and line.get_zorder() > 2 for _, line in drawn)
    # One "paper" entry, in the figure's one legend (the right panel's), after the curves' entries.
    assert fig.axes[0].get_legend() is None
    assert legend_labels(fig.axes[1].get_legend()) == ["ReLU, β = 1.27", "tanh", "paper"]
    assert fig.axes[1].get_legend().get_title().get_text() == "act"  # the legend keeps its title
    html = renderer.rendered["lu2024-fig2"]
    assert '<figure id="lu2024-fig2" class="item" data-paper-points="3">' in html
    assert "paper-points-note" not in html  # some read-offs are drawn


def test_a_legend_is_created_when_the_figure_has_none(tmp_path, shown):
    renderer = renderer_with(tmp_path, [reference_entry("offset", 0.5, {"x": 1})])
    fig = tiny_figure()
    renderer.figure(fig, "lu2024-fig2", "c")
    assert legend_labels(fig.axes[0].get_legend()) == ["paper"]
    assert 'data-paper-points="1"' in renderer.rendered["lu2024-fig2"]


def test_figure_legend_gets_one_paper_entry_and_tick_labels_place_points(tmp_path, shown):
    renderer = renderer_with(tmp_path, [
        reference_entry("norm1", 0.3, {"x": "norm-1", "series": "a"}),
        reference_entry("norm1_shifted", 0.3, {"x": "norm-1", "dx": 0.5, "panel": 1, "series": "b"}),
    ])
    fig, axes = plt.subplots(2, 1, sharex=True)  # the upper panel's tick labels are hidden, its ticks shared
    for ax in axes:
        ax.plot([0, 1, 2], [0.1, 0.2, 0.3], label="a")
        ax.plot([0, 1, 2], [0.3, 0.2, 0.1], label="b")
        ax.set_xticks([0, 1, 2], ["norm-0", "norm-1", "norm-2"])
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncols=2)
    renderer.figure(fig, "lu2024-fig2", "c")
    (ax0, first), (ax1, second) = markers(fig)
    assert first.get_xdata()[0] == 1 and second.get_xdata()[0] == 1.5
    assert matplotlib.colors.same_color(second.get_markerfacecolor(), axes[1].get_lines()[1].get_color())
    assert len(fig.legends) == 1 and legend_labels(fig.legends[0]) == ["a", "b", "paper"]
    assert all(ax.get_legend() is None for ax in axes)


@pytest.mark.parametrize("plot, fragments", [
    ({"x": 1, "series": "tahn"}, ["no curve tahn", "ReLU, β = 1.27", "tanh"]),
    ({"x": 1, "panel": "layer-centering"}, ["no panel layer-centering", "layer centering", "mf centering"]),
    ({"x": 1, "panel": 5}, ["no panel 5"]),
    ({"x": "norm-9"}, ["no x tick norm-9"]),
    ({"x": 1, "series": "t"}, ["no curve t "]),
])
def test_a_value_the_figure_cannot_place_is_named_in_the_caption_not_drawn(tmp_path, shown, plot, fragments):
    """Even at the paper preset: a run may lack a curve the paper has, and the page must still render."""
    renderer = renderer_with(tmp_path, [reference_entry("gap_tanh", 0.5, plot)])
    fig = two_panels()
    renderer.figure(fig, "lu2024-fig2", "c")
    assert markers(fig) == []
    html = renderer.rendered["lu2024-fig2"]
    assert 'data-paper-points="0"' in html
    note = html.split('<p class="paper-points-note">', 1)[1].split("</p>", 1)[0]
    assert "not drawn: this run (paper preset) has" in note
    for fragment in fragments:
        assert escape(fragment) in note, note


def test_a_log10_value_needs_pow10_on_a_log_axis_and_only_there(tmp_path, shown):
    renderer = renderer_with(tmp_path, [reference_entry("log10_gap", -1.0, {"x": 1})])
    with pytest.raises(ValueError, match="needs `y: pow10`"):
        renderer.figure(two_panels(), "lu2024-fig2", "c")
    renderer = renderer_with(tmp_path, [reference_entry("gap", 0.5, {"x": 1, "y": "pow10"})])
    with pytest.raises(ValueError, match="pow10.*linear"):
        renderer.figure(tiny_figure(), "lu2024-fig2", "c")


def test_other_presets_leave_out_what_their_smaller_runs_do_not_draw(tmp_path, shown):
    renderer = renderer_with(tmp_path, [
        reference_entry("gap_relu_l2", -1.0, {"x": 2, "panel": "layer centering", "series": "ReLU", "y": "pow10"}),
        reference_entry("gap_d512", -1.0, {"x": 1, "series": "d=512", "y": "pow10"}),
        reference_entry("gap_l30", -1.0, {"x": 30, "y": "pow10"}),
    ], preset="quick")
    fig = two_panels()
    renderer.figure(fig, "lu2024-fig2", "c")
    assert len(markers(fig)) == 1
    html = renderer.rendered["lu2024-fig2"]
    assert 'data-paper-points="1"' in html
    note = html.split('<p class="paper-points-note">', 1)[1].split("</p>", 1)[0]
    assert "2 of the paper" in note and "3 plotted values are not drawn: this run (quick preset) has" in note
    assert "has no curve d=512 (it has ReLU, β = 1.27 / tanh); no data at the x of 1 value." in note


def test_caption_says_why_no_read_off_is_drawn(tmp_path, shown):
    entries = [reference_entry("offset_min", 0.5),
               reference_entry("slope", 2.0, provenance="printed", item="lu2024-fig3"),
               reference_entry("count", 3.0, item="lu2024-fig4")]
    renderer = renderer_with(tmp_path, entries)
    renderer.figure(tiny_figure(), "lu2024-fig2", "c")
    renderer.figure(tiny_figure(), "lu2024-fig3", "c")
    renderer.figure(tiny_figure(), "lu2024-fig4", "c", paper_points="a heat map cannot carry them")
    generic = renderer.rendered["lu2024-fig2"]
    assert 'data-paper-points="0"' in generic
    assert re.search(r'<p class="paper-points-note">The paper.{1,6}s read-off values are in the table below; '
                     r"none of them is a single point", generic)
    assert "paper-points-note" not in renderer.rendered["lu2024-fig3"]  # no read-off, nothing to explain
    reason = renderer.rendered["lu2024-fig4"]
    assert 'data-paper-points="0"' in reason and "in the table below: a heat map cannot carry them." in reason
    # The note is folded under the caption, before the reference table.
    assert (reason.index("<figcaption>") < reason.index('<details class="method">') < reason.index("paper-points-note")
            < reason.index("Reported vs reproduced"))


def test_the_caption_shows_what_is_drawn_and_folds_the_method_and_deviations(tmp_path, shown):
    renderer = renderer_with(tmp_path, [])
    renderer.figure(tiny_figure(), "lu2024-fig2", "Gap vs depth, d = 8.", deviations=["float32", "no legend"],
                    method="Each point is the mean over runs.")
    html = renderer.rendered["lu2024-fig2"]
    assert '<span class="caption">Gap vs depth, d = 8.</span>' in html
    folded = html.split('<details class="method">', 1)[1].split("</details>", 1)[0]
    assert "<summary>Method and deviations</summary>" in folded
    assert "Each point is the mean over runs." in folded and "Deviations: float32; no legend" in folded
    renderer.table(pd.DataFrame({"x": [1.0]}), "lu2024-table5", "A table.")
    assert "<details" not in renderer.rendered["lu2024-table5"]  # nothing to fold

def test_a_reason_not_to_draw_contradicts_plot_entries(tmp_path, shown):
    renderer = renderer_with(tmp_path, [reference_entry("offset", 0.5, {"x": 1})])
    with pytest.raises(ValueError, match=r"lu2024-fig2.*heat map.*offset"):
        renderer.figure(tiny_figure(), "lu2024-fig2", "c", paper_points="a heat map cannot carry them")


def test_limits_the_notebook_fixed_widen_to_show_the_paper_value(tmp_path, shown):
    renderer = renderer_with(tmp_path, [reference_entry("gap_l2", 1.5, {"x": 2})])
    fig = tiny_figure()
    fig.axes[0].set(ylim=(0, 1.1), xlim=(0, 2))
    renderer.figure(fig, "lu2024-fig2", "c")
    low, high = fig.axes[0].get_ylim()
    assert low <= 0 and high > 1.5 and fig.axes[0].get_xlim() == (0, 2)  # x at the edge stays, unclipped
    (_, marker), = markers(fig)
    assert not marker.get_clip_on()


def test_the_reference_table_is_compact_and_its_notes_are_folded_not_captioned(tmp_path, shown):
    """Each quantity in one row (what it is, the paper's value, this run's, the verdict with its marks); the notes
    folded under the table, never in the caption."""
    def ref(quantity, reported, **optional):
        return {"item": "lu2024-fig2", "quantity": quantity, "description": f"the {quantity}", "reported": reported,
                "kind": "read-off", "compare": "abs", "tolerance": 0.1, "provenance": "printed", "source": "t",
                **optional}

    reference = tmp_path / "lu2024.yaml"
    reference.write_text(yaml.safe_dump({"paper": "lu2024", "title": "t", "references": [
        ref("slope", 1.0, note="the caption's slope"),
        ref("gap", 1.0),
        ref("slope_d300", 1.0, reading="fitted", note="width 300 chosen from a sweep"),
        ref("height", 1.0),
        ref("slope_offset", 1.0, reading="alternative", note="another offset"),
    ]}))
    claims = tmp_path / "claims.parquet"
    write_claims(pd.DataFrame({"item": ["lu2024-fig2"] * 4, "quantity": ["slope", "gap", "slope_d300", "slope_offset"],
                               "value": [1.5, float("nan"), 1.02, 3.0], "spread": [0.05, float("nan"), 0.01, 0.0],
                               "note": [""] * 4}), claims, "lu2024")
    renderer = scored_renderer(tmp_path / "report", reference, claims, preset="paper")
    renderer.figure(tiny_figure(), "lu2024-fig2", "c")
    html = renderer.rendered["lu2024-fig2"]
    caption = html[html.index("<figcaption>"):html.index("Reported vs reproduced")]
    for note in ("the caption&#x27;s slope", "width 300 chosen", "the reproduced value is NaN", "Mismatch:"):
        assert note not in caption
    table = html[html.index('<table class="data reference">'):html.index('<details class="notes">')]
    assert "<th>what it is</th><th>paper</th><th>this run</th><th>verdict</th>" in table
    assert 'class="verdict-mismatch">mismatch</td>' in table and 'class="verdict-failed">failed</td>' in table
    assert 'class="verdict-fitted">fitted</td>' in table
    assert 'class="verdict-mismatch">mismatch (alternative)</td>' in table
    # The alternative sits right after its default; the rule shows the spread.
    order = [table.index(f"<code>{q}</code>") for q in ("slope", "slope_offset", "gap", "slope_d300", "height")]
    assert order == sorted(order)
    assert "1 ± 0.1 (x ± 0.05)" in table and "1.5 ± 0.05" in table and "<td>the slope</td>" in table
    notes = html[html.index('<details class="notes">'):]
    assert "<summary>Notes and sources (5)</summary>" in notes and "width 300 chosen from a sweep" in notes
    assert "the reproduced value is NaN" in notes


def test_an_item_names_the_functions_whose_results_its_cell_loaded(tmp_path, shown, monkeypatch):
    """PaperPage.load reads each file's provenance; the items the same cell renders say "Computed by …", an item
    of a later cell (a static table) says nothing."""
    running = {"cell": 1}  # load and figure in cell 1, the table in cell 2
    monkeypatch.setattr(item_notes, "current_cell", lambda: running["cell"])
    write_results(pd.DataFrame({"x": [1.0]}), tmp_path / "results" / "fig2" / "a.parquet",
                  config={"function": "isonorm.experiments.lu2024.trained_nets:fnn"})
    renderer = ItemRenderer("lu2024", tmp_path / "report", None, None, preset="paper")
    page = notebook.PaperPage("lu2024", {}, tmp_path / "results", renderer)
    assert page.load("fig2/*.parquet") is not None
    renderer.figure(tiny_figure(), "lu2024-fig2", "c")
    running["cell"] = 2
    renderer.table(pd.DataFrame({"a": [1]}), "lu2024-apptable1", "notation")
    assert "Computed by isonorm.experiments.lu2024.trained_nets:fnn." in shown[0]
    assert "Computed by" not in shown[1]


def test_a_load_that_finds_nothing_shows_its_items_as_not_run(tmp_path, shown):
    renderer = ItemRenderer("lu2024", tmp_path / "report", None, None, preset="paper")
    page = notebook.PaperPage("lu2024", {}, tmp_path / "results", renderer)
    assert page.load("table1/*.parquet", "lu2024-table1", "lu2024-fig2") is None
    assert list(renderer.rendered) == ["lu2024-table1", "lu2024-fig2"]
    assert all('class="item not-run"' in html for html in shown)


def test_a_load_names_the_items_it_feeds_in_later_cells(tmp_path, shown, monkeypatch):
    running = {"cell": 1}
    monkeypatch.setattr(item_notes, "current_cell", lambda: running["cell"])
    write_results(pd.DataFrame({"x": [1.0]}), tmp_path / "results" / "t5" / "a.parquet",
                  config={"function": "isonorm.experiments.lu2024.lora:table5_lora_runs"})
    renderer = ItemRenderer("lu2024", tmp_path / "report", None, None, preset="paper")
    page = notebook.PaperPage("lu2024", {}, tmp_path / "results", renderer)
    page.load("t5/*.parquet", feeds=["lu2024-table5"])
    running["cell"] = 2
    renderer.table(pd.DataFrame({"a": [1]}), "lu2024-apptable1", "notation")
    renderer.table(pd.DataFrame({"a": [1]}), "lu2024-table5", "the parts")
    assert "Computed by" not in shown[0] and "lora:table5_lora_runs" in shown[1]
