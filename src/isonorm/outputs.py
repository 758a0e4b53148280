"""Where a run writes: one output root per preset, so that no run overwrites another's (architecture §4).

The paper configuration (preset ``paper``) writes ``results/``, ``report/`` and ``logs/``; every other preset
writes into a folder of its own name inside each (``results/quick/``, ``report/quick/``, ``logs/quick/``). A
quick or budget run in the same checkout therefore leaves a day of paper-settings results untouched, and
Snakemake, whose metadata is kept per output file, never sees one preset's files as another's outputs.
"""

from __future__ import annotations

from pathlib import Path

PAPER_PRESET = "paper"
# Names a preset cannot take: it would write into a paper's results folder or into the benchmark files of the
# paper configuration (results/<slug>/, results/benchmarks/).
RESERVED_PRESET_NAMES = ("lu2024", "daneshmand2021", "meterez2024", "joudaki2023", "benchmarks")
OUTPUT_KINDS = ("results", "report", "logs")


def output_roots(preset: str) -> dict[str, Path]:
    """``{"results": …, "report": …, "logs": …}`` of the run made with ``preset``."""
    if preset in RESERVED_PRESET_NAMES:
        raise ValueError(
            f"preset {preset!r} would write into results/{preset}/, which the paper configuration uses; "
            "rename the preset (the `preset:` key of its file)"
        )
    inner = () if preset == PAPER_PRESET else (preset,)
    return {kind: Path(kind, *inner) for kind in OUTPUT_KINDS}
