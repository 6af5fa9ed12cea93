"""The purpose-bound policy knowledge base (ToolPrivacyBench, seed ``000_*`` §3–4.2).

A case or deployment is described by private atoms (§3.2), tools with a purpose, schema and sink
(§3.1, §3.3), explicit atom–tool authorizations and type-level rules. :meth:`PolicyKB.matrix`
projects the knowledge base onto the field–tool authorization matrix ``A`` of §3.4.

Authorization resolves most specific first::

    (atom, tool) → (atom type, tool) → (atom type, purpose) → (atom type, sink) → forbidden
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from ._rules import policy_problems as _policy_problems
from .exposure import Disclosure, ExitBinding, Recipient  # exposure stage (issue 11)
from .scope import AcquisitionScope  # acquisition stage (issue 10): ToolSpec.scope

__all__ = [
    "SINKS",
    "Access",
    "Authorization",
    "AuthorizationMatrix",
    "PolicyKB",
    "PrivateAtom",
    "Rule",
    "Sink",
    "ToolSpec",
]

Sink = Literal[
    "record",
    "payment",
    "ticket",
    "notification",
    "comment",
    "handoff",
    "document",
    "email",
    "console",
    "final_response",
    "external",
]
SINKS: tuple[str, ...] = Sink.__args__  # type: ignore[attr-defined]

#: Names under which a sink is often written; mapped to the canonical sink on load.
_SINK_ALIASES = {"note": "comment", "notes": "comment", "comment/note": "comment",
                 "final": "final_response", "response": "final_response"}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class PrivateAtom(_Model):
    """One private fact of the current task: ``p_j = (type_j, value_j, aliases_j, severity_j)`` (§3.2).

    ``variants`` are semantic variants (lay paraphrases, other formats) and ``masked`` are masked
    forms (``"**** 1234"``) that a conditional authorization may allow where the full value is not.
    """

    id: str = Field(min_length=1)
    type: str = Field(min_length=1)
    value: str = Field(min_length=1)
    aliases: tuple[str, ...] = ()
    variants: tuple[str, ...] = Field(
        default=(), validation_alias=AliasChoices("variants", "semantic_variants")
    )
    masked: tuple[str, ...] = ()
    severity: float = Field(default=1.0, gt=0)

    # Built in Python, an int or float value (value=4417) is taken as its decimal text. In a policy
    # *file* every value, alias, variant and masked form must be a string: YAML reads 0042 as 34 and
    # 12:30 as 750, so the file loader refuses unquoted numbers, times, dates and booleans there
    # ("quote it") before this model sees them. The docstring above is part of docs/case.schema.json.
    @field_validator("value", mode="before")
    @classmethod
    def _scalar_to_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v

    @field_validator("aliases", "variants", "masked", mode="before")
    @classmethod
    def _strings(cls, v: Any) -> Any:
        if isinstance(v, list | tuple):
            return tuple(
                str(x) if isinstance(x, int | float) and not isinstance(x, bool) else x for x in v
            )
        return v

    def __repr__(self) -> str:  # never print the value itself
        return f"PrivateAtom(id={self.id!r}, type={self.type!r}, severity={self.severity})"

    __str__ = __repr__


class ToolSpec(_Model):
    """A tool ``t_i = (name_i, purpose_i, schema_i, sink_i)`` (§3.1) with its free-text slots (§4.5)."""

    name: str = Field(min_length=1)
    purpose: str = ""
    sink: Sink = "external"
    free_text: tuple[str, ...] = ()
    #: JSON schema of the tool's inputs (``schema`` in policy files is accepted too).
    input_schema: dict[str, Any] | None = Field(
        default=None, validation_alias=AliasChoices("input_schema", "schema")
    )
    description: str = ""
    # -- acquisition stage (issue 10) --
    #: what the tool may return for its purpose; a session's ``scopes=`` overrides it per task
    scope: AcquisitionScope | None = None
    # -- exposure stage (issue 11) --
    #: the tool's call is itself an exit (an e-mail to ``to``): checked against ``Auth`` too
    exit: ExitBinding | None = None

    @field_validator("sink", mode="before")
    @classmethod
    def _sink_alias(cls, v: Any) -> Any:
        return _SINK_ALIASES.get(v.strip().lower(), v.strip().lower()) if isinstance(v, str) else v


AllowValue = bool | Literal["conditional"]


class Authorization(_Model):
    """An explicit atom–tool pair, as a benchmark case carries it.

    ``allow: conditional`` admits the atom only in the named argument ``fields`` and/or only in the
    named detection ``forms`` (for example ``[masked]``: the last four digits, never the number).
    """

    atom: str
    tool: str
    allow: AllowValue
    fields: tuple[str, ...] = ()
    forms: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _conditions(self) -> Authorization:
        _check_conditions(self.allow, self.fields, self.forms)
        return self


class Rule(_Model):
    """A type-level rule a deployment writes once: an atom type and exactly one of tool/purpose/sink."""

    atom_type: str
    tool: str | None = None
    purpose: str | None = None
    sink: Sink | None = None
    allow: AllowValue
    fields: tuple[str, ...] = ()
    forms: tuple[str, ...] = ()

    @field_validator("sink", mode="before")
    @classmethod
    def _sink_alias(cls, v: Any) -> Any:
        return _SINK_ALIASES.get(v.strip().lower(), v.strip().lower()) if isinstance(v, str) else v

    @model_validator(mode="after")
    def _one_target(self) -> Rule:
        targets = [x for x in (self.tool, self.purpose, self.sink) if x is not None]
        if len(targets) != 1:
            raise ValueError("a rule names exactly one of 'tool', 'purpose' or 'sink'")
        _check_conditions(self.allow, self.fields, self.forms)
        return self

    @property
    def level(self) -> str:
        return "type_tool" if self.tool else "type_purpose" if self.purpose else "type_sink"


def _check_conditions(allow: AllowValue, fields: tuple[str, ...], forms: tuple[str, ...]) -> None:
    if allow == "conditional" and not (fields or forms):
        raise ValueError("a conditional authorization names 'fields' or 'forms'")
    if allow != "conditional" and (fields or forms):
        raise ValueError("'fields' and 'forms' belong to 'allow: conditional' only")


@dataclass(frozen=True, slots=True)
class Access:
    """The resolved authorization of one atom for one tool, and which level decided it."""

    state: Literal["authorized", "forbidden", "conditional"]
    level: Literal["atom_tool", "type_tool", "type_purpose", "type_sink", "default"]
    fields: tuple[str, ...] = ()
    forms: tuple[str, ...] = ()

    def permits(self, path: str | None = None, method: str | None = None) -> bool:
        """Whether a finding at argument ``path`` detected by ``method`` is authorized."""
        if self.state != "conditional":
            return self.state == "authorized"
        if self.fields and (path is None or not _path_in(path, self.fields)):
            return False
        return not (self.forms and (method is None or method not in self.forms))

    @property
    def binary(self) -> int:
        """``A_{j,i}``: 1 when the atom may reach the tool at all (conditional counts as 1)."""
        return 0 if self.state == "forbidden" else 1


_FORBIDDEN_DEFAULT = Access("forbidden", "default")


def _path_in(path: str, fields: Iterable[str]) -> bool:
    """``path`` (``items[2].contact_phone``) lies in one of ``fields`` (full path or last key)."""
    last = path.rsplit(".", 1)[-1].split("[", 1)[0]
    return any(f == path or f == last for f in fields)


@dataclass(frozen=True)
class AuthorizationMatrix:
    """The field–tool projection ``A`` (§3.4): rows are atoms, columns tools."""

    atoms: tuple[str, ...]
    tools: tuple[str, ...]
    cells: Mapping[tuple[str, str], Access] = field(repr=False)

    def __getitem__(self, key: tuple[str, str]) -> Access:
        return self.cells[key]

    def binary(self) -> list[list[int]]:
        return [[self.cells[(a, t)].binary for t in self.tools] for a in self.atoms]

    def counts(self) -> dict[str, int]:
        states = [c.state for c in self.cells.values()]
        return {s: states.count(s) for s in ("authorized", "forbidden", "conditional")}


class PolicyKB(_Model):
    """Atoms, tools, explicit authorizations and type-level rules of one task or deployment."""

    atoms: tuple[PrivateAtom, ...] = ()
    tools: tuple[ToolSpec, ...] = ()
    authorizations: tuple[Authorization, ...] = ()
    rules: tuple[Rule, ...] = ()
    # -- exposure stage (issue 11; :mod:`tpguard.policy.exposure`): who may receive what, and where --
    recipients: tuple[Recipient, ...] = ()
    disclosures: tuple[Disclosure, ...] = ()
    #: the declared visible exits (None: :data:`tpguard.policy.exposure.VISIBLE_EXITS`)
    exits: tuple[str, ...] | None = None
    #: channels that are evidence only (None: :data:`tpguard.policy.exposure.INTERNAL_CHANNELS`)
    internal_channels: tuple[str, ...] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> PolicyKB:
        problems = _policy_problems(self)
        if problems:
            raise ValidationError.from_exception_data(
                "PolicyKB",
                [InitErrorDetails(type=PydanticCustomError("policy", "{msg}", {"msg": msg}),
                                  loc=loc, input=None) for loc, msg in problems],
            )
        return self

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_file(cls, path: str | Path) -> PolicyKB:
        """Load a YAML or JSON policy file; errors name the file, the path inside and what was expected."""
        from ._file import load_policy_file

        return load_policy_file(cls, Path(path))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<dict>") -> PolicyKB:
        from ._file import validate_policy_data

        return validate_policy_data(cls, data, source)

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json", by_alias=False, exclude_defaults=True))

    def with_atoms(self, atoms: Iterable[PrivateAtom]) -> PolicyKB:
        """A copy with ``atoms`` added (same ids replace the old ones)."""
        new = {a.id: a for a in self.atoms}
        new.update({a.id: a for a in atoms})
        return self.model_copy(update={"atoms": tuple(new.values())})

    def with_tools(self, tools: Iterable[ToolSpec]) -> PolicyKB:
        new = {t.name: t for t in self.tools}
        new.update({t.name: t for t in tools})
        return self.model_copy(update={"tools": tuple(new.values())})

    # -- lookups ------------------------------------------------------------------------------
    def atom(self, atom_id: str) -> PrivateAtom:
        for a in self.atoms:
            if a.id == atom_id:
                return a
        raise KeyError(f"unknown atom id {atom_id!r}")

    def tool(self, name: str) -> ToolSpec:
        for t in self.tools:
            if t.name == name:
                return t
        raise KeyError(f"unknown tool {name!r}")

    def resolver(self) -> AccessResolver:
        return AccessResolver(self)

    def access(self, atom: str | PrivateAtom, tool: str | ToolSpec) -> Access:
        return self.resolver().access(atom, tool)

    def is_authorized(
        self, atom_id: str, tool: str, *, field: str | None = None, form: str | None = None
    ) -> bool:
        """``A_{j,i} = 1``? A conditional cell is authorized only when ``field``/``form`` meet it."""
        return self.access(atom_id, tool).permits(field, form)

    def matrix(self) -> AuthorizationMatrix:
        """The field–tool authorization matrix ``A ∈ {0,1}^{|P|×|T|}`` (§3.4), with conditions kept."""
        r = self.resolver()
        cells = {(a.id, t.name): r.access(a, t) for a in self.atoms for t in self.tools}
        return AuthorizationMatrix(
            tuple(a.id for a in self.atoms), tuple(t.name for t in self.tools), cells
        )


def _norm_purpose(p: str) -> str:
    return " ".join(p.casefold().split())


class AccessResolver:
    """Indexes a :class:`PolicyKB` so each (atom, tool) resolution is a few dict lookups."""

    __slots__ = ("_atoms", "_pairs", "_tools", "_type_purpose", "_type_sink", "_type_tool")

    def __init__(self, kb: PolicyKB) -> None:
        self._atoms = {a.id: a for a in kb.atoms}
        self._tools = {t.name: t for t in kb.tools}
        self._pairs = {(a.atom, a.tool): _access(a, "atom_tool") for a in kb.authorizations}
        self._type_tool: dict[tuple[str, str], Access] = {}
        self._type_purpose: dict[tuple[str, str], Access] = {}
        self._type_sink: dict[tuple[str, str], Access] = {}
        for rule in kb.rules:  # first rule written wins at its level
            if rule.tool is not None:
                self._type_tool.setdefault((rule.atom_type, rule.tool), _access(rule, "type_tool"))
            elif rule.purpose is not None:
                key = (rule.atom_type, _norm_purpose(rule.purpose))
                self._type_purpose.setdefault(key, _access(rule, "type_purpose"))
            elif rule.sink is not None:
                self._type_sink.setdefault((rule.atom_type, rule.sink), _access(rule, "type_sink"))

    def access(self, atom: str | PrivateAtom, tool: str | ToolSpec) -> Access:
        atom_id, atom_type = (atom.id, atom.type) if isinstance(atom, PrivateAtom) else (atom, None)
        if atom_type is None:
            known = self._atoms.get(atom_id)
            atom_type = known.type if known else None
        spec = tool if isinstance(tool, ToolSpec) else self._tools.get(tool)
        name = tool.name if isinstance(tool, ToolSpec) else tool
        hit = self._pairs.get((atom_id, name))
        if hit is not None:
            return hit
        if atom_type is None:
            return _FORBIDDEN_DEFAULT
        hit = self._type_tool.get((atom_type, name))
        if hit is None and spec is not None:
            if spec.purpose:
                hit = self._type_purpose.get((atom_type, _norm_purpose(spec.purpose)))
            if hit is None:
                hit = self._type_sink.get((atom_type, spec.sink))
        return hit if hit is not None else _FORBIDDEN_DEFAULT


def _access(item: Authorization | Rule, level: Any) -> Access:
    state = "conditional" if item.allow == "conditional" else ("authorized" if item.allow else "forbidden")
    return Access(state, level, item.fields, item.forms)  # type: ignore[arg-type]
