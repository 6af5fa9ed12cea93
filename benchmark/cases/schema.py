"""The case schema: one case = ``c = (x, T, P, A)`` plus its answer key (ToolPrivacyBench, seed
``000_*`` §3.7, §4.1, §4.8; answer key as in AgentDojo).

A case carries the user task ``x``, the policy knowledge base (atoms ``P``, tools ``T`` with purpose,
schema, sink and free-text slots, explicit authorizations and rules — projected to ``A``), the
expected workflow ``G`` (ordered stages), the required authorized facts ``R`` (atom → tool pairs that
must be delivered, §5.1), end-state checks for ``S_task``, the workflow transitions used by the path
diagnostics (§7.5), the ground-truth calls the oracle replays, and how each tool binds to a mock
backend primitive. The policy is never shown to the agent under test (§3.7).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tpguard.policy import AuthorizationMatrix, PolicyKB, PrivateAtom, ToolSpec

__all__ = [
    "PRIMITIVES",
    "Binding",
    "Case",
    "EndStateCheck",
    "GroundTruthCall",
    "RequiredFact",
    "Suite",
    "Transition",
    "WorkflowStage",
]

Primitive = Literal[
    "records", "payments", "tickets", "notifications", "comments", "handoffs", "documents",
    "emails", "console",
]
PRIMITIVES: tuple[str, ...] = Primitive.__args__  # type: ignore[attr-defined]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Binding(_Model):
    """How a tool executes: which backend primitive it writes to, and which arguments it requires.

    ``operation`` is primitive-specific (``create``, ``update``, ``lookup``, ``send``, …);
    ``returns`` names the id field the backend returns (``ticket_id``) so later stages can refer to it.
    """

    primitive: Primitive
    operation: str = "create"
    required: tuple[str, ...] = ()
    returns: str = "id"


class WorkflowStage(_Model):
    """One stage of the expected workflow ``G`` (§5.1): a tool that must be called."""

    tool: str
    stage: str = ""  # a readable stage name: "registration", "payment", "handoff", ...
    optional: bool = False


class RequiredFact(_Model):
    """``(p_j, t_i) ∈ R``: atom ``atom`` must reach tool ``tool`` (optionally in argument ``field``)."""

    atom: str
    tool: str
    field: str | None = None


class EndStateCheck(_Model):
    """One check of ``S_task`` (§5.1) against the backends' final state.

    Passes when ``primitive`` holds an object created by ``tool`` whose fields match ``expect``: a
    literal value, or ``"$atom:<id>"`` meaning the atom must be detectable in that field, or
    ``"$nonempty"``.
    """

    id: str
    primitive: Primitive
    tool: str
    expect: dict[str, str] = Field(default_factory=dict)
    description: str = ""


class Transition(_Model):
    """A typed workflow transition ``from_tool → to_tool`` (§7.5), e.g. ``record → ticket``."""

    from_tool: str
    to_tool: str
    type: str


class GroundTruthCall(_Model):
    """One call of the feasible safe path the oracle replays (authorized facts, minimal free text)."""

    tool: str
    arguments: dict[str, Any]


class Case(_Model):
    """One benchmark case with its answer key."""

    id: str
    suite: str
    domain: str
    task: str
    policy: PolicyKB
    workflow: tuple[WorkflowStage, ...]
    required: tuple[RequiredFact, ...] = ()
    checks: tuple[EndStateCheck, ...] = ()
    transitions: tuple[Transition, ...] = ()
    ground_truth: tuple[GroundTruthCall, ...] = ()
    bindings: dict[str, Binding] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _references(self) -> Case:
        tools = {t.name for t in self.policy.tools}
        atoms = {a.id for a in self.policy.atoms}
        for i, s in enumerate(self.workflow):
            if s.tool not in tools:
                raise ValueError(f"workflow[{i}].tool: unknown tool {s.tool!r}")
        for i, r in enumerate(self.required):
            if r.tool not in tools or r.atom not in atoms:
                raise ValueError(f"required[{i}]: unknown atom or tool ({r.atom!r}, {r.tool!r})")
        for name in self.bindings:
            if name not in tools:
                raise ValueError(f"bindings.{name}: unknown tool")
        return self

    @property
    def atoms(self) -> tuple[PrivateAtom, ...]:
        return self.policy.atoms

    @property
    def tools(self) -> tuple[ToolSpec, ...]:
        return self.policy.tools

    def tool(self, name: str) -> ToolSpec:
        return self.policy.tool(name)

    def matrix(self) -> AuthorizationMatrix:
        return self.policy.matrix()

    def transition_type(self, from_tool: str, to_tool: str) -> str:
        """The declared type of a transition, else ``"<sink> → <sink>"`` of the two tools."""
        for t in self.transitions:
            if t.from_tool == from_tool and t.to_tool == to_tool:
                return t.type
        known = {t.name: t.sink for t in self.policy.tools}
        return f"{known.get(from_tool, 'external')} → {known.get(to_tool, 'external')}"


class Suite(_Model):
    """A named list of cases (what a generator or builder returns)."""

    name: str
    cases: tuple[Case, ...]
    metadata: dict[str, Any] = Field(default_factory=dict)

    def __iter__(self) -> Iterator[Case]:  # type: ignore[override]
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)

    def case(self, case_id: str) -> Case:
        for c in self.cases:
            if c.id == case_id:
                return c
        raise KeyError(f"no case {case_id!r} in suite {self.name!r}")

    def write_jsonl(self, path: str | Path) -> None:
        with Path(path).open("w", encoding="utf-8") as fh:
            for c in self.cases:
                fh.write(c.model_dump_json() + "\n")

    @classmethod
    def read_jsonl(cls, path: str | Path, name: str | None = None) -> Suite:
        p = Path(path)
        cases = [Case.model_validate(json.loads(line)) for line in p.read_text().splitlines() if line]
        return cls(name=name or p.stem, cases=tuple(cases))
