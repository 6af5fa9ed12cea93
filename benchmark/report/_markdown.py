"""``report.md``: the run's setup and caveats, then the tables of :mod:`._tables` in the order of
seed ``000_*`` §7 (Tables 7/8, guard comparisons, Table 9, Table 10, Figure 7 data, App. D.2)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._collect import ReportTables, reference_configs
from ._load import RunData
from ._tables import Table, fmt
from ._verdicts import BASELINE, TPGUARD_MODES

__all__ = ["caveats", "md_table", "render_markdown", "run_facts"]


def _cell(v: Any, column: str = "") -> str:
    return fmt(v, column).replace("|", "\\|").replace("\n", " ")


def md_table(table: Table, *, columns: Sequence[str] | None = None,
             where: dict[str, Any] | None = None, drop: Sequence[str] = ()) -> str:
    """A GitHub table of ``table`` (optionally some columns, rows matching ``where``)."""
    cols = [c for c in (columns or table.columns) if c not in drop]
    idx = [table.columns.index(c) for c in cols]
    rows = [row for row in table.rows
            if not where or all(row[table.columns.index(k)] == v for k, v in where.items())]
    if not rows:
        return "_No rows._"
    numeric = [all(r[i] is None or isinstance(r[i], int | float) for r in rows) for i in idx]
    lines = ["| " + " | ".join(_cell(c) for c in cols) + " |",
             "|" + "|".join("---:" if num else "---" for num in numeric) + "|"]
    lines += ["| " + " | ".join(_cell(row[i], table.columns[i]) for i in idx) + " |"
              for row in rows]
    return "\n".join(lines)


def run_facts(data: RunData) -> list[tuple[str, str]]:
    cfg = data.run.get("config") or {}
    facts = [("Run directory", data.run_dir.name)]
    for key in ("suite", "agents", "guards", "seed", "quick", "limit", "domains", "workers"):
        if key in cfg:
            v = cfg[key]
            facts.append((key, ", ".join(map(str, v)) if isinstance(v, list) else str(v)))
    for key in ("started", "finished"):
        if key in data.run:
            facts.append((key, str(data.run[key])))
    facts.append(("records", str(len(data.records))))
    versions = data.run.get("versions") or {}
    if versions:
        facts.append(("versions", ", ".join(f"{k} {v}" for k, v in versions.items())))
    return facts


def _settings(d: Any) -> str:
    if not isinstance(d, dict) or not d:
        return "not recorded"
    return ", ".join(f"{k}={v}" for k, v in d.items())


def caveats(data: RunData) -> list[str]:
    """The statements every rendering of the report makes about what its numbers mean."""
    det = data.run.get("detector") or {}
    out = [f"Evaluator detector (scores every call the backends received): "
           f"{_settings(det.get('evaluator'))}.",
           f"Guard detector (what tpguard's guard runs at the gateway): "
           f"{_settings(det.get('guard'))}."]
    agents = sorted({a for a, _, _ in data.configs})
    guards = sorted({g for _, g, _ in data.configs})
    if any(a.split(":", 1)[0] == "leaky" for a in agents):
        out.append("The `leaky` agent is a seeded behaviour model of what seed 000 §7–8 reports "
                   "real models do (context collapse, progressive diffusion, free-text "
                   "amplification, reformatted and paraphrased forms); it is not a measurement of "
                   "any LLM.")
    baselines = [g for g in guards if g != BASELINE and g not in TPGUARD_MODES]
    if baselines:
        out.append("The baselines (" + ", ".join(f"`{g}`" for g in baselines) + ") are applied "
                   "to tool-call arguments at the runner's gateway, the same interception point "
                   "as tpguard. That is more generous than where LangChain's `PIIMiddleware` "
                   "really acts: it does not scan tool-call arguments "
                   "(langchain-ai/langchain#37659).")
    if "audit" in guards:
        out.append("`audit` observes and records only; its rows should match `off` except for "
                   "run-to-run noise in the agent.")
    stated = " ".join(out)
    for note in data.run.get("notes", []):  # the runner's own notes, unless already stated above
        text = str(note)
        if text and not (("#37659" in text and "#37659" in stated)
                         or ("not a measurement of any LLM" in text and "any LLM" in stated)):
            out.append(text)
    out += data.notes
    return out


def render_markdown(data: RunData, t: ReportTables, files: Sequence[str] = ()) -> str:
    parts = ["# tpguard benchmark report", ""]
    parts += [f"- **{k}**: {_cell(v)}" for k, v in run_facts(data)]
    parts += ["", "## How to read this report", ""] + [f"- {c}" for c in caveats(data)]
    for m in t.main:
        parts += ["", f"## {m.title}", "", md_table(m), "", f"_{m.note}_"]
    for c in t.ci:
        parts += ["", f"### {c.title}", "", md_table(c)]
    parts += ["", f"## {t.comparison.title}", "", md_table(t.comparison), "",
              f"_{t.comparison.note}_", "", "## Where tpguard loses", ""]
    parts += [f"- {s}" for s in t.loss_text] or [
        "- In this run no baseline row has a higher TaskSuccess or a lower FOR than `enforce` or "
        "`redact`, and neither costs TaskSuccess against `off`."]
    parts += ["", f"## {t.paths.title}", "", md_table(t.paths), "",
              "### Risky transition rate by type (% of transitions; Table 9)", "",
              md_table(t.transitions_pivot), "", f"_{t.transitions.note}_"]
    for cfg in reference_configs(data):
        where = dict(zip(("Agent", "Guard", "Suite"), cfg, strict=True))
        label = f"`{cfg[0]}` / `{cfg[1]}` ({cfg[2]})"
        parts += ["", f"### Table 9 — {label}", "",
                  md_table(t.transitions, where=where, drop=("Agent", "Guard", "Suite")),
                  "", f"### Table 10a — domains, {label}", "",
                  md_table(t.domains, where=where, drop=("Agent", "Guard", "Suite")),
                  "", f"### Table 10b — atom types, {label}", "",
                  md_table(t.atom_types, where=where, drop=("Agent", "Guard", "Suite"))]
    parts += ["", "## FOR by domain and guard", "", md_table(t.domain_pivot),
              "", "## Leakage by sink (Figure 7a): FOR", "", md_table(t.sink_pivot),
              "", "## Free-text fields (Figure 7b): FreeTextFOR", "", md_table(t.field_pivot),
              "", "### FTSlotRate", "", md_table(t.slot_pivot),
              "", f"## {t.atom_sink.title}", "",
              "_Full grid per agent × guard in `tables/atom_type_sink.csv` and the HTML heatmap._",
              "", f"## {t.sensitivity.title}", "", md_table(t.sensitivity), "",
              f"_{t.sensitivity.note}_"]
    if files:
        parts += ["", "## Files", ""] + [f"- `{f}`" for f in files]
    return "\n".join(parts) + "\n"
