"""Fitted vs paper: the rows ``tpguard bench calibrate`` prints (targets in :mod:`._paper`).

Tolerances (issue 12): ≤ 3 points per sink and per free-text field, the paper's ordering of the
sinks, Spearman ρ ≥ 0.8 between the paper's and the fitted FOR of Table B.12's 23 domains; overall
values inside Table 8's range across its nine models (FOR within 3 points of its mean for the
``default`` profile). Transition rows hold RiskyTransitionRate within 10 points when at least
10 transitions of the type were observed. Rows marked ``info`` are shown for reading, not judged.

The per-sink, per-field and per-transition tolerances are **n-aware** (issue 29): a rate measured
on n cases cannot be held closer to the paper than its own sampling error, so the tolerance is the
larger of the fixed one and the 95 % half-width of a proportion at the paper's value over n cases
(``1.96 · √(p(1 − p) / n)``, cases as the unit — conservative, since a case's opportunities are
correlated). A failing row says why (its ``note``): how far it is off against both bands.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ...metrics import CaseScore, breakdown, pooled_groups, spearman
from ._paper import DOMAIN_FOR, FIELDS, SINK_MEMBERS, SINKS, TABLE8, TRANSITIONS

__all__ = ["CalRow", "compare", "sampling_band"]

SINK_TOL = FIELD_TOL = 3.0
TRANSITION_TOL = 10.0
MIN_TRANSITIONS = 10  # fewer observed transitions of a type: shown, not judged
SPEARMAN_MIN = 0.8
#: Where each profile's unguarded FOR should sit: Table 8's low end, mean, high end (± 3).
PROFILE_FOR = {"careful": TABLE8["FOR"][0], "default": TABLE8["FOR"][1], "leaky": TABLE8["FOR"][2]}


@dataclass(frozen=True, slots=True)
class CalRow:
    """One line of the table: ``passed`` is ``None`` for an ``info`` row."""

    group: str
    name: str
    metric: str
    paper: float | None
    fitted: float | None
    tolerance: str
    passed: bool | None
    n: int | None = None
    note: str = ""  # why a judged row failed (or why a row is not judged)

    @property
    def deviation(self) -> float | None:
        if self.paper is None or self.fitted is None:
            return None
        return self.fitted - self.paper

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "deviation": self.deviation}


def _within(fitted: float | None, paper: float, tol: float) -> bool:
    return fitted is not None and abs(fitted - paper) <= tol


def sampling_band(paper: float, n: int | None) -> float:
    """95 % half-width (points) of a proportion at the paper's ``paper`` % over ``n`` cases."""
    if not n:
        return 0.0
    p = min(max(paper / 100.0, 0.0), 1.0)
    return 196.0 * math.sqrt(p * (1.0 - p) / n)


def _judged(group: str, name: str, metric: str, paper: float, fitted: float | None, base: float,
            n: int | None) -> CalRow:
    """A row judged within ``max(base, sampling band at n)``, with the reason when it fails."""
    band = sampling_band(paper, n)
    tol = max(base, band)
    label = f"±{base:g}" + (f" (n-aware ±{band:.1f})" if band > base else "")
    ok = _within(fitted, paper, tol)
    note = ""
    if fitted is None:
        note = "not measured in this sample"
    elif not ok:
        note = (f"off by {fitted - paper:+.2f} points, beyond ±{base:g} and the ±{band:.1f} a "
                f"rate over {n} cases can vary: a fitting gap, not sampling noise")
    return CalRow(group, name, metric, paper, fitted, label, ok, n, note)


def _in_range(fitted: float | None, lo: float, hi: float) -> bool:
    return fitted is not None and lo <= fitted <= hi


def _overall(rows: Mapping[str, Mapping[str, Any]]) -> list[CalRow]:
    out = []
    for profile, row in rows.items():
        target = PROFILE_FOR.get(profile)
        if target is not None:
            out.append(CalRow("profile", profile, "FOR", target, row.get("FOR"), "±3",
                              _within(row.get("FOR"), target, 3.0), row.get("n")))
    default = rows.get("default")
    if default is None:
        return out
    for key in ("FreeTextFOR_field", "GoldArg", "Task", "TaskSuccess", "SWLR", "MT-POI"):
        lo, mean, hi = TABLE8[key]
        out.append(CalRow("overall", "default", key, mean, default.get(key),
                          f"in {lo:.1f}–{hi:.1f}", _in_range(default.get(key), lo, hi),
                          default.get("n")))
    out.append(CalRow("overall", "default", "FreeTextFOR (§5.6 as printed)", None,
                      default.get("FreeTextFOR"), "info", None, default.get("n")))
    return out


def _sinks(scores: Sequence[CaseScore]) -> list[CalRow]:
    out, fitted = [], {}
    for sink, (p_for, _swlr, p_ftf) in SINKS.items():
        r = pooled_groups(scores, "sink", SINK_MEMBERS[sink])
        fitted[sink] = r["FOR"]
        n = int(r["n_cases"])
        out.append(_judged("sink", sink, "FOR", p_for, r["FOR"], SINK_TOL, n))
        out.append(_judged("sink", sink, "FreeTextFOR_field", p_ftf, r["FreeTextFOR_field"],
                           SINK_TOL, n))
    order = sorted(SINKS, key=lambda s: -SINKS[s][0])
    got = sorted(fitted, key=lambda s: -(fitted[s] if fitted[s] is not None else -1.0))
    out.append(CalRow("sink", " > ".join(got), "FOR ordering", None, None,
                      "= " + " > ".join(order), got == order))
    return out


def _fields(scores: Sequence[CaseScore]) -> list[CalRow]:
    by = breakdown(scores, "field")
    out = []
    for name, (p_slot, p_ftf) in FIELDS.items():
        r = by.get(name, {})
        n = r.get("n_cases")
        out.append(_judged("field", name, "FreeTextFOR_field", p_ftf, r.get("FreeTextFOR_field"),
                           FIELD_TOL, n))
        out.append(CalRow("field", name, "FTSlotRate", p_slot, r.get("FTSlotRate"), "info", None, n))
    return out


def _transitions(paths: Mapping[str, Any]) -> list[CalRow]:
    out = []
    for kind, (p_first, _depth, p_risky) in TRANSITIONS.items():
        t = paths.get("transitions", {}).get(kind, {})
        n = t.get("n")
        if (n or 0) >= MIN_TRANSITIONS:
            out.append(_judged("transition", kind, "RiskyTransitionRate", p_risky,
                               t.get("RiskyTransitionRate"), TRANSITION_TOL, n))
        else:
            out.append(CalRow("transition", kind, "RiskyTransitionRate", p_risky,
                              t.get("RiskyTransitionRate"), "info (n < 10)", None, n,
                              f"only {n or 0} transitions of this type observed: not judged"))
        out.append(CalRow("transition", kind, "FirstLeakFreq", p_first, t.get("FirstLeakFreq"),
                          "info", None, n))
    return out


def _domains(scores: Sequence[CaseScore]) -> list[CalRow]:
    by = breakdown(scores, "domain")
    out, paper, fitted = [], [], []
    for domain, (p_for, _swlr, _ts) in DOMAIN_FOR.items():
        r = by.get(domain, {})
        out.append(CalRow("domain", domain, "FOR", p_for, r.get("FOR"), "rank", None,
                          r.get("n_cases")))
        if r.get("FOR") is not None:
            paper.append(p_for)
            fitted.append(r["FOR"])
    rho = spearman(paper, fitted) if len(paper) == len(DOMAIN_FOR) else None
    out.append(CalRow("domain", "Table B.12 domains", "Spearman ρ (FOR)", 1.0, rho,
                      f"≥ {SPEARMAN_MIN}", rho is not None and rho >= SPEARMAN_MIN))
    return out


def compare(scores: Sequence[CaseScore], rows: Mapping[str, Mapping[str, Any]]) -> list[CalRow]:
    """Every calibration row: ``scores`` are the ``default`` profile's unguarded case scores,
    ``rows`` each profile's summary row (percentages)."""
    out = _overall(rows)
    out += _sinks(scores)
    out += _fields(scores)
    paths = rows["default"]["paths"] if "default" in rows else {}
    out += _transitions(paths)
    out += _domains(scores)
    return out
