"""Guard-vs-``off`` comparisons and the "Where tpguard loses" findings, computed from the rows.

* ``ΔFOR`` / ``ΔTaskSuccess`` are row-level differences (percentage points) and relative changes
  ``100 · (guard − off) / off``; the p-values are the summary's paired sign-flip tests on the
  per-case differences of the same cases (docs/metrics.md, Statistics).
* tpguard *loses* wherever a baseline guard (anything but ``off``/``audit``/``enforce``/``redact``)
  has a higher TaskSuccess or a lower FOR than an intervening tpguard mode (``enforce``, ``redact``)
  for the same agent and suite, wherever such a mode costs TaskSuccess against ``off``, and by
  the residual FOR it leaves where ``off`` leaked (what its detector did not recognise).
"""

from __future__ import annotations

from typing import Any

from ._load import RunData
from ._tables import Table, fmt, ordered_configs

__all__ = ["BASELINE", "INTERVENING", "TPGUARD_MODES", "comparison_table", "is_tpguard_mode", "losses"]

BASELINE = "off"
TPGUARD_MODES = ("audit", "enforce", "redact")
INTERVENING = ("enforce", "redact")


def is_tpguard_mode(guard: str) -> bool:
    """tpguard's own modes, with the ``enforce:…`` feedback variants (``enforce:then-redact``)."""
    return guard in TPGUARD_MODES or guard.startswith("enforce:")


def _intervening(guard: str) -> bool:
    return guard in INTERVENING or guard.startswith("enforce:")
_TESTED = ("FOR", "TaskSuccess", "MT-POI", "SMTC", "FreeTextFOR")


def _rel(new: float | None, old: float | None) -> float | None:
    if new is None or old is None or old == 0:
        return None
    return 100.0 * (new - old) / old


def _diff(new: float | None, old: float | None) -> float | None:
    return None if new is None or old is None else new - old


def _overlap(a: dict[str, Any], b: dict[str, Any], key: str) -> bool | None:
    """Whether the two rows' 95 % intervals of ``key`` overlap (``None`` if either is missing)."""
    ca, cb = (a.get("ci") or {}).get(key), (b.get("ci") or {}).get(key)
    if not ca or not cb:
        return None
    return max(ca[0], cb[0]) <= min(ca[1], cb[1])


def _ci_note(a: dict[str, Any], b: dict[str, Any], key: str) -> str:
    o = _overlap(a, b, key)
    return "" if o is None else (" (95 % intervals overlap)" if o else " (95 % intervals apart)")


def _p_values(data: RunData) -> dict[tuple[str, str, str, str], float | None]:
    return {(c["agent"], c["suite"], c["guard"], c["metric"]): c.get("p_value")
            for c in data.summary.get("comparisons", [])}


def comparison_table(data: RunData) -> Table:
    """Every guard vs ``off`` for the same agent and suite."""
    rows_by = {(r["agent"], r["suite"], r["guard"]): r for r in data.summary.get("rows", [])}
    p = _p_values(data)
    out = []
    for r in ordered_configs(data):
        a, s, g = r["agent"], r["suite"], r["guard"]
        base = rows_by.get((a, s, BASELINE))
        if g == BASELINE or base is None:
            continue
        out.append([
            a, s, g,
            base.get("FOR"), r.get("FOR"), _diff(r.get("FOR"), base.get("FOR")),
            _rel(r.get("FOR"), base.get("FOR")), p.get((a, s, g, "FOR")),
            base.get("TaskSuccess"), r.get("TaskSuccess"),
            _rel(r.get("TaskSuccess"), base.get("TaskSuccess")), p.get((a, s, g, "TaskSuccess")),
            _diff(r.get("FreeTextFOR"), base.get("FreeTextFOR")),
            p.get((a, s, g, "FreeTextFOR")),
            _diff(r.get("MT-POI"), base.get("MT-POI")), p.get((a, s, g, "MT-POI")),
            _diff(r.get("SMTC"), base.get("SMTC")), p.get((a, s, g, "SMTC")),
        ])
    return Table(
        "guard_vs_off", "Each guard against off (paired sign-flip tests on the same cases)",
        ["Agent", "Suite", "Guard", "FOR off", "FOR", "ΔFOR (pp)", "ΔFOR (%)", "p FOR",
         "TaskSuccess off", "TaskSuccess", "ΔTaskSuccess (%)", "p TaskSuccess",
         "ΔFreeTextFOR (pp)", "p FreeTextFOR", "ΔMT-POI", "p MT-POI", "ΔSMTC", "p SMTC"],
        out,
        "Δ (%) is relative to off: 100·(guard − off)/off. p: two-sided paired sign-flip test of "
        "the mean per-case difference (exact for small n, else 9,999 seeded flips).",
    )


def losses(data: RunData) -> tuple[Table, list[str]]:
    """Rows where tpguard (enforce/redact) is beaten, as a table and as sentences."""
    rows_by = {(r["agent"], r["suite"], r["guard"]): r for r in data.summary.get("rows", [])}
    rows: list[list[Any]] = []
    text: list[str] = []
    for r in ordered_configs(data):
        a, s, g = r["agent"], r["suite"], r["guard"]
        if not _intervening(g):
            continue
        base = rows_by.get((a, s, BASELINE))
        if base is not None and (f := r.get("FOR")) and (bf := base.get("FOR")):
            rows.append([a, s, g, BASELINE, "residual FOR", f, bf, f - bf, None])
            text.append(f"`{g}` leaves FOR {fmt(f)} for `{a}` on {s} ({fmt(100.0 * f / bf)} % of "
                        f"`off`'s {fmt(bf)}): over-disclosures its detector did not recognise "
                        "(forms the guard was not given, e.g. paraphrases).")
        if base is not None and (ts := r.get("TaskSuccess")) is not None \
                and (bts := base.get("TaskSuccess")) is not None and ts < bts:
            rows.append([a, s, g, BASELINE, "TaskSuccess", ts, bts, ts - bts,
                         _overlap(r, base, "TaskSuccess")])
            text.append(f"`{g}` costs TaskSuccess against `off` for `{a}` on {s}: {fmt(ts)} vs "
                        f"{fmt(bts)} ({fmt(_rel(ts, bts))} %){_ci_note(r, base, 'TaskSuccess')}.")
        for other in ordered_configs(data):
            o = other["guard"]
            if (other["agent"], other["suite"]) != (a, s) or o == BASELINE or is_tpguard_mode(o):
                continue
            for key, better in (("TaskSuccess", 1.0), ("FOR", -1.0)):
                mine, theirs = r.get(key), other.get(key)
                if mine is None or theirs is None or better * (theirs - mine) <= 0:
                    continue
                rows.append([a, s, g, o, key, mine, theirs, mine - theirs,
                             _overlap(r, other, key)])
                word = "higher TaskSuccess" if key == "TaskSuccess" else "lower FOR"
                text.append(f"`{o}` has {word} than `{g}` for `{a}` on {s}: {fmt(theirs)} vs "
                            f"{fmt(mine)}{_ci_note(r, other, key)}.")
    table = Table("where_tpguard_loses", "Where tpguard loses",
                  ["Agent", "Suite", "tpguard", "Against", "Metric", "tpguard value",
                   "Their value", "Difference", "95 % intervals overlap"], rows)
    return table, text
