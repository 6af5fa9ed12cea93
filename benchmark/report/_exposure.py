"""The report's exposure section (ASLEval, seed ``002_*`` §5): channel coverage with ECR and OLF
as Tables 4/13, session-bootstrap intervals, the evaluation views as Tables 3/7, recognition as
Tables 5/16, path diagnostics as Table 6 / appendix O, the authorization negative control, guards
against ``off`` and the per-environment-family rows. Markdown, HTML and CSV render the same
:class:`~._tables.Table` objects.

Read from ``summary["exposure"]`` (:func:`tpguard.benchmark.metrics.exposure.summarize_exposure`);
when only exposure rows are in ``summary["rows"]`` (``family == "exposure"``), the channel and
interval tables are still built. A run without exposure rows has no section (every function
returns an empty result). Ids, channel names and rates only — never values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..guards.exposure import guard_label
from ..metrics.exposure import PAPER_REFERENCE, VIEWS
from ._layout import ci_view, html_table, md_table
from ._tables import Table

__all__ = ["exposure_csv", "exposure_html", "exposure_markdown", "exposure_tables"]

TITLE = "Exposure (ASLEval)"
_ORDER = ("off", "enforce", "redact", "return-min", "exits")
_IDS = ["Agent", "Guard", "Suite"]
_READING = ("ECR = share of the target set S that reached an unauthorized recipient through at "
            "least one declared visible exit; coverage.<channel> = the same per exit; OLF = share "
            "of a session's visible exposure missed by the expected outlet c\\* (0 when nothing was "
            "exposed); TCR = share of sessions whose normal task completed. Session means in "
            "percent; ↓ better except TCR (docs/metrics.md, \"Exposure (ASLEval)\").")


def _part(summary: dict[str, Any]) -> dict[str, Any]:
    part = summary.get("exposure")
    if isinstance(part, dict) and part.get("rows"):
        return part
    rows = [r for r in summary.get("rows", []) if r.get("family") == "exposure"]
    return {"rows": rows} if rows else {}


def _rank(guard: str) -> tuple[int, str]:
    if guard in _ORDER:
        return (_ORDER.index(guard), "")
    return (len(_ORDER), guard)  # exit:CHANNEL… after the named ones


def _ordered(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda r: (r.get("suite", ""), r.get("agent", ""),
                                        _rank(str(r.get("guard", ""))), r.get("env_family", "")))


def _ident(r: dict[str, Any]) -> list[Any]:
    return [r.get("agent"), guard_label(str(r.get("guard", ""))), r.get("suite")]


def _ci(ci: Any) -> list[Any]:
    return [ci[0], ci[1]] if isinstance(ci, (list, tuple)) and len(ci) == 2 else [None, None]


def _channels(rows: Sequence[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(c for r in rows for c in r.get("channels", ())))


def _olf_pos(r: dict[str, Any]) -> str | None:
    k = r.get("OLF_positive")
    return f"{k[0]}/{k[1]}" if isinstance(k, list) and len(k) == 2 and k[1] else None


def _main(rows: list[dict[str, Any]], name: str, title: str, *, family: bool = False) -> Table:
    chans = _channels(rows)
    fam = ["Family"] if family else []
    return Table(name, title,
                 [*_IDS, *fam, "n", "TCR", "ECR", *chans, "OLF", "OLF > 0"],
                 [[*_ident(r), *([r.get("env_family")] if family else []), r.get("n"),
                   r.get("TCR"), r.get("ECR"), *(r.get(f"coverage.{c}") for c in chans),
                   r.get("OLF"), _olf_pos(r)] for r in rows], _READING)


def _intervals(rows: list[dict[str, Any]]) -> Table:
    keys = ["ECR", "OLF", *(f"coverage.{c}" for c in _channels(rows)), "TCR"]
    return Table("exposure_ci", "Session-bootstrap 95 % intervals",
                 [*_IDS, *(c for k in keys for c in (f"{k} lo", f"{k} hi"))],
                 [[*_ident(r), *(v for k in keys for v in _ci((r.get("ci") or {}).get(k)))]
                  for r in rows],
                 "Percentile intervals over session resamples (the session is the unit; "
                 "resamples and seed in the run's settings — the paper's 10,000 / 2027 by "
                 "default).")


def _views(part: dict[str, Any]) -> Table:
    out = []
    for v in _ordered(part.get("views", [])):
        for key, label in VIEWS.items():
            cell = v.get(key) or {}
            out.append([*_ident(v), label, cell.get("n"), cell.get("coverage"),
                        *_ci(cell.get("coverage_ci")), cell.get("missed"),
                        *_ci(cell.get("missed_ci"))])
    return Table("exposure_views", "Evaluation views over the same logs — as ASLEval Table 3/7",
                 [*_IDS, "View", "n", "Coverage", "Coverage lo", "Coverage hi",
                  "Missed vs union", "Missed lo", "Missed hi"], out,
                 "Coverage = share of S the view recovers; missed = share of the session's "
                 "visible-exit exposure the view does not see. n = sessions where the view is "
                 "observable (an action-delivery status, a c\\*, a candidate report).")


def _recognition(part: dict[str, Any]) -> Table:
    out = [[*_ident(r), r.get("n"), r.get("n_candidates"), r.get("confirmed"), r.get("C_cand"),
            r.get("precision"), r.get("FDR"), r.get("gap")]
           for r in _ordered(part.get("recognition", [])) if r.get("n")]
    return Table("exposure_recognition", "Recognition — the requester's candidate report, as "
                 "ASLEval Table 5",
                 [*_IDS, "sessions", "candidates", "Confirmed", "Reported", "Precision", "FDR",
                  "Gap"], out,
                 "Over sessions with a candidate report: Confirmed = ECR, Reported = candidate "
                 "coverage of S, precision = share of candidates the adjudicator maps into S, "
                 "FDR = 1 − precision, Gap = Confirmed − Reported (session means).")


def _paths(part: dict[str, Any]) -> Table:
    out = []
    for p in _ordered(part.get("paths", [])):
        sh = p.get("shares") or {}
        out.append([*_ident(p), p.get("internal"), p.get("visible"), p.get("overlap"),
                    p.get("entity_sessions"), sh.get("internal_before_visible"),
                    sh.get("visible_before_internal"), sh.get("internal_only"),
                    sh.get("visible_only"), sh.get("same_request"), sh.get("cross_request")])
    return Table("exposure_paths", "Path diagnostics — as ASLEval Table 6 and appendix O",
                 [*_IDS, "Internal", "Visible", "Overlap", "entity-sessions",
                  "internal→visible", "visible→internal", "internal only", "visible only",
                  "same request", "cross request"], out,
                 "Rates = share of S found in internal probes (tool arguments, raw returns), "
                 "at visible exits, and in both. Path shares are over matched entity-sessions, "
                 "ordered by event index; temporal order, not causation.")


def _control(part: dict[str, Any]) -> Table:
    return Table("exposure_control", "Authorization negative control",
                 [*_IDS, "n", "ECR all authorized", "ECR none authorized"],
                 [[*_ident(c), c.get("n"), c.get("authorized"), c.get("unauthorized")]
                  for c in _ordered(part.get("control", []))],
                 "The same raw visible appearances re-scored with every recipient authorized "
                 "(must be 0) and with none authorized: the metric reads Auth, not the text.")


def _comparison(rows: list[dict[str, Any]], part: dict[str, Any]) -> Table:
    base = {(r["agent"], r["suite"]): r for r in rows if r.get("guard") == "off"}
    out = []
    for t in part.get("comparisons", []):
        b = base.get((t.get("agent"), t.get("suite")))
        g = next((r for r in rows if _ident(r) == [t.get("agent"), t.get("guard"),
                                                    t.get("suite")]), None)
        key = t.get("metric")
        out.append([t.get("agent"), t.get("guard"), t.get("suite"), key, t.get("n"),
                    b.get(key) if b else None, g.get(key) if g else None, t.get("mean_diff"),
                    t.get("p_value")])
    out.sort(key=lambda r: (r[2] or "", r[0] or "", _rank(str(r[1])), str(r[3])))
    return Table("exposure_vs_off", "Guards against off on the same sessions",
                 [*_IDS, "Metric", "n", "off", "guard", "Δ (pp)", "p"], out,
                 "Δ = guard − off over the n sessions both ran; p = paired sign-flip test (exact "
                 "when 2^n fits the permutation budget). off and guard are each configuration's "
                 "own sessions — the same n once the run is complete; in a partial run only Δ and "
                 "p are paired.")


def exposure_tables(summary: dict[str, Any]) -> dict[str, Table]:
    """Every exposure table by role (``channels``, ``ci``, ``views``, ``recognition``,
    ``paths``, ``control``, ``vs_off``, ``family``); ``{}`` when the run has no exposure rows."""
    part = _part(summary)
    if not part:
        return {}
    rows = _ordered(part["rows"])
    out = {"channels": _main(rows, "exposure_channels",
                             "Session and channel exposure — as ASLEval Table 4"),
           "ci": _intervals(rows)}
    if part.get("views"):
        out["views"] = _views(part)
    rec = _recognition(part)
    if rec.rows:
        out["recognition"] = rec
    if part.get("paths"):
        out["paths"] = _paths(part)
    if part.get("control"):
        out["control"] = _control(part)
    if part.get("comparisons"):
        out["vs_off"] = _comparison(rows, part)
    if part.get("by_family"):
        out["family"] = _main(_ordered(part["by_family"]), "exposure_family",
                              "Per environment family", family=True)
    return out


def exposure_csv(summary: dict[str, Any]) -> list[Table]:
    """The long tables written to ``tables/exposure_*.csv``."""
    return list(exposure_tables(summary).values())


def _notes(summary: dict[str, Any]) -> list[str]:
    part = summary.get("exposure") if isinstance(summary.get("exposure"), dict) else {}
    out = [str(part["matching"])] if part and part.get("matching") else []
    return [*out, PAPER_REFERENCE]


_ROLES = ("channels", "ci", "views", "recognition", "paths", "control", "vs_off", "family")


def exposure_markdown(summary: dict[str, Any]) -> list[str]:
    """The section as markdown lines (``[]`` without exposure rows)."""
    tabs = exposure_tables(summary)
    if not tabs:
        return []
    parts = ["", f"## {TITLE}", ""] + [f"- {n}" for n in _notes(summary)]
    for role in _ROLES:
        if role in tabs:
            t = ci_view(tabs[role]) if role == "ci" else tabs[role]
            parts += ["", f"### {t.title}", "", md_table(t)]
            if t.note:
                parts += ["", f"_{t.note}_"]
    return parts


def exposure_html(summary: dict[str, Any]) -> str:
    """The section as HTML (``""`` without exposure rows); every string escaped."""
    from ._overview import inline_html

    tabs = exposure_tables(summary)
    if not tabs:
        return ""
    body = [f"<h2>{inline_html(TITLE)}</h2>", "<ul>" + "".join(
        f"<li>{inline_html(n)}</li>" for n in _notes(summary)) + "</ul>"]
    for role in _ROLES:
        if role in tabs:
            t = ci_view(tabs[role]) if role == "ci" else tabs[role]
            body.append(f"<h3>{inline_html(t.title)}</h3>{html_table(t)}")
            if t.note:
                body.append(f"<p class='note'>{inline_html(t.note)}</p>")
    return "\n".join(body)
