"""``report.md``: a summary for a newcomer (what ran, one sentence per guard, where tpguard loses),
failed case-runs, the setup and caveats, then the tables of :mod:`._tables` in the order of seed
``000_*`` §7 (Tables 7/8, guard comparisons, Figure 6, Table 9, Table 10, Figure 7, App. D.2),
split to fit a page, with the figures embedded where they belong."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._acquisition import acquisition_markdown
from ._audit_row import audit_row_markdown
from ._collect import ReportTables, reference_configs
from ._exposure import exposure_markdown
from ._families import family_rows, is_sanity_check, present_families
from ._layout import COMPARISON_GROUPS, by_agent, ci_view, md_cell, md_table, split
from ._load import RunData
from ._overview import error_table, no_loss_text, overview, presidio_statement
from ._refs import ref
from ._tables import MAIN_GROUPS, Table
from ._tradeoff import chart_axes
from ._verdicts import BASELINE, is_tpguard_mode

__all__ = ["caveats", "md_table", "render_markdown", "run_facts"]


def run_facts(data: RunData) -> list[tuple[str, str]]:
    """``(name, value)`` of the run's configuration; unset options (empty, None) are left out."""
    cfg = data.run.get("config") or {}
    facts = [("Run directory", data.run_dir.name)]
    for key in ("suite", "agents", "guards", "seed", "quick", "limit", "domains", "workers",
                "presidio_model"):
        v = cfg.get(key)
        if v is None or v == "" or v == [] or (v is False and key != "quick"):
            continue
        facts.append((key, ", ".join(map(str, v)) if isinstance(v, list) else str(v)))
    for key in ("started", "finished"):  # of the last invocation: a resumed run started earlier
        if key in data.run:
            facts.append((key, str(data.run[key])))
    every = data.all_records or data.records  # every case-run of every suite, errored included
    facts.append(("records", str(len(every))))
    timed = [r["elapsed_s"] for r in every if isinstance(r.get("elapsed_s"), (int, float))]
    if timed:  # every case-run's own time, resumed invocations included
        total = sum(timed)
        facts.append(("case-run time", f"{_duration(total)} over {len(timed)} case-runs "
                                        f"({total / len(timed):.1f} s each)"))
    versions = data.run.get("versions") or {}
    if versions:
        facts.append(("versions", ", ".join(f"{k} {v}" for k, v in versions.items() if v)))
    return facts


def _duration(seconds: float) -> str:
    """``2 h 43 min``, ``4 min 05 s`` or ``12.3 s``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    m, s = divmod(round(seconds), 60)
    return f"{m // 60} h {m % 60:02d} min" if m >= 60 else f"{m} min {s:02d} s"


def _settings(d: Any) -> str:
    if not isinstance(d, dict) or not d:
        return "not recorded"
    return ", ".join(f"{k}={v}" for k, v in d.items())


def _scoring(data: RunData) -> list[str]:
    out = []
    scoring = data.summary.get("scoring")
    if isinstance(scoring, dict) and scoring:
        task = scoring.get("task")
        reading = {"binary": "pass/fail, as the paper reads S_task: 1 only when the task reaches "
                             "its end state (every end-state check passes)",
                   "fraction": "as the fraction of end-state checks passed (the paper reads it "
                               "pass/fail)"}.get(str(task), f"as {task!r}")
        out.append(f"Task is scored {reading}; scoring settings: {_settings(scoring)}.")
    if any("FreeTextFOR_field" in r for r in data.summary.get("rows", [])):
        out.append("FreeTextFOR is §5.6's reading (free-text leaks over every forbidden "
                   "opportunity of the calls); FreeTextFOR_field counts each free-text field over "
                   "the opportunities of the calls that have that field (docs/metrics.md).")
    return out


def _keep_note(text: str, stated: str, agents: list[str], guards: list[str]) -> bool:
    """A runner note is repeated unless already stated, or about an agent/guard not in the run."""
    lowered = text.lower()
    if "#37659" in text and ("#37659" in stated or "langchain-pii" not in guards):
        return False
    if ("not a measurement of any llm" in lowered or lowered.startswith("leaky ")) and (
            "any LLM" in stated or not any(a.split(":", 1)[0] == "leaky" for a in agents)):
        return False
    return bool(text)


def caveats(data: RunData) -> list[str]:
    """The statements every rendering of the report makes about what its numbers mean."""
    det = data.run.get("detector") or {}
    fams = [f for f in present_families(data.full_summary or data.summary) if f.name]
    if data.legacy:
        out = ["References such as Table 9 or Figure 7a are to the ToolPrivacyBench paper (seed "
               "000); each is explained in a phrase where it appears. Percentages throughout; FOR "
               "= share of forbidden (atom, tool) opportunities that leaked, lower is better; "
               "TaskSuccess = utility, higher is better (docs/metrics.md)."]
    else:  # an acquisition or exposure run: its own metrics, in plain words
        out = [f"Table and section references are to the {f.paper} paper. Percentages "
               "throughout (docs/metrics.md has every formula)." for f in fams[:1]]
    for f in fams:
        out += list(f.glossary)
    ev, gd = (("Evaluator detector (scores every call the backends received)",
               "Guard detector (what tpguard's guard runs at the gateway)") if data.legacy else
              ("Evaluator (what scores the run)", "What tpguard's guards are given"))
    out += [f"{ev}: {_settings(det.get('evaluator'))}.", f"{gd}: {_settings(det.get('guard'))}."]
    if data.legacy:
        out += _scoring(data)
    out += _sanity_checks(data)
    agents = sorted({a for a, _, _ in data.configs})
    guards = sorted({g for _, g, _ in data.configs})
    if any(a.split(":", 1)[0] == "leaky" for a in agents):
        out.append("The `leaky` agent is a seeded behaviour model of what seed 000 §7–8 reports "
                   "real models do (context collapse, progressive diffusion, free-text "
                   "amplification, reformatted and paraphrased forms); it is not a measurement of "
                   "any LLM.")
    baselines = [g for g in guards if g != BASELINE and not is_tpguard_mode(g)]
    if baselines:
        out.append("The baselines (" + ", ".join(f"`{g}`" for g in baselines) + ") are applied "
                   "to tool-call arguments at the runner's gateway, the same interception point "
                   "as tpguard. That is more generous than where LangChain's `PIIMiddleware` "
                   "really acts: it does not scan tool-call arguments "
                   "(langchain-ai/langchain#37659).")
    if (presidio := presidio_statement(data)) is not None:
        out.append(presidio)
    if "audit" in guards or any(r.get("guard") == "audit" for f in fams
                                for r in family_rows(data.full_summary, f)):
        out.append("`audit` observes and records only; its rows should match `off` except for "
                   "run-to-run noise in the agent.")
    stated = " ".join(out)
    out += [str(n) for n in data.run.get("notes", []) if _keep_note(str(n), stated, agents, guards)]
    out += data.notes
    return out


def _sanity_checks(data: RunData) -> list[str]:
    guards = {str(r.get("guard")) for r in (data.all_records or data.records)}
    named = sorted(g for g in guards if is_sanity_check(g))
    if not named:
        return []
    return [", ".join(f"`{g}`" for g in named) + " is the paper's oracle sanity check: it is given "
            "the evaluator's answer key on purpose, so its row is a ceiling that shows the metric "
            "can reach 0, not a guard result."]


def _tables(title: str, pieces: Sequence[Table], note: str = "", level: str = "##"
            ) -> list[str]:
    """A heading, then each piece of a split table (sub-headed when there are several)."""
    parts = ["", f"{level} {title}"]
    for piece in pieces:
        if len(pieces) > 1:
            parts += ["", f"{level}# {piece.title}"]
        parts += ["", md_table(piece)]
    if note:
        parts += ["", f"_{note}_"]
    return parts


def _spaced(parts: list[str]) -> list[str]:
    out: list[str] = []
    for p in parts:
        if p == "" and (not out or out[-1] == ""):
            continue
        out.append(p)
    return out


def _figure(path: str, alt: str) -> list[str]:
    return ["", f"![{alt}]({path})"]


def render_markdown(data: RunData, t: ReportTables, files: Sequence[str] = ()) -> str:
    figures = [f for f in files if f.startswith("figures/") and f.endswith(".png")]
    placed: set[str] = set()

    def fig(name: str, alt: str) -> list[str]:
        if name not in figures:
            return []
        placed.add(name)
        return _figure(name, alt)

    summary = overview(data, t.loss_text)
    parts = ["# tpguard benchmark report", "", "## Summary", "", summary[0], ""]
    parts += [f"- {s}" for s in summary[1:-1]] + ["", summary[-1]]
    axes = chart_axes(data)  # every report opens with its privacy–utility chart
    parts += ["", f"## {axes.title}", "", axes.reading]
    parts += fig("figures/scatter.png", f"Privacy–utility chart: {axes.y_label} against "
                                        f"{axes.x_label}, one point per agent × guard")
    errors = error_table(data)
    if errors is not None:
        parts += _tables(errors.title, split(errors, [("", errors.columns[3:])]), errors.note)
    parts += ["", "## Run", ""] + [f"- **{k}**: {md_cell(v)}" for k, v in run_facts(data)]
    parts += ["", "## How to read this report", ""] + [f"- {c}" for c in caveats(data)]
    parts += acquisition_markdown(data.summary)  # PrivacyPeek rows, when the run has them
    parts += exposure_markdown(data.summary)  # ASLEval rows, when the run has them
    parts += audit_row_markdown(data.summary, md_table)  # audit guards' flags against the evaluator's
    if data.legacy:
        parts += _legacy(data, t, fig, figures)
    rest = [f for f in figures if f not in placed]
    if rest:
        parts += ["", "## Other figures"]
        for name in rest:
            parts += fig(name, name)
    if files:
        parts += ["", "## Files", ""] + [f"- `{f}`" for f in files]
    return "\n".join(_spaced(parts)) + "\n"


def _legacy(data: RunData, t: ReportTables, fig: Callable[[str, str], list[str]],
            figures: Sequence[str]) -> list[str]:
    """The ToolPrivacyBench sections (seed 000); an acquisition-only run has none of them."""
    parts: list[str] = []
    for m in t.main:
        parts += _tables(m.title, split(m, MAIN_GROUPS), m.note)
    for c in t.ci:
        parts += _tables(c.title, split(ci_view(c), MAIN_GROUPS), "", "###")
    parts += _tables(t.comparison.title, split(t.comparison, COMPARISON_GROUPS),
                     t.comparison.note)
    parts += ["", "## Where tpguard loses", ""]
    parts += [f"- {s}" for s in t.loss_text] or [f"- In this run {no_loss_text(data)}"]
    parts += ["", f"## {t.paths.title}", "", md_table(t.paths), "",
              f"### Risky transition rate by type (% of transitions; {ref('Table 9')})"]
    parts += [*_pivot(t.transitions_pivot), "", f"_{t.transitions.note}_"]
    for cfg in reference_configs(data):
        where = dict(zip(("Agent", "Guard", "Suite"), cfg, strict=True))
        label = f"`{cfg[0]}` / `{cfg[1]}` ({cfg[2]})"
        parts += ["", f"### {ref('Table 9')} — {label}", "",
                  md_table(t.transitions, where=where, drop=("Agent", "Guard", "Suite")),
                  "", f"### {ref('Table 10a')} — domains, {label}", "",
                  md_table(t.domains, where=where, drop=("Agent", "Guard", "Suite")),
                  "", f"### {ref('Table 10b')} — atom types, {label}", "",
                  md_table(t.atom_types, where=where, drop=("Agent", "Guard", "Suite"))]
    parts += ["", f"## FOR by domain and guard — {ref('Table 10a')}", *_pivot(t.domain_pivot)]
    parts += ["", f"## FOR by information sink — {ref('Figure 7a')}", *_pivot(t.sink_pivot)]
    parts += fig("figures/sinks.png", "FOR by information sink, per agent and guard")
    parts += ["", f"## FreeTextFOR by free-text field — {ref('Figure 7b')}", *_pivot(t.field_pivot)]
    parts += fig("figures/fields.png", "FreeTextFOR by free-text field, per agent and guard")
    parts += ["", "### FTSlotRate (share of non-empty free-text slots carrying a forbidden atom)"]
    parts += _pivot(t.slot_pivot)
    parts += fig("figures/fields_slotrate.png", "FTSlotRate by free-text field")
    parts += ["", f"## {t.atom_sink.title}", "",
              "_Full grid per agent × guard in `tables/atom_type_sink.csv` and the HTML heatmap; "
              "the figures show each agent's unguarded (`off`) configuration._"]
    for name in sorted(f for f in figures if "/heatmap_" in f):
        parts += fig(name, "Atom type × sink heatmap " + name.split("heatmap_", 1)[1][:-4])
    parts += ["", f"## {t.sensitivity.title}", "", md_table(t.sensitivity), "",
              f"_{t.sensitivity.note}_"]
    return parts


def _pivot(table: Table) -> list[str]:
    """A wide pivot as one table per agent."""
    pieces = by_agent(table)
    out: list[str] = []
    for piece in pieces:
        if len(pieces) > 1:
            out += ["", f"**{piece.title}**"]
        out += ["", md_table(piece)]
    return out
