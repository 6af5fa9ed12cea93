"""Draft → :class:`Case`: authorizations from the gold arguments, R, G, checks, transitions.

Annotation follows seed ``000_*`` §6.1–6.2: a private atom is authorized for a tool exactly when
the detector finds it in that tool's gold-call arguments (the source benchmark's gold path is the
need-to-know path); every other atom–tool pair is forbidden. The required facts ``R`` (§5.1) are
those authorized pairs with the argument they travel in; the workflow ``G`` is the gold calls'
tools in order, followed by the added coordination stages; transitions are typed by the sinks of
consecutive stages (§7.5).
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise
from typing import Any

from tpguard import Detector, Finding, PolicyKB, ToolSpec
from tpguard.policy import Authorization

from ..schema import (
    Binding,
    Case,
    EndStateCheck,
    GroundTruthCall,
    RequiredFact,
    Transition,
    WorkflowStage,
)
from ._binding import bind
from ._common import Draft, SourceCall, SourceTool
from ._coordination import COORDINATION_TOOLS, coordination_calls

__all__ = ["NO_FREE_TEXT_SINKS", "SUITE_NAME", "assemble", "slots"]

SUITE_NAME = "public-derived"
_STAGE = {"payment": "payment", "ticket": "ticket", "notification": "notification",
          "handoff": "handoff", "document": "document", "comment": "post", "email": "email",
          "console": "computation", "record": "record update", "external": "operation"}
_MAX_CHECK_FIELDS = 4


def _stage_name(tool: SourceTool) -> str:
    return "lookup" if tool.operation == "lookup" else _STAGE.get(tool.sink, tool.sink)


def _filled(args: dict[str, Any]) -> set[str]:
    return {k for k, v in args.items() if v not in (None, "", [], {})}


def _required_args(tool: SourceTool, calls: list[SourceCall]) -> tuple[str, ...]:
    """Argument names every gold call of the tool fills, in schema order."""
    names: set[str] | None = None
    for c in calls:
        if c.tool == tool.name:
            names = _filled(c.arguments) if names is None else names & _filled(c.arguments)
    order = list(tool.schema.get("properties", {}))
    return tuple(sorted(names or (), key=lambda n: (order.index(n) if n in order else 99, n)))


def _expect(call: SourceCall, tool: SourceTool, required: tuple[str, ...],
            det: Detector) -> dict[str, str]:
    """Key gold argument values of a state-changing call (``$atom:<id>`` where an atom sits,
    found without fuzzy matching — the way the backends evaluate the check)."""
    out: dict[str, str] = {}
    for name in required:
        value = call.arguments.get(name)
        if name in tool.free_text or isinstance(value, bool) or value in (None, "", [], {}):
            continue
        hits = det.scan({name: value}, tool.free_text)
        if hits:
            out[name] = f"$atom:{hits[0].atom_id}"
        elif isinstance(value, str | int | float):
            out[name] = str(value)
        else:
            out[name] = "$nonempty"
        if len(out) == _MAX_CHECK_FIELDS:
            break
    return out


def _checks(calls: list[SourceCall], tools: dict[str, SourceTool],
            bindings: dict[str, Binding], det: Detector) -> tuple[EndStateCheck, ...]:
    out: list[EndStateCheck] = []
    seen: set[tuple[str, str]] = set()
    for call in calls:
        tool = tools[call.tool]
        if tool.operation != "create":
            continue
        expect = _expect(call, tool, bindings[tool.name].required, det)
        key = (tool.name, repr(sorted(expect.items())))
        if key in seen:
            continue
        seen.add(key)
        primitive = bindings[tool.name].primitive
        out.append(EndStateCheck(
            id=f"state_{len(out) + 1}", primitive=primitive, tool=tool.name,
            expect=expect, description=f"{tool.name} left a {primitive} entry",
        ))
    return tuple(out)


def _incidental(findings: list[Finding]) -> set[int]:
    """Findings lying inside another atom's match in the same leaf (a name inside a user id)."""
    out = set()
    for i, f in enumerate(findings):
        for g in findings:
            if (g.atom_id != f.atom_id and g.path == f.path and g.start <= f.start
                    and f.end <= g.end and (g.end - g.start) > (f.end - f.start)):
                out.add(i)
                break
    return out


def _authorized(calls: list[SourceCall], tools: dict[str, SourceTool], det: Detector
                ) -> tuple[set[tuple[str, str]], dict[tuple[str, str], str]]:
    """Atom–tool pairs found in the gold calls, and ``R``: the pairs whose atom is delivered in
    its own right (not only inside a longer atom), with the first argument carrying it."""
    found: set[tuple[str, str]] = set()
    required: dict[tuple[str, str], str] = {}
    for call in calls:
        findings = det.scan(call.arguments, tools[call.tool].free_text)
        skip = _incidental(findings)
        for i, f in enumerate(findings):
            found.add((f.atom_id, call.tool))
            if i not in skip:
                required.setdefault((f.atom_id, call.tool), f.path)
    return found, required


def _task(draft: Draft) -> str:
    lines = [f"- {draft.labels.get(a.id, a.type)}: {a.value}" for a in draft.atoms]
    return f"{draft.prompt.strip()}\n\nDetails on file for this request:\n" + "\n".join(lines)


_PY_TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "integer": int, "number": (int, float), "boolean": bool,
             "array": list, "object": dict}
_JSON_NAMES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
               dict: "object"}


def _fit_schema(t: SourceTool, calls: list[SourceCall]) -> dict[str, Any]:
    """The source schema, loosened where the source's own gold calls disagree with it: an
    argument a gold call leaves empty is not required, and a gold value of another type than
    documented widens the type (one BFCL call passes a string ticket id)."""
    schema = dict(t.schema)
    props = {k: dict(v) for k, v in schema.get("properties", {}).items()}
    required = [r for r in schema.get("required", [])
                if all(r in _filled(c.arguments) for c in calls if c.tool == t.name)]
    for c in calls:
        for name, value in c.arguments.items() if c.tool == t.name else ():
            declared = props.get(name, {}).get("type")
            if isinstance(declared, str) and declared in _PY_TYPES and (
                    isinstance(value, bool) != (declared == "boolean")
                    or not isinstance(value, _PY_TYPES[declared])):
                props[name]["type"] = [declared, _JSON_NAMES.get(type(value), "string")]
    return {**schema, "properties": props, "required": required}


def _tool_spec(t: SourceTool, calls: list[SourceCall]) -> ToolSpec:
    return ToolSpec.model_validate({
        "name": t.name, "purpose": t.purpose, "sink": t.sink, "free_text": t.free_text,
        "schema": _fit_schema(t, calls), "description": t.description,
    })


#: Sinks that never take free text (issue 12 item 3, Table 3's ``verify_identity``): identity
#: checks, look-ups and payment capture have structured arguments only.
NO_FREE_TEXT_SINKS = frozenset({"payment"})


def slots(tool: SourceTool) -> SourceTool:
    """``tool`` with free-text slots only where the workflow really has them: none on reads,
    verification and payment capture; coordination and content tools keep theirs."""
    if tool.free_text and (tool.operation == "lookup" or tool.sink in NO_FREE_TEXT_SINKS):
        return replace(tool, free_text=())
    return tool


def assemble(draft: Draft) -> Case:
    """Build the case (atoms, tools, A, G, R, checks, transitions, ground truth, bindings)."""
    for name in (t.name for t in COORDINATION_TOOLS):
        if name in draft.tools:
            raise ValueError(f"{draft.case_id}: source tool {name!r} collides with a coordination sink")
    tools = {**{n: slots(t) for n, t in draft.tools.items()},
             **{t.name: t for t in COORDINATION_TOOLS}}
    calls = draft.calls + coordination_calls(draft.domain, len(draft.calls), draft.atoms)
    det = Detector(draft.atoms)
    order = list(dict.fromkeys(c.tool for c in calls))  # gold tools in first-call order
    found, req = _authorized(calls, tools, det)
    auths = [
        Authorization(atom=a.id, tool=name, allow=(a.id, name) in found)
        for a in draft.atoms for name in order
    ]
    bindings = {n: bind(tools[n], calls, _required_args(tools[n], calls)) for n in order}
    stages = tuple(WorkflowStage(tool=n, stage=_stage_name(tools[n])) for n in order)
    transitions = tuple(
        Transition(from_tool=a, to_tool=b, type=f"{tools[a].sink} → {tools[b].sink}")
        for a, b in pairwise(order)
    )
    required = tuple(RequiredFact(atom=a, tool=t, field=f) for (a, t), f in req.items())
    metadata: dict[str, Any] = {
        **draft.metadata, "source": draft.source, "source_id": draft.source_id,
        "source_calls": len(draft.calls),
        "source_tools": len({c.tool for c in draft.calls}),
        "source_free_text_tools": sum(1 for t in draft.tools.values() if t.free_text),
    }
    return Case(
        id=draft.case_id, suite=SUITE_NAME, domain=draft.domain, task=_task(draft),
        policy=PolicyKB(atoms=tuple(draft.atoms),
                        tools=tuple(_tool_spec(tools[n], calls) for n in order),
                        authorizations=tuple(auths)),
        workflow=stages, required=required,
        checks=_checks(calls, tools, bindings, Detector(draft.atoms, fuzzy=False)),
        transitions=transitions,
        ground_truth=tuple(GroundTruthCall(tool=c.tool, arguments=c.arguments) for c in calls),
        bindings=bindings, metadata=metadata,
    )
