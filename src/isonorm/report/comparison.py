"""Reported vs reproduced: the compare rules and verdicts of the scoreboard (architecture §7, **contract**).

One function decides every verdict, so the scoreboard CSV, the index page and the per-item tables in the
paper pages can never disagree.
"""

from __future__ import annotations

import math

# Verdicts in display order (architecture §7).
MATCH, MISMATCH, NOT_RUN, NO_REFERENCE = "match", "mismatch", "not-run", "no-reference"
VERDICTS = (MATCH, MISMATCH, NOT_RUN, NO_REFERENCE)

# x = reproduced, r = reported, tol = tolerance.
COMPARE_RULES = {
    "abs": "|x - r| <= tol",
    "rel": "|x - r| <= tol * |r|",
    "le": "x <= r + tol",
    "ge": "x >= r - tol",
    "true": "x == 1 (a boolean claim holds)",
}

# Float rounding slack so that a value exactly on the tolerance boundary matches: |0.4 - 0.3| is
# 0.10000000000000003 in binary floating point, which must count as "within 0.1".
_ROUNDING = 1e-12


def _slack(*values: float) -> float:
    return _ROUNDING * max(1.0, *(abs(v) for v in values))


def within(reproduced: float, reported: float, compare: str, tolerance: float) -> bool:
    """Whether ``reproduced`` agrees with ``reported`` under ``compare`` with ``tolerance`` (COMPARE_RULES)."""
    x, r, tol = float(reproduced), float(reported), float(tolerance)
    slack = _slack(x, r, tol)
    if compare == "abs":
        return abs(x - r) <= tol + slack
    if compare == "rel":
        return abs(x - r) <= tol * abs(r) + slack
    if compare == "le":
        return x <= r + tol + slack
    if compare == "ge":
        return x >= r - tol - slack
    if compare == "true":
        return x == 1.0
    raise ValueError(f"unknown compare rule {compare!r}; use one of {', '.join(COMPARE_RULES)}")


def _missing(value: object) -> bool:
    """None or NaN: how an absent value arrives from a join."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def verdict(reproduced: float | None, reported: float | None, compare: str | None, tolerance: float | None) -> str:
    """``no-reference`` without a reported value, ``not-run`` without a reproduced one, else match/mismatch."""
    if _missing(reported) or _missing(compare):
        return NO_REFERENCE
    if _missing(reproduced):
        return NOT_RUN
    return MATCH if within(reproduced, reported, compare, 0.0 if _missing(tolerance) else tolerance) else MISMATCH


def describe_tolerance(reported: float, compare: str, tolerance: float) -> str:
    """The acceptance rule as a reader sees it, e.g. ``-0.5 ± 0.1`` or ``≤ 0.3``."""
    if compare == "abs":
        return f"{reported:.4g} ± {tolerance:.4g}"
    if compare == "rel":
        return f"{reported:.4g} ± {100 * tolerance:.4g}%"
    if compare == "le":
        return f"≤ {reported + tolerance:.4g}"
    if compare == "ge":
        return f"≥ {reported - tolerance:.4g}"
    if compare == "true":
        return "holds"
    raise ValueError(f"unknown compare rule {compare!r}; use one of {', '.join(COMPARE_RULES)}")
