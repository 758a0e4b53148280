"""Reported vs reproduced: the compare rules, verdicts and weak tolerances of the scoreboard (architecture §7,
**contract**; docs/decisions/README.md, "Verdicts").

One function (:func:`judge`) decides every verdict and one (:func:`weak`) every weak mark, so the scoreboard CSV,
the index page, the item tiles, the captions and the per-item tables in the paper pages can never disagree.
"""

from __future__ import annotations

import math
from typing import NamedTuple

# Verdicts in display order (architecture §7; docs/decisions/README.md, "Verdicts").
MATCH, MISMATCH, INCONCLUSIVE, FAILED, FITTED, NOT_RUN, NO_REFERENCE = (
    "match", "mismatch", "inconclusive", "failed", "fitted", "not-run", "no-reference")
# A smoke run (any preset but the paper configuration: sizes or data are reduced) is not compared to the paper: a
# quantity is computed, failed (NaN or infinite), not produced at these sizes (named after a paper setting the
# preset does not reach), or its item did not run (:func:`judge_smoke`; docs/decisions/README.md, "Verdicts").
COMPUTED, NOT_PRODUCED = "computed", "not-produced"
VERDICTS = (MATCH, MISMATCH, INCONCLUSIVE, FAILED, FITTED, NOT_RUN, NO_REFERENCE, COMPUTED, NOT_PRODUCED)
# The verdicts a headline row can have: a fitted reading is never one ("Verdicts").
HEADLINE_VERDICTS = (MATCH, MISMATCH, INCONCLUSIVE, FAILED, NOT_RUN, NO_REFERENCE)
SMOKE_VERDICTS = (COMPUTED, FAILED, NOT_PRODUCED, NOT_RUN)
# What each smoke state means, as the index's figure and the scoreboard page explain it.
SMOKE_MEANINGS = {COMPUTED: "a finite value", FAILED: "its job failed, or NaN or infinite",
                  NOT_PRODUCED: "a quantity named after a paper setting these sizes do not reach",
                  NOT_RUN: "the item produced no value in this run"}
# The verdicts of a row that was scored and decided: its item ran, it has a reference that is not a fitted reading,
# and its spread let the run decide (an inconclusive row is counted apart, "Verdicts").
SCORED = (MATCH, MISMATCH, FAILED)

# Readings and checks of a reference row (references.READINGS, references.CHECKS): only default reproduction rows
# count in the headline ("Verdicts").
DEFAULT, ALTERNATIVE, FITTED_READING = "default", "alternative", "fitted"
# A run whose settings were fitted to the paper carries this suffix on its label (``adam-fitted``, lu2024 decision
# A3); its quantities are the fitted reading's.
FITTED_RUN = "-fitted"
REPRODUCTION, CONSISTENCY = "reproduction", "consistency"

# x = reproduced, s = its seed spread (0 when it has none), r = reported, t = tolerance. The spread widens the
# rule on the side of the reproduction: a claim "holds" only beyond the seed noise ("Verdicts").
COMPARE_RULES = {
    "abs": "|x - r| <= t + s",
    "rel": "|x - r| <= t * |r| + s",
    "le": "x + s <= r + t",
    "ge": "x - s >= r - t",
    "true": "x == 1 (a boolean claim holds)",
}

# Float rounding slack so that a value exactly on the tolerance boundary matches: |0.4 - 0.3| is
# 0.10000000000000003 in binary floating point, which must count as "within 0.1".
_ROUNDING = 1e-12
# A weak tolerance accepts values more than this factor apart ("Verdicts").
WEAK_FACTOR = 2.0
WEAK_MEANING = ("its acceptance interval spans more than a factor of 2 or contains 0, or its margin is at least "
                "the reproduced effect the item is about")
_SCALE_BASES = {"log10": 10.0, "ln": math.e}


def _slack(*values: float) -> float:
    return _ROUNDING * max(1.0, *(abs(v) for v in values))


def _missing(value: object) -> bool:
    """None or NaN: how an absent value arrives from a join."""
    if value is None:
        return True
    try:
        return math.isnan(value)  # type: ignore[arg-type]
    except TypeError:
        return False


def _spread(spread: float | None) -> float:
    """A seed spread as a number: 0 when the value has none (NaN or absent)."""
    return 0.0 if _missing(spread) else float(spread)


def _check_rule(compare: str) -> None:
    if compare not in COMPARE_RULES:
        raise ValueError(f"unknown compare rule {compare!r}; use one of {', '.join(COMPARE_RULES)}")


def within(reproduced: float, reported: float, compare: str, tolerance: float, spread: float | None = None) -> bool:
    """Whether ``reproduced`` (with its seed ``spread``) agrees with ``reported`` under ``compare`` (COMPARE_RULES)."""
    _check_rule(compare)
    x, r, t, s = float(reproduced), float(reported), float(tolerance), _spread(spread)
    slack = _slack(x, r, t, s)
    return {
        "abs": lambda: abs(x - r) <= t + s + slack,
        "rel": lambda: abs(x - r) <= t * abs(r) + s + slack,
        "le": lambda: x + s <= r + t + slack,
        "ge": lambda: x - s >= r - t - slack,
        "true": lambda: x == 1.0,
    }[compare]()


def decide(reproduced: float, reported: float, compare: str, tolerance: float,
           spread: float | None = None) -> tuple[str, float]:
    """``match``, ``mismatch`` or ``inconclusive`` by the rule alone, with the spread that would decide an
    inconclusive row (NaN otherwise; docs/decisions/README.md, "Verdicts").

    Two-sided (``abs``, ``rel``): a mismatch lies outside r ± (t + s); inside it the run decides only when its spread
    s is at most the tolerance (else it cannot tell whether the value lies within it). One-sided (``le``, ``ge``): a
    match holds beyond the spread (x + s <= r + t), a mismatch fails beyond it (x − s > r + t); x ± s across the bound
    is undecided.
    """
    _check_rule(compare)
    x, r, t, s = float(reproduced), float(reported), float(tolerance), _spread(spread)
    if compare in ("le", "ge"):
        if within(x, r, compare, t, s):
            return MATCH, math.nan
        if not within(x, r, compare, t, -s):
            return MISMATCH, math.nan
        return INCONCLUSIVE, abs(x - (r + t if compare == "le" else r - t))
    if not within(x, r, compare, t, s):
        return MISMATCH, math.nan
    width = t * abs(r) if compare == "rel" else t
    if compare != "true" and s > width + _slack(s, width):
        return INCONCLUSIVE, width
    return MATCH, math.nan


def runs_to_decide(runs: float | None, spread: float, needed: float) -> int | None:
    """How many runs would shrink ``spread`` to ``needed`` (a spread falls as 1/√runs), or None when unknown."""
    if _missing(runs) or not runs or _missing(needed) or needed <= 0:
        return None
    return int(math.ceil(float(runs) * (float(spread) / float(needed)) ** 2))


class Judgement(NamedTuple):
    """A row's verdict and, for a failure, an undecided row or a row that did not run, why (the note says it)."""

    verdict: str
    reason: str = ""


def judge(reproduced: float | None, reported: float | None, compare: str | None, tolerance: float | None,
          spread: float | None = None, reading: str | None = DEFAULT, ran: bool = True,
          runs: float | None = None) -> Judgement:
    """The verdict of one scoreboard row (docs/decisions/README.md, "Verdicts").

    ``ran``: whether the row's item produced any claim; ``runs``: how many runs (or blocks) the value's spread was
    taken over, NaN/None for a value that has no seed spread (a closed form, a deterministic computation). In
    order: no reported value -> ``no-reference``; the item produced no claim -> ``not-run``; a fitted reading ->
    ``fitted`` (never a match); the quantity missing, NaN, or infinite while the reported value is finite ->
    ``failed``; a value of one stochastic run (``runs`` 1, no spread) -> ``inconclusive``; outside the rule even
    with its spread -> ``mismatch``; a spread too wide to decide at the tolerance -> ``inconclusive`` (with the runs
    that would decide it); else ``match``.
    """
    if _missing(reported) or _missing(compare):
        return Judgement(NO_REFERENCE)
    if not ran:
        return Judgement(NOT_RUN, "the item produced no claims in this run")
    if reading == FITTED_READING:
        return Judgement(FITTED)
    if reproduced is None:
        return Judgement(FAILED, "the item ran but did not produce this quantity")
    if math.isnan(reproduced):
        return Judgement(FAILED, "the reproduced value is NaN")
    if math.isinf(reproduced) and math.isfinite(reported):
        return Judgement(FAILED, "the reproduced value is infinite")
    tolerance = 0.0 if _missing(tolerance) else tolerance
    if compare != "true" and not _missing(runs) and float(runs) < 2 and _missing(spread):
        return Judgement(INCONCLUSIVE, "one run has no spread: a difference from the paper cannot be told from "
                                       "run-to-run noise; more seeds would decide it")
    decided, needed = decide(reproduced, reported, compare, tolerance, spread)
    if decided == INCONCLUSIVE:
        more = runs_to_decide(runs, _spread(spread), needed)
        tail = f"; about {more} runs would decide it (this run: {int(runs)})" if more else ""
        return Judgement(INCONCLUSIVE, f"the spread ±{_spread(spread):.3g} is too wide to decide at "
                                       f"{'the bound' if compare in ('le', 'ge') else 'the tolerance'} "
                                       f"(it would need ±{needed:.3g}){tail}")
    if decided == MISMATCH:
        return Judgement(MISMATCH)
    return Judgement(MATCH)


def judge_smoke(reproduced: float | None, ran: bool = True) -> Judgement:
    """The verdict of a row of a smoke run, which is not compared to the paper (``SMOKE_VERDICTS``): its item did not
    run -> ``not-run``; the item ran without this quantity -> ``not-produced``; NaN or infinite -> ``failed`` (a
    claims function leaves out what it cannot compute at the run's sizes, so a non-finite value is a fault);
    else ``computed``."""
    if not ran:
        return Judgement(NOT_RUN, "the item produced no claims in this run")
    if reproduced is None:
        return Judgement(NOT_PRODUCED, "not produced at this preset's sizes")
    if not math.isfinite(reproduced):
        return Judgement(FAILED, f"the value is {'NaN' if math.isnan(reproduced) else 'infinite'}")
    return Judgement(COMPUTED)


def verdict(reproduced: float | None, reported: float | None, compare: str | None, tolerance: float | None,
            spread: float | None = None, reading: str | None = DEFAULT, ran: bool = True,
            runs: float | None = None) -> str:
    """:func:`judge`'s verdict alone."""
    return judge(reproduced, reported, compare, tolerance, spread, reading, ran, runs).verdict


def half_width(reported: float, compare: str, tolerance: float, spread: float | None = None) -> float:
    """t + s of an ``abs`` rule, t·|r| + s of a ``rel`` one: how far from ``reported`` the rule accepts."""
    scaled = tolerance * abs(reported) if compare == "rel" else tolerance
    return scaled + _spread(spread)


def weak_reason(reported: float | None, compare: str | None, tolerance: float | None, spread: float | None = None,
                scale: str | None = "linear", reproduced: float | None = None,
                contrast: float | None = None) -> str:
    """Why a row's tolerance is weak, or "" when it is not (docs/decisions/README.md, "Verdicts").

    An ``abs``/``rel`` row is weak when its acceptance interval on the quantity's own ``scale`` spans more than
    ``WEAK_FACTOR`` or contains 0 while ``reported`` is not 0; any row with a reproduced ``contrast`` (the value
    of the quantity it is compared against) is weak when t + s is at least the reproduced difference |x - x_c|.
    """
    if _missing(reported) or _missing(compare) or compare == "true":
        return ""
    t = 0.0 if _missing(tolerance) else float(tolerance)
    width = half_width(reported, compare, t, spread)
    if compare in ("abs", "rel"):
        base = _SCALE_BASES.get(scale or "linear")
        if base is not None:  # 10^(r ± w) or e^(r ± w): a factor base^(2w) apart
            if base ** (2 * width) > WEAK_FACTOR:
                return f"accepts values a factor {base ** (2 * width):.3g} apart"
        elif reported != 0 and width >= abs(reported):
            return "the accepted interval contains 0"
        elif reported != 0 and (abs(reported) + width) > WEAK_FACTOR * (abs(reported) - width):
            return f"accepts values a factor {(abs(reported) + width) / (abs(reported) - width):.3g} apart"
    if not (_missing(reproduced) or _missing(contrast)) and width >= abs(float(reproduced) - float(contrast)):
        return f"the margin {width:.3g} is at least the difference {abs(reproduced - contrast):.3g} to its contrast"
    return ""


def weak(reported: float | None, compare: str | None, tolerance: float | None, spread: float | None = None,
         scale: str | None = "linear", reproduced: float | None = None, contrast: float | None = None) -> bool:
    """Whether :func:`weak_reason` finds the row's tolerance weak."""
    return bool(weak_reason(reported, compare, tolerance, spread, scale, reproduced, contrast))


def marked_weak(value: object) -> bool:
    """A ``weak`` cell as a boolean: True, numpy's True or "True" as a CSV gives it back; anything else False."""
    return str(value).strip().lower() == "true"


def describe_tolerance(reported: float, compare: str, tolerance: float, spread: float | None = None) -> str:
    """The acceptance rule as a reader sees it, with the reproduced value's seed spread where it has one, e.g.
    ``0.5 ± 0.1 (x ± 0.03)``, ``2 ± 10%``, ``≤ 0.3 (x + 0.02)``."""
    _check_rule(compare)
    s = _spread(spread)
    rule = {
        "abs": lambda: f"{reported:.4g} ± {tolerance:.4g}",
        "rel": lambda: f"{reported:.4g} ± {100 * tolerance:.4g}%",
        "le": lambda: f"≤ {reported + tolerance:.4g}",
        "ge": lambda: f"≥ {reported - tolerance:.4g}",
        "true": lambda: "holds",
    }[compare]()
    if not s or compare == "true":
        return rule
    sign = {"le": "+", "ge": "−"}.get(compare, "±")
    return f"{rule} (x {sign} {s:.2g})"


def counts_in_headline(reading: object, check: object) -> bool:
    """Whether a row counts in the headline: a default reading of a reproduction (absent keys are the defaults,
    as on a no-reference row; "Verdicts")."""
    return (DEFAULT if _missing(reading) else reading) == DEFAULT and (
        REPRODUCTION if _missing(check) else check) == REPRODUCTION
