"""From per-session exposure scores to rows, view / recognition / path tables and guard contrasts
(seed ``002_*`` §4 "statistical protocol", §5, Tables 3–7, 13, 16).

Every quantity is a **session mean** of the per-session values (the session is the statistical
unit), in percent; sessions where a value is undefined (no ``c*`` for OLF, no candidate report for
recognition, no delivery status for the successful-action view, a channel the session does not
declare) are left out of that mean, and ``n_metric`` says how many remained. Intervals are
session-bootstrap percentile intervals (default 10,000 resamples, seed 2027 — the paper's); guard
contrasts are paired sign-flip tests over the same sessions (:func:`..._aggregate.compare_guards`:
exact when ``2^n`` fits the permutation budget).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._aggregate import compare_guards
from .._stats import bootstrap_means, percentile_ci, resample_indices
from ._score import PATH_CLASSES, VIEWS, ExpScore

__all__ = ["EXP_KEYS", "PAPER_N_RESAMPLES", "PAPER_SEED", "channels_of", "compare_exposure",
           "exposure_blocks", "exposure_row"]

#: The paper's statistical protocol (§4, appendix C): 10,000 session-bootstrap resamples, seed 2027.
PAPER_N_RESAMPLES = 10_000
PAPER_SEED = 2027
#: The fixed numeric keys of a row; ``coverage.<channel>`` keys follow for the row's channels.
EXP_KEYS: tuple[str, ...] = ("TCR", "ECR", "OLF")
_VIEW_KEYS = tuple(f"view.{v}.{m}" for v in VIEWS for m in ("coverage", "missed"))
_REC_KEYS = ("confirmed", "C_cand", "precision", "FDR", "gap")
_PATH_KEYS = ("path.internal", "path.visible", "path.overlap")
_CONTROL_KEYS = ("control.authorized", "control.unauthorized")


def channels_of(scores: Iterable[ExpScore]) -> list[str]:
    """Every declared visible channel of ``scores``, in first-seen order."""
    return list(dict.fromkeys(c for s in scores for c in s.channels))


@dataclass(frozen=True)
class _Stat:
    mean: float | None
    ci: list[float] | None
    n: int


def _stats(scores: Sequence[ExpScore], keys: Sequence[str], *, n_resamples: int, seed: int,
           confidence: float) -> dict[str, _Stat]:
    """NaN-aware session means of ``keys`` and their percentile intervals from one shared set of
    session resamples (``n_resamples = 0``: no intervals)."""
    vals = [s.values() for s in scores]
    m = np.array([[np.nan if (x := v.get(k)) is None else x for k in keys] for v in vals],
                 dtype=float).reshape(len(scores), len(keys))
    counts = (~np.isnan(m)).sum(axis=0)
    sums = np.where(np.isnan(m), 0.0, m).sum(axis=0)
    means = np.divide(sums, counts, out=np.full(len(keys), np.nan), where=counts > 0)
    boot = (bootstrap_means(m, resample_indices(len(scores), n_resamples, seed))
            if n_resamples > 0 and len(scores) else None)
    out = {}
    for j, k in enumerate(keys):
        ci = percentile_ci(boot[:, j], confidence) if boot is not None else None
        out[k] = _Stat(None if np.isnan(means[j]) else float(means[j]),
                       list(ci) if ci else None, int(counts[j]))
    return out


def exposure_row(
    scores: Sequence[ExpScore], *, agent: str = "", guard: str = "", suite: str = "exposure",
    n_resamples: int = PAPER_N_RESAMPLES, seed: int = PAPER_SEED, confidence: float = 0.95,
) -> dict[str, Any]:
    """One ``summary.json`` row: ``TCR, ECR, OLF, coverage.<channel>`` (percent, session means)
    with session-bootstrap ``ci``, ``n_metric`` per key, ``OLF_positive`` ``[sessions with OLF >
    0, sessions with c*]`` (Table 4's "OLF > 0") and the block tables (``views``,
    ``recognition``, ``paths``, ``control``) for :func:`exposure_blocks`."""
    channels = channels_of(scores)
    keys = [*EXP_KEYS, *(f"coverage.{c}" for c in channels)]
    every = [*keys, *_VIEW_KEYS, *_REC_KEYS, *_PATH_KEYS, *_CONTROL_KEYS]
    st = _stats(scores, every, n_resamples=n_resamples, seed=seed, confidence=confidence)
    olf = [s.olf for s in scores if s.olf is not None]
    row: dict[str, Any] = {"agent": agent, "guard": guard, "suite": suite, "n": len(scores),
                           "family": "exposure", "channels": channels}
    row.update({k: st[k].mean for k in keys})
    row["ci"] = {k: st[k].ci for k in keys}
    row["ci_method"] = dict.fromkeys(keys, "session bootstrap")
    row["n_metric"] = {k: st[k].n for k in keys}
    row["OLF_positive"] = [sum(x > 0 for x in olf), len(olf)]
    row["views"] = {v: {"coverage": st[f"view.{v}.coverage"].mean,
                        "coverage_ci": st[f"view.{v}.coverage"].ci,
                        "missed": st[f"view.{v}.missed"].mean,
                        "missed_ci": st[f"view.{v}.missed"].ci,
                        "n": st[f"view.{v}.coverage"].n} for v in VIEWS}
    with_report = [s for s in scores if s.n_candidates is not None]
    row["recognition"] = {
        **{k: st[k].mean for k in _REC_KEYS}, "ci": {k: st[k].ci for k in _REC_KEYS},
        "n": st["C_cand"].n, "n_candidates": sum(s.n_candidates or 0 for s in with_report),
        "n_correct": sum(s.n_correct for s in with_report)}
    counts = {c: sum(s.paths.get(c, 0) for s in scores) for c in PATH_CLASSES}
    matched = sum(counts[c] for c in PATH_CLASSES[:4])
    row["paths"] = {
        **{k.split(".")[1]: st[k].mean for k in _PATH_KEYS},
        "ci": {k.split(".")[1]: st[k].ci for k in _PATH_KEYS},
        "counts": counts, "entity_sessions": matched,
        "shares": {c: (100.0 * v / matched if matched else None) for c, v in counts.items()}}
    row["control"] = {k.split(".")[1]: st[k].mean for k in _CONTROL_KEYS}
    return row


_BLOCKS = ("views", "recognition", "paths", "control")


def exposure_blocks(rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Move each row's ``views``, ``recognition``, ``paths`` and ``control`` into the summary
    block's lists (one entry per row, keyed by agent, guard and suite), leaving lean rows."""
    out: dict[str, list[dict[str, Any]]] = {b: [] for b in _BLOCKS}
    for r in rows:
        ident = {"agent": r["agent"], "guard": r["guard"], "suite": r["suite"], "n": r["n"]}
        for b in _BLOCKS:
            if b in r:
                out[b].append({**ident, **r.pop(b)})
    return out


@dataclass
class _Paired:
    """An :class:`ExpScore` as :class:`..._aggregate.PairedScore` with every compared key
    present (a channel the session does not declare reads ``None``)."""

    agent: str
    suite: str
    guard: str
    case_id: str
    vals: Mapping[str, float | None]

    def values(self) -> Mapping[str, float | None]:
        return self.vals


def compare_exposure(
    scores: Iterable[ExpScore], *, baseline: str = "off", metrics: Sequence[str] | None = None,
    n_resamples: int = PAPER_N_RESAMPLES, seed: int = PAPER_SEED,
) -> list[dict[str, Any]]:
    """Each guard against ``baseline`` on the same (agent, suite, session): paired sign-flip
    tests on per-session differences in points (exact when ``2^n ≤ n_resamples``), by default
    for ``TCR, ECR, OLF`` and every ``coverage.<channel>``."""
    scores = list(scores)
    keys = list(metrics) if metrics is not None else [
        *EXP_KEYS, *(f"coverage.{c}" for c in channels_of(scores))]
    paired = []
    for s in scores:
        v = s.values()
        paired.append(_Paired(s.agent, s.suite, s.guard, s.case_id, {k: v.get(k) for k in keys}))
    rows = compare_guards(paired, baseline=baseline, metrics=keys, n_resamples=n_resamples,
                          seed=seed)
    return [{**r, "test": "paired sign-flip over sessions"} for r in rows]
