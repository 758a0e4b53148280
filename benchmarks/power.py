"""The scoreboard's power: which verdicts turn when a plausible implementation mistake is made.

Each mistake is an exact text substitution in the experiment, simulation, model or metric code of one data-free
item (never in claims, references or the scoreboard). The data-free run at paper settings is made once, as the
baseline (``snakemake --config compute=data-free`` in a copy of the committed tree); then, per mistake, a copy of
that baseline (results hard-linked, src/ copied and patched) reruns only the jobs of the rules the mistake
affects, and the claims and the scoreboard after them. The verdicts of the two scoreboards are compared.

    python benchmarks/power.py                          # every mistake, results/power-cpu-<date>.csv|json
    python benchmarks/power.py --mistakes j23-no-centering,m24-bn-axis --workdir /tmp/power --cores 1
    python benchmarks/power.py --dry-run                # apply every substitution to a scratch src/ and import it
    python benchmarks/power.py --preset quick --workdir /tmp/power-quick   # the mechanics at smoke sizes, minutes
    python benchmarks/power.py --mistakes-file other.yaml   # another set of mistakes, in the same form

The mistakes are data: benchmarks/power_mistakes.yaml. A mistake whose anchor is gone fails loudly with its id, so
the list cannot rot silently (tests/test_power.py runs the dry run). See benchmarks/README.md, "power.py".
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from isonorm.outputs import PAPER_PRESET, output_roots

REPO = Path(__file__).resolve().parents[1]
RECORDS = REPO / "benchmarks" / "results"
KEY = ["paper", "item", "quantity"]
# Copied for real into a mistake's folder: what the rerun writes in place (src/ is patched; Snakemake's metadata,
# logs and benchmark files are rewritten, which through a hard link would change the baseline too).
REAL_COPIES = ("src", ".snakemake", "logs")

MISTAKES_FILE = REPO / "benchmarks" / "power_mistakes.yaml"

@dataclass(frozen=True)
class Mistake:
    id: str
    paper: str
    file: str  # under src/isonorm/
    old: str  # must occur exactly once in the file
    new: str
    rules: tuple[str, ...]  # the data-free rules whose jobs import the patched code
    change: str  # one line: what is wrong

    @property
    def module(self) -> str:
        return "isonorm." + self.file.removesuffix(".py").replace("/", ".")


def load_mistakes(path: Path = MISTAKES_FILE) -> list[Mistake]:
    """The mistakes of a YAML list (benchmarks/power_mistakes.yaml, or another set in its form), in its order."""
    entries = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    fields = ("id", "paper", "file", "old", "new", "rules", "change")
    mistakes = []
    for i, entry in enumerate(entries):
        missing = [f for f in fields if f not in entry]
        if missing:
            raise ValueError(f"{path}, mistake #{i} ({entry.get('id', '?')}): missing {', '.join(missing)}")
        mistakes.append(Mistake(**{**{f: entry[f] for f in fields}, "rules": tuple(entry["rules"])}))
    ids = [m.id for m in mistakes]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: a mistake id is used twice: {sorted(i for i in set(ids) if ids.count(i) > 1)}")
    return mistakes


MISTAKES = load_mistakes()
BY_ID = {m.id: m for m in MISTAKES}


class AnchorError(RuntimeError):
    """A mistake's anchor text is not in its file exactly once."""


def patched_text(mistake: Mistake, src: Path) -> str:
    path = src / "isonorm" / mistake.file
    text = path.read_text()
    count = text.count(mistake.old)
    if count != 1:
        raise AnchorError(f"mistake {mistake.id}: its anchor occurs {count} times in src/isonorm/{mistake.file} "
                          f"(needs exactly 1); update its `old` in the mistakes file: {mistake.old!r}")
    return text.replace(mistake.old, mistake.new)


def apply(mistake: Mistake, src: Path) -> None:
    """Write the mistake into ``src`` (a copy's src/), after checking its anchor in the file as it is."""
    text = patched_text(mistake, src)
    (src / "isonorm" / mistake.file).write_text(text)


def _python(code: str, pythonpath: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(pythonpath), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)


def dry_run(mistakes: list[Mistake]) -> None:
    """Every substitution applied to its own scratch copy of src/; each patched module imported from its copy."""
    with tempfile.TemporaryDirectory(prefix="power-dry-") as scratch:
        checks = []
        for mistake in mistakes:
            src = Path(scratch, mistake.id, "src")
            shutil.copytree(REPO / "src", src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
            apply(mistake, src)
            checks.append((mistake.module, str(src)))
        # one interpreter for all: each copy in turn at the front of sys.path, isonorm forgotten in between
        code = (
            "import importlib, sys\n"
            f"for module, src in {checks!r}:\n"
            "    for name in [n for n in sys.modules if n == 'isonorm' or n.startswith('isonorm.')]:\n"
            "        del sys.modules[name]\n"
            "    sys.path.insert(0, src)\n"
            "    loaded = importlib.import_module(module)\n"
            "    assert loaded.__file__.startswith(src), (module, loaded.__file__, src)\n"
            "    sys.path.remove(src)\n"
        )
        done = _python(code, Path(scratch), Path(scratch))
        if done.returncode:
            raise RuntimeError(f"a patched module does not import:\n{done.stderr}")
    print(f"dry run: {len(mistakes)} mistakes apply and import")


# --- the runs ---------------------------------------------------------------------------------------------------


def scoreboard(preset: str, papers: list[str] | None = None) -> str:
    """The scoreboard of a run with ``preset``, relative to the checkout (isonorm.outputs); with ``papers``, the
    one of those papers alone that :func:`partial_scoreboard` writes."""
    return str(output_roots(preset)["results"] / ("scoreboard.csv" if not papers else "scoreboard-partial.csv"))


def targets(preset: str, papers: list[str] | None) -> list[str]:
    """What a run builds: the scoreboard, or with ``papers`` only their claims."""
    results = output_roots(preset)["results"]
    return [str(results / slug / "claims.parquet") for slug in papers] if papers else [scoreboard(preset)]


def partial_scoreboard(folder: Path, preset: str, papers: list[str]) -> None:
    """The scoreboard of ``papers`` alone, built by the folder's own code (what the scoreboard rule runs)."""
    claims = targets(preset, papers)
    references = [f"notebooks/reference/{slug}.yaml" for slug in papers]
    code = ("from isonorm.verdicts.scoreboard import build_scoreboard, write_scoreboard\n"
            f"board = build_scoreboard({references!r}, {claims!r}, {preset!r})\n"
            f"write_scoreboard(board, {scoreboard(preset, papers)!r})")
    done = _python(code, folder / "src", folder)
    if done.returncode:
        raise RuntimeError(f"the partial scoreboard of {folder} failed:\n{done.stderr}")


def preset_options(preset: str) -> list[str]:
    return [] if preset == PAPER_PRESET else ["--configfile", f"presets/{preset}.yaml"]


def snakemake(folder: Path, cores: int, extra: list[str], log: Path) -> tuple[int, float, str]:
    """(exit status, seconds, output) of a data-free run in ``folder``, importing ``folder/src``."""
    check = _python("import isonorm; print(isonorm.__file__)", folder / "src", folder)
    if not check.stdout.strip().startswith(str(folder / "src")):
        raise RuntimeError(f"jobs in {folder} would import isonorm from {check.stdout.strip()!r}, not its src/")
    env = {**os.environ, "PYTHONPATH": str(folder / "src")}
    command = [sys.executable, "-m", "snakemake", "--cores", str(cores), "--config", "compute=data-free", *extra]
    with log.open("w") as stream:  # written as it runs, to follow a long run with tail -f
        stream.write(f"$ {' '.join(command)}\n")
        stream.flush()
        start = time.perf_counter()
        done = subprocess.run(command, cwd=folder, env=env, stdout=stream, stderr=subprocess.STDOUT)
        seconds = time.perf_counter() - start
    return done.returncode, seconds, log.read_text()


def baseline(workdir: Path, cores: int, preset: str, papers: list[str] | None,
             fresh: bool) -> tuple[Path, float, str]:
    """(folder, seconds, commit) of the baseline run of HEAD in workdir/baseline-<preset>[-<papers>]; a finished
    one is reused (its own commit recorded) unless ``fresh``."""
    folder = workdir / "-".join(["baseline", preset, *(papers or [])])
    marker = folder / ".power-commit"  # written when the run finished
    if marker.exists() and not fresh:
        commit = marker.read_text().strip()
        print(f"baseline: reusing {folder} (commit {commit[:8]}; --fresh-baseline makes a new one)")
        if papers and not (folder / scoreboard(preset, papers)).exists():
            partial_scoreboard(folder, preset, papers)
        return folder, math.nan, commit
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    commit = _commit()
    archive = subprocess.run(["git", "archive", commit], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    print(f"baseline: data-free {preset} run of {commit[:8]} in {folder} on {cores} core(s)", flush=True)
    # the scoreboard is all the comparison reads: the report pages are not built
    log = folder.with_suffix(".log")
    rc, seconds, _ = snakemake(folder, cores, [*preset_options(preset), "--", *targets(preset, papers)], log)
    if rc:
        raise RuntimeError(f"the baseline run failed (exit {rc}); see {log}")
    if papers:
        partial_scoreboard(folder, preset, papers)
    marker.write_text(commit)
    return folder, seconds, commit


def copy_baseline(base: Path, folder: Path) -> None:
    """``folder`` = ``base`` with every file hard-linked except REAL_COPIES and results/benchmarks (rewritten)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for entry in base.iterdir():
        target = folder / entry.name
        if entry.name in REAL_COPIES:
            shutil.copytree(entry, target, symlinks=True)
        elif entry.is_dir():
            shutil.copytree(entry, target, symlinks=True, copy_function=os.link)
        else:
            shutil.copy2(entry, target)
    benchmarks = folder / "results" / "benchmarks"
    if benchmarks.exists():
        shutil.rmtree(benchmarks)
        shutil.copytree(base / "results" / "benchmarks", benchmarks)


def default_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows the headline counts: reading == default where the scoreboard has a reading column."""
    if "reading" in frame.columns:
        frame = frame[frame["reading"].fillna("default").astype(str) == "default"]
    return frame


def turned_verdicts(before: pd.DataFrame, after: pd.DataFrame) -> list[str]:
    """'item/quantity: before → after' for every default row whose verdict differs (a row only one side has
    counts as 'absent' on the other)."""
    keep = KEY + ["verdict"]
    merged = default_rows(before)[keep].merge(default_rows(after)[keep], on=KEY, how="outer",
                                              suffixes=("_before", "_after"))
    merged = merged.fillna({"verdict_before": "absent", "verdict_after": "absent"})
    turned = merged[merged["verdict_before"] != merged["verdict_after"]].sort_values(KEY)
    return [f"{r.item}/{r.quantity}: {r.verdict_before} → {r.verdict_after}" for r in turned.itertuples()]


def values_changed(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Default rows whose reproduced value changed (beyond 1e-9 relative), NaN ↔ number included: key columns,
    reproduced_x/_y and verdict_x/_y (before/after)."""
    keep = KEY + ["reproduced", "verdict"]
    merged = default_rows(before)[keep].merge(default_rows(after)[keep], on=KEY)
    x, y = (pd.to_numeric(merged[c], errors="coerce") for c in ("reproduced_x", "reproduced_y"))
    same = (x.isna() & y.isna()) | ((x - y).abs() <= 1e-9 * y.abs().clip(lower=1e-300))
    return merged[~same]


def kept_verdicts(changed: pd.DataFrame) -> str:
    """'item/quantity: verdict (before → after value)' of the changed rows whose verdict stayed: where a mistake
    went through a tolerance (match) or hit a row that failed already."""
    kept = changed[changed["verdict_x"] == changed["verdict_y"]]
    return "; ".join(f"{r.item}/{r.quantity}: {r.verdict_x} ({r.reproduced_x:.4g} → {r.reproduced_y:.4g})"
                     for r in kept.itertuples())


def rewritten_results(base: Path, folder: Path) -> tuple[int, int]:
    """(experiment results files the rerun rewrote, of which differ in content from the baseline's)."""
    rewritten = differ = 0
    for path in (folder / "results").rglob("*.parquet"):
        relative = path.relative_to(folder)
        if path.name == "claims.parquet" or "benchmarks" in relative.parts:
            continue
        original = base / relative
        if original.exists() and os.path.samefile(original, path):
            continue
        rewritten += 1
        if not original.exists() or not pd.read_parquet(original).equals(pd.read_parquet(path)):
            differ += 1
    return rewritten, differ


def jobs_run(output: str) -> str:
    """'rule×count' of Snakemake's job stats table."""
    match = re.search(r"Job stats:\n.*?\n-+\s+-+\n(.*?)\ntotal", output, re.S)
    if not match:
        return ""
    return " ".join(f"{rule}×{count}" for rule, count in (line.split() for line in match.group(1).splitlines()))


def run_mistake(mistake: Mistake, base: Path, workdir: Path, cores: int, preset: str,
                papers: list[str] | None) -> dict:
    folder = workdir / mistake.id
    copy_baseline(base, folder)
    apply(mistake, folder / "src")
    board = scoreboard(preset, papers)
    # mtime only: the copy's metadata and code are the baseline's, so nothing but the forced jobs and what
    # follows them (the paper's claims, the scoreboard) reruns; the pages are not rebuilt
    extra = [*preset_options(preset), "--rerun-triggers", "mtime", "--forcerun", *mistake.rules, "--",
             *targets(preset, papers)]
    rc, seconds, output = snakemake(folder, cores, extra, workdir / f"{mistake.id}.log")
    row = {"id": mistake.id, "paper": mistake.paper, "change": mistake.change,
           "file": f"src/isonorm/{mistake.file}", "rules": " ".join(mistake.rules), "jobs": jobs_run(output),
           "seconds": round(seconds, 1)}
    claims = folder / output_roots(preset)["results"] / mistake.paper / "claims.parquet"
    rebuilt = rc == 0 and not os.path.samefile(base / claims.relative_to(folder), claims)
    if rebuilt and papers:
        partial_scoreboard(folder, preset, papers)
    if rc or not rebuilt:
        why = f"snakemake failed (exit {rc}): the mistake stops the run" if rc else \
            f"{mistake.paper}'s claims were not rebuilt: check the mistake's rules"
        return {**row, "status": f"{why}; see {workdir / (mistake.id + '.log')}", "n_turned": math.nan, "turned": ""}
    before, after = pd.read_csv(base / board), pd.read_csv(folder / board)
    turned = turned_verdicts(before, after)
    rewritten, differ = rewritten_results(base, folder)
    changed = values_changed(before, after)
    return {**row, "status": "ok", "results_rewritten": rewritten, "results_differ": differ,
            "values_changed": len(changed), "n_turned": len(turned), "turned": "; ".join(turned),
            "changed_verdict_kept": kept_verdicts(changed)}


def _commit() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()


def record(rows: list[dict], stem: Path, meta: dict) -> None:
    """CSV (one row per mistake) and a short JSON summary; rewritten after every mistake."""
    frame = pd.DataFrame(rows)
    frame.to_csv(stem.with_suffix(".csv"), index=False)
    done = frame[frame["status"] == "ok"] if len(frame) else frame
    summary = {
        **meta,
        "mistakes_run": len(frame),
        "turned_some_verdict": int((done["n_turned"] > 0).sum()) if len(done) else 0,
        "stopped_the_run": int((frame["status"] != "ok").sum()) if len(frame) else 0,
        "turned_nothing": done.loc[done["n_turned"] == 0, "id"].tolist() if len(done) else [],
        "per_mistake": {r["id"]: r["n_turned"] for r in rows},
    }
    stem.with_suffix(".json").write_text(json.dumps(summary, indent=2, default=str) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mistakes-file", type=Path, default=MISTAKES_FILE,
                        help="a YAML list of mistakes in the form of benchmarks/power_mistakes.yaml (the default)")
    parser.add_argument("--mistakes", help="comma-separated ids of the file's (default: all): " + ",".join(BY_ID))
    parser.add_argument("--workdir", type=Path, help="where the baseline and each mistake's copy live "
                                                     "(default: a temporary folder, kept)")
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--preset", default=PAPER_PRESET,
                        help="paper (default: paper settings) or presets/<name>.yaml's name, e.g. quick")
    parser.add_argument("--papers", help="comma-separated slugs: only their jobs, claims and scoreboard rows "
                                         "(a partial run, when the whole one does not fit); default: all four")
    parser.add_argument("--fresh-baseline", action="store_true", help="redo a finished baseline in the workdir")
    parser.add_argument("--dry-run", action="store_true", help="check the substitutions apply and import; no runs")
    args = parser.parse_args(argv)
    by_id = {m.id: m for m in load_mistakes(args.mistakes_file)}
    ids = args.mistakes.split(",") if args.mistakes else list(by_id)
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        parser.error(f"unknown mistakes {unknown}; known: {', '.join(by_id)}")
    papers = args.papers.split(",") if args.papers else None
    mistakes = [by_id[i] for i in ids if not papers or by_id[i].paper in papers]
    if args.dry_run:
        dry_run(mistakes)
        return 0
    for mistake in mistakes:  # every anchor checked before the long baseline run
        patched_text(mistake, REPO / "src")
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="power-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    base, base_seconds, commit = baseline(workdir, args.cores, args.preset, papers, args.fresh_baseline)
    today = datetime.date.today().isoformat()
    name = ["power", *([] if args.preset == PAPER_PRESET else [args.preset]), "cpu", today, *(papers or [])]
    stem = RECORDS / "-".join(name)
    meta = {"date": today, "commit": commit, "preset": args.preset, "papers": papers or "all", "cores": args.cores,
            "workdir": str(workdir),
            "baseline_seconds": round(base_seconds, 1),
            "command": "python benchmarks/power.py " + " ".join(argv if argv is not None else sys.argv[1:])}
    rows = []
    for mistake in mistakes:
        print(f"{mistake.id}: {mistake.change}; rerunning {', '.join(mistake.rules)}", flush=True)
        rows.append(run_mistake(mistake, base, workdir, args.cores, args.preset, papers))
        print(f"  {rows[-1]['status']}: {rows[-1]['n_turned']} verdicts turned in {rows[-1]['seconds']} s; "
              f"{rows[-1]['turned']}", flush=True)
        record(rows, stem, meta)
    print(f"recorded {stem}.csv and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
