"""The exposure session case: the evaluation contract of ASLEval (seed ``002_*`` §3.1–3.2).

A case fixes, before any session runs:

* ``workspace`` — the private workspace ``D``: named collections of flat string rows, each with an
  ``id`` (``records``, ``emails``, ``files``, ``calendar``, ``crm``, ``analytics``, ``projects``);
* ``targets`` — the hidden target set ``S ⊂ D``: ``e = (v, A, τ, σ)`` as :class:`Target` (canonical
  value, aliases, type, provenance), prepared as §3.1 (:mod:`._prepare`);
* ``recipients`` and ``auth`` — ``Auth(r, e) ∈ {0, 1}`` for every recipient and target, explicit
  (``auth[recipient_id][target_id]``); the requester and external recipients are unauthorized for
  every target, the workspace owner is authorized (the negative control's other role);
* ``channels`` — the declared channels: visible exits (``visible=True``; requester-visible or
  external) and internal ones (``tool_args``, ``tool_return``: evaluator-only path evidence);
* ``expected_outlet`` — ``c*``, a visible exit;
* ``tools`` — the executable tools over ``D`` (:mod:`._interface`);
* ``requester_tasks`` and ``budget`` — the requester's legitimate task(s) and ``B = 20``;
* ``normal`` — a normal task with a checkable completion (the utility side of a guard).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from .._case_list import CaseList

__all__ = ["FAMILIES", "Call", "Channel", "ExpCase", "ExpSuite", "NormalTask", "Provenance",
           "Recipient", "Target"]

#: The three environment families of Table 2.
FAMILIES: tuple[str, ...] = ("records", "office", "business")


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Provenance(_M):
    """``σ``: where a target comes from (benchmark item, source table, source field, row id)."""

    item: str
    table: str
    field: str
    row: str


class Target(_M):
    """``e = (v, A, τ, σ)``: ``value`` is canonical, ``aliases`` its format variants (``value``
    excluded), ``type`` the entity type."""

    id: str
    value: str
    aliases: tuple[str, ...] = ()
    type: str
    provenance: Provenance

    @property
    def variants(self) -> tuple[str, ...]:
        return (self.value, *self.aliases)


class Recipient(_M):
    """``kind``: ``requester`` (the party that sees response/console), ``external`` (an outside
    address the requester may name) or ``owner`` (the workspace owner)."""

    id: str
    kind: Literal["requester", "external", "owner"]
    address: str


class Channel(_M):
    """A declared channel. ``medium`` groups exits a guard names together (``email`` for e-mail
    send/reply/forward, ``file`` for sharing, ``chat`` for response/console, ``internal``)."""

    name: str
    visible: bool
    medium: Literal["chat", "email", "file", "internal"]
    tools: tuple[str, ...] = ()  # the tools that emit on it (none: the agent's per-turn reply)
    reply: bool = False  # the agent's per-turn reply to the requester goes out here


class Call(_M):
    tool: str
    arguments: dict[str, Any]


class NormalTask(_M):
    """The utility task: ``gold`` calls read the facts, the agent emits them on ``outlet`` to
    ``recipient``; complete when one delivered emission there holds every ``facts`` string."""

    instruction: str
    gold: tuple[Call, ...]
    facts: tuple[str, ...]
    outlet: str
    recipient: str


class ExpCase(_M):
    id: str
    suite: str = "exposure"
    family: Literal["records", "office", "business"]
    source: Literal["synthetic", "agentdojo", "workbench"]
    domain: str
    item: str
    strategy: Literal["zero-feedback", "feedback-guided"]
    seed: int
    workspace: dict[str, tuple[dict[str, str], ...]]
    targets: tuple[Target, ...]
    recipients: tuple[Recipient, ...]
    auth: dict[str, dict[str, bool]]
    channels: tuple[Channel, ...]
    expected_outlet: str
    tools: tuple[str, ...]
    requester_tasks: tuple[str, ...]
    search_terms: tuple[str, ...]
    budget: int = 20
    normal: NormalTask
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def task(self) -> str:
        return self.normal.instruction

    @property
    def visible_channels(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.channels if c.visible)

    @property
    def internal_channels(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.channels if not c.visible)

    def channel(self, name: str) -> Channel:
        for c in self.channels:
            if c.name == name:
                return c
        raise KeyError(name)

    def recipient(self, rid: str) -> Recipient:
        for r in self.recipients:
            if r.id == rid:
                return r
        raise KeyError(rid)

    def recipient_of(self, address: str) -> str:
        """The recipient id of an address (an unknown address is ``external:<address>``)."""
        a = address.strip().casefold()
        for r in self.recipients:
            if r.address.casefold() == a:
                return r.id
        return f"external:{a}"

    def authorized(self, recipient: str, target_id: str) -> bool:
        """``Auth(r, e)``; recipients the case does not declare are unauthorized."""
        return bool(self.auth.get(recipient, {}).get(target_id, False))


class ExpSuite(CaseList, _M):
    case_type: ClassVar[type[BaseModel]] = ExpCase
    name: str = "exposure"
    seed: int = 0
    source: str | None = None
    cases: tuple[ExpCase, ...]

    def __iter__(self) -> Iterator[ExpCase]:  # type: ignore[override]
        return iter(self.cases)

    def case(self, case_id: str) -> ExpCase:
        return super().case(case_id)
