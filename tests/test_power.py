"""benchmarks/power.py without its runs: every mistake's anchor is still in the code and the patched module imports
(the dry run), a vanished anchor fails naming the mistake, and the verdict diff counts only default readings."""

from __future__ import annotations


import pandas as pd
import pytest
import yaml

from conftest import PAPERS, REPO, script_module


power = script_module(REPO / "benchmarks" / "power.py")


def test_every_mistake_applies_and_its_module_imports(capsys):
    assert power.main(["--dry-run"]) == 0
    assert f"{len(power.MISTAKES)} mistakes apply and import" in capsys.readouterr().out


def test_the_mistakes_cover_every_paper_and_only_experiment_code():
    assert {m.paper for m in power.MISTAKES} == set(PAPERS)
    assert len(power.MISTAKES) >= 10 and len(power.BY_ID) == len(power.MISTAKES)
    for mistake in power.MISTAKES:
        assert not mistake.file.startswith("report/") and "summaries" not in mistake.file  # never the claims
        # a paper's own rules, or the generated rule of the plain items (isonorm.items.Item.plain)
        assert mistake.rules and all(rule.startswith(mistake.paper + "_") or rule == "plain_simulation"
                                     for rule in mistake.rules)


def test_a_vanished_anchor_names_its_mistake(tmp_path):
    mistake = power.MISTAKES[0]
    target = tmp_path / "isonorm" / mistake.file
    target.parent.mkdir(parents=True)
    target.write_text("nothing to patch here\n")
    with pytest.raises(power.AnchorError, match=mistake.id):
        power.apply(mistake, tmp_path)


def board(rows, reading=True):
    frame = pd.DataFrame(rows, columns=["item", "quantity", "verdict", "reproduced", "reading"])
    frame.insert(0, "paper", "p")
    return frame if reading else frame.drop(columns="reading")


def test_turned_verdicts_counts_default_readings_only():
    before = board([("a", "x", "match", 1.0, "default"), ("a", "y", "match", 2.0, "alternative"),
                    ("b", "z", "mismatch", 3.0, None)])
    after = board([("a", "x", "failed", float("nan"), "default"), ("a", "y", "mismatch", 9.0, "alternative"),
                   ("b", "z", "mismatch", 3.0, None)])
    assert power.turned_verdicts(before, after) == ["a/x: match → failed"]
    assert len(power.values_changed(before, after)) == 1


def test_turned_verdicts_without_a_reading_column_and_with_rows_on_one_side():
    before = board([("a", "x", "match", 1.0, None), ("a", "y", "match", 2.0, None)], reading=False)
    after = board([("a", "x", "mismatch", 1.5, None), ("c", "w", "match", 2.0, None)], reading=False)
    assert power.turned_verdicts(before, after) == [
        "a/x: match → mismatch", "a/y: match → absent", "c/w: absent → match"]
    changed = power.values_changed(before, after)
    assert power.kept_verdicts(changed) == ""
    kept = board([("a", "x", "match", 1.2, None)], reading=False)
    assert power.kept_verdicts(power.values_changed(before, kept)) == "a/x: match (1 → 1.2)"


def test_another_set_of_mistakes_comes_from_a_file_in_the_same_form(tmp_path, capsys):
    mistake = power.MISTAKES[0]
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump([{"id": "mine", "paper": mistake.paper, "file": mistake.file, "old": mistake.old,
                                      "new": mistake.new, "rules": list(mistake.rules), "change": "a test"}]))
    assert power.main(["--dry-run", "--mistakes-file", str(other)]) == 0
    assert "1 mistakes apply and import" in capsys.readouterr().out
    other.write_text(yaml.safe_dump([{"id": "mine", "paper": mistake.paper}]))
    with pytest.raises(ValueError, match="mistake #0 \\(mine\\): missing file, old, new, rules, change"):
        power.load_mistakes(other)
