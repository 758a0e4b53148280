#!/usr/bin/env bash
# Snakemake runs this once, right after it creates the conda env of envs/pipeline.yaml (the name
# <yaml stem>.post-deploy.sh is how it finds it; its text joins the env's hash), with that env activated
# and in the run's working directory, the checkout: the Snakefile reads config.yaml from there.
#
# It makes the project importable in the env the way `pip install -e .` does, with a .pth file naming the
# checkout's src/. The rules' scripts would find src/ without it (Snakemake's script preamble appends the
# search path of the Snakemake process, which imports isonorm itself), but the notebook kernels that
# papermill starts (rule render_notebook) are new processes that see only the env's own site-packages.
# A .pth rather than `pip install -e .`: nothing to build or fetch, and the env belongs to this checkout
# anyway (Snakemake names its folder by a hash that includes the absolute path of .snakemake/conda).
set -euo pipefail
if [ ! -f src/isonorm/__init__.py ]; then
  echo "envs/pipeline.post-deploy.sh: no src/isonorm/ in $PWD; run snakemake from the checkout's root" >&2
  exit 1
fi
python - <<'EOF'
import os
import sysconfig

pth = os.path.join(sysconfig.get_paths()["purelib"], "isonorm-checkout.pth")
with open(pth, "w") as f:
    f.write(os.path.abspath("src") + "\n")
print(f"{pth}: {os.path.abspath('src')}")
EOF
