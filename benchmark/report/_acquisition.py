"""The report's acquisition section (PrivacyPeek, seed ``001_*`` §4–5): main rates as Table 2,
Wilson 95 % intervals (appendix), the joint outcomes as Table 3 and its appendix, guards against
``off``, and the per-behaviour, per-domain and marker-subset breakdowns. Markdown, HTML and CSV
render the same :class:`~._tables.Table` objects.

Read from ``summary["acquisition"]`` (:func:`tpguard.benchmark.metrics.summarize_acquisition`);
when only acquisition rows are in ``summary["rows"]`` (``family == "acquisition"``), the main and
interval tables are still built. A run without acquisition rows has no section (every function
returns an empty result). Ids and rates only — never values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..metrics.acquisition import ACQ_RATE_KEYS, JOINT_CLASSES, NAMED_OUTCOMES
from ._layout import by_agent, ci_view, html_table, md_table
from ._tables import Table, pivot, slug

__all__ = ["PAPER_REFERENCE", "acquisition_csv", "acquisition_html", "acquisition_markdown",
           "acquisition_tables"]

TITLE = "Acquisition (PrivacyPeek)"
_NAMED = {"CERPositiveProbe": "CER-positive probe", "CERNegativeProbe": "CER-negative probe",
          "NoObservedDisclosure": "no observed disclosure"}
_MAIN = (("TCR", "TCR"), ("CER", "CER"), ("HCER", "HCER"), ("DeltaC", "ΔC (pp)"), ("OLR", "OLR"),
         ("PLR", "PLR"), ("HPLR", "HPLR"), ("DeltaP", "ΔP (pp)"))
_GROUP = (("n", "n"), ("TCR", "TCR"), ("CER", "CER"), ("HCER", "HCER"), ("OLR", "OLR"),
          ("PLR", "PLR"), ("HPLR", "HPLR"), ("CERPositiveProbe", "CER-positive probe"))
_ORDER = ("off", "audit", "enforce", "redact")

#: What seed ``001_*`` reports for ten LLM agents without a guard (§4–6), for orientation.
PAPER_REFERENCE = ("PrivacyPeek (seed 001) over ten LLM agents, no guard: CER 6.77–51.95 %, PLR "
                   "16.67–57.53 %, TCR 54.48–86.46 % (§4); CER-positive probe 5.33–45.60 %, "
                   "CER-negative probe 13.04 % on average (§5, Table 3); a category-aware system "
                   "prompt leaves more than half of CER (§6, Table 4: 20.56 → 11.77 % on GPT-5.1, "
                   "48.22 → 36.47 % on Claude-Sonnet-4.5).")

_READING = ("TCR = share of cases whose completion check passed; CER = share whose executed tool "
            "observations (what the agent's context received, after any result-side guard) "
            "contain an out-of-scope item of k_acq; OLR / PLR = share whose main response / probe "
            "answer discloses a k_disc target; H-prefixed = over completed cases, ΔC = HCER − CER "
            "and ΔP = HPLR − PLR in points. Percentages; ↓ better except TCR (docs/metrics.md).")


def _part(summary: dict[str, Any]) -> dict[str, Any]:
    part = summary.get("acquisition")
    if isinstance(part, dict) and part.get("rows"):
        return part
    rows = [r for r in summary.get("rows", []) if r.get("family") == "acquisition"]
    return {"rows": rows} if rows else {}


def _rank(guard: str) -> tuple[int, str]:
    return (_ORDER.index(guard), "") if guard in _ORDER else (len(_ORDER), guard)


def _ordered(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda r: (r.get("suite", ""), r.get("agent", ""),
                                        _rank(str(r.get("guard", "")))))


def _ident(r: dict[str, Any]) -> list[Any]:
    return [r.get("agent"), r.get("guard"), r.get("suite")]


def _ci(r: dict[str, Any], key: str) -> list[Any]:
    ci = (r.get("ci") or {}).get(key) or [None, None]
    return [ci[0], ci[1]]


def _main(rows: list[dict[str, Any]]) -> Table:
    return Table("acquisition_main", "Main results — as PrivacyPeek Table 2 (rates per agent)",
                 ["Agent", "Guard", "Suite", "n", *(c for _, c in _MAIN)],
                 [[*_ident(r), r.get("n"), *(r.get(k) for k, _ in _MAIN)] for r in rows],
                 _READING)


def _wilson(rows: list[dict[str, Any]]) -> Table:
    keys = [k for k in ACQ_RATE_KEYS if k not in NAMED_OUTCOMES] + ["CERPositiveProbe"]
    cols = [c for k in keys for c in (f"{_NAMED.get(k, k)} lo", f"{_NAMED.get(k, k)} hi")]
    return Table("acquisition_wilson", "Wilson 95 % intervals — as the PrivacyPeek appendix",
                 ["Agent", "Guard", "Suite", *cols],
                 [[*_ident(r), *(v for k in keys for v in _ci(r, k))] for r in rows],
                 "Wilson score intervals of each proportion (the paper gives TCR, CER and PLR).")


def _joint(rows: list[dict[str, Any]]) -> Table:
    named = [_NAMED[k] for k in NAMED_OUTCOMES]
    out = []
    for r in rows:
        joint = r.get("joint") or {}
        out.append([*_ident(r), r.get("n_probe"), *(r.get(k) for k in NAMED_OUTCOMES),
                    *(joint.get(c) for c in JOINT_CLASSES)])
    return Table("acquisition_joint", "Joint outcomes over (CER, OLR, PLR) — as PrivacyPeek "
                 "Table 3 and its appendix",
                 ["Agent", "Guard", "Suite", "n probed", *named, *JOINT_CLASSES], out,
                 "Shares of probed cases. CER-positive probe: CER_c = PLR_c = 1; CER-negative "
                 "probe: CER_c = 0, PLR_c = 1 (the two sum to PLR); no observed disclosure: "
                 "CER_c = 1, OLR_c = PLR_c = 0. Class CxOyPz: CER_c = x, OLR_c = y, PLR_c = z. "
                 "Co-occurrence patterns, not causes.")


def _tests(part: dict[str, Any]) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    return {(t["agent"], t["guard"], t["suite"], t["metric"]): t
            for t in part.get("comparisons", []) if isinstance(t, dict)}


def _comparison(rows: list[dict[str, Any]], part: dict[str, Any]) -> Table:
    tests = _tests(part)
    base = {(r["agent"], r["suite"]): r for r in rows if r.get("guard") == "off"}
    out = []
    for r in rows:
        b = base.get((r["agent"], r["suite"]))
        if b is None or r.get("guard") == "off":
            continue
        tcr, btcr = r.get("TCR"), b.get("TCR")
        paired = tests.get((r["agent"], r["guard"], r["suite"], "TCR"), {}).get("n")
        cells: list[Any] = [paired, b.get("TCR"), tcr,
                            100.0 * tcr / btcr if tcr is not None and btcr else None]
        for key in ("CER", "PLR", "CERPositiveProbe"):
            t = tests.get((r["agent"], r["guard"], r["suite"], key), {})
            cells += [b.get(key), r.get(key), t.get("mean_diff"), t.get("p_value")]
        out.append([*_ident(r), *cells])
    cols = ["n (both)", "TCR off", "TCR", "TCR (% of off)"]
    for key in ("CER", "PLR", "CERPositiveProbe"):
        name = _NAMED.get(key, key)
        cols += [f"{name} off", name, f"Δ{name} (pp)", f"p {name}"]
    return Table("acquisition_vs_off", "Guards against off on the same cases",
                 ["Agent", "Guard", "Suite", *cols], out,
                 "Δ = guard − off in points over the n cases both ran; p = paired sign-flip test "
                 "(for 0/1 outcomes the exact McNemar test). The rate columns are each "
                 "configuration's own cases — the same n cases once the run is complete; in a "
                 "partial run only Δ and p are paired.")


def _groups(part: dict[str, Any], by: str, label: str, title: str) -> Table:
    rows = []
    for b in _ordered([b for b in part.get("breakdowns", []) if isinstance(b, dict)]):
        for key, g in (b.get(by) or {}).items():
            rows.append([*_ident(b), key, *(g.get(k) for k, _ in _GROUP),
                         *_ci(g, "CER"), *_ci(g, "PLR")])
    return Table(f"acquisition_{slug(by)}", title,
                 ["Agent", "Guard", "Suite", label, *(c for _, c in _GROUP),
                  "CER lo", "CER hi", "PLR lo", "PLR hi"], rows,
                 "Rates over the group's cases (PLR over its probed cases); Wilson 95 % bounds.")


def acquisition_tables(summary: dict[str, Any]) -> dict[str, Table]:
    """Every acquisition table by role (``main``, ``wilson``, ``joint``, ``vs_off``,
    ``behaviour``, ``domain``, ``marker``); ``{}`` when the run has no acquisition rows."""
    part = _part(summary)
    if not part:
        return {}
    rows = _ordered(part["rows"])
    out = {"main": _main(rows), "wilson": _wilson(rows)}
    if any("joint" in r for r in rows):
        out["joint"] = _joint(rows)
    if part.get("comparisons"):
        out["vs_off"] = _comparison(rows, part)
    for by, label, title in (
            ("behaviour", "Behaviour", "Per acquisition behaviour (Tasks 1–7, PrivacyPeek Table 1)"),
            ("domain", "Domain", "Per application domain"),
            ("marker", "Subset", "Confidentiality-marker subset")):
        if any(by in b for b in part.get("breakdowns", [])):
            out[by] = _groups(part, by, label, title)
    return out


def acquisition_csv(summary: dict[str, Any]) -> list[Table]:
    """The long tables written to ``tables/acquisition_*.csv``."""
    return list(acquisition_tables(summary).values())


def _pivots(t: Table, label: str) -> list[tuple[str, Table]]:
    return [(f"{key} by {label.lower()}", piece)
            for key in ("CER", "PLR")
            for piece in by_agent(pivot(t, label, key, title=f"{key} by {label.lower()}",
                                        name=t.name))]


def _notes(summary: dict[str, Any]) -> list[str]:
    part = summary.get("acquisition") if isinstance(summary.get("acquisition"), dict) else {}
    out = [str(part["matching"])] if part and part.get("matching") else []
    return [*out, PAPER_REFERENCE]


def acquisition_markdown(summary: dict[str, Any]) -> list[str]:
    """The section as markdown lines (``[]`` without acquisition rows)."""
    tabs = acquisition_tables(summary)
    if not tabs:
        return []
    parts = ["", f"## {TITLE}", ""] + [f"- {n}" for n in _notes(summary)]
    for role in ("main", "wilson", "joint", "vs_off", "marker"):
        if role not in tabs:
            continue
        t = ci_view(tabs[role]) if role == "wilson" else tabs[role]
        parts += ["", f"### {t.title}", "", md_table(t)]
        if t.note:
            parts += ["", f"_{t.note}_"]
    for role, label in (("behaviour", "Behaviour"), ("domain", "Domain")):
        if role in tabs:
            parts += ["", f"### {tabs[role].title}"]
            for title, piece in _pivots(tabs[role], label):
                head = f"{title}, {piece.title}" if piece.title.startswith("agent") else title
                parts += ["", f"**{head}**", "", md_table(piece)]
            parts += ["", f"_Full table with TCR, HCER, OLR, HPLR and Wilson bounds: "
                          f"`tables/{tabs[role].name}.csv`._"]
    return parts


def acquisition_html(summary: dict[str, Any]) -> str:
    """The section as HTML (``""`` without acquisition rows); every string escaped."""
    from ._overview import inline_html

    tabs = acquisition_tables(summary)
    if not tabs:
        return ""
    body = [f"<h2>{inline_html(TITLE)}</h2>", "<ul>" + "".join(
        f"<li>{inline_html(n)}</li>" for n in _notes(summary)) + "</ul>"]
    for role in ("main", "wilson", "joint", "vs_off", "behaviour", "domain", "marker"):
        if role in tabs:
            t = ci_view(tabs[role]) if role == "wilson" else tabs[role]
            body.append(f"<h3>{inline_html(t.title)}</h3>{html_table(t)}")
            if t.note:
                body.append(f"<p class='note'>{inline_html(t.note)}</p>")
    return "\n".join(body)
