"""Calibrate the leaky profiles by measurement: run each profile on need-to-know cases with no
guard, score the backends' audit log with :mod:`tpguard.benchmark.metrics`, and compare with the
paper's tables (:mod:`._paper`, :mod:`._compare`): overall (Table 8), per sink (Figure 7a), per
free-text field (Figure 7b), per transition type (Table 9) and per domain (Table 10). Also the
realised leak forms (with the detection method the evaluator used for each).

    tpguard bench calibrate [--cases 230 | --all] [--json] [--check]
    python -m tpguard.benchmark.agents.leaky.calibrate --cases 230     # forms and summary rows

The gateway here is a direct one (environment only, no guard): the same thing the runner's
gateway does with ``--guard off``.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ...backends import AuditLog, Environment, ToolError
from ...cases.schema import Case
from ...metrics import CaseScore, CaseScorer, breakdown, summary_row
from ..base import Observation, ToolView
from ._compare import CalRow, compare
from .agent import LeakyAgent

__all__ = ["DirectGateway", "calibrate", "calibration", "main", "render_markdown", "stratified"]


class DirectGateway:
    """A :class:`~..base.ToolGateway` straight over an :class:`Environment` (no guard)."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self._views = tuple(ToolView(t.name, t.description, dict(t.input_schema or {}), tuple(t.free_text))
                            for t in env.case.tools)

    @property
    def tools(self) -> tuple[ToolView, ...]:
        return self._views

    def call(self, name: str, arguments: dict[str, Any], *, call_id: str | None = None) -> Observation:
        try:
            return Observation(True, json.dumps(self.env.call(name, arguments), default=str))
        except ToolError as e:
            return Observation(False, str(e))


def _methods(scorer: CaseScorer, trajectory: Any, leaks: list[dict[str, Any]]) -> Counter[tuple[str, str]]:
    """(form, detection method) of every intended leak that reached a forbidden cell."""
    evidence = scorer.evidence(trajectory)
    out: Counter[tuple[str, str]] = Counter()
    for leak in leaks:
        k = leak["call"] - 1
        if k >= len(evidence) or leak["atom"] not in scorer.tables.forbidden(leak["tool"]):
            continue
        found = [f.method for f in evidence[k].findings
                 if f.atom_id == leak["atom"] and f.path.split(".")[0].split("[")[0] == leak["field"]]
        out[(leak["form"], found[0] if found else "undetected")] += 1
    return out


def calibrate(cases: Sequence[Case], profiles: Sequence[str] = ("careful", "default", "leaky"),
              seed: int = 0) -> dict[str, dict[str, Any]]:
    """Per profile: the summary row (percentages), FOR by sink, the leak forms × methods and the
    case scores."""
    out: dict[str, dict[str, Any]] = {}
    with AuditLog(":memory:") as audit:
        for name in profiles:
            agent = LeakyAgent(name)
            scores: list[CaseScore] = []
            forms: Counter[tuple[str, str]] = Counter()
            for case in cases:
                env = Environment(case, audit, f"cal-{name}", agent=agent.name, guard="off")
                result = agent.run(case, DirectGateway(env), seed=seed)
                trajectory = audit.trajectory(f"cal-{name}", case.id)
                scorer = CaseScorer(case)
                scores.append(scorer.score(trajectory, env.s_task, agent=agent.name, guard="off"))
                forms += _methods(scorer, trajectory, result.extra["leaks"])
            row = summary_row(scores, agent=agent.name, guard="off", suite=cases[0].suite)
            sinks = {k: v["FOR"] for k, v in breakdown(scores, "sink").items()}
            out[name] = {"row": row, "sink_FOR": sinks, "forms": forms, "scores": scores}
    return out


def stratified(cases: Sequence[Case], n: int) -> list[Case]:
    """About ``n`` cases, the same number from every domain (first cases of each, in suite order)."""
    domains: dict[str, list[Case]] = {}
    for c in cases:
        domains.setdefault(c.domain, []).append(c)
    per = max(1, n // max(1, len(domains)))
    keep = {c.id for group in domains.values() for c in group[:per]}
    return [c for c in cases if c.id in keep]


def calibration(cases: Sequence[Case], *, seed: int = 0,
                profiles: Sequence[str] = ("careful", "default", "leaky")) -> dict[str, Any]:
    """``{"rows": [CalRow…], "profiles": {name: summary row}, "cases": n}``; the detailed rows
    (sink, field, transition, domain) are the ``default`` profile's."""
    res = calibrate(cases, profiles, seed=seed)
    rows = {name: r["row"] for name, r in res.items()}
    table: list[CalRow] = compare(res["default"]["scores"] if "default" in res else [], rows)
    return {"rows": table, "profiles": rows, "cases": len(cases), "seed": seed}


def _fmt(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "–"
    return f"{v:+.2f}" if signed else f"{v:.2f}"


def render_markdown(result: dict[str, Any]) -> str:
    """The fitted-vs-paper table as Markdown (what ``tpguard bench calibrate`` prints)."""
    rows: list[CalRow] = result["rows"]
    judged = [r for r in rows if r.passed is not None]
    lines = [
        f"Leaky reference agent, guard off, {result['cases']} need-to-know cases "
        f"(generator seed 0, agent seed {result['seed']}); detailed rows: `default` profile.",
        "",
        "| group | row | metric | paper | fitted | deviation | tolerance | result | n |",
        "|---|---|---|---:|---:|---:|---|---|---:|",
    ]
    for r in rows:
        verdict = "info" if r.passed is None else ("pass" if r.passed else "**FAIL**")
        lines.append(f"| {r.group} | {r.name} | {r.metric} | {_fmt(r.paper)} | {_fmt(r.fitted)} | "
                     f"{_fmt(r.deviation, signed=True)} | {r.tolerance} | {verdict} | "
                     f"{'' if r.n is None else r.n} |")
    failed = [f"{r.group} {r.name} {r.metric}" for r in judged if not r.passed]
    lines += ["", f"{len(judged) - len(failed)}/{len(judged)} judged rows pass"
              + (f"; failing: {', '.join(failed)}." if failed else ".")]
    lines += [f"- {r.group} {r.name} {r.metric}: {r.note}" for r in judged
              if not r.passed and r.note]
    lines += ["", "Sink, field and transition tolerances are n-aware: the larger of the fixed band "
              "and the 95 % sampling half-width of a rate over the row's n cases."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    from ...cases.need_to_know import generate

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=230, help="every k-th case so that about N remain")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    suite = generate(seed=0)
    step = max(1, len(suite) // args.cases)
    cases = suite.cases[::step]
    for name, res in calibrate(cases, seed=args.seed).items():
        row = res["row"]
        keys = ("FOR", "FreeTextFOR", "FTSlotRate", "MidFOR", "MT-POI", "TaskSuccess")
        print(name, {k: round(row[k], 2) for k in keys if row.get(k) is not None})
        print("  FOR by sink", {k: round(v, 1) for k, v in sorted(res["sink_FOR"].items())})
        forms: Counter[tuple[str, str]] = res["forms"]
        total = sum(forms.values()) or 1
        by_form: Counter[str] = Counter()
        for (form, _), n in forms.items():
            by_form[form] += n
        print("  forms", {f: round(100 * n / total, 1) for f, n in by_form.most_common()})
        print("  form→method", {f"{f}→{m}": n for (f, m), n in forms.most_common()})


if __name__ == "__main__":
    main()
