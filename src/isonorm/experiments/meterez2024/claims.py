"""The checkable quantities of Meterez et al. (2024), measured from this run's results.

``measure`` returns one row per (item, quantity); notebooks/reference/meterez2024.yaml holds what the paper
showed for the same keys (mostly read off its figures) and the scoreboard compares the two. Nothing here reads
the reference.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from ...report.claims import measure_parts
from . import SLUG, at_init_summaries, training_summaries

PARTS = (at_init_summaries.claims, training_summaries.claims)


def measure(results: Mapping[str, Sequence[str]], config: Mapping[str, Any]) -> pd.DataFrame:
    """All quantities computable from the ``results`` files present (result key -> Parquet paths)."""
    return measure_parts(SLUG, PARTS, results, config)
