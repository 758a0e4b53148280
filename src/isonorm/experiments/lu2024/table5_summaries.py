"""lu2024-table5's claims: the quantities of its parts, each measured by its part's summaries module, (a) the
Transformer row (``wikitext_summaries``), (b)/(c) the PLM and LLM rows (``checkpoint_summaries``) and (d) the
LoRA rows (``lora_summaries``), under the one claims function its record names (isonorm.experiments.lu2024.items).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...verdicts.claims import Measured
from . import checkpoint_summaries, lora_summaries, wikitext_summaries

PARTS = (wikitext_summaries.claims, checkpoint_summaries.claims, lora_summaries.claims)  # Table 5's row order


def claims(results: Mapping[str, Sequence[str]], cfg: Mapping[str, Any]) -> dict[str, dict[str, float | Measured]]:
    """{"lu2024-table5": {quantity: value}}: every part's quantities (a part whose results are missing gives none);
    a quantity given by two parts is an error, never overwritten."""
    out: dict[str, dict[str, float | Measured]] = {}
    for part in PARTS:
        for item, quantities in part(results, cfg).items():
            merged = out.setdefault(item, {})
            if twice := merged.keys() & quantities.keys():
                raise ValueError(f"{item}: quantities {sorted(twice)} given by two parts of Table 5")
            merged.update(quantities)
    return out
