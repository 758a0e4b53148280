"""Each item is declared once, by its record (isonorm.items.Item) beside the function that computes it, and
everything else is keyed on the full id and checked against the paper's table of records: one search for an item's
id finds its record, its rule (or its record says it is plain: its rule is generated), the library function that
computes it, its claims, its notebook cell, its reference rows and its decision section (docs/papers.md). The rules
hold their functions as Python references, never as strings."""

from __future__ import annotations

import inspect
import re

import pytest

from conftest import PAPERS, REPO, copy_workflow, snakemake
from isonorm.callables import resolve
from isonorm.items import (NEEDS_OF_KIND, PLAIN_RESULTS, Item, Results, key_results, output_pattern, paper_items,
                           paper_modules, result_files)
from isonorm.verdicts.ids import named_items

# a rule of rules/<slug>.smk: `use rule <kind>_job as <name> with:` and its indented block
RULE = re.compile(r"^use rule (\w+)_job as (\w+) with:\n((?:[ \t]+.*\n|\n)*)", re.MULTILINE)
EXPERIMENT = re.compile(r"experiment\(\s*(isonorm\.[\w.]+)\.(\w+),")
# a library function's name written as a string ("package.module:function"), where a rule should hold the function
NAMED_BY_STRING = re.compile(r"""["'](isonorm\.[\w.]+:\w+)["']""")


def text(path: str) -> str:
    return (REPO / path).read_text(encoding="utf-8")


def headings(slug: str) -> dict[str, str]:
    """{item id: title} of the item sections of docs/decisions/<slug>.md (a section may head two ids)."""
    found = {}
    for ids, title in re.findall(rf"^#+ ({slug}-[a-z0-9-]+(?:, {slug}-[a-z0-9-]+)*) — (.*)$", text(
            f"docs/decisions/{slug}.md"), re.MULTILINE):
        for item in ids.split(", "):
            found[item] = title
    return found


def rules(slug: str) -> dict[str, tuple[str, object]]:
    """{rule name: (kind, the library function it runs)} of rules/<slug>.smk."""
    found = {}
    for kind, name, body in RULE.findall(text(f"rules/{slug}.smk")):
        (module, function), = EXPERIMENT.findall(body)
        found[name] = (kind, resolve(f"{module}:{function}"))
    return found


@pytest.mark.parametrize("slug", PAPERS)
def test_the_table_holds_every_item_the_notebook_renders_once(slug):
    items = paper_items(slug)
    ids = [item.id for item in items]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert all(isinstance(item, Item) and item.slug == slug for item in items)
    rendered = named_items(text(f"notebooks/{slug}.py"), slug)
    assert set(ids) == set(rendered), {"no record": sorted(set(rendered) - set(ids)),
                                       "not rendered": sorted(set(ids) - set(rendered))}


@pytest.mark.parametrize("slug", PAPERS)
def test_each_item_has_its_decision_section_under_its_id_and_title(slug):
    sections = headings(slug)
    for item in paper_items(slug):
        assert sections.get(item.id) == item.title, (item.id, sections.get(item.id), item.title)


@pytest.mark.parametrize("slug", PAPERS)
def test_the_rules_run_the_tables_functions_with_the_tables_kinds(slug):
    by_function = {}
    for item in paper_items(slug):
        for kind, function in item.jobs:
            by_function.setdefault(function, set()).add(kind)
    for item in paper_items(slug):
        if item.plain:  # its rule is the generated one: no rule of rules/<slug>.smk runs its function
            assert by_function.pop(item.computed_by) == {"simulation"}, item.id
    ran = {}
    for name, (kind, function) in rules(slug).items():
        assert function in by_function, f"rule {name} runs {function.__qualname__}, which no item names"
        assert by_function[function] == {kind}, (name, kind, by_function[function])
        ran[function] = name
    assert set(by_function) <= set(ran), [f.__qualname__ for f in set(by_function) - set(ran)]


def record_modules(slug: str) -> dict[str, object]:
    """{item id: the module whose ``ITEMS`` declares its record}, over the modules of the paper's library."""
    return {record.id: module for module in paper_modules(slug) for record in getattr(module, "ITEMS", ())}


def test_a_paper_without_a_library_is_refused_naming_where_to_write_it():
    with pytest.raises(ValueError, match="src/isonorm/experiments/smith2099.py or the package"):
        paper_items("smith2099")


@pytest.mark.parametrize("slug", PAPERS)
def test_each_record_stands_beside_the_function_that_computes_it(slug):
    """Beside one of its functions for an item of several jobs; anywhere in the library for one drawn without."""
    where = record_modules(slug)
    for item in paper_items(slug):
        if item.jobs:
            assert where[item.id].__name__ in {function.__module__ for _, function in item.jobs}, item.id


@pytest.mark.parametrize("slug", PAPERS)
def test_one_search_for_an_items_id_finds_all_its_places(slug):
    rules_text, notebook, reference = text(f"rules/{slug}.smk"), text(f"notebooks/{slug}.py"), text(
        f"notebooks/reference/{slug}.yaml")
    where = record_modules(slug)
    referenced = set(re.findall(rf"\bitem: ({slug}-[a-z0-9-]+)\b", reference)) | set(
        re.findall(rf"^  ({slug}-[a-z0-9-]+):", reference, re.MULTILINE))
    missing = []
    for item in paper_items(slug):
        places = {"record": inspect.getsource(where[item.id]), "notebook cell": notebook,
                  "decision section": "\n".join(f"### {i}" for i in headings(slug))}
        if item.jobs and not item.plain:  # a plain item's record says so; its rule is generated
            places["rule"] = rules_text
        for n, (_, function) in enumerate(item.jobs):
            places[f"function {function.__qualname__}" if n else "function"] = inspect.getsource(function)
        if item.claims is not None and item.id in referenced:
            places["claims"] = inspect.getsource(inspect.getmodule(item.claims))
        if item.id in referenced:
            places["reference rows"] = reference
        missing += [f"{item.id}: {place}" for place, where_ in places.items()
                    if not re.search(rf"(?<![\w-]){re.escape(item.id)}(?![\w-])", where_)]
    assert not missing, missing


def test_no_rule_written_by_hand_makes_a_plain_items_file():
    """The generated rule's wildcards (<slug>/<item>/synthetic.parquet) would otherwise claim another job's file."""
    for smk in sorted((REPO / "rules").glob("*.smk")):
        if smk.name != "experiment_jobs.smk":
            assert PLAIN_RESULTS not in smk.read_text(encoding="utf-8"), smk.name


def test_a_plain_item_is_one_simulation_job_under_its_own_id():
    def simulate(cfg, device="cpu"):
        return None

    item = Item("meterez2024-figz1", "t", "simulation", simulate, claims=simulate, plain=True)
    assert item.results == ("figz1",) and item.plain_kwargs("cuda") == {"device": "cuda"}
    assert Item("meterez2024-figz2", "t", "simulation", lambda cfg: None, plain=True).plain_kwargs("cuda") == {}
    with pytest.raises(ValueError, match="one simulation job"):
        Item("meterez2024-figz1", "t", "at_init", simulate, plain=True)
    with pytest.raises(ValueError, match="its suffix 'figz1'"):
        Item("meterez2024-figz1", "t", "simulation", simulate, ("other",), plain=True)


def test_a_record_declares_its_files_and_the_rule_output_that_writes_them():
    """One Results per result key: its path, each wildcard's values from the config; the files registered and the
    output of the rule that writes them both come from it (rules/common.smk register_results, item_output)."""
    section = {"table3": {"variants": ["original", "norm_res"], "runs": ["relu-adam", "gelu-sgd-fitted"]},
               "table4": {"runs": ["adam"]}, "apptable3": {"runs": ["sgd"]}, "corpus": "wikitext2",
               "fig4": {"readings": {"narrow": {}}}}
    table3 = Results("table3/{variant}-{activation}-{optimizer}.parquet",
                     {"variant": "table3.variants", "activation-optimizer": "table3.runs"})
    assert table3.files(section) == ["table3/original-relu-adam.parquet", "table3/original-gelu-sgd-fitted.parquet",
                                     "table3/norm_res-relu-adam.parquet", "table3/norm_res-gelu-sgd-fitted.parquet"]

    def resnet(item):
        return Results("{item}/{optimizer}.parquet", item=(item,), optimizer=f"{item}.runs")

    items = [
        Item("lu2024-table3", "t", "training", len, {"table3": table3}),
        Item("lu2024-table4", "t", "training", len, {"table4": resnet("table4")}),
        Item("lu2024-apptable3", "t", "training", len, {"apptable3": resnet("apptable3")}),
        Item("lu2024-table5", "t", ("training", "at_init"), (len, max), {
            "corpus": Results("t5/{corpus}.parquet", settings={"corpus": "corpus"}, needs="trains"),
            "plms": Results("t5/{part}.parquet", part=("plms",), needs="needs_data")}),
        Item("lu2024-fig4", "t", "simulation", len, {"fig4": Results("sims/{grid}.parquet", grid=("fig4",),
                                                                     readings="fig4.readings")}),
        Item("lu2024-fig5", "t", "simulation", len, ("fig4",)),  # reads the key the record above declares
    ]
    assert output_pattern("lu2024", items, section, ["table3"]) == (
        r"table3/{variant,original|norm_res}-{activation,relu|gelu}-{optimizer,adam|sgd\-fitted}.parquet")
    assert output_pattern("lu2024", items, section, ["table4", "apptable3"]) == (
        "{item,table4|apptable3}/{optimizer,adam|sgd}.parquet")
    assert output_pattern("lu2024", items, section, ["corpus"]) == "t5/wikitext2.parquet"  # a setting: no wildcard
    assert output_pattern("lu2024", items, section, ["fig4"], reading=True) == "sims/{grid,fig4}--{reading,narrow}.parquet"
    files = result_files("lu2024", items, section)
    assert files["trains"]["corpus"] == ["t5/wikitext2.parquet"] and files["needs_data"] == {"plms": ["t5/plms.parquet"]}
    assert files["data_free"] == {"fig4": ["sims/fig4.parquet"], "fig4--narrow": ["sims/fig4--narrow.parquet"]}
    with pytest.raises(ValueError, match="different paths"):
        output_pattern("lu2024", items, section, ["table3", "table4"])
    assert set(NEEDS_OF_KIND.values()) == set(__import__("isonorm.plan").plan.NEEDS)


def test_records_and_rules_that_disagree_fail_when_the_workflow_is_parsed():
    with pytest.raises(ValueError, match="'fig9', whose files no record"):
        key_results("lu2024", [Item("lu2024-fig9", "t", "simulation", len, ("fig9",))])
    with pytest.raises(ValueError, match="declare them once"):
        key_results("lu2024", [Item("lu2024-fig8", "t", "simulation", len, {"k": Results("a/{x}.parquet", x="x")}),
                               Item("lu2024-fig9", "t", "simulation", len, {"k": Results("b/{x}.parquet", x="x")})])
    with pytest.raises(ValueError, match="no record of isonorm.experiments.lu2024 declares"):
        output_pattern("lu2024", [], {}, ["table9"])
    with pytest.raises(ValueError, match="several kinds of job states what computing"):
        Item("lu2024-table5", "t", ("training", "at_init"), (len, max), {"k": Results("k.parquet")})
    with pytest.raises(ValueError, match="each of its wildcards"):
        Results("table1/{optimizer}.parquet")
    with pytest.raises(ValueError, match="plain items'"):
        Item("lu2024-fig9", "t", "simulation", len, {"fig9": Results(f"fig9/{PLAIN_RESULTS}")})


def test_a_records_result_key_that_no_rule_writes_stops_the_parse(tmp_path):
    """The records and the rules cannot disagree silently: without the rule of lu2024-fig1, the parse names its key."""
    workdir = copy_workflow(tmp_path)
    smk = workdir / "rules" / "lu2024.smk"
    smk.write_text(RULE.sub(lambda rule: "" if rule.group(2) == "lu2024_fig1" else rule.group(0),
                            smk.read_text(encoding="utf-8")), encoding="utf-8")
    done = snakemake(workdir, "-n", "--cores", "1", "--config", "compute=data-free", timeout=300)
    assert done.returncode != 0
    assert ("rules/lu2024.smk has no rule whose output is item_output('lu2024', key) for the result keys ['fig1']"
            in done.stdout + done.stderr), done.stderr[-3000:]


@pytest.mark.parametrize("slug", PAPERS)
def test_the_rules_take_every_results_path_from_the_records(slug):
    """rules/<slug>.smk writes no results path: each rule's output is item_output of the keys it writes."""
    rules_text = text(f"rules/{slug}.smk")
    assert "results(" not in rules_text and "register_results" not in rules_text
    for _, name, body in RULE.findall(rules_text):
        output = body.split("output:", 1)[1].split("params:", 1)[0]
        assert "item_output(" in output, name
    declared = key_results(slug, paper_items(slug))
    written = set(re.findall(r'item_output\(\s*"%s",\s*((?:"\w+",?\s*)+)' % slug, rules_text))
    assert {key for keys in written for key in re.findall(r'"(\w+)"', keys)} <= set(declared)


@pytest.mark.parametrize("slug", PAPERS)
def test_every_papers_claims_live_in_its_summaries_modules(slug):
    """One naming in every paper: a claims function is `claims` of a `<group>_summaries.py` module of its package."""
    for item in paper_items(slug):
        if item.claims is not None:
            module = item.claims.__module__
            assert module.startswith(f"isonorm.experiments.{slug}.") and module.endswith("_summaries"), (item.id, module)
            assert item.claims.__name__ == "claims", (item.id, item.claims.__qualname__)


def test_rules_hold_their_library_functions_not_their_names():
    """No rule or claims list names a function as a string (the job receives its name, isonorm.callables), and every
    library module a rules file imports is one whose functions its rules hold."""
    for smk in sorted((REPO / "rules").glob("*.smk")):
        text = smk.read_text(encoding="utf-8")
        assert not NAMED_BY_STRING.findall(text), smk.name
        for module in re.findall(r"^import (isonorm\.[\w.]+)$", text, re.MULTILINE):
            assert f"{module}." in text, f"{smk.name} imports {module} and uses nothing of it"


def test_an_item_whose_job_failed_is_failed_and_one_whose_input_could_not_be_made_is_not_run():
    """One honest count: a job of the item failed, its rows fail; its input could not be made (a download failed)
    or the run stopped before its job, its rows stay not-run with the root cause in the note."""
    from isonorm.items import unfinished_items
    from isonorm.verdicts.scoreboard import PART_MEASURED, unfinished_rows
    import pandas as pd

    items = [Item("lu2024-table4", "t", "training", lambda: None, ("table4",)),
             Item("lu2024-table5", "t", "at_init", lambda: None, ("table5_plms", "table5_lora")),
             Item("lu2024-fig1", "t", "simulation", lambda: None, ("fig1",))]
    results = {"table4": ["a.parquet", "b.parquet", "c.parquet"], "table5_plms": ["p.parquet"],
               "table5_lora": ["l.parquet"], "table5_plms--more": ["m.parquet"], "fig1": ["f.parquet"]}
    causes = {"c.parquet": {"cause": "r could not run: it needs x, which failed", "state": "blocked"},
              "b.parquet": {"cause": "lu2024_resnet18 failed: boom", "state": "failed", "log": "logs/b.log"},
              "m.parquet": {"cause": "r could not run: it needs x, which failed", "state": "blocked"},
              "f.parquet": {"cause": "r did not finish: the run was stopped", "state": "not started"}}
    unfinished = unfinished_items(items, results, causes)
    assert unfinished == {  # an item's own failure outranks a blocked input of it, whatever the order; its log
        "lu2024-table4": {"state": "failed", "cause": "lu2024_resnet18 failed: boom", "log": "logs/b.log"},
        "lu2024-table5": {"state": "blocked", "cause": "r could not run: it needs x, which failed", "log": ""},
        "lu2024-fig1": {"state": "not started", "cause": "r did not finish: the run was stopped", "log": ""}}
    computed = "computed (cpu:x86_64, 2026-12-01, b5ab422)"
    scored = pd.DataFrame({"item": ["lu2024-table4", "lu2024-table4", "lu2024-table5", "lu2024-fig1"],
                           "verdict": ["not-run", "match", "not-run", "not-run"], "note": ["", "", "", ""],
                           "origin": ["not run", computed, "not run", "not run"]})
    marked = unfinished_rows(scored, unfinished)
    assert marked.verdict.tolist() == ["failed", "match", "not-run", "not-run"]
    # the failed job's rows name its log; the row measured from what exists keeps where its number came from
    assert marked.origin.tolist() == ["failed (log: logs/b.log)", computed, "not run", "not run"]
    unlogged = {**unfinished, "lu2024-table4": {**unfinished["lu2024-table4"], "log": ""}}
    assert unfinished_rows(scored, unlogged).origin[0] == "failed"
    assert marked.note[0] == "the job failed in this run: lu2024_resnet18 failed: boom"
    assert marked.note[1] == PART_MEASURED  # measured from the results that exist
    assert marked.note[2] == "not run in this run: r could not run: it needs x, which failed"
    assert marked.note[3] == "not run in this run: r did not finish: the run was stopped"


def test_the_end_of_a_run_measures_the_files_of_a_key_that_exist(tmp_path):
    """A result key holds one job's file per data set; when one job failed, the others' files are still measured
    (isonorm.report.end_of_run), and a key with no file is left out."""
    from isonorm.report.end_of_run import _present

    mnist = tmp_path / "mnist.parquet"
    mnist.write_bytes(b"")
    cifar = tmp_path / "cifar10.parquet"
    assert _present({"figb4": [str(mnist), str(cifar)], "fig3": [str(cifar)]}) == {"figb4": [str(mnist)]}


def _claims_tables():
    """The lists of item ids that claims functions keep beside the records, by item: {item id: its result key}.
    A claims module cannot import its records (their module imports it), so it keeps its own table."""
    from isonorm.experiments.joudaki2023 import image_mlp_summaries, simulation_summaries
    from isonorm.experiments.lu2024 import trained_summaries
    from isonorm.experiments.meterez2024 import at_init_summaries

    by_result = {item: key for key, items in image_mlp_summaries.ITEMS_BY_RESULT.items() for item in items}
    at_init = {item: key for item, (key, _) in at_init_summaries.CLAIMS.items()}
    # lu2024's two kinds of tables, and the ids of its other items that the claims function writes out
    trained = {**trained_summaries.OPTIMIZER_ITEMS, **trained_summaries.VARIANT_ITEMS,
               "lu2024-apptable4": "apptable4", "lu2024-fig1": "fig1"}
    return [pytest.param(slug, claims, table, id=claims.__module__.rsplit(".", 1)[1])
            for slug, claims, table in (("meterez2024", at_init_summaries.claims, at_init),
                                        ("joudaki2023", simulation_summaries.claims, simulation_summaries.RESULT_KEYS),
                                        ("joudaki2023", image_mlp_summaries.claims, by_result),
                                        ("lu2024", trained_summaries.claims, trained))]


@pytest.mark.parametrize("slug, claims, table", _claims_tables())
def test_a_claims_functions_own_list_of_items_is_the_records(slug, claims, table):
    """Every item whose record names the claims function is in its list, with the results its record reads: an item
    added to the records but not to the list would never be claimed, its rows not-run in every run."""
    records = {item.id: item.results for item in paper_items(slug) if item.claims is claims}
    assert set(table) == set(records), {"not listed": sorted(set(records) - set(table)),
                                        "no record": sorted(set(table) - set(records))}
    assert all(table[item] in records[item] for item in table), {item: (table[item], records[item]) for item in table}
