"""Calibrate the leaky profiles by measurement: run each profile on need-to-know cases with no
guard, score the backends' audit log with :mod:`tpguard.benchmark.metrics`, and report FOR,
FreeTextFOR, FTSlotRate, TaskSuccess, the per-sink FOR and the realised leak forms (with the
detection method the evaluator used for each).

    python -m tpguard.benchmark.agents.leaky.calibrate --cases 230

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
from .agent import LeakyAgent

__all__ = ["DirectGateway", "calibrate", "main"]


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
    """Per profile: the summary row (percentages), FOR by sink, and the leak forms × methods."""
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
            out[name] = {"row": row, "sink_FOR": sinks, "forms": forms}
    return out


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
