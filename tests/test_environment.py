"""The environment files: envs/lock.txt (the README install, hash-pinned), envs/pipeline.yaml (every rule's
conda env, generated from the lock), its post-deploy script, and pyproject.toml's dependencies.

Offline and in seconds: these read the files, Snakemake's own conda Env class and the installed packages'
metadata; none resolves or installs anything (refreshing the lock is `python envs/lock.py`,
docs/configuration.md "Environments").
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
import venv
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import functools

import pytest
import yaml
from packaging.requirements import Requirement

from conftest import script_module

REPO = Path(__file__).resolve().parents[1]
ENVS = REPO / "envs"
REFRESH = "refresh with `python envs/lock.py` (docs/configuration.md \"Environments\")"


lock = script_module(ENVS / "lock.py", "envs_lock")
LOCK_TEXT = (ENVS / "lock.txt").read_text(encoding="utf-8")
ENTRIES = lock.parse_lock(LOCK_TEXT)
PINNED = {e.key: e for e in ENTRIES}
PIPELINE_YAML = ENVS / "pipeline.yaml"
POST_DEPLOY = ENVS / "pipeline.post-deploy.sh"

# Imported by src/ but not needed by any rule, so neither in the rules' env nor in pyproject.toml:
OPTIONAL_IMPORTS = {
    "httpx": "isonorm.sources.hub's fallback for a huggingface_hub older than 2.x, whose client was httpx",
}
# Imported by src/ only to catch another package's errors, and installed by that package: not declared in
# pyproject.toml (whose huggingface_hub brings it), though the rules' env must hold it:
NOT_DECLARED = {"httpx2": "huggingface_hub 2.x's HTTP client, whose network errors isonorm.sources.hub retries"}
# Needed by src/ at run time without an import statement:
RUNTIME_ONLY = {
    "tabulate": "pandas' DataFrame.to_markdown (the report's Markdown tables)",
    "ipykernel": "the kernel papermill starts for each paper's notebook",
}


def _top_pins(path: Path) -> dict[str, str]:
    """``name -> version`` of every ``name==version`` in a requirements file, following ``-r``."""
    pins: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("-r "):
            pins.update(_top_pins(path.parent / line[3:].strip()))
        elif line:
            name, version = line.split("==")
            pins[lock.normalize(name)] = version.strip()
    return pins


def _imports(*roots: str) -> dict[str, set[str]]:
    """Top-level third-party module -> files importing it (absolute imports anywhere in the file)."""
    found: dict[str, set[str]] = {}
    for root in roots:
        for path in sorted((REPO / root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in ("__future__", "isonorm"):
                        found.setdefault(top, set()).add(str(path.relative_to(REPO)))
    return found


@functools.cache
def _packages_distributions() -> dict[str, list[str]]:
    return metadata.packages_distributions()  # reads every installed package's file list: once


def _distributions(modules: dict[str, set[str]]) -> dict[str, set[str]]:
    """Distribution (normalized) -> modules of it, for the modules the installed environment provides."""
    provided = _packages_distributions()
    dists: dict[str, set[str]] = {}
    unknown = sorted(m for m in modules if m not in provided and m not in OPTIONAL_IMPORTS)
    assert not unknown, f"imported but installed by no package of this environment: {unknown}"
    for module in modules:
        for dist in provided.get(module, []):
            if module not in OPTIONAL_IMPORTS:
                dists.setdefault(lock.normalize(dist), set()).add(module)
    return dists


@functools.cache
def _yaml_pins(text: str) -> dict[str, str]:
    spec = _load_yaml(text)
    pip = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict))
    return {lock.normalize(line.split("==")[0]): line.split("==")[1].split()[0] for line in pip}


@functools.cache
def _load_yaml(text: str):
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml: 200 kB of hashes


# --- the lock ---------------------------------------------------------------------------------------------------


def test_lock_pins_every_package_with_hashes_and_names_its_platform():
    assert "# Platform: Linux x86-64, CPython 3.11" in LOCK_TEXT
    assert len(ENTRIES) == len(PINNED), "a package is pinned twice"
    for entry in ENTRIES:
        assert entry.hashes, f"{entry.name} has no hash: pip install --require-hashes refuses the lock"
        bad = [h for h in entry.hashes if not re.fullmatch(r"sha256:[0-9a-f]{64}", h)]
        assert not bad, f"{entry.name}: {bad}"
    # it names no index, mirror or folder of the machine that made it: the repository stands alone
    for word in ("file://", "/opt/", "--index-url", "--extra-index-url", "--find-links", "../"):
        assert word not in LOCK_TEXT, word


def test_lock_holds_every_top_level_pin_and_nothing_else():
    top = {}
    for name in ("test.txt", "cluster.txt"):
        top.update(_top_pins(ENVS / name))
    stale = {n: (v, PINNED[n].version if n in PINNED else None) for n, v in top.items()
             if n not in PINNED or PINNED[n].version != v}
    assert not stale, f"pin -> (envs/*.txt, envs/lock.txt) differ: {stale}; {REFRESH}"
    # every entry is there because an input file asked for it, directly or through other entries
    roots = {f"-r envs/{n}" for n in ("requirements.txt", "test.txt", "cluster.txt")}
    reached = {e.key for e in ENTRIES if roots & set(e.via)}
    grew = True
    while grew:
        before = len(reached)
        reached |= {e.key for e in ENTRIES if any(lock.normalize(v) in reached for v in e.via)}
        grew = len(reached) > before
    assert reached == set(PINNED), f"in the lock for no input: {sorted(set(PINNED) - reached)}; {REFRESH}"


def test_torch_is_the_registrys_default_cuda_build():
    torch = PINNED["torch"]
    assert torch.version == _top_pins(ENVS / "requirements.txt")["torch"] == "2.14.1"
    assert "+" not in torch.version, "a local build (+cpu, +cu…) is not the registry's wheel by name"
    cuda = [e.name for e in ENTRIES if e.key.startswith("nvidia-") and "torch" in e.via]
    assert cuda and "triton" in PINNED, "torch's CUDA wheels (nvidia-*, triton) are missing: a CPU-only build?"


# --- the conda env of the rules ---------------------------------------------------------------------------------


def test_pipeline_yaml_is_the_one_generated_from_the_lock():
    assert PIPELINE_YAML.read_text(encoding="utf-8") == lock.render_pipeline_yaml(LOCK_TEXT), (
        "envs/pipeline.yaml is out of step with envs/lock.txt: run `python envs/lock.py --yaml-only`")
    # and the generation follows the lock: a changed pin changes the yaml
    numpy = PINNED["numpy"]
    changed = LOCK_TEXT.replace(f"numpy=={numpy.version} ", f"numpy=={numpy.version}.post1 ")
    assert lock.render_pipeline_yaml(changed) != lock.render_pipeline_yaml(LOCK_TEXT)


def test_pipeline_yaml_is_self_contained():
    spec = _load_yaml(PIPELINE_YAML.read_text(encoding="utf-8"))
    assert spec["channels"] == ["conda-forge", "nodefaults"]
    deps = spec["dependencies"]
    assert deps[:2] == ["python=3.11", "pip"] and list(deps[2]) == ["pip"] and len(deps) == 3
    for line in deps[2]["pip"]:
        # only `name==version --hash=…`: no -r/-e, path or URL, which would resolve against
        # .snakemake/conda/, where Snakemake copies this file
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*==[^\s/]+( --hash=sha256:[0-9a-f]{64})+", line), line
    pins = _yaml_pins(PIPELINE_YAML.read_text(encoding="utf-8"))
    missing = {n: v for n, v in _top_pins(ENVS / "requirements.txt").items() if pins.get(n) != v}
    assert not missing, f"envs/requirements.txt pins not in the env: {missing}"
    for tool in ("pytest", "selenium", "snakemake-executor-plugin-slurm"):
        assert tool not in pins, f"{tool} is a test or cluster tool, not a rule's"


def _snakemake_env(env_file: Path, tmp_path: Path):
    """The Env Snakemake makes for a rule's `conda:` file (snakemake.deployment.conda), without conda."""
    from snakemake.deployment.conda import Env
    from snakemake.sourcecache import SourceCache

    (tmp_path / "rt").mkdir(parents=True, exist_ok=True)
    workflow = SimpleNamespace(
        sourcecache=SourceCache(tmp_path / "cache", runtime_cache_path=tmp_path / "rt"),
        deployment_settings=SimpleNamespace(apptainer_args=""),
        runtime_paths=[],
        persistence=SimpleNamespace(conda_env_path=str(tmp_path / "conda")),
    )
    env = Env(workflow, env_file=str(env_file), envs_dir=str(tmp_path / "conda"))
    env._conda = SimpleNamespace(platform="linux-64")  # Env asks conda only for its platform (pin-file name)
    return env


def test_snakemake_env_is_the_file_and_its_hash_follows_every_pin(tmp_path):
    env = _snakemake_env(PIPELINE_YAML, tmp_path)
    # what Snakemake copies to .snakemake/conda/<hash>.yaml and hands to `conda env create`
    assert env.content == PIPELINE_YAML.read_bytes()
    assert env.post_deploy_file is not None and env.content_deploy == POST_DEPLOY.read_bytes()
    assert env.pin_file is None, "a conda pin file would override the yaml: keep none, or generate it too"
    copies = {}
    for name, edit in {"same": None, "pin": "numpy", "deploy": "post-deploy"}.items():
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(PIPELINE_YAML, folder / PIPELINE_YAML.name)
        shutil.copy(POST_DEPLOY, folder / POST_DEPLOY.name)
        if edit == "numpy":
            text = PIPELINE_YAML.read_text(encoding="utf-8")
            version = PINNED["numpy"].version
            (folder / PIPELINE_YAML.name).write_text(text.replace(f"numpy=={version} ", f"numpy=={version}.post1 "))
        elif edit == "post-deploy":
            (folder / POST_DEPLOY.name).write_text(POST_DEPLOY.read_text() + "# changed\n")
        copies[name] = _snakemake_env(folder / PIPELINE_YAML.name, tmp_path / f"sm-{name}").content_hash
    assert copies["same"] == env.content_hash
    assert copies["pin"] != env.content_hash, "a changed pin would reuse the old env"
    assert copies["deploy"] != env.content_hash


def test_pipeline_env_holds_every_dependency_of_its_packages():
    """The env's packages, as installed here from the same lock, need nothing the env lacks."""
    pins = _yaml_pins(PIPELINE_YAML.read_text(encoding="utf-8"))
    missing = {}
    for name, version in pins.items():
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            pytest.fail(f"{name} is not installed: install the environment from envs/lock.txt (README)")
        assert dist.version == version, (
            f"{name} {dist.version} is installed, the lock has {version}: reinstall from envs/lock.txt (README)")
        for spec in dist.requires or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                if lock.normalize(req.name) not in pins:
                    missing.setdefault(name, []).append(req.name)
    assert not missing, f"needed by the env's packages but not in envs/pipeline.yaml: {missing}"


def test_job_scripts_and_notebooks_import_only_what_the_env_holds():
    imports = _imports("src", "scripts", "notebooks")
    for module in OPTIONAL_IMPORTS:
        assert module in imports, f"{module} is no longer imported: drop it from OPTIONAL_IMPORTS"
    pins = _yaml_pins(PIPELINE_YAML.read_text(encoding="utf-8"))
    missing = {d: sorted(m) for d, m in _distributions(imports).items() if d not in pins}
    assert not missing, f"imported by src/, scripts/ or notebooks/ but not in envs/pipeline.yaml: {missing}"


def test_pyproject_dependencies_are_what_src_needs():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {lock.normalize(Requirement(d).name) for d in project["dependencies"]}
    needed = set(_distributions(_imports("src"))) - set(NOT_DECLARED) | set(RUNTIME_ONLY)
    assert declared == needed, (
        f"pyproject.toml lacks {sorted(needed - declared)}, has unneeded {sorted(declared - needed)}")
    assert declared <= set(PINNED), f"not in envs/lock.txt: {sorted(declared - set(PINNED))}"


def test_post_deploy_script_points_the_env_at_the_checkout(tmp_path):
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    environ["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{environ.get('PATH', '')}"  # as `conda activate` does
    find = "import importlib.util as u; s = u.find_spec('isonorm'); print(s.origin if s else None)"

    def origin() -> str:
        return subprocess.run([python, "-c", find], cwd=tmp_path, env=environ, capture_output=True, text=True,
                              check=True).stdout.strip()

    assert origin() == "None"  # a bare env does not see the project
    done = subprocess.run(["bash", str(POST_DEPLOY)], cwd=REPO, env=environ, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert origin() == str(REPO / "src" / "isonorm" / "__init__.py")
    elsewhere = subprocess.run(["bash", str(POST_DEPLOY)], cwd=tmp_path, env=environ, capture_output=True,
                               text=True)
    assert elsewhere.returncode != 0 and "checkout's root" in elsewhere.stderr


# --- the install commands ---------------------------------------------------------------------------------------


def test_ci_runs_the_readme_install():
    """CI runs exactly the README's install: the same pip lines, in the same order (`-q` aside)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Install", 1)[1].split("```bash", 1)[1].split("```", 1)[0]

    def pip_lines(text: str) -> list[str]:
        lines = (line.split("#", 1)[0].replace(" -q ", " ").strip() for line in text.splitlines())
        return [line for line in lines if line.startswith("pip ")]

    assert pip_lines(block) == pip_lines((REPO / ".ci" / "run").read_text(encoding="utf-8"))
    assert "pip install --require-hashes -r envs/lock.txt" in pip_lines(block)
