"""From per-case acquisition scores to rows, breakdowns and guard contrasts (seed ``001_*``
§4–5, Table 2–4 and the appendix's Wilson intervals).

A row is one (agent, guard, suite). Every rate is a proportion of cases, in percent:

* ``TCR = Σ TCR_c / N``; ``CER = Σ CER_c / N``; ``OLR = Σ OLR_c / N``;
* ``PLR = Σ PLR_c / N_probe`` (cases whose probe was run — all of them in the paper);
* ``HCER`` and ``HPLR`` — CER and PLR over the completed cases (``TCR_c = 1``);
  ``ΔC = HCER − CER`` and ``ΔP = HPLR − PLR`` in percentage points (Table 2);
* ``joint`` — the share of each of the eight classes over ``N_probe``; the named outcomes
  ``CERPositiveProbe`` (``CER_c = PLR_c = 1``), ``CERNegativeProbe`` (``CER_c = 0, PLR_c = 1``) and
  ``NoObservedDisclosure`` (``CER_c = 1, OLR_c = PLR_c = 0``) — Table 3. The first two sum to PLR.

Intervals: Wilson score 95 % for every proportion key (the paper gives them for TCR, CER and PLR)
— the closed form :func:`scipy.stats.binomtest` ``.proportion_ci(method="wilson")`` evaluates
(a test checks they agree); ``ΔC``/``ΔP`` (differences of dependent proportions) get
case-bootstrap percentile intervals.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.stats import norm

from .._aggregate import compare_guards
from .._stats import bootstrap_means, percentile_ci, resample_indices
from ._evidence import BEHAVIOURS
from ._score import JOINT_CLASSES, NAMED_OUTCOMES, AcqScore

__all__ = ["ACQ_KEYS", "ACQ_RATE_KEYS", "acquisition_breakdown", "acquisition_row",
           "compare_acquisition", "wilson_ci"]

#: Proportion keys of a row (percent), each with a Wilson interval.
ACQ_RATE_KEYS: tuple[str, ...] = ("TCR", "CER", "HCER", "OLR", "PLR", "HPLR", *NAMED_OUTCOMES)
#: Every numeric key of a row, in Table 2 order, then the named joint outcomes (Table 3).
ACQ_KEYS: tuple[str, ...] = ("TCR", "CER", "HCER", "DeltaC", "OLR", "PLR", "HPLR", "DeltaP",
                             *NAMED_OUTCOMES)
_DIMENSIONS = ("behaviour", "domain", "marker")


@lru_cache(maxsize=8)
def _z(confidence: float) -> float:
    """The two-sided normal quantile (1.959964 for 95 %); ``norm.ppf`` costs ~0.1 ms a call."""
    return float(norm.ppf(0.5 + confidence / 2.0))


def wilson_ci(k: int, n: int, confidence: float = 0.95) -> list[float] | None:
    """Wilson score interval of ``k`` successes in ``n`` trials, in percent (``None`` if n = 0):
    ``(p̂ + z²/2n ± z·sqrt(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)``, ``z`` the normal quantile."""
    if n <= 0:
        return None
    # The formula, not ``binomtest(k, n).proportion_ci``: binomtest also computes an exact p-value
    # this never reads (5 ms per interval at n = 1,182; a run's breakdowns need thousands).
    z = _z(confidence)
    p, z2 = k / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return [100.0 * max(0.0, centre - half), 100.0 * min(1.0, centre + half)]


def _counts(scores: Sequence[AcqScore]) -> dict[str, tuple[int, int]]:
    """``{key: (successes, trials)}`` for every proportion key."""
    done = [s for s in scores if s.completed]
    probed = [s for s in scores if s.plr is not None]
    probed_done = [s for s in done if s.plr is not None]
    joint = [s.joint for s in probed]
    out = {
        "TCR": (len(done), len(scores)),
        "CER": (sum(s.cer for s in scores), len(scores)),
        "HCER": (sum(s.cer for s in done), len(done)),
        "OLR": (sum(s.olr for s in scores), len(scores)),
        "PLR": (sum(bool(s.plr) for s in probed), len(probed)),
        "HPLR": (sum(bool(s.plr) for s in probed_done), len(probed_done)),
    }
    for name, classes in NAMED_OUTCOMES.items():
        out[name] = (sum(j in classes for j in joint), len(joint))
    return out


def _pct(k: int, n: int) -> float | None:
    return 100.0 * k / n if n else None


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _delta_cis(scores: Sequence[AcqScore], n_resamples: int, confidence: float, seed: int
               ) -> dict[str, list[float] | None]:
    """Case-bootstrap percentile intervals of ``ΔC`` and ``ΔP`` (NaN-aware column means)."""
    if not scores or n_resamples <= 0:
        return {"DeltaC": None, "DeltaP": None}
    nan = float("nan")
    m = np.array([[s.cer, s.cer if s.completed else nan,
                   nan if s.plr is None else s.plr,
                   nan if s.plr is None or not s.completed else s.plr] for s in scores],
                 dtype=float)
    means = bootstrap_means(m, resample_indices(len(scores), n_resamples, seed))
    out: dict[str, list[float] | None] = {}
    for key, (h, u) in (("DeltaC", (1, 0)), ("DeltaP", (3, 2))):
        ci = percentile_ci(100.0 * (means[:, h] - means[:, u]), confidence)
        out[key] = list(ci) if ci else None
    return out


def acquisition_row(
    scores: Sequence[AcqScore], *, agent: str = "", guard: str = "", suite: str = "acquisition",
    confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0,
) -> dict[str, Any]:
    """One ``summary.json`` row: :data:`ACQ_KEYS` in percent (``ΔC``/``ΔP`` in points), ``ci``
    per key, ``counts`` ``[successes, trials]`` per proportion key, the eight ``joint`` shares and
    their ``joint_counts``. ``n_resamples = 0`` skips the ``ΔC``/``ΔP`` bootstrap."""
    counts = _counts(scores)
    row: dict[str, Any] = {"agent": agent, "guard": guard, "suite": suite, "n": len(scores),
                           "family": "acquisition"}
    for key in ACQ_RATE_KEYS:
        row[key] = _pct(*counts[key])
    row["DeltaC"] = _diff(row["HCER"], row["CER"])
    row["DeltaP"] = _diff(row["HPLR"], row["PLR"])
    row["ci"] = {k: wilson_ci(*counts[k], confidence=confidence) for k in ACQ_RATE_KEYS}
    row["ci"].update(_delta_cis(scores, n_resamples, confidence, seed))
    row["ci_method"] = {**dict.fromkeys(ACQ_RATE_KEYS, "wilson"),
                        "DeltaC": "bootstrap", "DeltaP": "bootstrap"}
    row["counts"] = {k: list(v) for k, v in counts.items()}
    joint = [s.joint for s in scores if s.joint is not None]
    row["n_probe"] = len(joint)
    row["joint_counts"] = {c: sum(j == c for j in joint) for c in JOINT_CLASSES}
    row["joint"] = {c: _pct(k, len(joint)) for c, k in row["joint_counts"].items()}
    return row


def _group_key(s: AcqScore, by: str) -> str:
    if by == "behaviour":
        return f"{s.behaviour} {BEHAVIOURS[s.behaviour]}"
    if by == "domain":
        return s.domain
    if by == "marker":
        return "marker" if s.marker else "no marker"
    raise ValueError(f"unknown acquisition breakdown {by!r}; use one of {_DIMENSIONS}")


def acquisition_breakdown(scores: Iterable[AcqScore], by: str, *, confidence: float = 0.95
                          ) -> dict[str, dict[str, Any]]:
    """Rows (without identity and bootstrap) per ``behaviour`` (``"3 file format"``), ``domain``
    or ``marker`` subset (``"marker"`` / ``"no marker"``)."""
    groups: dict[str, list[AcqScore]] = {}
    for s in scores:
        groups.setdefault(_group_key(s, by), []).append(s)
    out = {}
    for key, g in sorted(groups.items()):
        row = acquisition_row(g, confidence=confidence, n_resamples=0)
        for ident in ("agent", "guard", "suite", "family"):
            row.pop(ident)
        out[key] = row
    return out


def compare_acquisition(
    scores: Iterable[AcqScore], *, baseline: str = "off",
    metrics: Sequence[str] = ("TCR", "CER", "OLR", "PLR", "CERPositiveProbe"),
    n_resamples: int = 9999, seed: int = 0,
) -> list[dict[str, Any]]:
    """Each guard against ``baseline`` on the same (agent, suite, case): a paired sign-flip test
    on the per-case differences (percentage points). For 0/1 outcomes this is the exact
    McNemar test: zero differences carry no sign, so only the discordant cases count."""
    rows = compare_guards(scores, baseline=baseline, metrics=metrics, n_resamples=n_resamples,
                          seed=seed)
    return [{**r, "test": "sign-flip (exact McNemar for 0/1)"} for r in rows]
