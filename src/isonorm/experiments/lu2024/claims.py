"""The checkable quantities of Lu et al. (2024), measured from this run's results.

``measure`` returns one row per (item, quantity); notebooks/reference/lu2024.yaml holds what the paper printed
for the same keys and the scoreboard compares the two. Nothing here reads the reference. Each part reduces its
own results; the four parts of Table 5 contribute disjoint quantities of ``lu2024-table5``.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from ...report.claims import measure_parts
from . import SLUG, checkpoint_summaries, lora_summaries, trained_summaries, wikitext_summaries

PARTS = (trained_summaries.claims, wikitext_summaries.claims, checkpoint_summaries.claims, lora_summaries.claims)


def measure(results: Mapping[str, Sequence[str]], config: Mapping[str, Any]) -> pd.DataFrame:
    """All quantities computable from the ``results`` files present (result key -> Parquet paths)."""
    return measure_parts(SLUG, PARTS, results, config)
